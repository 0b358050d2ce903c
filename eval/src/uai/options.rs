//! The players a UAI session can choose, and their check against the game.

use std::path::{Path, PathBuf};

use engine::Game;

use crate::players::mcts::{NetSource, ResolvedNet, check_loads, load_fastnet, resolve_net};
use crate::players::spec::{DEFAULT_MCTS_SIMS, PlayerSpec};

/// What plays: the clock-driven alpha-beta search, or a fixed ladder player.
// One value per UAI session: a ladder player's size (its search parameters) costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Eq)]
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
            Choice::Ladder(PlayerSpec::NetAlphaBeta { net, .. }) => Some(net),
            _ => None,
        }
    }
}

/// A player by name for `game`: `ab`, or a ladder name; an MCTS or `abnet:` player's
/// network is checked to load and to be for `game`, and loaded now, not on the clock of
/// the first move.
pub(super) fn parse_player(name: &str, game: Game) -> Result<Choice, String> {
    if name == "ab" {
        return Ok(Choice::Search);
    }
    match name.parse::<PlayerSpec>() {
        Ok(PlayerSpec::Uai { .. } | PlayerSpec::Nboard { .. }) => {
            Err("an external engine cannot be the player here".into())
        }
        Ok(spec) => {
            let choice = Choice::Ladder(spec);
            match &choice {
                // A fast net (not a CNN), of this game, loaded and cached for every
                // move's search: what `check_net` and `load` do, and the family checked.
                Choice::Ladder(PlayerSpec::NetAlphaBeta { net, .. }) => {
                    crate::players::spec::fast_value(net, game).map_err(|e| e.to_string())?;
                }
                _ => {
                    if let Some(p) = choice.net_path() {
                        check_net(p, game)?;
                        load(p, game)?;
                    }
                }
            }
            Ok(choice)
        }
        Err(e) => Err(e.to_string()),
    }
}

/// The player of the network of a model or run directory, checked to load and to play
/// `game`: MCTS, or for a value net of the alpha-beta family (`"search": "alphabeta"` in
/// its model.json) the alpha-beta searcher with it at its leaves, on the clock.
pub(super) fn model_player(dir: &Path, game: Game) -> Result<Choice, String> {
    check_net(dir, game)?;
    load(dir, game)?;
    if let ResolvedNet::Model(model) = resolve_net(dir).map_err(|e| e.to_string())?
        && fastnet::io::is_fastnet(&model)
        && fastnet::io::search_of(&model).map_err(|e| e.to_string())?
            == selfplay::SearchKind::AlphaBeta
    {
        return Ok(Choice::Ladder(PlayerSpec::NetAlphaBeta {
            net: dir.to_path_buf(),
            limits: engine::search::Limits::default(),
            search: crate::AbSearch::TUNED,
        }));
    }
    Ok(Choice::Ladder(PlayerSpec::Mcts {
        net: NetSource::Path(dir.to_path_buf()),
        sims: DEFAULT_MCTS_SIMS,
        time: None,
        engine: selfplay::NetEngine::Fast,
        basic: false,
        params: crate::SearchParams::default(),
    }))
}

fn load(dir: &Path, game: Game) -> Result<(), String> {
    check_loads(&NetSource::Path(dir.to_path_buf()), game).map_err(|e| e.to_string())
}

/// Checks that the network `path` names now (a model, or a run's current best) is for
/// `game`, as its model.json says. The bootstrap evaluator plays every game.
pub(super) fn check_net(path: &Path, game: Game) -> Result<(), String> {
    let dir: PathBuf = match resolve_net(path).map_err(|e| e.to_string())? {
        ResolvedNet::Bootstrap => return Ok(()),
        ResolvedNet::Model(d) => d,
    };
    if fastnet::io::is_fastnet(&dir) {
        return load_fastnet(&NetSource::Path(dir), game)
            .map(drop)
            .map_err(|e| e.to_string());
    }
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
