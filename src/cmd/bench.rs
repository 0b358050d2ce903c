//! `flipzero bench`.

use clap::Args;

/// Arguments of `flipzero bench`.
#[derive(Args)]
pub struct BenchArgs {}

/// Runs the benchmarks.
pub fn run(_a: BenchArgs) -> anyhow::Result<()> {
    Ok(())
}
