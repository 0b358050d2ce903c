//! Subcommands of the `flipzero` binary.

pub mod bench;
pub mod perft;

use anyhow::Context;
use engine::{Position, Rules};

/// The help text listing every game name.
pub const GAMES_HELP: &str = "Game: ataxx, ataxx/misere, ataxx/assimilation, \
ataxx/assimilation/misere, ataxx/thomas, ataxx/thomas/misere, hexxagon, hexxagon/misere";

/// Parses a game name and an optional position text (default: the standard start).
pub fn game_and_position(game: &str, position: Option<&str>) -> anyhow::Result<(Rules, Position)> {
    let rules: Rules = game.parse()?;
    let pos = match position {
        None => Position::startpos(rules),
        Some(text) => Position::from_fen(text, rules)
            .with_context(|| format!("bad position `{text}` for game {rules}"))?,
    };
    Ok((rules, pos))
}
