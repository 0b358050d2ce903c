//! `flipzero`: the one binary. It parses arguments into validated settings and calls
//! library code; each subcommand lives in `cmd/`.

mod cmd;

use clap::{Parser, Subcommand};

/// Self-play training pipeline for Ataxx and its relatives.
#[derive(Parser)]
#[command(name = "flipzero", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Count the leaf nodes of the legal-move tree (move-generator check and speed test).
    Perft(cmd::perft::PerftArgs),
    /// Speed benchmarks with fixed workloads.
    Bench(cmd::bench::BenchArgs),
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Perft(a) => cmd::perft::run(a),
        Command::Bench(a) => cmd::bench::run(a),
    }
}
