//! MCTS players: a trained network (or the bootstrap evaluator) behind the play-time
//! search ([`PlaySearch`]): the tree is kept between moves, leaves are evaluated in
//! batches under virtual loss on one thread per evaluator, and a clock is split by the
//! time manager; no root noise, the most visited move is played.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use engine::{Game, Move, State};
use selfplay::NetEngine;
use selfplay::evaluator::{Bootstrap, Evaluator};
use selfplay::mcts::MctsConfig;
use selfplay::{
    ClockState, PlayError, PlayLimits, PlayStats, TimeBudget, TimeManager, TreePlayer,
    expected_moves_left,
};
use train::LoadedModel;

use super::{Evaluation, Player, PlayerError};

/// Where an MCTS player's evaluations come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NetSource {
    /// The generation-0 evaluator: one-ply priors, shallow alpha-beta values.
    Bootstrap,
    /// A model directory (with model.json), or a run directory meaning its current best.
    Path(PathBuf),
}

/// The name written in `models/best` when the bootstrap evaluator is the best player.
pub const BOOTSTRAP_BEST: &str = rundir::BOOTSTRAP;

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
    if rundir::network_removed(path) {
        return Err(PlayerError::Model(format!(
            "{}: this generation's network was removed by its run's retention (run.keep_models; {} says what went); its records remain",
            path.display(),
            rundir::REMOVED_RECORD
        )));
    }
    let run = rundir::RunDir::new(path);
    let best = run.best_pointer();
    match rundir::current_best(path).map_err(|e| PlayerError::Model(e.to_string()))? {
        Some(name) if name == BOOTSTRAP_BEST => Ok(ResolvedNet::Bootstrap),
        Some(name) => {
            let dir = run.model(&name);
            if dir.join("model.json").is_file() {
                return Ok(ResolvedNet::Model(dir));
            }
            if rundir::network_removed(&dir) {
                return Err(PlayerError::Model(format!(
                    "{} names `{name}`, whose network the run's retention removed (the run itself falls back to the newest best that loads when it resumes)",
                    best.display()
                )));
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
    static CACHE: Cache<LoadedModel> = OnceLock::new();
    let model = cached(&CACHE, dir, || {
        train::load_model(dir)
            .map_err(|e| PlayerError::Model(format!("cannot load model {}: {e}", dir.display())))
    })?;
    Ok((*model).clone())
}

/// Loaded networks by folder.
type Cache<T> = OnceLock<Mutex<HashMap<PathBuf, Arc<T>>>>;

/// `dir`'s entry of `cache`, loaded by `load` the first time.
fn cached<T>(
    cache: &Cache<T>,
    dir: &Path,
    load: impl FnOnce() -> Result<T, PlayerError>,
) -> Result<Arc<T>, PlayerError> {
    let cache = cache.get_or_init(Default::default);
    if let Some(m) = cache.lock().expect("model cache").get(dir) {
        return Ok(m.clone());
    }
    let model = Arc::new(load()?);
    cache
        .lock()
        .expect("model cache")
        .insert(dir.to_path_buf(), model.clone());
    Ok(model)
}

/// The game a model folder of either family plays, as its `model.json` says.
pub fn model_game(dir: &Path) -> Result<Game, PlayerError> {
    if fastnet::io::is_fastnet(dir) {
        let (net, _) = fastnet::io::load(dir).map_err(|e| {
            PlayerError::Model(format!("cannot load fast net {}: {e}", dir.display()))
        })?;
        return net
            .cfg
            .check()
            .map_err(|e| PlayerError::Model(e.to_string()));
    }
    let meta = train::read_metadata(dir)
        .map_err(|e| PlayerError::Model(format!("cannot read model {}: {e}", dir.display())))?;
    meta.game().map_err(|e| PlayerError::Model(e.to_string()))
}

/// The fast net (issue #29) `source` names, loaded, quantised (and cached) and checked
/// to be a net of `game`; `None` when it names no fast net.
pub fn load_fastnet(
    source: &NetSource,
    game: Game,
) -> Result<Option<(PathBuf, Arc<fastnet::QuantNet>)>, PlayerError> {
    let dir = match source {
        NetSource::Path(p) => match resolve_net(p)? {
            ResolvedNet::Model(dir) if fastnet::io::is_fastnet(&dir) => dir,
            _ => return Ok(None),
        },
        NetSource::Bootstrap => return Ok(None),
    };
    static CACHE: Cache<fastnet::QuantNet> = OnceLock::new();
    let net = cached(&CACHE, &dir, || {
        fastnet::io::load(&dir)
            .and_then(|(f, _)| fastnet::QuantNet::new(&f))
            .map_err(|e| PlayerError::Model(format!("cannot load fast net {}: {e}", dir.display())))
    })?;
    if net.layout.game() != game {
        return Err(PlayerError::WrongGame {
            model: dir.display().to_string(),
            model_game: net.layout.game().to_string(),
            game: game.to_string(),
        });
    }
    Ok(Some((dir, net)))
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

/// Checks that the network `source` names, of either family, loads and plays `game`.
pub fn check_loads(source: &NetSource, game: Game) -> Result<(), PlayerError> {
    if load_fastnet(source, game)?.is_some() {
        return Ok(());
    }
    load_network(source, game).map(drop)
}

/// A fresh evaluator for `source` playing `game`; a model of another game is refused.
pub fn build_evaluator(
    source: &NetSource,
    game: Game,
    engine: NetEngine,
) -> Result<Box<dyn Evaluator>, PlayerError> {
    Ok(build_evaluators(source, game, 1, engine)?.remove(0))
}

/// [`build_evaluators`] for an MCTS player: a fast net trained for the alpha-beta
/// searcher (its `model.json` says `"search": "alphabeta"`: the value alone, its policy
/// untrained) is refused, naming the player that plays it.
pub fn mcts_evaluators(
    source: &NetSource,
    game: Game,
    threads: usize,
    engine: NetEngine,
) -> Result<Vec<Box<dyn Evaluator>>, PlayerError> {
    if let NetSource::Path(p) = source
        && let ResolvedNet::Model(dir) = resolve_net(p)?
        && fastnet::io::is_fastnet(&dir)
    {
        let search = fastnet::io::search_of(&dir).map_err(|e| {
            PlayerError::Model(format!("cannot load fast net {}: {e}", dir.display()))
        })?;
        if search == selfplay::SearchKind::AlphaBeta {
            return Err(PlayerError::Model(format!(
                "{} is a value net for the alpha-beta searcher (model.json: \"search\": \"alphabeta\"; its policy is untrained): play it as abnet:{}",
                dir.display(),
                p.display()
            )));
        }
    }
    build_evaluators(source, game, threads, engine)
}

/// `threads` fresh evaluators for `source` playing `game` (one per search thread; the
/// model is loaded once).
pub fn build_evaluators(
    source: &NetSource,
    game: Game,
    threads: usize,
    engine: NetEngine,
) -> Result<Vec<Box<dyn Evaluator>>, PlayerError> {
    let threads = threads.max(1);
    if let Some((dir, net)) = load_fastnet(source, game)? {
        let name = dir.display().to_string();
        return Ok((0..threads)
            .map(|_| {
                Box::new(fastnet::FastEvaluator::new(net.clone(), &name)) as Box<dyn Evaluator>
            })
            .collect());
    }
    Ok(match load_network(source, game)? {
        None => (0..threads)
            .map(|_| Box::new(Bootstrap::new(2)) as Box<dyn Evaluator>)
            .collect(),
        Some((dir, model)) => {
            // The fast path is checked against Burn here, before any game.
            let make = train::infer::evaluators(&model, &dir.display().to_string(), engine, "cpu")
                .map_err(|e| PlayerError::Model(format!("model {}: {e}", dir.display())))?;
            (0..threads).map(|_| make()).collect()
        }
    })
}

pub use selfplay::mcts::player::batch_for;

/// How an MCTS player thinks when no clock is given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Thinking {
    /// This many new simulations a move.
    Sims(u32),
    /// This long a move.
    Time(Duration),
}

/// MCTS with one evaluator per search thread, keeping its tree between moves: `sims`
/// simulations a move, or as many as fit in its time or its clock's budget.
pub struct MctsPlayer {
    evaluators: Vec<Box<dyn Evaluator>>,
    tree: TreePlayer,
    thinking: Thinking,
    time_manager: TimeManager,
}

impl MctsPlayer {
    /// A player with one search thread per evaluator (at least one is needed), gathering
    /// up to `batch` leaves per evaluator call, searching as [`MctsConfig::for_play`].
    pub fn new(
        evaluators: Vec<Box<dyn Evaluator>>,
        thinking: Thinking,
        batch: usize,
        seed: u64,
    ) -> Result<MctsPlayer, PlayerError> {
        if evaluators.is_empty() {
            return Err(PlayerError::Search(PlayError::NoEvaluator));
        }
        Ok(MctsPlayer {
            evaluators,
            tree: TreePlayer::new(MctsConfig::for_play(), batch, seed),
            thinking: match thinking {
                Thinking::Sims(n) => Thinking::Sims(n.max(1)),
                t => t,
            },
            time_manager: TimeManager::default(),
        })
    }

    /// Sets the search's tunable settings from the next search on (the kept tree is dropped).
    pub fn set_params(&mut self, params: &crate::players::params::SearchParams) {
        params.apply(self.tree.config_mut());
    }

    /// Sets the leaves gathered per evaluator call from the next search on.
    pub fn set_batch(&mut self, batch: usize) {
        self.tree.set_batch(batch);
    }

    /// Whether the tree of a move is kept for the next (default); off, every move
    /// searches from a new tree.
    pub fn set_tree_reuse(&mut self, on: bool) {
        self.tree.set_tree_reuse(on);
    }

    /// Bounds the tree of every search, in bytes (see [`selfplay::PlaySearch::set_tree_limit`]).
    pub fn set_tree_limit(&mut self, bytes: usize) {
        self.tree.set_tree_limit(bytes);
    }

    /// Seeds the random choices of its next new tree (see [`TreePlayer::new`]).
    pub fn set_seed(&mut self, seed: u64) {
        self.tree.set_seed(seed);
    }

    /// Makes the memory of its next new tree ready ([`TreePlayer::prepare`]): a new
    /// game's first search then spends no time faulting its pages in. An engine does
    /// this at `isready`.
    pub fn prepare(&mut self) {
        self.tree.prepare(self.evaluators.len());
    }

    /// Sets the time kept off every clock budget for latency.
    pub fn set_move_overhead(&mut self, overhead: Duration) {
        self.time_manager.move_overhead = overhead;
    }

    /// The counts of the last search (none after a forced move).
    pub fn last_stats(&self) -> Option<PlayStats> {
        self.tree.last_stats()
    }

    /// The last search's tree as an analysis board shows it: the root's value for its
    /// side to move and each root move's line (see [`selfplay::Search::root_lines`]);
    /// none before a search or after a forced move.
    pub fn analysis(&self, pv_len: usize) -> Option<(f32, Vec<selfplay::RootLine>)> {
        let tree = self.tree.last_tree()?;
        Some((tree.root_value(), tree.root_lines(pv_len)))
    }

    /// Search threads.
    pub fn threads(&self) -> usize {
        self.evaluators.len()
    }

    /// The move for `state` within `limits` or until `stop` is set (then the most visited
    /// move so far); the tree of the previous move is kept when it holds `state`.
    pub fn search(
        &mut self,
        state: &State,
        limits: PlayLimits,
        stop: &AtomicBool,
    ) -> Result<Move, PlayerError> {
        Ok(self
            .tree
            .choose(&mut self.evaluators, state, limits, stop)?)
    }

    /// The time budget of a move on `clock` in `state`, by this player's time manager.
    pub fn budget(&self, state: &State, clock: &ClockState) -> TimeBudget {
        self.time_manager.budget(clock, expected_moves_left(state))
    }
}

impl Player for MctsPlayer {
    fn new_game(&mut self) -> Result<(), PlayerError> {
        self.tree.new_game();
        Ok(())
    }

    fn last_evaluation(&self) -> Option<Evaluation> {
        self.analysis(0).map(|(v, _)| Evaluation::Value(v))
    }

    fn choose(&mut self, state: &State) -> Result<Move, PlayerError> {
        self.choose_until(state, &AtomicBool::new(false))
    }

    /// Ends the search early (with the most visited move so far) once `stop` is set.
    fn choose_until(&mut self, state: &State, stop: &AtomicBool) -> Result<Move, PlayerError> {
        let limits = match self.thinking {
            Thinking::Sims(n) => PlayLimits {
                sims: Some(n),
                time: None,
            },
            Thinking::Time(t) => PlayLimits {
                sims: None,
                time: Some(TimeBudget::fixed(t)),
            },
        };
        self.search(state, limits, stop)
    }

    fn choose_timed(&mut self, state: &State, clock: &ClockState) -> Result<Move, PlayerError> {
        let limits = PlayLimits {
            sims: None,
            time: Some(self.budget(state, clock)),
        };
        self.search(state, limits, &AtomicBool::new(false))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Plays the first move pair of a game and searches the third position; returns
    /// that search's counts.
    fn third_search(reuse: bool, batch: usize) -> PlayStats {
        let evaluators: Vec<Box<dyn Evaluator>> = vec![Box::new(Bootstrap::new(2))];
        let mut p = MctsPlayer::new(evaluators, Thinking::Sims(64), batch, 7).unwrap();
        p.set_tree_reuse(reuse);
        let mut s = "ataxx".parse::<engine::Game>().unwrap().startpos();
        let m = p.choose(&s).unwrap();
        s.play(m);
        // The opponent answers with the move this player expected most.
        let reply = p.choose(&s).unwrap();
        s.play(reply);
        p.choose(&s).unwrap();
        p.last_stats().unwrap()
    }

    #[test]
    fn the_basic_search_keeps_no_tree_and_evaluates_one_leaf_a_call() {
        let full = third_search(true, 8);
        assert!(full.reused_visits > 0, "{full:?}");
        assert!(full.batches < full.evaluations, "{full:?}");
        let basic = third_search(false, 1);
        assert_eq!(basic.reused_visits, 0, "{basic:?}");
        assert_eq!(basic.batches, basic.evaluations, "{basic:?}");
    }
}
