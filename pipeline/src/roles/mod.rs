//! `flipzero worker`: the pipeline's roles as separate processes that meet only in one
//! run directory (a local path, or a shared filesystem where a rename within a folder is
//! atomic), as KataGo's self-play, training and gatekeeping processes do.
//!
//! - `worker selfplay` (any number, on any machines) plays games with the current best
//!   network in batches and publishes each batch as one shard folder
//!   `selfplay/w-HOST-PID-nK-SEQ/` (written as a hidden `.partial` folder, then renamed).
//! - `worker train` (one per run, under the lease `leases/train`) trains the next
//!   candidate `models/gen-NNNN` whenever `train.rows_per_candidate` new positions have
//!   arrived since the previous candidate's.
//! - `worker gate` (one per run, under the lease `leases/gate`) gates each new candidate
//!   against the best, promotes, anchors and rewrites the report.
//!
//! Every role takes the run's lock shared (`run.lock`), so a synchronous `flipzero run`
//! on the same folder is refused while any role runs, and the other way round.

mod common;
mod gatekeeper;
mod local;
mod selfplay;
mod shards;
mod trainer;

pub use common::{RoleOptions, given_config, prepare_run, progress};
pub use gatekeeper::gatekeeper;
pub use local::{AsyncOptions, run_async};
pub use selfplay::selfplay_worker;
pub use shards::{
    Batch, BatchIndex, BatchName, BatchSummary, published_selfplay, reserve_game_ids,
    window_batches,
};
pub use trainer::{CandidateRecord, trainer};
