//! Alpha-beta search for every game: iterative deepening with aspiration windows,
//! principal-variation search, a bucketed transposition table, the pruning, reduction
//! and extension techniques of modern engines, and time management by soft and hard
//! limits. Every technique and constant is a parameter ([`Params`], [`PARAMS`]), tuned by
//! matches; [`Params::FULL_WIDTH`] switches them all off (plain alpha-beta: exact
//! fixed-depth values, proofs to the end).
//!
//! The node count of a depth- or node-limited search depends only on the position, the
//! limits, the parameters and the table size: the same build gives the same count (see
//! `flipzero bench`).

mod eval;
mod node;
mod order;
mod params;
mod searcher;
mod tt;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::isa::{Level, with_level};
use crate::{Isa, Move, State};
pub use eval::{Weights, evaluate, evaluate_with};
use node::{Node, Window};
pub use params::{PARAMS, ParamError, ParamSpec, Params, spec as param_spec};
use searcher::{INF, MAX_PLY};
pub use searcher::{Limits, MATE, SearchReport, Searcher, StaticEval, VALUE_SCALE, value_of_score};

impl Searcher {
    /// A searcher with the tuned parameters and a transposition table of about `hash_mb`
    /// MiB (at least 16 KiB).
    pub fn new(hash_mb: usize) -> Searcher {
        let mut s = Searcher {
            params: Params::TUNED,
            weights: eval::Weights::of(&Params::TUNED),
            eval: None,
            tt: tt::Table::new(hash_mb),
            killers: vec![[None; 2]; MAX_PLY],
            history: vec![0; 2 << 16],
            moves: vec![Vec::new(); MAX_PLY],
            ordered: vec![Vec::new(); MAX_PLY],
            pv: vec![Vec::new(); MAX_PLY + 1],
            evals: vec![0; MAX_PLY + 1],
            excluded: vec![None; MAX_PLY + 1],
            after_null: vec![false; MAX_PLY + 1],
            lmr: Box::new([[0; 64]; 64]),
            root_nodes: Vec::new(),
            nodes: 0,
            seldepth: 0,
            limits: Limits::default(),
            start: None,
            aborted: false,
        };
        s.set_params(Params::TUNED);
        s
    }

    /// A full-width searcher ([`Params::FULL_WIDTH`]): exact values to a fixed depth,
    /// proofs to the end.
    pub fn full_width(hash_mb: usize) -> Searcher {
        Searcher::new(hash_mb).with_params(Params::FULL_WIDTH)
    }

    /// This searcher with `params`.
    pub fn with_params(mut self, params: Params) -> Searcher {
        self.set_params(params);
        self
    }

    /// Sets the parameters (the tables are kept).
    pub fn set_params(&mut self, params: Params) {
        self.params = params;
        self.weights = eval::Weights::of(&params);
        for (d, row) in self.lmr.iter_mut().enumerate() {
            for (m, r) in row.iter_mut().enumerate() {
                let ln = |x: usize| (x.max(1) as f64).ln();
                let v = f64::from(params.lmr_base) / 100.0
                    + ln(d) * ln(m) * f64::from(params.lmr_mult) / 100.0;
                *r = v.round().clamp(0.0, 63.0) as u8;
            }
        }
    }

    /// The parameters.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// This searcher with `eval` at its leaves instead of the built-in evaluation.
    pub fn with_eval(mut self, eval: Box<dyn StaticEval>) -> Searcher {
        self.set_eval(Some(eval));
        self
    }

    /// Sets the leaves' evaluation (`None`: the built-in one). The tables are kept: a
    /// caller that changes what the scores mean calls [`Searcher::clear`].
    pub fn set_eval(&mut self, eval: Option<Box<dyn StaticEval>>) {
        self.eval = eval;
    }

    /// Forgets everything learnt (a new game).
    pub fn clear(&mut self) {
        self.tt.clear();
        self.killers.fill([None; 2]);
        self.history.fill(0);
    }

    /// Searches `root` within `limits`, or until `stop` is set, calling `on_iteration`
    /// after every completed iteration. Returns the last completed iteration (at least a
    /// legal move if the root has one; a move of a stopped iteration that was searched in
    /// full and beat the last iteration's window replaces its move), or `None` if the
    /// game is over.
    pub fn search(
        &mut self,
        root: &State,
        limits: Limits,
        stop: &AtomicBool,
        mut on_iteration: impl FnMut(&SearchReport),
    ) -> Option<SearchReport> {
        let root_moves = root.legal_moves();
        let first = *root_moves.first()?;
        self.limits = limits;
        self.start = crate::clock::now();
        self.nodes = 0;
        self.seldepth = 0;
        self.aborted = false;
        self.root_nodes.clear();
        self.tt.new_search();
        let max_depth = limits.depth.unwrap_or(64).clamp(1, MAX_PLY as u32 - 1);
        let mut best = SearchReport {
            depth: 0,
            seldepth: 0,
            score: 0,
            nodes: 0,
            time: Duration::ZERO,
            pv: vec![first],
        };
        for depth in 1..=max_depth {
            let score = with_level!(Isa::current(), L, l => self.iteration(l, root, depth, best.score, stop));
            if self.aborted {
                if let Some(&mv) = self.pv[0].first() {
                    best.pv = self.pv[0].clone();
                    debug_assert!(root_moves.contains(&mv));
                }
                break;
            }
            best = SearchReport {
                depth,
                seldepth: self.seldepth,
                score,
                nodes: self.nodes,
                time: crate::clock::since(self.start),
                pv: self.pv[0].clone(),
            };
            on_iteration(&best);
            if score.abs() >= MATE - MAX_PLY as i32 && limits.depth.is_none() {
                break;
            }
            if self.enough_after(depth, &best) {
                break;
            }
        }
        best.nodes = self.nodes;
        best.time = crate::clock::since(self.start);
        Some(best)
    }

    /// One iteration to `depth`, in an aspiration window around `prev` (the last
    /// iteration's score) that widens until the score falls inside.
    #[inline(always)]
    fn iteration<L: Level>(
        &mut self,
        l: L,
        root: &State,
        depth: u32,
        prev: i32,
        stop: &AtomicBool,
    ) -> i32 {
        let p = self.params;
        let depth = depth as i32;
        let root_search = |s: &mut Searcher, alpha, beta| {
            l.run(Node {
                searcher: s,
                s: root,
                depth,
                ply: 0,
                w: Window { alpha, beta },
                cut_node: false,
                stop,
            })
        };
        if p.asp_depth == 0 || depth < p.asp_depth || prev.abs() >= MATE - MAX_PLY as i32 {
            return root_search(self, -INF, INF);
        }
        let mut delta = p.asp_delta;
        let (mut alpha, mut beta) = ((prev - delta).max(-INF), (prev + delta).min(INF));
        loop {
            let score = root_search(self, alpha, beta);
            if self.aborted {
                return score;
            }
            if score <= alpha && alpha > -INF {
                beta = (alpha + beta) / 2;
                alpha = (score - delta).max(-INF);
            } else if score >= beta && beta < INF {
                beta = (score + delta).min(INF);
            } else {
                return score;
            }
            delta = (delta.saturating_mul(p.asp_growth) / 100).min(INF);
        }
    }

    /// Whether to start no further iteration after `depth`: soft limits of nodes and
    /// time, the latter scaled by the best move's share of the nodes (a move that took
    /// most of the effort is settled; one that took little is in doubt).
    fn enough_after(&self, depth: u32, best: &SearchReport) -> bool {
        if let Some(n) = self.limits.soft_nodes
            && self.nodes >= n
        {
            return true;
        }
        let elapsed = crate::clock::since(self.start).as_secs_f64();
        if let Some(soft) = self.limits.soft_time {
            let p = &self.params;
            let mut scale = f64::from(p.tm_soft) / 100.0;
            if p.tm_nodes_depth > 0 && depth as i32 >= p.tm_nodes_depth {
                let mv = best.pv[0];
                let spent = self
                    .root_nodes
                    .iter()
                    .find(|(m, _)| *m == mv)
                    .map_or(0, |&(_, n)| n);
                let share = spent as f64 / self.nodes.max(1) as f64;
                scale *= (f64::from(p.tm_nodes_base) / 100.0 - share) * f64::from(p.tm_nodes_mult)
                    / 100.0;
            }
            return elapsed >= soft.as_secs_f64() * scale;
        }
        // A new iteration takes longer than all before it: don't start what cannot end.
        self.limits
            .time
            .is_some_and(|t| elapsed * 2.0 > t.as_secs_f64())
    }

    /// Counts `n` nodes spent below the root move `mv`.
    fn count_root_nodes(&mut self, mv: Move, n: u64) {
        match self.root_nodes.iter_mut().find(|(m, _)| *m == mv) {
            Some((_, total)) => *total += n,
            None => self.root_nodes.push((mv, n)),
        }
    }

    /// The static evaluation of `s` (a position whose game is not over).
    #[inline(always)]
    fn static_eval(&mut self, s: &State) -> i32 {
        match &mut self.eval {
            None => self.weights.evaluate(s),
            Some(e) => e.evaluate(s).clamp(-(MATE - 1000), MATE - 1000),
        }
    }

    /// Nodes searched by the last (or current) search.
    pub fn nodes(&self) -> u64 {
        self.nodes
    }

    fn out_of_budget(&mut self, stop: &AtomicBool) -> bool {
        if let Some(n) = self.limits.nodes
            && self.nodes >= n
        {
            return true;
        }
        if self.nodes & 1023 == 0 {
            if stop.load(Ordering::Relaxed) {
                return true;
            }
            if let Some(t) = self.limits.time
                && crate::clock::since(self.start) >= t
            {
                return true;
            }
        }
        false
    }
}
