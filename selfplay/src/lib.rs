//! Self-play for flipzero: the [`Evaluator`] trait and network-free evaluators, MCTS
//! (PUCT and a Gumbel root) over the game interface, batched workers, and the Parquet
//! shards of training positions. This crate knows nothing of neural-network libraries:
//! the `train` crate plugs its network in through [`Evaluator`].

#![warn(missing_docs)]

#[cfg(feature = "data")]
mod alphabeta;
pub mod config;
#[cfg(feature = "data")]
pub mod data;
pub mod evaluator;
pub mod mcts;
#[cfg(feature = "data")]
mod run;
#[cfg(feature = "data")]
pub mod worker;

#[cfg(feature = "data")]
pub use alphabeta::HAND_WRITTEN;
pub use config::{ConfigError, SearchKind, SelfplayConfig};
#[cfg(feature = "data")]
pub use data::{Sample, ShardStream, read_shard, shard_files, write_shard};
pub use evaluator::{
    Bootstrap, BuiltinEvaluator, Evaluation, Evaluator, FixedCost, HashRandom, LeafEval, NetEngine,
    Uniform, evaluate_mixed,
};
pub use mcts::memory::{DEFAULT_TREE_BYTES, MAX_TREE_BYTES, PREPARED_TREE_BYTES, PlayMemory};
pub use mcts::play::{PlayError, PlayLimits, PlaySearch, PlayStats};
pub use mcts::player::{TreePlayer, batch_for};
pub use mcts::time::{ClockState, TimeBudget, TimeManager, expected_moves_left};
pub use mcts::{LeafBatch, LeafRequest, MctsConfig, RootKind, RootLine, Search, SearchOutcome};
#[cfg(feature = "data")]
pub use run::{run_selfplay, run_selfplay_numbered};
#[cfg(feature = "data")]
pub use worker::{GameSummary, SelfplayError, SelfplayReport, opening_for};
