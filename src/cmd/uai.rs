//! `flipzero uai`: a UAI engine for Ataxx GUIs and tournament managers (cuteataxx), on
//! standard input and output. The engine is `eval::uai`; this parses the arguments.

use std::io::{BufReader, Write};
use std::path::PathBuf;

use clap::Args;
use engine::Game;
use eval::uai::Settings;

/// Arguments of `flipzero uai`.
#[derive(Args)]
pub struct UaiArgs {
    /// The player to use at start (the `Player` option changes it): `ab` (alpha-beta on the
    /// GUI's clock), any ladder name (random, greedy, ab1..ab64, ab:nodes=N, ab:time=MS), or
    /// an MCTS player (mcts:bootstrap, mcts:<model or run dir>).
    #[arg(long, default_value = "ab")]
    player: String,
    /// A trained model (or run) directory to play with: MCTS with the network, on the
    /// GUI's clock, instead of the player (the `Model` option changes it; empty: none).
    #[arg(long)]
    model: Option<PathBuf>,
    /// MCTS simulations per move; 0 = as many as the clock allows (option `Simulations`).
    #[arg(long, default_value_t = 0)]
    simulations: u32,
    /// The game at start (the `Game` option changes it), e.g. ataxx/assimilation, othello,
    /// hexxagon, annexation64: positions in its text format, moves in its notation, a pass
    /// as 0000; a --model must be of this game.
    #[arg(long, default_value = "ataxx")]
    game: String,
}

/// Runs the UAI loop on standard input until `quit` or end of input.
pub fn run(a: UaiArgs) -> anyhow::Result<()> {
    let game: Game = a.game.parse()?;
    let settings = Settings {
        game,
        player: a.player,
        model: a.model,
        simulations: a.simulations,
    };
    Ok(eval::uai::serve(
        &settings,
        BufReader::new(std::io::stdin()),
        Stdout,
    )?)
}

/// Standard output, failing as `println!` does everywhere else in the binary: a failed
/// write panics with `println!`'s message, which the panic hook of `main.rs` turns into
/// its exit (a closed pipe quietly, status 141; another error reported, status 1),
/// whichever thread wrote.
pub(crate) struct Stdout;

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut out = std::io::stdout().lock();
        if let Err(e) = out.write_all(buf).and_then(|()| out.flush()) {
            panic!("failed printing to stdout: {e}");
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
