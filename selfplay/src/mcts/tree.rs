//! The tree's storage.
//!
//! A position is known by the edge that leads to it: the edge carries the move, its prior
//! and the statistics of the position after it (visits, value, simulations in flight, an
//! exact value), so that choosing among a node's moves reads one contiguous run of edges
//! and nothing else (lc0 keeps its priors the same way; Monty keeps its children in one
//! block). Edge [`ROOT`] leads to the root, and carries its statistics. An edge also
//! says where the moves of its position are, once that position was evaluated
//! (expanded): a descent reads one run of edges a level.
//!
//! No position is stored: a descent makes the moves from the root, which costs less than
//! the cache lines a stored position takes (a node with its position inline took two).

use std::collections::VecDeque;

use engine::{Move, State};

/// No moves: the edge's position was not expanded.
pub(super) const NONE: u32 = u32::MAX;

/// The edge that leads to the root (the first of every tree).
pub(crate) const ROOT: u32 = 0;

/// An exact value for the side to move (a loss, a draw or a win), or none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Exact(i8);

impl Exact {
    pub(super) const UNKNOWN: Exact = Exact(i8::MIN);

    /// `v` is −1, 0 or 1 (a finished game's value, or one proven from them).
    pub(super) fn of(v: f32) -> Exact {
        debug_assert!(
            v == -1.0 || v == 0.0 || v == 1.0,
            "exact values are −1, 0, 1"
        );
        Exact(v as i8)
    }

    pub(super) fn get(self) -> Option<f32> {
        (self != Exact::UNKNOWN).then_some(f32::from(self.0))
    }
}

/// A move of an expanded node and the statistics of the position it leads to.
#[derive(Clone, Copy, Debug)]
pub(super) struct Edge {
    /// The evaluator's probability of the move (with root noise at the root).
    pub(super) prior: f32,
    /// Sum of the values backed up through the move, from the view of the side that
    /// plays it.
    pub(super) value_sum: f32,
    /// Simulations backed up through the move.
    pub(super) visits: u32,
    /// The first edge of the moves of the position after this move, once expanded
    /// ([`NONE`] before).
    pub(super) first: u32,
    /// Simulations through the move whose leaf awaits its evaluation (virtual loss:
    /// each counts as a visit lost by the side that plays the move); at most
    /// [`MAX_IN_FLIGHT`].
    pub(super) in_flight: u16,
    /// How many moves the position after this move has, once expanded.
    pub(super) count: u16,
    pub(super) mv: Move,
    /// The exact value of the position after the move for its side to move: a finished
    /// game, a position the tree proved (MCTS-solver: a move to a proven loss of the
    /// opponent wins; all moves proven, the best of them), or one the endgame solver
    /// solved. Descents stop at such a position and back its exact value up.
    pub(super) exact: Exact,
    /// Whether the position after this move, expanded, keeps its less probable moves in
    /// a tail ([`TailMove`]s) after its `count` edges: then the edge just after them is
    /// the tail's header (its `first` the tail's start in `Search::tails`, its `count`
    /// the tail's length).
    pub(super) has_tail: bool,
}

// The scan over a position's moves reads 24 bytes a move.
const _: () = assert!(size_of::<Edge>() == 24);

impl Edge {
    /// Whether the position after this move is a leaf the next descent through it
    /// expands (lazy expansion's second visit): visited, not expanded, no simulation in
    /// flight through it (else a collision), no exact value (else scored as it is).
    pub(super) fn awaits_expansion(&self) -> bool {
        self.first == NONE && self.visits > 0 && self.in_flight == 0 && self.exact == Exact::UNKNOWN
    }

    /// A move not searched yet, with its prior.
    pub(super) fn unvisited(mv: Move, prior: f32) -> Edge {
        Edge {
            prior,
            value_sum: 0.0,
            visits: 0,
            first: NONE,
            in_flight: 0,
            count: 0,
            mv,
            exact: Exact::UNKNOWN,
            has_tail: false,
        }
    }
}

/// A move below the root never searched, kept in a position's tail: its move and prior,
/// 8 bytes where an edge takes 24. Most moves of an expanded position are never searched
/// (4.5% of them were in a 600,000-simulation search from the start), and below the root
/// PUCT meets the moves in prior order, the visited ones first: a position expanded in a
/// search of one leaf at a time ([`Search::set_one_leaf`](super::search::Search)) keeps
/// its [`FULL_MOVES`] most probable moves as edges and the rest here, until a descent
/// wants the tail's first ([`Search::grow`](super::search::Search)).
///
/// Only a tail's first move is read before it grows, and most never grow: a tail holds
/// its most probable move first and the others in no order, which [`order_tail`] gives
/// them when they become edges.
#[derive(Clone, Copy, Debug)]
pub(super) struct TailMove {
    pub(super) prior: f32,
    pub(super) mv: Move,
    /// The move's index among the position's legal moves: what breaks a tie of priors,
    /// as it does for the edges ([`prior_key`]).
    pub(super) rank: u16,
}

const _: () = assert!(size_of::<TailMove>() == 8);

impl TailMove {
    /// The move as an edge, when its tail is grown.
    pub(super) fn edge(&self) -> Edge {
        Edge::unvisited(self.mv, self.prior)
    }
}

/// The order of a position's moves below the root: the most probable first, a tie to
/// the first legal move. A prior is not negative, so its bits order as its value.
pub(super) fn prior_key(prior: f32, rank: usize) -> u64 {
    (u64::from(!prior.to_bits()) << 32) | rank as u64
}

/// The prior a [`prior_key`] was made of.
pub(super) fn prior_of_key(key: u64) -> f32 {
    f32::from_bits(!((key >> 32) as u32))
}

/// Puts the `k` least of `keys` first, in order, and the others after them in any order:
/// the edges of a position that keeps a tail and the tail's first, without sorting the
/// tail (sorted if it grows, and most never do). One pass: most keys compare once.
pub(super) fn most_probable_first(keys: &mut [u64], k: usize) {
    let (top, rest) = keys.split_at_mut(k);
    top.sort_unstable();
    for x in rest {
        if *x < top[k - 1] {
            let mut p = k - 1;
            let key = std::mem::replace(x, top[p]);
            while p > 0 && top[p - 1] > key {
                top[p] = top[p - 1];
                p -= 1;
            }
            top[p] = key;
        }
    }
}

/// Puts a tail's moves in the order of [`prior_key`], as the edges they become.
pub(super) fn order_tail(tail: &mut [TailMove]) {
    tail.sort_unstable_by_key(|t| prior_key(t.prior, usize::from(t.rank)));
}

impl Edge {
    /// The header of a tail of `len` moves from `start` in `Search::tails` whose first
    /// (most probable) move has prior `first_prior`: the edge after a position's edges
    /// when it has a tail ([`Edge::has_tail`]). Its prior is the tail's first's, which
    /// PUCT reads once every edge before it was visited: beside the edges, where the
    /// tail may be a cache miss away.
    pub(super) fn tail_header(start: usize, len: usize, first_prior: f32) -> Edge {
        Edge {
            first: u32::try_from(start).expect("tails fit their u32 index"),
            count: u16::try_from(len).expect("fewer than 65,536 moves"),
            ..Edge::unvisited(Move::PASS, first_prior)
        }
    }

    /// The tail a header ([`Edge::tail_header`]) gives, as a range of `Search::tails`.
    pub(super) fn tail(&self) -> std::ops::Range<usize> {
        self.first as usize..self.first as usize + usize::from(self.count)
    }
}

/// The edges a position expanded with a tail starts with. With 4, a 600,000-simulation
/// search from the start (`docs/strength/fast-quick/best`) holds its tree in 139 MB where
/// whole runs take 302 MB (with 2: 184 MB; 8: 140 MB; 16: 171 MB).
pub(super) const FULL_MOVES: usize = 4;

/// The most simulations in flight through one edge: a batch stops growing when the root
/// has this many (every descent goes through it).
pub(super) const MAX_IN_FLIGHT: u16 = u16::MAX - 1;

/// The value of `s` for its side to move when the game is over.
pub(super) fn terminal_value(s: &State) -> Option<f32> {
    if s.count_moves() > 0 {
        return None;
    }
    let r = s.result()?;
    Some(match r.winner {
        None => 0.0,
        Some(w) if w == s.side_to_move() => 1.0,
        Some(_) => -1.0,
    })
}

/// The edge that leads to a root at `s`.
pub(super) fn root_edge(s: &State) -> Edge {
    Edge {
        exact: terminal_value(s).map_or(Exact::UNKNOWN, Exact::of),
        ..Edge::unvisited(Move::PASS, 1.0)
    }
}

/// A spare larger than this is given back to the allocator instead of kept: a long
/// analysis may grow a tree of gigabytes, and a game's moves at the clock use less. A
/// search of 3 s from Ataxx's start (1.1M simulations with a 1,024-hidden fast net on
/// the Xeon VM of docs/benchmarks.md) outgrew 256 MiB, and moved its tree to new memory
/// on small pages near its end.
pub(super) const MAX_SPARE_BYTES: usize = 512 << 20;

/// Emptied buffers of an earlier tree (see `Search::spare`).
#[derive(Default)]
pub(super) struct Spare {
    pub(super) edges: Vec<Edge>,
    pub(super) tails: Vec<TailMove>,
    /// (edge of the old tree, its copy)
    pub(super) queue: VecDeque<(u32, u32)>,
}

impl Spare {
    pub(super) fn bytes(&self) -> usize {
        self.edges.capacity() * size_of::<Edge>() + self.tails.capacity() * size_of::<TailMove>()
    }

    /// These buffers, to be kept for another tree; none where they are larger than
    /// [`MAX_SPARE_BYTES`] (given back to the allocator).
    pub(super) fn within_bound(self) -> Spare {
        if self.bytes() > MAX_SPARE_BYTES {
            Spare::default()
        } else {
            self
        }
    }
}

#[cfg(test)]
mod tests {
    use engine::Rng;

    use super::*;

    /// The `k` least keys come first and in order, the others after them, none lost:
    /// keys in every order (ascending, descending, random, with equal priors told apart
    /// by their rank), `k` from 1 to the whole.
    #[test]
    fn most_probable_first_orders_the_least_keys_and_keeps_the_others() {
        let mut rng = Rng::new(5);
        for n in [1usize, 2, 5, 6, 17, 80] {
            let priors: [Vec<f32>; 4] = [
                (0..n).map(|i| i as f32 / n as f32).collect(),
                (0..n).map(|i| (n - i) as f32 / n as f32).collect(),
                (0..n).map(|_| rng.next_f64() as f32).collect(),
                (0..n).map(|i| (i % 3) as f32 / 4.0).collect(),
            ];
            for p in &priors {
                let keys: Vec<u64> = p
                    .iter()
                    .enumerate()
                    .map(|(i, &x)| prior_key(x, i))
                    .collect();
                let mut sorted = keys.clone();
                sorted.sort_unstable();
                for k in 1..=n {
                    let mut got = keys.clone();
                    most_probable_first(&mut got, k);
                    assert_eq!(got[..k], sorted[..k], "n {n} k {k} {p:?}");
                    got[k..].sort_unstable();
                    assert_eq!(got, sorted, "n {n} k {k}");
                }
            }
        }
        // The key orders by prior, most probable first, then by rank; and gives it back.
        assert!(prior_key(0.5, 3) < prior_key(0.25, 0));
        assert!(prior_key(0.5, 1) < prior_key(0.5, 2));
        assert_eq!(prior_of_key(prior_key(0.375, 7)), 0.375);
    }
}
