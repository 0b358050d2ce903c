//! MCTS players: a trained network (or the bootstrap evaluator) behind the same search
//! that self-play uses, without root noise, choosing the most visited move.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use engine::{Game, Move, Rng, State};
use selfplay::evaluator::{Bootstrap, Evaluator};
use selfplay::mcts::{MctsConfig, Search};
use train::{FastEvaluator, LoadedModel};

use crate::player::{Player, PlayerError};

/// Where an MCTS player's evaluations come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NetSource {
    /// The generation-0 evaluator: one-ply priors, shallow alpha-beta values.
    Bootstrap,
    /// A model directory (with model.json), or a run directory meaning its current best.
    Path(PathBuf),
}

/// The name written in `models/best` when the bootstrap evaluator is the best player.
pub const BOOTSTRAP_BEST: &str = "bootstrap";

/// What a path names: a model directory, or a run directory's current best.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResolvedNet {
    /// The bootstrap evaluator (a run whose best is still generation 0).
    Bootstrap,
    /// A model directory.
    Model(PathBuf),
}

/// Resolves a model or run directory. A run directory's `models/best` names a generation
/// folder under `models/` (or `bootstrap`).
pub fn resolve_net(path: &Path) -> Result<ResolvedNet, PlayerError> {
    if path.join("model.json").is_file() {
        return Ok(ResolvedNet::Model(path.to_path_buf()));
    }
    let best = path.join("models").join("best");
    match crate::rundir::current_best(path).map_err(|e| PlayerError::Model(e.to_string()))? {
        Some(name) if name == BOOTSTRAP_BEST => Ok(ResolvedNet::Bootstrap),
        Some(name) => {
            let dir = path.join("models").join(&name);
            if dir.join("model.json").is_file() {
                return Ok(ResolvedNet::Model(dir));
            }
            Err(PlayerError::Model(format!(
                "{} names `{name}`, but {} holds no model.json",
                best.display(),
                dir.display()
            )))
        }
        None => Err(PlayerError::Model(format!(
            "{} is neither a model directory (no model.json) nor a run directory (no models/best)",
            path.display()
        ))),
    }
}

/// Loaded models, shared by every player of the process (a match builds players per game).
fn load_cached(dir: &Path) -> Result<LoadedModel, PlayerError> {
    static CACHE: OnceLock<Mutex<HashMap<PathBuf, Arc<LoadedModel>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(m) = cache.lock().expect("model cache").get(dir) {
        return Ok((**m).clone());
    }
    let model = train::load_model(dir)
        .map_err(|e| PlayerError::Model(format!("cannot load model {}: {e}", dir.display())))?;
    cache
        .lock()
        .expect("model cache")
        .insert(dir.to_path_buf(), Arc::new(model.clone()));
    Ok(model)
}

/// The network `source` names, loaded (and cached) and checked to be a model of `game`;
/// `None` for the bootstrap evaluator.
pub fn load_network(
    source: &NetSource,
    game: Game,
) -> Result<Option<(PathBuf, LoadedModel)>, PlayerError> {
    let dir = match source {
        NetSource::Bootstrap => return Ok(None),
        NetSource::Path(p) => match resolve_net(p)? {
            ResolvedNet::Bootstrap => return Ok(None),
            ResolvedNet::Model(dir) => dir,
        },
    };
    let model = load_cached(&dir)?;
    if model.game != game {
        return Err(PlayerError::WrongGame {
            model: dir.display().to_string(),
            model_game: model.game.to_string(),
            game: game.to_string(),
        });
    }
    Ok(Some((dir, model)))
}

/// A fresh evaluator for `source` playing `game`; a model of another game is refused.
pub fn build_evaluator(source: &NetSource, game: Game) -> Result<Box<dyn Evaluator>, PlayerError> {
    Ok(match load_network(source, game)? {
        None => Box::new(Bootstrap::new(2)),
        Some((dir, model)) => Box::new(FastEvaluator::new(&model, dir.display().to_string())),
    })
}

/// MCTS with an evaluator: `sims` simulations a move, or as many as fit in `time`.
pub struct MctsPlayer {
    evaluator: Box<dyn Evaluator>,
    cfg: MctsConfig,
    sims: u32,
    time: Option<Duration>,
    rng: Rng,
}

impl MctsPlayer {
    /// A player searching `sims` simulations a move, or for `time` when given.
    pub fn new(
        evaluator: Box<dyn Evaluator>,
        sims: u32,
        time: Option<Duration>,
        seed: u64,
    ) -> MctsPlayer {
        MctsPlayer {
            evaluator,
            cfg: MctsConfig {
                dirichlet_epsilon: 0.0,
                forced_playouts: false,
                ..MctsConfig::default()
            },
            sims: sims.max(1),
            time,
            rng: Rng::new(seed),
        }
    }
}

impl MctsPlayer {
    /// Like [`Player::choose`], but ends the search early (with the most visited move so
    /// far) once `stop` is set; a UAI front end's `stop` sets it.
    pub fn choose_until(&mut self, state: &State, stop: &AtomicBool) -> Result<Move, PlayerError> {
        let moves = state.legal_moves();
        if moves.len() == 1 {
            return Ok(moves[0]);
        }
        let deadline = self.time.map(|t| Instant::now() + t);
        let mut search = Search::new(*state);
        let target = if deadline.is_some() {
            u32::MAX
        } else {
            self.sims
        };
        search.start(target, false, &self.cfg, &mut self.rng);
        while let Some(req) = search.next_request(&self.cfg, &mut self.rng) {
            let eval = self
                .evaluator
                .evaluate(
                    std::slice::from_ref(&req.state),
                    std::slice::from_ref(&req.moves),
                )
                .remove(0);
            search.apply(&eval, &self.cfg, &mut self.rng);
            let out_of_time = deadline.is_some_and(|d| Instant::now() >= d);
            if (out_of_time || stop.load(Ordering::Relaxed)) && search.simulations() > 0 {
                break;
            }
        }
        Ok(search.outcome(&self.cfg).best)
    }
}

impl Player for MctsPlayer {
    fn choose(&mut self, state: &State) -> Result<Move, PlayerError> {
        self.choose_until(state, &AtomicBool::new(false))
    }
}
