//! The fixed baseline players of the ladder: random, greedy and alpha-beta.

use std::sync::atomic::AtomicBool;

use engine::search::{Limits, Params, Searcher};
use engine::{Move, Rng, State};
use selfplay::{ClockState, TimeBudget, TimeManager, expected_moves_left};

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

/// An alpha-beta player's search: the full-width search (the ladder's `ab1`…`ab64`, a
/// yardstick whose strength stays fixed) or the tuned one (every other `ab` and `abnet:`
/// player), each with parameters set by name (`ab:time=100,rfp_margin=60`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AbSearch {
    /// The full-width search's parameters are the base ([`Params::FULL_WIDTH`]), not
    /// the tuned ones ([`Params::TUNED`]).
    pub full_width: bool,
    /// The parameters, the base's with the settings given.
    pub params: Params,
}

impl AbSearch {
    /// The tuned search.
    pub const TUNED: AbSearch = AbSearch {
        full_width: false,
        params: Params::TUNED,
    };

    /// The full-width search.
    pub const FULL_WIDTH: AbSearch = AbSearch {
        full_width: true,
        params: Params::FULL_WIDTH,
    };

    fn base(&self) -> Params {
        if self.full_width {
            Params::FULL_WIDTH
        } else {
            Params::TUNED
        }
    }

    /// Sets `key` to `value`: `search=full|tuned` (the settings given so far stay), or
    /// a search parameter; `Ok(false)` when `key` is neither, `Err` names a bad value.
    pub fn set(&mut self, key: &str, value: &str) -> Result<bool, String> {
        if key == "search" {
            let set = self.params.diff(&self.base());
            self.full_width = match value {
                "full" => true,
                "tuned" => false,
                _ => return Err(format!("`search={value}`: expected full or tuned")),
            };
            self.params = self.base();
            for (k, v) in set {
                self.params
                    .set(k, &v.to_string())
                    .map_err(|e| e.to_string())?;
            }
            return Ok(true);
        }
        if engine::search::param_spec(key).is_none() {
            return Ok(false);
        }
        self.params.set(key, value).map_err(|e| e.to_string())?;
        Ok(true)
    }

    /// Every setting, the defaults too: `search=full|tuned`, then each parameter as
    /// `key=value` in the table's order (what a record pins: a default may change
    /// between builds).
    pub fn all(&self) -> Vec<String> {
        let kind = if self.full_width { "full" } else { "tuned" };
        std::iter::once(format!("search={kind}"))
            .chain(engine::search::PARAMS.iter().map(|p| {
                let v = self.params.get(p.name).expect("a parameter of the table");
                format!("{}={v}", p.name)
            }))
            .collect()
    }

    /// The parameters set, as `key=value`, in the table's order.
    pub fn parts(&self) -> Vec<String> {
        self.params
            .diff(&self.base())
            .into_iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect()
    }
}

/// The alpha-beta limits of a move on a clock: the time manager's soft limit is where
/// iterations stop starting (scaled by the search's `tm_*` parameters), its hard limit
/// where the search stops; `own` limits of depth and nodes still apply. The one rule of
/// every alpha-beta player on a clock (matches, `flipzero uai`, NBoard).
pub fn clock_limits(budget: TimeBudget, own: Limits) -> Limits {
    Limits {
        soft_time: Some(budget.soft),
        time: Some(budget.hard),
        ..own
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
    /// A search with `limits`, the parameters of `search` and its own 16 MiB table.
    pub fn new(limits: Limits, search: &AbSearch) -> AlphaBetaPlayer {
        AlphaBetaPlayer {
            searcher: Searcher::new(16).with_params(search.params),
            limits,
            last_score: None,
        }
    }

    fn play(&mut self, state: &State, limits: Limits, stop: &AtomicBool) -> Move {
        let report = self
            .searcher
            .search(state, limits, stop, |_| {})
            .expect("not over");
        // A search stopped before its first iteration has no score of its own.
        self.last_score = (report.depth > 0).then_some(report.score);
        report.pv[0]
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
        Ok(self.play(state, self.limits, stop))
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
        let limits = clock_limits(budget, self.limits);
        Ok(self.play(state, limits, &AtomicBool::new(false)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_setting_is_listed_and_only_changes_are_named() {
        let mut s = AbSearch::TUNED;
        s.set("rfp_margin", "100").unwrap();
        assert_eq!(s.parts(), ["rfp_margin=100"]);
        let all = s.all();
        assert_eq!(all.len(), 1 + engine::search::PARAMS.len());
        assert_eq!(all[0], "search=tuned");
        assert!(all.contains(&"rfp_margin=100".to_string()), "{all:?}");
        // A default is listed at its value, so a record tells builds apart.
        let lmr = format!("lmr_mult={}", Params::TUNED.lmr_mult);
        assert!(all.contains(&lmr), "{all:?}");
        // The full-width search keeps the changes made so far.
        assert!(s.set("search", "full").unwrap());
        assert_eq!(s.all()[0], "search=full");
        assert!(s.all().contains(&"rfp_margin=100".to_string()));
        assert!(s.all().contains(&"lmr_depth=0".to_string()));
    }
}
