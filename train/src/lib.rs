//! Training for flipzero with Burn: the network, the feature encoding, the Parquet data
//! pipeline, the training loop with checkpoints, export and inference.

#![warn(missing_docs)]

pub mod cpu_training;
pub mod data;
pub mod describe;
pub mod encode;
pub mod export;
pub mod fast;
pub mod inference;
pub mod kernel;
pub mod model;
pub mod training;
pub mod winograd;

pub use export::{LoadedModel, ModelMeta, export, load_model, read_metadata};
pub use fast::{FastEvaluator, FastNet};
pub use inference::{NetEvaluator, Prediction, move_probabilities, predict};
pub use model::{Net, NetConfig};
pub use training::{StepMetrics, TrainConfig, TrainError, TrainOptions, TrainReport, train};
