//! A game's player by tree search: the play-time configuration, one [`PlaySearch`] kept
//! between the moves of a game, a search seeded by the player's seed and the position.
//! What every MCTS player of the project runs (the match player, UAI, the analysis
//! board, the WebAssembly player), so that a seed and a simulation count give the same
//! moves wherever it runs.

use std::sync::atomic::AtomicBool;

use engine::{Move, State};

use super::config::MctsConfig;
use super::memory::{DEFAULT_TREE_BYTES, PREPARED_TREE_BYTES, PlayMemory};
use super::play::{PlayError, PlayLimits, PlaySearch, PlayStats, one_leaf};
use crate::evaluator::Evaluator;

/// PUCT's play-time exploration constant and first-play-urgency reduction: the SPSA
/// tuning of docs/strength.md "Tuning the search by matches" (600 game pairs of the
/// shipped fast net against itself at 1 s + 10 ms from self-play's 1.5 and 0.2 gave
/// 1.4485 ± 0.016 and 0.0361 ± 0.0033), rounded to the hundredths that the UAI options
/// take. Self-play keeps its own: with root noise, forced playouts and a fixed count of
/// simulations it is another search.
pub const PLAY_C_PUCT: f32 = 1.45;
/// See [`PLAY_C_PUCT`].
pub const PLAY_FPU_REDUCTION: f32 = 0.04;

impl MctsConfig {
    /// The play-time search: no root noise and no forced playouts (what self-play adds
    /// for exploration), PUCT's constants tuned for play ([`PLAY_C_PUCT`]), leaves
    /// expanded on their second visit ([`MctsConfig::lazy_expansion`]), everything else
    /// as [`MctsConfig::default`].
    pub fn for_play() -> MctsConfig {
        MctsConfig {
            dirichlet_epsilon: 0.0,
            forced_playouts: false,
            c_puct: PLAY_C_PUCT,
            fpu_reduction: PLAY_FPU_REDUCTION,
            lazy_expansion: true,
            ..MctsConfig::default()
        }
    }
}

/// Leaves per evaluator call for a search of `sims` simulations (`None`: a timed one)
/// with evaluators whose [`Evaluator::preferred_batch`] is `preferred`: that batch,
/// but few enough leaves that virtual loss does not spread a short search thin (a
/// 64-simulation search gathers 4 at a time).
pub fn batch_for(sims: Option<u32>, preferred: usize) -> usize {
    let preferred = preferred.max(1);
    match sims {
        None => preferred,
        Some(n) => (n as usize / 16).clamp(1, preferred),
    }
}

/// A player's search over a game: its configuration, batch and seed, and the tree of
/// its last move (kept for the next move when it holds the new position).
pub struct TreePlayer {
    cfg: MctsConfig,
    batch: usize,
    seed: u64,
    search: Option<PlaySearch>,
    /// The memory of the last tree dropped, or made ready ([`TreePlayer::prepare`]), for
    /// the next.
    memory: Option<PlayMemory>,
    tree_reuse: bool,
    tree_limit: usize,
    last: Option<PlayStats>,
}

impl TreePlayer {
    /// A player searching with `cfg`, gathering up to `batch` leaves per evaluator call;
    /// `seed` drives its random choices.
    pub fn new(cfg: MctsConfig, batch: usize, seed: u64) -> TreePlayer {
        TreePlayer {
            cfg,
            batch: batch.max(1),
            seed,
            search: None,
            memory: None,
            tree_reuse: true,
            tree_limit: DEFAULT_TREE_BYTES,
            last: None,
        }
    }

    /// The configuration, to change from the next search on (the kept tree is dropped).
    pub fn config_mut(&mut self) -> &mut MctsConfig {
        self.drop_tree();
        &mut self.cfg
    }

    /// Drops the kept tree, keeping its memory for the next.
    fn drop_tree(&mut self) {
        if let Some(s) = self.search.take() {
            self.memory = Some(s.into_memory());
        }
    }

    /// Makes the memory of the next new tree ready (for a search on `threads` threads):
    /// [`PREPARED_TREE_BYTES`] (half the tree's bound at most) allocated and written, so
    /// that its search spends no time faulting pages in (see [`PlayMemory`]). Nothing
    /// while a tree is kept: the next move searches in its memory.
    pub fn prepare(&mut self, threads: usize) {
        if self.search.is_none() {
            let bytes = PREPARED_TREE_BYTES.min(self.tree_limit / 2);
            self.memory
                .get_or_insert_with(PlayMemory::new)
                .prepare(bytes, one_leaf(threads, self.batch));
        }
    }

    /// Seeds the random choices of the next new tree (each new tree's seed is this one
    /// with its root's hash mixed in).
    pub fn set_seed(&mut self, seed: u64) {
        self.seed = seed;
    }

    /// Sets the leaves gathered per evaluator call.
    pub fn set_batch(&mut self, batch: usize) {
        self.batch = batch.max(1);
        if let Some(s) = &mut self.search {
            s.set_batch(self.batch);
        }
    }

    /// Bounds the tree of every search ([`PlaySearch::set_tree_limit`]; by default
    /// [`DEFAULT_TREE_BYTES`]).
    pub fn set_tree_limit(&mut self, bytes: usize) {
        self.tree_limit = bytes;
        if let Some(s) = &mut self.search {
            s.set_tree_limit(bytes);
        }
    }

    /// Whether the tree of a move is kept for the next (default); off, every move
    /// searches from a new tree.
    pub fn set_tree_reuse(&mut self, on: bool) {
        self.tree_reuse = on;
    }

    /// Forgets the kept tree (a new game).
    pub fn new_game(&mut self) {
        self.drop_tree();
    }

    /// The counts of the last search (none after a forced move).
    pub fn last_stats(&self) -> Option<PlayStats> {
        self.last
    }

    /// The tree of the last search (none before a search or after a forced move).
    pub fn last_tree(&self) -> Option<&super::search::Search> {
        self.last?;
        Some(self.search.as_ref()?.tree())
    }

    /// The move for `state` with one search thread per evaluator, within `limits` or
    /// until `stop` is set (then the most visited move so far). A forced move is played
    /// without a search. The tree of the previous move is kept when it holds `state`
    /// (and is within half its bound, [`PlaySearch::set_tree_limit`]); a new tree is
    /// seeded by the player's seed and the position.
    pub fn choose(
        &mut self,
        evaluators: &mut [Box<dyn Evaluator>],
        state: &State,
        limits: PlayLimits,
        stop: &AtomicBool,
    ) -> Result<Move, PlayError> {
        let moves = state.legal_moves();
        if moves.len() == 1 {
            self.last = None;
            return Ok(moves[0]);
        }
        if !self.tree_reuse {
            self.drop_tree();
        }
        let search = match &mut self.search {
            Some(s) => {
                s.set_position(state);
                s
            }
            none => {
                let mut fresh = PlaySearch::in_memory(
                    *state,
                    self.cfg.clone(),
                    self.batch,
                    self.seed ^ state.hash(),
                    self.memory.take().unwrap_or_default(),
                );
                fresh.set_tree_limit(self.tree_limit);
                none.insert(fresh)
            }
        };
        let (out, stats) = search.run(evaluators, limits, stop)?;
        self.last = Some(stats);
        Ok(out.best)
    }
}
