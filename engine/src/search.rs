//! Alpha-beta search for every game: iterative deepening, principal-variation search, a
//! transposition table on the Zobrist hash, move ordering (hash move, piece gain,
//! killers, history), and limits by depth, nodes and time.
//!
//! The node count of a depth- or node-limited search depends only on the position, the
//! limits and the table size: the same build gives the same count (see `flipzero bench`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::flank::{FlankPosition, Phase};
use crate::isa::{Level, Task, with_level};
use crate::movegen::{Kernel, with_kernel};
use crate::{Isa, Move, MoveKind, Position, State};

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

/// A static evaluation the search calls at its leaves in place of [`evaluate`] (e.g. a
/// network's value): the side to move's view, in the units of [`evaluate`] (about 100 a
/// piece), inside ±(MATE − 1000) (larger values are clamped there, so that no
/// evaluation reads as a forced result).
pub trait StaticEval: Send {
    /// The evaluation of `s` (a position whose game is not over).
    fn evaluate(&mut self, s: &State) -> i32;
}

/// An alpha-beta searcher with its transposition table and ordering tables, reused
/// from move to move.
pub struct Searcher {
    /// The leaves' evaluation, when not the built-in one.
    eval: Option<Box<dyn StaticEval>>,
    tt: Vec<TtEntry>,
    /// [`fastmod`]'s constant for `tt.len()`.
    tt_magic: u128,
    killers: Vec<[Option<Move>; 2]>,
    history: Vec<i32>,
    moves: Vec<Vec<Move>>,
    /// Per ply, the ordering keys: score in the high half, `u32::MAX - index` in the low
    /// half, so that sorting them in decreasing order is a stable sort by score.
    ordered: Vec<Vec<u64>>,
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
            eval: None,
            tt: vec![TtEntry::default(); entries],
            tt_magic: fastmod_magic(entries as u64),
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
            let score = with_level!(Isa::current(), L, l => l.run(Node {
                searcher: self,
                s: root,
                depth: depth as i32,
                ply: 0,
                alpha: -INF,
                beta: INF,
                stop,
            }));
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

    /// The table slot of `key`: `key % tt.len()`, by a multiplication.
    #[inline(always)]
    fn slot(&self, key: u64) -> usize {
        let slot = fastmod(key, self.tt_magic, self.tt.len() as u64) as usize;
        debug_assert_eq!(slot as u64, key % self.tt.len() as u64);
        slot
    }

    /// Asks the CPU to bring the table entry of `key` into its caches.
    #[inline(always)]
    fn prefetch(&self, key: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            let entry: *const TtEntry = &self.tt[self.slot(key)];
            // SAFETY: a prefetch reads nothing that the program sees and never faults;
            // the address is that of an element of the table anyway.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(entry.cast()) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = key;
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

    /// One node of the search, compiled for level `L` (children through [`Node`]).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn negamax<L: Level>(
        &mut self,
        l: L,
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
        // The table entry is read before move generation, so that its cache miss overlaps
        // it (nothing writes the table in between).
        let probe = depth > 0 && ply + 1 < MAX_PLY;
        let (mut key, mut slot, mut entry) = (0, 0, TtEntry::default());
        if probe {
            key = tt_key(s);
            slot = self.slot(key);
            entry = self.tt[slot];
        }
        let mut moves = std::mem::take(&mut self.moves[ply]);
        s.legal_moves_into(&mut moves);
        if moves.is_empty() {
            self.moves[ply] = moves;
            return terminal_score(s, ply);
        }
        if !probe {
            self.moves[ply] = moves;
            return match &mut self.eval {
                None => evaluate(s),
                Some(e) => e.evaluate(s).clamp(-(MATE - 1000), MATE - 1000),
            };
        }
        let pv_node = beta - alpha > 1;
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
        for (i, &m) in moves.iter().enumerate() {
            let score = if Some(m) == tt_move {
                1 << 30
            } else {
                // gain + flips: the flips twice, plus one for a new piece.
                let flips = s.flips(m);
                let new_piece = u32::from(matches!(m.kind(), MoveKind::Clone { .. }));
                let gain = (2 * flips + new_piece) as i32 * 10_000;
                let killer = if self.killers[ply].contains(&Some(m)) {
                    5_000
                } else {
                    0
                };
                gain + killer + self.history[history_index(side, m)].min(4_999)
            };
            debug_assert!(score >= 0);
            ordered.push((score as u64) << 32 | u64::from(u32::MAX - i as u32));
        }
        let alpha0 = alpha;
        let mut best = -INF;
        let mut best_move = Move::PASS;
        // Puts the `i`-th move in place: keys are distinct, so taking the largest
        // remaining one each time gives the order of a full sort; most nodes cut after a
        // move or two, so only the first few are picked one by one and the rest sorted
        // once. The order depends on the keys alone, so it can run one move ahead.
        let pick = |ordered: &mut Vec<u64>, i: usize| {
            if i < 3 {
                let mut top = i;
                for j in i + 1..ordered.len() {
                    if ordered[j] > ordered[top] {
                        top = j;
                    }
                }
                ordered.swap(i, top);
            } else if i == 3 {
                ordered[3..].sort_unstable_by(|a, b| b.cmp(a));
            }
            moves[(u32::MAX - ordered[i] as u32) as usize]
        };
        let mut next = pick(&mut ordered, 0);
        let mut next_child = s.after(next);
        for i in 0..ordered.len() {
            let (mv, child) = (next, next_child);
            if i == 0 {
                best_move = mv;
            }
            if i + 1 < ordered.len() {
                next = pick(&mut ordered, i + 1);
                next_child = s.after(next);
                if depth >= 2 {
                    // The next sibling probes the table: its entry is fetched while this
                    // child's subtree is searched.
                    self.prefetch(tt_key(&next_child));
                }
            }
            let score = if i == 0 {
                -self.child(l, &child, depth - 1, ply + 1, -beta, -alpha, stop)
            } else {
                let mut sc = -self.child(l, &child, depth - 1, ply + 1, -alpha - 1, -alpha, stop);
                if sc > alpha && sc < beta && !self.aborted {
                    sc = -self.child(l, &child, depth - 1, ply + 1, -beta, -alpha, stop);
                }
                sc
            };
            if self.aborted {
                self.ordered[ply] = ordered;
                self.moves[ply] = moves;
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
        self.moves[ply] = moves;
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

    /// A child node, through the level's compiled entry.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn child<L: Level>(
        &mut self,
        l: L,
        s: &State,
        depth: i32,
        ply: usize,
        alpha: i32,
        beta: i32,
        stop: &AtomicBool,
    ) -> i32 {
        l.run(Node {
            searcher: self,
            s,
            depth,
            ply,
            alpha,
            beta,
            stop,
        })
    }
}

/// A node of the search as a [`Task`], so that the whole search runs compiled for the
/// CPU's instruction-set level.
struct Node<'a> {
    searcher: &'a mut Searcher,
    s: &'a State,
    depth: i32,
    ply: usize,
    alpha: i32,
    beta: i32,
    stop: &'a AtomicBool,
}

impl<L: Level> Task<L> for Node<'_> {
    type Output = i32;

    #[inline(always)]
    fn run(self, l: L) -> i32 {
        let Node {
            searcher,
            s,
            depth,
            ply,
            alpha,
            beta,
            stop,
        } = self;
        searcher.negamax(l, s, depth, ply, alpha, beta, stop)
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
#[inline(always)]
pub fn evaluate(s: &State) -> i32 {
    match s {
        State::Ataxx(p) => evaluate_ataxx(p),
        State::Flank(p) => evaluate_flank(p),
    }
}

/// Ataxx family: material; mobility (empty cells each side can reach); exposure (own
/// pieces next to an empty cell the opponent can land on, which it could flip).
#[inline(always)]
fn evaluate_ataxx(p: &Position) -> i32 {
    with_kernel!(p.rules().variant, K => evaluate_ataxx_k::<K>(p))
}

#[inline(always)]
fn evaluate_ataxx_k<K: Kernel>(p: &Position) -> i32 {
    let us = p.side_to_move();
    let own = p.pieces(us).0;
    let opp = p.pieces(us.other()).0;
    let empty = p.empty().0;
    let (own_land, opp_land) = (K::reach(own) & empty, K::reach(opp) & empty);
    let own_exposed = (K::flip_targets(opp_land) & own).count_ones() as i32;
    let opp_exposed = (K::flip_targets(own_land) & opp).count_ones() as i32;
    let mut material = own.count_ones() as i32 - opp.count_ones() as i32;
    if p.rules().misere {
        material = -material;
    }
    100 * material + 4 * (own_land.count_ones() as i32 - opp_land.count_ones() as i32)
        - 15 * own_exposed
        + 10 * opp_exposed
}

/// Outflanking games: mobility and corners (cells no line can flip) while the board is
/// open, material as it fills.
fn evaluate_flank(p: &FlankPosition) -> i32 {
    let us = p.side_to_move();
    let (own, opp) = (p.count(us) as i32, p.count(us.other()) as i32);
    let mut material = own - opp;
    if p.rules().misere {
        material = -material;
    }
    if p.phase() == Phase::Place {
        return 0;
    }
    let empties = p.board().num_cells() as i32 - own - opp;
    let corner = p.corner_count(us) as i32 - p.corner_count(us.other()) as i32;
    let mobility = p.mobility(us) as i32 - p.mobility(us.other()) as i32;
    if empties <= 12 {
        100 * material + 20 * corner
    } else {
        10 * material + 60 * mobility + 300 * corner
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fastmod_is_the_remainder() {
        let mut rng = crate::Rng::new(1);
        let entries = Searcher::new(16).tt.len() as u64;
        for d in [
            1,
            2,
            3,
            7,
            1024,
            699_050,
            entries,
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
