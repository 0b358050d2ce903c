//! The crate's integration tests, in one binary so that a test run links few executables.

mod board;
mod browser;
mod cli;
mod fastnet;
mod hostile;
mod modules;
mod pipeline;
mod probe;
mod roles;
mod serve;
mod slurm;
mod timed;
mod uai;
mod web;

/// Runs `flipzero ARGS`, writes `input` to its standard input and closes it, and waits
/// for it to end.
pub fn with_input(args: &[&str], input: &[u8]) -> std::process::Output {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_flipzero"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}
