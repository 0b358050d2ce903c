//! The crate's integration tests, in one binary so that a test run links few executables.

mod describe;
mod export;
mod import;
mod training;
