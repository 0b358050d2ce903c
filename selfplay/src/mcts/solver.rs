//! Proofs: the MCTS-solver (a position is won when a move leads to a position lost for the
//! opponent, and worth the best of its moves when every one is proven), and the exact
//! endgame ([`super::endgame`]) at leaves with few cells left.

use engine::State;

use super::config::MctsConfig;
use super::search::Search;
use super::tree::{Edge, Exact};

impl Search {
    /// Proves what it can of the positions of `path` (edges from the root) above its last
    /// one (whose value is exact), from the bottom up, stopping at the first that stays
    /// unproven.
    pub(super) fn prove_path(&mut self, path: &[u32]) {
        for &e in path.iter().rev().skip(1) {
            if !self.prove(e) {
                break;
            }
        }
    }

    /// Proves the position edge `at` leads to from its moves when they allow it. Returns
    /// whether the position is proven.
    fn prove(&mut self, at: u32) -> bool {
        if self.edges[at as usize].exact.get().is_some() {
            return true;
        }
        let range = self.moves_of(at);
        if range.is_empty() {
            return false;
        }
        let mut best = f32::NEG_INFINITY;
        // A tail's moves were never searched: not all proven.
        let mut all = !self.edges[at as usize].has_tail;
        for e in &self.edges[range] {
            match Search::edge_proof(e) {
                Some(p) if p >= 1.0 => {
                    best = 1.0;
                    all = true;
                    break;
                }
                Some(p) => best = best.max(p),
                None => all = false,
            }
        }
        if all {
            self.edges[at as usize].exact = Exact::of(best);
        }
        all
    }

    /// The proven value of the move of `e` for the side that plays it, if any.
    pub(super) fn edge_proof(e: &Edge) -> Option<f32> {
        e.exact.get().map(|v| -v)
    }

    /// The exact value of leaf `s` when the endgame solver proves it (see
    /// [`MctsConfig::endgame_empties`]); `may_solve` is cleared by an attempt.
    pub(super) fn solve_endgame(
        &mut self,
        s: &State,
        cfg: &MctsConfig,
        may_solve: &mut bool,
    ) -> Option<f32> {
        if !*may_solve || cfg.endgame_empties == 0 {
            return None;
        }
        if s.cells_to_fill() > cfg.endgame_empties {
            return None;
        }
        *may_solve = false;
        self.endgame_solves += 1;
        let searcher = self
            .endgame
            .get_or_insert_with(|| Box::new(engine::search::Searcher::full_width(1)));
        super::endgame::solve(searcher, s, cfg.endgame_nodes)
    }
}
