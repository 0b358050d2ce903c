//! The fixed baseline players of the ladder: random, greedy and alpha-beta.

use std::sync::atomic::AtomicBool;

use engine::search::{Limits, Searcher};
use engine::{Move, Rng, State};
use selfplay::{ClockState, TimeManager, expected_moves_left};

use super::{Evaluation, Player, PlayerError};

/// Plays uniformly random legal moves.
pub struct RandomPlayer(pub(crate) Rng);

impl Player for RandomPlayer {
    fn choose(&mut self, state: &State) -> Result<Move, PlayerError> {
        let moves = state.legal_moves();
        Ok(moves[self.0.below(moves.len() as u64) as usize])
    }
}

/// Plays the move with the largest immediate change of the piece margin (the smallest in
/// misère), breaking ties at random.
pub struct GreedyPlayer(pub(crate) Rng);

impl Player for GreedyPlayer {
    fn choose(&mut self, state: &State) -> Result<Move, PlayerError> {
        let sign = if state.game().misere() { -1 } else { 1 };
        let moves = state.legal_moves();
        let value = |m: Move| sign * (state.gain(m) + state.flips(m)) as i64;
        let best = moves.iter().map(|&m| value(m)).max().expect("a legal move");
        let top: Vec<Move> = moves.into_iter().filter(|&m| value(m) == best).collect();
        Ok(top[self.0.below(top.len() as u64) as usize])
    }
}

/// Alpha-beta search with fixed limits; on a clock, its time comes from the time manager
/// (its depth and node limits still apply).
pub struct AlphaBetaPlayer {
    pub(crate) searcher: Searcher,
    pub(crate) limits: Limits,
    /// The last search's score (centi-pieces; `MATE - n` for a win in `n`).
    pub(crate) last_score: Option<i32>,
}

impl AlphaBetaPlayer {
    /// A search with `limits` and its own 16 MiB table.
    pub fn new(limits: Limits) -> AlphaBetaPlayer {
        AlphaBetaPlayer {
            searcher: Searcher::new(16),
            limits,
            last_score: None,
        }
    }
}

impl Player for AlphaBetaPlayer {
    fn new_game(&mut self) -> Result<(), PlayerError> {
        self.searcher.clear();
        Ok(())
    }

    fn choose(&mut self, state: &State) -> Result<Move, PlayerError> {
        self.choose_until(state, &AtomicBool::new(false))
    }

    fn choose_until(&mut self, state: &State, stop: &AtomicBool) -> Result<Move, PlayerError> {
        let report = self
            .searcher
            .search(state, self.limits, stop, |_| {})
            .expect("not over");
        // A search stopped before its first iteration has no score of its own.
        self.last_score = (report.depth > 0).then_some(report.score);
        Ok(report.pv[0])
    }

    fn last_evaluation(&self) -> Option<Evaluation> {
        let s = self.last_score?;
        Some(if s.abs() > engine::search::MATE - 1000 {
            Evaluation::Value(s.signum() as f32)
        } else {
            Evaluation::Pieces(s as f32 / 100.0)
        })
    }

    fn choose_timed(&mut self, state: &State, clock: &ClockState) -> Result<Move, PlayerError> {
        let budget = TimeManager::default().budget(clock, expected_moves_left(state));
        // Iterative deepening starts no iteration past half its time: twice the soft
        // limit, within the hard one, spends about the soft limit.
        let limits = Limits {
            time: Some((budget.soft * 2).min(budget.hard)),
            ..self.limits
        };
        let stop = AtomicBool::new(false);
        let report = self
            .searcher
            .search(state, limits, &stop, |_| {})
            .expect("not over");
        // A search stopped before its first iteration has no score of its own.
        self.last_score = (report.depth > 0).then_some(report.score);
        Ok(report.pv[0])
    }
}
