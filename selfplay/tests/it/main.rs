//! The crate's integration tests, in one binary so that a test run links few executables.

mod alphabeta;
mod aux_targets;
mod golden;
mod mcts;
mod memory;
mod play;
mod solver;
mod workers;
