//! The crate's integration tests, in one binary so that a test run links few executables.

mod browser;
mod cli;
mod pipeline;
mod serve;
mod uai;
