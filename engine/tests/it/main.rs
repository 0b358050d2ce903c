//! The crate's integration tests, in one binary so that a test run links few executables.

mod fuzz;
mod games;
mod hooks;
mod invariants;
mod levels;
mod perft;
mod reference;
mod search;
