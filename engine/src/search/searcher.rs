//! The searcher's state and the facts every part of the search shares: the score
//! scale, the limits and the report, the leaf evaluation's trait, and the hash-key and
//! score conversions. A leaf of the search's modules: the iterative deepening
//! (`mod.rs`) and the node (`node.rs`) both build on it.

use std::time::{Duration, Instant};

use super::params::Params;
use super::{eval, tt};
use crate::{Move, State};

/// Score of a won game at the root; a win in `n` plies scores `MATE - n`.
pub const MATE: i32 = 30_000;
pub(super) const INF: i32 = 32_000;
/// A network's value unit in the search's scores: a net whose value is `tanh(x)` scores
/// `VALUE_SCALE * x` (±400 for ±0.76), about four pieces of the hand-written
/// evaluation.
pub const VALUE_SCALE: i32 = 400;

/// The value in [−1, 1] of a search score: `tanh(score / VALUE_SCALE)`, ±1 for a proven
/// result.
pub fn value_of_score(score: i32) -> f32 {
    if score.abs() >= MATE - MAX_PLY as i32 {
        score.signum() as f32
    } else {
        (score as f32 / VALUE_SCALE as f32).tanh()
    }
}
pub(super) const MAX_PLY: usize = 128;

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
/// (e.g. a network's value): the side to move's view, in the units of `evaluate` (about
/// 100 a piece), inside ±(MATE − 1000) (larger values are clamped there, so that no
/// evaluation reads as a forced result).
pub trait StaticEval: Send {
    /// The evaluation of `s` (a position whose game is not over).
    fn evaluate(&mut self, s: &State) -> i32;
}

/// An alpha-beta searcher with its parameters, transposition table and ordering tables,
/// reused from move to move.
pub struct Searcher {
    pub(super) params: Params,
    /// The hand-written evaluation's weights (from `params`).
    pub(super) weights: eval::Weights,
    /// The leaves' evaluation, when not the built-in one.
    pub(super) eval: Option<Box<dyn StaticEval>>,
    pub(super) tt: tt::Table,
    pub(super) killers: Vec<[Option<Move>; 2]>,
    /// Per side and move (`order::history_index`): how often it cut, recently.
    pub(super) history: Vec<i32>,
    pub(super) moves: Vec<Vec<Move>>,
    /// Per ply, the ordering keys: score in the high half, `u32::MAX - index` in the low
    /// half, so that sorting them in decreasing order is a stable sort by score.
    pub(super) ordered: Vec<Vec<u64>>,
    pub(super) pv: Vec<Vec<Move>>,
    /// Per ply, the static evaluation (for `improving`).
    pub(super) evals: Vec<i32>,
    /// Per ply, the move a singular search leaves out.
    pub(super) excluded: Vec<Option<Move>>,
    /// Per ply, whether the move into it was a null move.
    pub(super) after_null: Vec<bool>,
    /// Late move reductions by depth and move number, plies.
    pub(super) lmr: Box<[[u8; 64]; 64]>,
    /// Nodes spent below each root move in this search.
    pub(super) root_nodes: Vec<(Move, u64)>,
    pub(super) nodes: u64,
    pub(super) seldepth: u32,
    pub(super) limits: Limits,
    /// When the search started (`None` without a clock: see [`crate::clock`]).
    pub(super) start: Option<Instant>,
    pub(super) aborted: bool,
}

/// The table key: the Zobrist hash, with the half-move clock mixed in for the Ataxx
/// family (near the adjudication limit the same cells can be a draw or not).
#[inline(always)]
pub(super) fn tt_key(s: &State) -> u64 {
    match s {
        State::Ataxx(p) => s.hash() ^ crate::splitmix64(u64::from(p.halfmove_clock())).1,
        State::Flank(_) => s.hash(),
    }
}

/// Mate scores are stored relative to the node, so that they stay right when the same
/// position is reached at another ply.
pub(super) fn to_tt(score: i32, ply: usize) -> i32 {
    if score > MATE - MAX_PLY as i32 {
        score + ply as i32
    } else if score < -MATE + MAX_PLY as i32 {
        score - ply as i32
    } else {
        score
    }
}

pub(super) fn from_tt(score: i32, ply: usize) -> i32 {
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
pub(super) fn terminal_score(s: &State, ply: usize) -> i32 {
    match s.result().and_then(|r| r.winner) {
        None => 0,
        Some(w) if w == s.side_to_move() => MATE - ply as i32,
        Some(_) => -(MATE - ply as i32),
    }
}
