//! Alpha-beta search for every game: iterative deepening, principal-variation search, a
//! transposition table on the Zobrist hash, move ordering (hash move, piece gain,
//! killers, history), and limits by depth, nodes and time.
//!
//! The node count of a depth- or node-limited search depends only on the position, the
//! limits and the table size: the same build gives the same count (see `flipzero bench`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::flank::{FlankPosition, Phase};
use crate::{Bitboard, Move, Position, State};

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
    /// Nodes to search at most.
    pub nodes: Option<u64>,
    /// Time to search at most.
    pub time: Option<Duration>,
}

/// What one completed iteration found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchReport {
    /// Iteration depth.
    pub depth: u32,
    /// Score from the side to move's view, in centi-pieces; `MATE - n` for a win in `n`.
    pub score: i32,
    /// Nodes searched so far.
    pub nodes: u64,
    /// Time since the search started.
    pub time: Duration,
    /// Principal variation; its first move is the best move.
    pub pv: Vec<Move>,
}

#[derive(Clone, Copy, Default)]
struct TtEntry {
    key: u64,
    score: i32,
    mv: Option<Move>,
    depth: i16,
    bound: Bound,
}

#[derive(Clone, Copy, Default, PartialEq, Eq)]
enum Bound {
    #[default]
    Exact,
    Lower,
    Upper,
}

/// An alpha-beta searcher with its transposition table and ordering tables, reused
/// from move to move.
pub struct Searcher {
    tt: Vec<TtEntry>,
    killers: Vec<[Option<Move>; 2]>,
    history: Vec<i32>,
    moves: Vec<Vec<Move>>,
    ordered: Vec<Vec<(i32, Move)>>,
    pv: Vec<Vec<Move>>,
    nodes: u64,
    limits: Limits,
    start: Instant,
    aborted: bool,
}

impl Searcher {
    /// A searcher with a transposition table of about `hash_mb` MiB (at least 1024
    /// entries).
    pub fn new(hash_mb: usize) -> Searcher {
        let entries = (hash_mb * 1024 * 1024 / std::mem::size_of::<TtEntry>()).max(1024);
        Searcher {
            tt: vec![TtEntry::default(); entries],
            killers: vec![[None; 2]; MAX_PLY],
            history: vec![0; 2 * 65536],
            moves: vec![Vec::new(); MAX_PLY],
            ordered: vec![Vec::new(); MAX_PLY],
            pv: vec![Vec::new(); MAX_PLY + 1],
            nodes: 0,
            limits: Limits::default(),
            start: Instant::now(),
            aborted: false,
        }
    }

    /// Forgets everything learnt (a new game).
    pub fn clear(&mut self) {
        self.tt.fill(TtEntry::default());
        self.killers.fill([None; 2]);
        self.history.fill(0);
    }

    /// Searches `root` within `limits`, or until `stop` is set, calling `on_iteration`
    /// after every completed iteration. Returns the last completed iteration (at least a
    /// legal move if the root has one), or `None` if the game is over.
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
        self.aborted = false;
        let max_depth = limits.depth.unwrap_or(64).clamp(1, MAX_PLY as u32 - 1);
        let mut best = SearchReport {
            depth: 0,
            score: 0,
            nodes: 0,
            time: Duration::ZERO,
            pv: vec![first],
        };
        for depth in 1..=max_depth {
            let score = self.negamax(root, depth as i32, 0, -INF, INF, stop);
            if self.aborted {
                break;
            }
            best = SearchReport {
                depth,
                score,
                nodes: self.nodes,
                time: self.start.elapsed(),
                pv: self.pv[0].clone(),
            };
            on_iteration(&best);
            if score.abs() >= MATE - MAX_PLY as i32 && limits.depth.is_none() {
                break;
            }
            // A new iteration takes longer than all before it: don't start what cannot end.
            if let Some(t) = limits.time
                && self.start.elapsed() * 2 > t
            {
                break;
            }
        }
        best.nodes = self.nodes;
        best.time = self.start.elapsed();
        Some(best)
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

    fn negamax(
        &mut self,
        s: &State,
        depth: i32,
        ply: usize,
        mut alpha: i32,
        beta: i32,
        stop: &AtomicBool,
    ) -> i32 {
        self.pv[ply].clear();
        if self.aborted || self.out_of_budget(stop) {
            self.aborted = true;
            return 0;
        }
        self.nodes += 1;
        let mut moves = std::mem::take(&mut self.moves[ply]);
        s.legal_moves_into(&mut moves);
        if moves.is_empty() {
            self.moves[ply] = moves;
            return terminal_score(s, ply);
        }
        if depth <= 0 || ply + 1 >= MAX_PLY {
            self.moves[ply] = moves;
            return evaluate(s);
        }
        let pv_node = beta - alpha > 1;
        let key = tt_key(s);
        let slot = (key % self.tt.len() as u64) as usize;
        let entry = self.tt[slot];
        let mut tt_move = None;
        if entry.key == key {
            tt_move = entry.mv;
            // Only an entry of exactly this depth cuts: then a fixed-depth search returns
            // the fixed-depth minimax value whatever the table holds (a tested property).
            if !pv_node && entry.depth as i32 == depth {
                let score = from_tt(entry.score, ply);
                let cut = match entry.bound {
                    Bound::Exact => true,
                    Bound::Lower => score >= beta,
                    Bound::Upper => score <= alpha,
                };
                if cut {
                    self.moves[ply] = moves;
                    return score;
                }
            }
        }
        let side = s.side_to_move().index();
        let mut ordered = std::mem::take(&mut self.ordered[ply]);
        ordered.clear();
        ordered.extend(moves.iter().map(|&m| {
            let score = if Some(m) == tt_move {
                1 << 30
            } else {
                let gain = (s.gain(m) + s.flips(m)) as i32 * 10_000;
                let killer = if self.killers[ply].contains(&Some(m)) {
                    5_000
                } else {
                    0
                };
                gain + killer + self.history[history_index(side, m)].min(4_999)
            };
            (score, m)
        }));
        ordered.sort_by_key(|e| std::cmp::Reverse(e.0));
        self.moves[ply] = moves;

        let alpha0 = alpha;
        let mut best = -INF;
        let mut best_move = ordered[0].1;
        for (i, &(_, mv)) in ordered.iter().enumerate() {
            let child = s.after(mv);
            let score = if i == 0 {
                -self.negamax(&child, depth - 1, ply + 1, -beta, -alpha, stop)
            } else {
                let mut sc = -self.negamax(&child, depth - 1, ply + 1, -alpha - 1, -alpha, stop);
                if sc > alpha && sc < beta && !self.aborted {
                    sc = -self.negamax(&child, depth - 1, ply + 1, -beta, -alpha, stop);
                }
                sc
            };
            if self.aborted {
                self.ordered[ply] = ordered;
                return 0;
            }
            if score > best {
                best = score;
                best_move = mv;
                if score > alpha {
                    alpha = score;
                    let (head, tail) = self.pv.split_at_mut(ply + 1);
                    head[ply].clear();
                    head[ply].push(mv);
                    head[ply].extend_from_slice(&tail[0]);
                    if alpha >= beta {
                        if s.flips(mv) == 0 {
                            let k = &mut self.killers[ply];
                            if k[0] != Some(mv) {
                                k[1] = k[0];
                                k[0] = Some(mv);
                            }
                        }
                        self.history[history_index(side, mv)] += depth * depth;
                        break;
                    }
                }
            }
        }
        self.ordered[ply] = ordered;
        let bound = if best >= beta {
            Bound::Lower
        } else if best > alpha0 {
            Bound::Exact
        } else {
            Bound::Upper
        };
        self.tt[slot] = TtEntry {
            key,
            score: to_tt(best, ply),
            mv: Some(best_move),
            depth: depth as i16,
            bound,
        };
        best
    }
}

/// The table key: the Zobrist hash, with the half-move clock mixed in for the Ataxx
/// family (near the adjudication limit the same cells can be a draw or not).
fn tt_key(s: &State) -> u64 {
    match s {
        State::Ataxx(p) => s.hash() ^ crate::splitmix64(u64::from(p.halfmove_clock())).1,
        State::Flank(_) => s.hash(),
    }
}

fn history_index(side: usize, mv: Move) -> usize {
    let (from, to) = match mv.kind() {
        crate::MoveKind::Pass => (255, 255),
        crate::MoveKind::Clone { to } => (to.index(), to.index()),
        crate::MoveKind::Jump { from, to } => (from.index(), to.index()),
    };
    side * 65536 + from * 256 + to
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

/// Static evaluation from the side to move's view, in centi-pieces (100 = one piece).
pub fn evaluate(s: &State) -> i32 {
    match s {
        State::Ataxx(p) => evaluate_ataxx(p),
        State::Flank(p) => evaluate_flank(p),
    }
}

/// Ataxx family: material; mobility (empty cells each side can reach); exposure (own
/// pieces next to an empty cell the opponent can land on, which it could flip).
fn evaluate_ataxx(p: &Position) -> i32 {
    let g = p.geometry();
    let us = p.side_to_move();
    let own = p.pieces(us);
    let opp = p.pieces(us.other());
    let empty = p.empty();
    let landing = |b: Bitboard| {
        b.iter().fold(Bitboard::EMPTY, |acc, s| {
            acc | g.clone[s.index()] | g.jump[s.index()]
        }) & empty
    };
    let (own_land, opp_land) = (landing(own), landing(opp));
    let threatened = |land: Bitboard| {
        land.iter()
            .fold(Bitboard::EMPTY, |acc, s| acc | g.flip[s.index()])
    };
    let own_exposed = (threatened(opp_land) & own).len() as i32;
    let opp_exposed = (threatened(own_land) & opp).len() as i32;
    let mut material = own.len() as i32 - opp.len() as i32;
    if p.rules().misere {
        material = -material;
    }
    100 * material + 4 * (own_land.len() as i32 - opp_land.len() as i32) - 15 * own_exposed
        + 10 * opp_exposed
}

/// Outflanking games: mobility and corners (cells no line can flip) while the board is
/// open, material as it fills.
fn evaluate_flank(p: &FlankPosition) -> i32 {
    let us = p.side_to_move();
    let own = p.pieces(us);
    let opp = p.pieces(us.other());
    let mut material = own.len() as i32 - opp.len() as i32;
    if p.rules().misere {
        material = -material;
    }
    if p.phase() == Phase::Place {
        return 0;
    }
    let empties = p.empty().len() as i32;
    let corners = p.board().corners;
    let corner = (own & corners).len() as i32 - (opp & corners).len() as i32;
    let mobility = p.placements(us).len() as i32 - p.placements(us.other()).len() as i32;
    if empties <= 12 {
        100 * material + 20 * corner
    } else {
        10 * material + 60 * mobility + 300 * corner
    }
}
