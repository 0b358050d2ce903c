//! What training writes and inference reads: weights with their digests, model.json,
//! loaded models, checkpoints, and `.npy` arrays.

mod checkpoint;
mod meta;
mod model;
mod npy;
mod weights;

pub(crate) use checkpoint::remove_stale_temps;
pub use checkpoint::{
    CHECKPOINTS, CheckpointState, Digests, checkpoint_dirs, quarantine, read_state,
};
pub use meta::{MODEL_FORMAT_VERSION, ModelMeta, read_metadata, write_metadata};
pub use model::{LoadedModel, load_init, load_model};
pub use npy::{npy_bytes, save_npy};
pub use weights::{load_net, save_net, sha256_hex, write_atomic};
