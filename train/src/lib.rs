//! Training for flipzero with Burn: the network, the feature encoding, the Parquet data
//! pipeline, the training loop with checkpoints, export and inference.
//!
//! The modules import in one direction, from the bottom up:
//!
//! - [`kernels`]: SIMD convolutions (direct and Winograd) on raw slices; no Burn.
//! - [`net`]: the network's shape and description, the Burn module, the input encoding.
//! - [`error`], [`config`]: the error type and a run's settings.
//! - [`data`]: Parquet shards to training batches.
//! - [`store`]: weights, model.json, loaded models, checkpoints.
//! - [`infer`]: predictions, by Burn or by the fast path on [`kernels`]; [`Network`], the
//!   batched prediction API for programs that embed a trained net.
//! - [`backend`]: the hand-written CPU training engine.
//! - [`training`]: the training loop over either engine; [`export`]: ONNX and safetensors.

#![warn(missing_docs)]

pub mod backend;
pub mod config;
pub mod data;
pub mod error;
pub mod export;
pub mod import;
pub mod infer;
pub mod kernels;
pub mod net;
pub mod reads;
pub mod store;
pub mod training;

pub use config::{OptimizerKind, TrainConfig, training_device};
pub use error::TrainError;
pub use export::{EXPORT_FILES, export};
pub use import::{Imported, Naming, import_weights, named_tensors};
pub use infer::fast::{FastEvaluator, FastNet};
pub use infer::{
    NetEvaluator, Network, Prediction, Predictions, move_probabilities, predict, ranked_moves,
};
/// The ndarray crate of [`data::Batch`], [`Predictions`] and [`net::encode`]'s arrays.
pub use ndarray;
pub use net::{Net, NetConfig};
pub use reads::host_reads;
pub use store::{LoadedModel, ModelMeta, load_model, read_metadata};
pub use training::{StepMetrics, TrainOptions, TrainReport, train};
