//! Subcommands of the `flipzero` binary.

pub mod bench;
pub mod matches;
pub mod perft;
pub mod uai;

use anyhow::Context;
use engine::{Game, State};

/// The help text listing every game name.
pub const GAMES_HELP: &str = "Game: ataxx, ataxx/assimilation, ataxx/thomas, hexxagon, \
othello, reversi, annexation64, annexation132, annexation76-cross, annexation76-parallel, \
annexation32, annexation80; each also with /misere (e.g. ataxx/misere)";

/// Parses a game name and an optional position text (default: the standard start).
pub fn game_and_position(game: &str, position: Option<&str>) -> anyhow::Result<(Game, State)> {
    let game: Game = game.parse()?;
    let pos = match position {
        None => game.startpos(),
        Some(text) => game
            .parse_position(text)
            .with_context(|| format!("bad position `{text}` for game {game}"))?,
    };
    Ok((game, pos))
}
