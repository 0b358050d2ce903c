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
    /// Speed benchmarks with fixed workloads (default: the search bench).
    Bench(cmd::bench::BenchArgs),
    /// Play a paired match between two players and report W/D/L and Elo.
    Match(cmd::matches::MatchArgs),
    /// Play games with MCTS and write training positions as Parquet shards.
    Selfplay(cmd::selfplay::SelfplayArgs),
    /// Train a network on self-play shards.
    Train(cmd::train::TrainArgs),
    /// Export a trained model: safetensors (Burn and PyTorch names) and metadata.
    Export(cmd::train::ExportArgs),
    /// Make weights trained elsewhere (safetensors, Burn's or PyTorch's names) a model
    /// directory.
    Import(cmd::train::ImportArgs),
    /// Run one position through a trained network and print JSON.
    Infer(cmd::train::InferArgs),
    /// Run the whole loop: self-play, train, gate, promote, anchor, report (resumable).
    Run(cmd::run::RunArgs),
    /// Run one role of the pipeline as its own process on a shared run directory:
    /// self-play worker, trainer or gatekeeper.
    Worker(cmd::worker::WorkerArgs),
    /// Run the roles as Slurm jobs on a cluster: submit, status, stop.
    Slurm(cmd::slurm::SlurmArgs),
    /// Print the pipeline report of a run (and rewrite report.md, metrics.csv, plots).
    Report(cmd::report::ReportArgs),
    /// Maximum-likelihood Elo of every player in the recorded games of one or more runs.
    Ratings(cmd::report::RatingsArgs),
    /// One gating match between two players (SPRT or fixed), with its verdict.
    Gate(cmd::gate::GateArgs),
    /// Play a game against any player in the terminal.
    Play(cmd::play::PlayArgs),
    /// Serve a web page: live run dashboard, game viewer, play and analyse (127.0.0.1:8080).
    Serve(cmd::serve::ServeArgs),
    /// Run as a UAI engine on standard input/output (for cuteataxx and Ataxx GUIs).
    Uai(cmd::uai::UaiArgs),
    /// Run as an Othello engine speaking the NBoard protocol (NBoard and its drivers).
    Nboard(cmd::nboard::NboardArgs),
    /// Tune an MCTS player's search settings by matches (SPSA).
    Tune(cmd::tune::TuneArgs),
}

fn main() -> std::process::ExitCode {
    output_errors_exit();
    let cli = Cli::parse();
    match dispatch(cli.command) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            // The error chain, one cause after another; never a backtrace, whatever
            // RUST_BACKTRACE says: these are the user's errors, not the program's.
            eprintln!("error: {}", chain(&e));
            std::process::ExitCode::FAILURE
        }
    }
}

/// The error and its causes, joined by `: `, leaving out a cause whose text the message
/// already holds (a library error that prints its source, as `path: io error` does).
fn chain(e: &anyhow::Error) -> String {
    let mut msg = e.to_string();
    for cause in e.chain().skip(1) {
        let c = cause.to_string();
        if !msg.contains(&c) {
            msg.push_str(": ");
            msg.push_str(&c);
        }
    }
    msg
}

/// Makes a failed write to standard output an error, not a crash. Every command prints
/// with `println!`, whose one way of failing is a panic ("failed printing to stdout");
/// that panic ends the process here, before any unwinding:
/// - a closed pipe ends it quietly, as it ends `cat` or `grep` (`flipzero infer … |
///   head`), with the shell's code for SIGPIPE (128 + 13). SIGPIPE itself stays ignored:
///   a match must survive an external engine that dies with its input pipe open (that
///   engine forfeits);
/// - any other error (`> /dev/full`: no space left, an I/O error) is reported on
///   standard error with exit status 1 and no backtrace;
/// - a failed write to standard error ends the process with status 1 (nothing is left
///   to report it on).
fn output_errors_exit() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let msg = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if let Some(cause) = msg.strip_prefix("failed printing to stdout: ") {
            if cause.contains("Broken pipe") {
                std::process::exit(141);
            }
            eprintln!("error: cannot write to standard output: {cause}");
            std::process::exit(1);
        }
        if msg.starts_with("failed printing to stderr") {
            std::process::exit(if msg.contains("Broken pipe") { 141 } else { 1 });
        }
        default(info)
    }));
}

fn dispatch(command: Command) -> anyhow::Result<()> {
    match command {
        Command::Perft(a) => cmd::perft::run(a),
        Command::Bench(a) => cmd::bench::run(a),
        Command::Match(a) => cmd::matches::run(a),
        Command::Selfplay(a) => cmd::selfplay::run(a),
        Command::Train(a) => cmd::train::run(a),
        Command::Export(a) => cmd::train::export(a),
        Command::Import(a) => cmd::train::import(a),
        Command::Infer(a) => cmd::train::infer(a),
        Command::Uai(a) => cmd::uai::run(a),
        Command::Nboard(a) => cmd::nboard::run(a),
        Command::Serve(a) => cmd::serve::run(a),
        Command::Run(a) => cmd::run::run(a),
        Command::Worker(a) => cmd::worker::run(a),
        Command::Slurm(a) => cmd::slurm::run(a),
        Command::Play(a) => cmd::play::run(a),
        Command::Gate(a) => cmd::gate::run(a),
        Command::Report(a) => cmd::report::report(a),
        Command::Ratings(a) => cmd::report::ratings(a),
        Command::Tune(a) => cmd::tune::run(a),
    }
}
