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

use std::ops::Range;

use engine::{Move, State, Symmetry};

use super::batch::LeafBatch;
use super::gumbel::Gumbel;
use super::reuse::Spare;

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
}

// The scan over a position's moves reads 24 bytes a move.
const _: () = assert!(size_of::<Edge>() == 24);

/// The most simulations in flight through one edge: a batch stops growing when the root
/// has this many (every descent goes through it).
pub(super) const MAX_IN_FLIGHT: u16 = u16::MAX - 1;

/// One game's search tree and the progress of the current search.
pub struct Search {
    /// Every position's moves; edge [`ROOT`] leads to the root.
    pub(super) edges: Vec<Edge>,
    pub(super) root_state: State,
    /// Positions the tree reached: the root and each move a descent went through.
    pub(super) positions: usize,
    pub(super) sims_target: u32,
    pub(super) sims_done: u32,
    pub(super) full: bool,
    /// Leaves handed out and not yet given back (collisions excluded).
    pub(super) in_flight: u32,
    /// The batch of [`Search::next_request`], awaiting [`Search::apply`].
    pub(super) pending: Option<LeafBatch>,
    pub(super) gumbel: Option<Gumbel>,
    /// The root's priors as the evaluator gave them (before root noise).
    pub(super) root_prior: Vec<f32>,
    pub(super) root_value: f32,
    pub(super) symmetries: Vec<Symmetry>,
    /// The endgame solver's tables, made when first needed.
    pub(super) endgame: Option<Box<engine::search::Searcher>>,
    /// The last batch given back, emptied, for the next [`Search::gather`].
    pub(super) recycled: Option<LeafBatch>,
    /// The buffers of the tree before the last [`Search::advance`] or
    /// [`Search::reroot`], emptied: the next subtree is copied into them, so that a game's
    /// trees reuse memory the process already has (fresh pages cost the kernel's zeroing).
    pub(super) spare: Spare,
    /// Scratch of [`Search::expand`]'s sort.
    pub(super) order: Vec<u64>,
}

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
        prior: 1.0,
        value_sum: 0.0,
        visits: 0,
        first: NONE,
        in_flight: 0,
        count: 0,
        mv: Move::PASS,
        exact: terminal_value(s).map_or(Exact::UNKNOWN, Exact::of),
    }
}

impl Search {
    /// A fresh tree rooted at `root`.
    pub fn new(root: State) -> Search {
        let symmetries = root.symmetries();
        Search::with_symmetries(root, symmetries)
    }

    pub(super) fn with_symmetries(root: State, symmetries: Vec<Symmetry>) -> Search {
        Search {
            edges: vec![root_edge(&root)],
            root_state: root,
            positions: 1,
            sims_target: 0,
            sims_done: 0,
            full: true,
            in_flight: 0,
            pending: None,
            gumbel: None,
            root_prior: Vec::new(),
            root_value: 0.0,
            symmetries,
            endgame: None,
            recycled: None,
            spare: Spare::default(),
            order: Vec::new(),
        }
    }

    /// The root position.
    pub fn root_state(&self) -> State {
        self.root_state
    }

    /// Positions in the tree: the root and every move a descent went through.
    pub fn tree_size(&self) -> usize {
        self.positions
    }

    /// Bytes the tree's moves take.
    pub fn tree_bytes(&self) -> usize {
        self.edges.len() * size_of::<Edge>()
    }

    /// The edges of the position edge `e` leads to: none before its expansion.
    pub(super) fn moves_of(&self, e: u32) -> Range<usize> {
        let e = &self.edges[e as usize];
        match e.first {
            NONE => 0..0,
            first => first as usize..first as usize + usize::from(e.count),
        }
    }

    /// Whether the position edge `e` leads to was expanded.
    pub(super) fn expanded(&self, e: u32) -> bool {
        self.edges[e as usize].first != NONE
    }

    /// Starts a search of `sims` simulations at the root. A full search gets root noise
    /// (PUCT) and forced playouts; a fast one (playout-cap randomization) gets neither.
    pub fn start(&mut self, sims: u32, full: bool, cfg: &super::MctsConfig, rng: &mut engine::Rng) {
        self.sims_target = sims.max(1);
        self.sims_done = 0;
        self.full = full;
        self.pending = None;
        self.in_flight = 0;
        self.gumbel = None;
        if self.expanded(ROOT) {
            self.prepare_root(cfg, rng);
        }
    }

    /// Whether the current search has used its simulations, or has proven the root.
    pub fn finished(&self) -> bool {
        self.expanded(ROOT)
            && (self.sims_done >= self.sims_target
                || self.edges[ROOT as usize].exact.get().is_some())
    }

    /// The root's exact value for its side to move, once the tree has proven it.
    pub fn proven(&self) -> Option<f32> {
        self.edges[ROOT as usize]
            .exact
            .get()
            .filter(|_| self.expanded(ROOT))
    }

    /// Simulations run in the current search.
    pub fn simulations(&self) -> u32 {
        self.sims_done
    }

    /// Backs up `v`, the value for the side to move after the last edge of `path`.
    pub(super) fn backup(&mut self, path: &[u32], v: f32) {
        let mut x = -v;
        for &e in path.iter().rev() {
            let e = &mut self.edges[e as usize];
            e.visits += 1;
            e.value_sum += x;
            x = -x;
        }
    }

    /// A move's value and visits, each simulation in flight through it counted as a
    /// visit lost (virtual loss); `None` while it has neither. A proven move's value is
    /// its exact one.
    pub(super) fn q_and_visits(e: &Edge) -> Option<(f32, u32)> {
        let n = e.visits + u32::from(e.in_flight);
        if n == 0 {
            return None;
        }
        let q = match e.exact.get() {
            Some(v) => -v,
            None => (e.value_sum - f32::from(e.in_flight)) / n as f32,
        };
        Some((q, n))
    }

    /// Each move of the position edge `e` leads to, with the visits given back to it (none
    /// in flight), in the tree's order; none before the expansion. Allocation-free: the
    /// play loop reads the root's after every batch.
    pub(crate) fn child_visits(&self, e: u32) -> impl Iterator<Item = (Move, u32)> + '_ {
        self.edges[self.moves_of(e)]
            .iter()
            .map(|e| (e.mv, e.visits))
    }

    /// The root's mean value for its side to move (its exact value when proven).
    pub fn root_value(&self) -> f32 {
        let r = &self.edges[ROOT as usize];
        match r.exact.get() {
            Some(v) => v,
            None if r.visits > 0 => -r.value_sum / r.visits as f32,
            None => 0.0,
        }
    }
}
