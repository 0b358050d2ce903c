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
mod tt;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::isa::{Level, with_level};
use crate::{Isa, Move, State};
pub use eval::{Weights, evaluate, evaluate_with};
use node::{Node, Window};
pub use params::{PARAMS, ParamError, ParamSpec, Params, spec as param_spec};

/// Score of a won game at the root; a win in `n` plies scores `MATE - n`.
pub const MATE: i32 = 30_000;
const INF: i32 = 32_000;
const MAX_PLY: usize = 128;

/// When to stop searching. Unset limits do not apply; with none set, the search runs to
/// depth 64 or until stopped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    /// Deepest iteration.
    pub depth: Option<u32>,
    /// Nodes to search at most (the search stops at once when they are spent).
    pub nodes: Option<u64>,
    /// Time to search at most (the hard limit: the search stops at once). Without
    /// `soft_time`, no iteration starts past half of it.
    pub time: Option<Duration>,
    /// The time a search aims for: no iteration starts past it, scaled by how settled the
    /// best move is (the `tm_*` parameters).
    pub soft_time: Option<Duration>,
    /// No iteration starts once this many nodes were searched.
    pub soft_nodes: Option<u64>,
}

/// What one completed iteration found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchReport {
    /// Iteration depth.
    pub depth: u32,
    /// The deepest ply reached.
    pub seldepth: u32,
    /// Score from the side to move's view, in centi-pieces; `MATE - n` for a win in `n`.
    pub score: i32,
    /// Nodes searched so far.
    pub nodes: u64,
    /// Time since the search started.
    pub time: Duration,
    /// Principal variation; its first move is the best move.
    pub pv: Vec<Move>,
}

/// A static evaluation the search calls at its leaves in place of the hand-written one
/// (e.g. a network's value): the side to move's view, in the units of [`evaluate`] (about
/// 100 a piece), inside ±(MATE − 1000) (larger values are clamped there, so that no
/// evaluation reads as a forced result).
pub trait StaticEval: Send {
    /// The evaluation of `s` (a position whose game is not over).
    fn evaluate(&mut self, s: &State) -> i32;
}

/// An alpha-beta searcher with its parameters, transposition table and ordering tables,
/// reused from move to move.
pub struct Searcher {
    params: Params,
    /// The hand-written evaluation's weights (from `params`).
    weights: eval::Weights,
    /// The leaves' evaluation, when not the built-in one.
    eval: Option<Box<dyn StaticEval>>,
    tt: tt::Table,
    killers: Vec<[Option<Move>; 2]>,
    /// Per side and move ([`order::history_index`]): how often it cut, recently.
    history: Vec<i32>,
    moves: Vec<Vec<Move>>,
    /// Per ply, the ordering keys: score in the high half, `u32::MAX - index` in the low
    /// half, so that sorting them in decreasing order is a stable sort by score.
    ordered: Vec<Vec<u64>>,
    pv: Vec<Vec<Move>>,
    /// Per ply, the static evaluation (for `improving`).
    evals: Vec<i32>,
    /// Per ply, the move a singular search leaves out.
    excluded: Vec<Option<Move>>,
    /// Per ply, whether the move into it was a null move.
    after_null: Vec<bool>,
    /// Late move reductions by depth and move number, plies.
    lmr: Box<[[u8; 64]; 64]>,
    /// Nodes spent below each root move in this search.
    root_nodes: Vec<(Move, u64)>,
    nodes: u64,
    seldepth: u32,
    limits: Limits,
    start: Instant,
    aborted: bool,
}

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
            start: Instant::now(),
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
        self.start = Instant::now();
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
                time: self.start.elapsed(),
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
        best.time = self.start.elapsed();
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
        let elapsed = self.start.elapsed().as_secs_f64();
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
                && self.start.elapsed() >= t
            {
                return true;
            }
        }
        false
    }
}

/// The constant of [`fastmod`] for divisor `d` (> 0): ⌈2¹²⁸ / d⌉ (mod 2¹²⁸).
fn fastmod_magic(d: u64) -> u128 {
    (u128::MAX / u128::from(d)).wrapping_add(1)
}

/// `a % d` by multiplications (Lemire, Kaser and Kurz, "Faster remainder by direct
/// computation", 2019: exact for every 64-bit `a` and `d` with a 128-bit constant).
#[inline(always)]
fn fastmod(a: u64, magic: u128, d: u64) -> u64 {
    let low = magic.wrapping_mul(u128::from(a));
    let bottom = ((low & u128::from(u64::MAX)) * u128::from(d)) >> 64;
    let top = (low >> 64) * u128::from(d);
    ((bottom + top) >> 64) as u64
}

/// The table key: the Zobrist hash, with the half-move clock mixed in for the Ataxx
/// family (near the adjudication limit the same cells can be a draw or not).
#[inline(always)]
fn tt_key(s: &State) -> u64 {
    match s {
        State::Ataxx(p) => s.hash() ^ crate::splitmix64(u64::from(p.halfmove_clock())).1,
        State::Flank(_) => s.hash(),
    }
}

/// Mate scores are stored relative to the node, so that they stay right when the same
/// position is reached at another ply.
fn to_tt(score: i32, ply: usize) -> i32 {
    if score > MATE - MAX_PLY as i32 {
        score + ply as i32
    } else if score < -MATE + MAX_PLY as i32 {
        score - ply as i32
    } else {
        score
    }
}

fn from_tt(score: i32, ply: usize) -> i32 {
    if score > MATE - MAX_PLY as i32 {
        score - ply as i32
    } else if score < -MATE + MAX_PLY as i32 {
        score + ply as i32
    } else {
        score
    }
}

/// Score of a finished game from the side to move's view: a loss in `ply` plies from the
/// root scores `-(MATE - ply)`, a draw 0.
fn terminal_score(s: &State, ply: usize) -> i32 {
    match s.result().and_then(|r| r.winner) {
        None => 0,
        Some(w) if w == s.side_to_move() => MATE - ply as i32,
        Some(_) => -(MATE - ply as i32),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fastmod_is_the_remainder() {
        let mut rng = crate::Rng::new(1);
        for d in [
            1,
            2,
            3,
            7,
            1024,
            699_050,
            u32::MAX as u64,
            u64::MAX - 1,
            u64::MAX,
        ] {
            let m = fastmod_magic(d);
            for a in [0, 1, d - 1, d, d.wrapping_add(1), u64::MAX, u64::MAX - 1] {
                assert_eq!(fastmod(a, m, d), a % d, "{a} % {d}");
            }
            for _ in 0..10_000 {
                let a = rng.next_u64();
                assert_eq!(fastmod(a, m, d), a % d, "{a} % {d}");
            }
        }
    }
}
