//! `flipzero perft`.

use std::time::Instant;

use clap::Args;

/// Arguments of `flipzero perft`.
#[derive(Args)]
pub struct PerftArgs {
    #[arg(long, default_value = "ataxx", help = super::GAMES_HELP)]
    game: String,
    /// Start position (FEN, or the game's text format; `startpos` is the standard start).
    #[arg(long, alias = "position")]
    fen: Option<String>,
    /// Depth in plies.
    #[arg(long)]
    depth: u32,
    /// Print the count below each legal move first.
    #[arg(long)]
    divide: bool,
    /// Threads (root moves shared out); 1 = single-threaded.
    #[arg(long, default_value_t = 1)]
    threads: usize,
}

/// Runs `flipzero perft`: the last line of output is `nodes <count>`.
pub fn run(a: PerftArgs) -> anyhow::Result<()> {
    let (_, pos) = super::game_and_position(&a.game, a.fen.as_deref())?;
    let t = Instant::now();
    let nodes = if a.divide {
        let mut total = 0;
        for (mv, n) in engine::divide(&pos, a.depth) {
            println!("{} {n}", pos.move_to_string(mv));
            total += n;
        }
        total
    } else {
        engine::perft_parallel(&pos, a.depth, a.threads)
    };
    let secs = t.elapsed().as_secs_f64();
    println!(
        "time {:.3} s, {:.1} M nodes/s",
        secs,
        nodes as f64 / secs.max(1e-9) / 1e6
    );
    println!("nodes {nodes}");
    Ok(())
}
