//! `flipzero perft`.

use std::time::Instant;

use clap::Args;

/// Arguments of `flipzero perft`.
#[derive(Args)]
pub struct PerftArgs {
    #[arg(long, default_value = "ataxx", help = super::GAMES_HELP)]
    game: String,
    /// Start position in the game's text format (FEN for the Ataxx family; `startpos` is
    /// the standard start, also the default).
    #[arg(long, visible_alias = "fen", allow_hyphen_values = true)]
    position: Option<String>,
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
    let (_, pos) = super::game_and_position(&a.game, a.position.as_deref())?;
    let t = Instant::now();
    let nodes = if a.divide {
        let mut total = 0;
        if a.depth == 0 {
            total = 1;
        } else {
            for mv in pos.legal_moves() {
                let n = pos.after(mv).perft(a.depth - 1);
                println!("{} {n}", pos.move_to_string(mv));
                total += n;
            }
        }
        total
    } else {
        match pos {
            engine::State::Ataxx(p) => engine::perft_parallel(&p, a.depth, a.threads),
            _ => pos.perft(a.depth),
        }
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
