//! `flipzero bench`: fixed workloads whose counts are deterministic for a build.

use std::time::Instant;

use clap::{Args, ValueEnum};
use engine::{Game, Position, Rules, Variant};

/// Which benchmark to run.
#[derive(Clone, Copy, ValueEnum)]
pub enum Suite {
    /// Move generation: perft with bulk counting (start position, depths 6 and 7, one
    /// thread), perft with every leaf move made (make-move throughput), Hexxagon,
    /// Othello and Annexation 64 perft.
    Movegen,
}

/// Arguments of `flipzero bench`.
#[derive(Args)]
pub struct BenchArgs {
    /// The benchmark suite.
    #[arg(value_enum, default_value = "movegen")]
    suite: Suite,
}

fn timed(label: &str, f: impl FnOnce() -> u64) -> u64 {
    let t = Instant::now();
    let n = f();
    let s = t.elapsed().as_secs_f64();
    println!(
        "{label:<44} {n:>12} nodes {s:>8.3} s {:>9.1} M nodes/s",
        n as f64 / s / 1e6
    );
    n
}

/// Runs the chosen suite; the last line is `nodes <total>`.
pub fn run(a: BenchArgs) -> anyhow::Result<()> {
    match a.suite {
        Suite::Movegen => {
            let start = Position::startpos(Rules::ATAXX);
            let hex = Position::startpos(Rules::new(Variant::Hexxagon));
            let mut total = 0;
            total += timed("ataxx startpos perft 6 (bulk)", || engine::perft(&start, 6));
            total += timed("ataxx startpos perft 7 (bulk)", || engine::perft(&start, 7));
            total += timed("ataxx startpos perft 6 (every leaf made)", || {
                engine::perft_make_all(&start, 6)
            });
            total += timed("hexxagon startpos perft 6 (bulk)", || {
                engine::perft(&hex, 6)
            });
            for (name, depth) in [("othello", 10), ("annexation64", 12)] {
                let s = name.parse::<Game>()?.startpos();
                total += timed(&format!("{name} startpos perft {depth} (bulk)"), || {
                    s.perft(depth)
                });
            }
            println!("nodes {total}");
        }
    }
    Ok(())
}
