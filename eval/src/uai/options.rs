//! The players a UAI session can choose, their check against the game, and the parsing of
//! `setoption`.

use std::path::{Path, PathBuf};

use engine::Game;

use crate::players::mcts::{NetSource, ResolvedNet, load_network, resolve_net};
use crate::players::spec::{DEFAULT_MCTS_SIMS, PlayerSpec};

/// What plays: the clock-driven alpha-beta search, or a fixed ladder player.
#[derive(Clone, Debug)]
pub(super) enum Choice {
    Search,
    Ladder(PlayerSpec),
}

impl Choice {
    /// The network directory (model or run) this player reads, if any.
    pub(super) fn net_path(&self) -> Option<&Path> {
        match self {
            Choice::Ladder(PlayerSpec::Mcts {
                net: NetSource::Path(p),
                ..
            }) => Some(p),
            _ => None,
        }
    }
}

/// A player by name for `game`: `ab`, or a ladder name; an MCTS player's network is
/// checked to load and to be for `game`.
pub(super) fn parse_player(name: &str, game: Game) -> Result<Choice, String> {
    if name == "ab" {
        return Ok(Choice::Search);
    }
    match name.parse::<PlayerSpec>() {
        Ok(PlayerSpec::Uai { .. }) => Err("an external engine cannot be the player here".into()),
        Ok(spec) => {
            let choice = Choice::Ladder(spec);
            if let Some(p) = choice.net_path() {
                check_net(p, game)?;
                load(p, game)?;
            }
            Ok(choice)
        }
        Err(e) => Err(e.to_string()),
    }
}

/// MCTS with the network of a model or run directory, checked to load and to play `game`.
pub(super) fn model_player(dir: &Path, game: Game) -> Result<Choice, String> {
    check_net(dir, game)?;
    load(dir, game)?;
    Ok(Choice::Ladder(PlayerSpec::Mcts {
        net: NetSource::Path(dir.to_path_buf()),
        sims: DEFAULT_MCTS_SIMS,
        time: None,
        engine: selfplay::NetEngine::Fast,
        basic: false,
    }))
}

fn load(dir: &Path, game: Game) -> Result<(), String> {
    load_network(&NetSource::Path(dir.to_path_buf()), game)
        .map(drop)
        .map_err(|e| e.to_string())
}

/// Checks that the network `path` names now (a model, or a run's current best) is for
/// `game`, as its model.json says. The bootstrap evaluator plays every game.
pub(super) fn check_net(path: &Path, game: Game) -> Result<(), String> {
    let dir: PathBuf = match resolve_net(path).map_err(|e| e.to_string())? {
        ResolvedNet::Bootstrap => return Ok(()),
        ResolvedNet::Model(d) => d,
    };
    let meta = train::read_metadata(&dir).map_err(|e| e.to_string())?;
    let model_game = meta.game()?;
    if model_game != game {
        return Err(format!(
            "model {} is for game {model_game}, not {game}",
            path.display()
        ));
    }
    Ok(())
}

/// Splits the arguments of `setoption` (`name <name> [value <value>]`) into the name and
/// the value. The name runs up to the word `value`; the value is the rest of the line,
/// inner spaces kept, and empty when `value` has nothing after it or is missing.
pub(super) fn split_setoption(rest: &str) -> Result<(&str, &str), String> {
    let usage = || "expected `setoption name <name> [value <value>]`".to_string();
    let after = rest
        .trim_start()
        .strip_prefix("name")
        .filter(|a| a.is_empty() || a.starts_with(char::is_whitespace))
        .ok_or_else(usage)?;
    let (name, value) = split_at_word(after, "value").unwrap_or((after, ""));
    let name = name.trim();
    if name.is_empty() {
        return Err(usage());
    }
    Ok((name, value.trim()))
}

/// The text before and after the first whitespace-delimited occurrence of `word`.
fn split_at_word<'a>(s: &'a str, word: &str) -> Option<(&'a str, &'a str)> {
    let mut start = None;
    for (i, c) in s.char_indices().chain(std::iter::once((s.len(), ' '))) {
        if !c.is_whitespace() {
            start.get_or_insert(i);
        } else if let Some(st) = start.take()
            && &s[st..i] == word
        {
            return Some((&s[..st], &s[i..]));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setoption_names_and_values() {
        let cases = [
            ("name Hash value 8", ("Hash", "8")),
            ("name Model value ", ("Model", "")),
            ("name Model value", ("Model", "")),
            ("name Model", ("Model", "")),
            ("name Clear Hash", ("Clear Hash", "")),
            ("name Move Overhead value 30", ("Move Overhead", "30")),
            ("name Model value /a b/run ", ("Model", "/a b/run")),
            ("name Model value x value y", ("Model", "x value y")),
            ("name Modelvalue x", ("Modelvalue x", "")),
            ("name\tGame\tvalue\thexxagon", ("Game", "hexxagon")),
        ];
        for (input, want) in cases {
            assert_eq!(split_setoption(input), Ok(want), "{input}");
        }
        for bad in [
            "",
            "name",
            "name  value 3",
            "nameHash value 3",
            "Hash value 3",
        ] {
            assert!(split_setoption(bad).is_err(), "{bad}");
        }
    }
}
