//! The run directory of flipzero and the files around it, for every crate that touches
//! them: where everything lives ([`RunDir`]), how files are written (atomic replace, or
//! a stream where the path is one) and read (regular files of bounded size only), who
//! holds a run ([`RunLock`], [`Lease`]), which model is best, run-wide counters, and the
//! leftovers of killed writes. No other workspace crate is imported (ARCHITECTURE.md), so
//! every other crate may build on it; nothing else builds run-directory paths.

#![warn(missing_docs)]

pub mod best;
pub mod counters;
pub mod files;
pub mod host;
pub mod layout;
pub mod lease;
pub mod lock;
pub mod scratch;
pub mod temps;

pub use best::{BOOTSTRAP, BestError, current_best, is_model_name, promote};
pub use counters::{CounterError, Recovered};
pub use files::{
    Limit, OutputKind, check_output, commit, export_refusal, open_own, open_regular,
    output_is_file, output_overwrites, publish_dir, read_own, read_own_text, read_regular,
    read_regular_text, remove_dir_if_exists, same_folder, temp_path, write_atomic, write_output,
};
pub use host::host_name;
pub use layout::{
    CANDIDATE_RECORD, LOCK_FILE, REMOVED_RECORD, RunDir, SUMMARY, TRAIN_RECORD, generation_name,
    network_removed, parse_generation,
};
pub use lease::{Lease, LeaseError, LeaseHolder, Taken};
pub use lock::{FileLock, LockError, RunLock, lock_file, parse_holder, try_lock_file};
pub use scratch::Scratch;
pub use temps::{process_alive, remove_stale_temps};
