//! Monte-Carlo tree search over the game interface, written as a state machine that hands
//! out one leaf at a time ([`Search::next_request`]) and takes its evaluation back
//! ([`Search::apply`]), so that a worker can batch the leaves of many games into one
//! evaluator call.
//!
//! Values are stored on each move (edge) from the view of the side that plays it, so a
//! node reads its moves' values directly. Every ply (a pass included) changes the
//! side to move, so views alternate along a path.
//!
//! The module by concern, each importing only those before it: `config` and `outcome`
//! the settings and the reports, `pages` memory written ahead of a search (on huge
//! pages where the kernel gives them), `tree` the storage (edges carrying the statistics of
//! the positions they lead to, the root's edge), `leaves` the batches handed out,
//! `search` the tree with the progress of a search, then its parts: `select` the choice
//! of a move (PUCT, first-play urgency, the Gumbel root and its schedule), `solver` the
//! proofs (MCTS-solver and the exact endgame), `batch` the leaves handed out and given
//! back, `targets` what a finished search reports, `reuse` moving the root down the
//! tree; [`cache`] the evaluations kept by position, [`memory`] a play-time search's
//! buffers and cache kept from tree to tree, `at_once` the evaluations a descent asks
//! for on its way, and [`play`] runs a search on threads within a clock.

mod at_once;
mod batch;
pub mod cache;
mod config;
pub mod endgame;
mod gumbel;
mod leaves;
pub mod memory;
mod noise;
mod outcome;
mod pages;
pub mod play;
pub mod player;
mod reuse;
mod search;
mod select;
mod solver;
mod targets;
pub mod time;
mod tree;

pub use config::{MctsConfig, RootKind};
pub use leaves::{Descent, LeafBatch, LeafRequest};
pub use outcome::{RootLine, SearchOutcome};
pub use search::Search;
