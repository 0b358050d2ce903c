//! `flipzero nboard`: the NBoard protocol on standard input and output (eval::nboard).

use std::io::BufReader;
use std::path::PathBuf;

use clap::Args;

/// Arguments of `flipzero nboard`.
#[derive(Args)]
pub struct NboardArgs {
    /// The player: `ab` (the alpha-beta search at the GUI's `set depth`), any ladder name
    /// (ab6, ab:time=500, …), or an MCTS player (mcts:<model or run dir>[:sims=N]).
    #[arg(long, default_value = "ab")]
    player: String,
    /// A trained Othello model (or run) directory: MCTS with its network (64 simulations
    /// a move; `--player mcts:DIR:sims=N` for more), instead of --player.
    #[arg(long, conflicts_with = "player")]
    model: Option<PathBuf>,
}

/// Runs the NBoard loop on standard input until `quit` or end of input.
pub fn run(a: NboardArgs) -> anyhow::Result<()> {
    let player = match &a.model {
        Some(dir) => format!("mcts:{}", dir.display()),
        None => a.player,
    };
    let settings = eval::nboard::Settings::new(&player);
    Ok(eval::nboard::serve(
        &settings,
        BufReader::new(std::io::stdin()),
        super::uai::Stdout,
    )?)
}
