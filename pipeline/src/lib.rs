//! The flipzero pipeline as a library: everything `flipzero run`, `flipzero worker` and
//! `flipzero slurm` do, callable without the binary (from a test, a notebook binding,
//! another front end).
//!
//! - [`config`]: the run config (`RunConfig`), laid over the built-in
//!   `configs/default.toml` (the one source of defaults), with `--set` overrides
//!   ([`overrides`], parsed once), validation and diffs.
//! - [`stages`]: what every way of running shares: [`Pipeline`] (a run directory, its
//!   config and an [`Observer`]) trains, gates, promotes and anchors a generation.
//! - [`retention`]: which generations' networks a run keeps (`run.keep_models`),
//!   applied after every verdict.
//! - [`sync`]: the synchronous loop, one generation after another ([`SyncRun`]).
//! - [`roles`]: the same stages as separate processes that meet in the run directory
//!   (self-play workers, the trainer, the gatekeeper) and `run --async`, which starts them.
//! - [`slurm`]: the roles as Slurm jobs.
//! - [`export`]: a fast net's static web page ([`export_web`], `flipzero export --web`).
//! - [`report`]: the records each stage leaves, the metrics table, `report.md`, plots
//!   and the rating list.
//!
//! Progress, log lines and warnings go to an [`Observer`]; every line also goes to the
//! run's `run.log`. Errors are [`Error`]s that name the file, the setting or the step.
//!
//! A two-generation run, driven from Rust:
//!
//! ```
//! use pipeline::{RunConfig, Silent, SyncRun};
//!
//! let dir = std::env::temp_dir().join(format!("pipeline-doc-{}", std::process::id()));
//! # let _ = std::fs::remove_dir_all(&dir);
//! let cfg = RunConfig::builtin(&[
//!     "run.generations=2",
//!     "selfplay.games=4",
//!     "selfplay.threads=1",
//!     "selfplay.games_per_thread=4",
//!     "selfplay.simulations=8",
//!     "selfplay.fast_simulations=4",
//!     "train.steps=4",
//!     "train.batch_size=16",
//!     "train.blocks=1",
//!     "run.export=false",
//!     "gate.max_pairs=1",
//!     "gate.batch_pairs=1",
//!     "gate.simulations=4",
//!     "anchor.pairs=1",
//!     "anchor.ladder=[\"random\"]",
//! ].map(String::from))?;
//! let run = SyncRun::open(&dir, cfg, false, &Silent)?;
//! let summary = run.run()?;
//! assert_eq!(summary.table.lines().count(), 1 + 2, "a header and two generations");
//! assert!(summary.best.starts_with("gen-"));
//! # drop(run);
//! # std::fs::remove_dir_all(&dir).unwrap();
//! # Ok::<(), pipeline::Error>(())
//! ```

#![warn(missing_docs)]

pub mod config;
pub mod error;
pub mod export;
pub mod inputs;
pub mod observer;
pub mod overrides;
pub mod report;
pub mod retention;
pub mod roles;
pub mod slurm;
pub mod stages;
pub mod sync;

pub use config::{DEFAULT_CONFIG, LOCAL_KEYS, RunConfig, load_config, load_table, load_with};
pub use error::{Context, Error, Result};
pub use export::export_web;
pub use observer::{NoProgress, Observer, Progress, Silent, Stderr, Task};
pub use overrides::Override;
pub use stages::Pipeline;
pub use sync::{RunSummary, SyncRun};
