//! One game's search tree and the progress of its current search; its parts are
//! implemented by concern in the sibling modules.

use std::ops::Range;

use engine::{Move, Rng, State, Symmetry};

use super::config::MctsConfig;
use super::gumbel::Gumbel;
use super::leaves::LeafBatch;
use super::tree::{
    Edge, FULL_MOVES, NONE, ROOT, Spare, TailMove, most_probable_first, order_tail, prior_key,
    prior_of_key, root_edge,
};

/// One game's search tree and the progress of the current search.
pub struct Search {
    /// Every position's moves; edge [`ROOT`] leads to the root.
    pub(super) edges: Vec<Edge>,
    /// The tails of the positions expanded with one ([`Edge::has_tail`]).
    pub(super) tails: Vec<TailMove>,
    /// Whether the search gives out one leaf at a time, and each back before the next
    /// (one thread, batches of one): only then may a position keep a tail, since growing
    /// it moves its edges, which no leaf in flight may hold ([`Search::set_one_leaf`]).
    pub(super) one_leaf: bool,
    pub(super) root_state: State,
    /// `edges.len()` after the last compaction (or the fresh start): a reroot compacts
    /// the tree once it is `COMPACT_GROWTH` times that ([`Search::advance`]).
    pub(super) compacted: usize,
    pub(super) sims_target: u32,
    pub(super) sims_done: u32,
    /// The moves from the root to the leaves of the current search's simulations, summed,
    /// and the most ([`Search::depth`]).
    pub(super) depth_sum: u64,
    pub(super) seldepth: u32,
    pub(super) full: bool,
    /// Leaves handed out and not yet given back (collisions excluded).
    pub(super) in_flight: u32,
    /// Batches with leaves handed out by [`Search::gather`] and not yet given back by
    /// [`Search::apply_batch`] (PUCT below the root takes one pass only while none is
    /// out: [`Search::pick_puct`]).
    pub(super) batches_out: u32,
    /// The batch of [`Search::next_request`], awaiting [`Search::apply`].
    pub(super) pending: Option<LeafBatch>,
    pub(super) gumbel: Option<Gumbel>,
    /// The root's priors as the evaluator gave them (before root noise).
    pub(super) root_prior: Vec<f32>,
    pub(super) root_value: f32,
    pub(super) symmetries: Vec<Symmetry>,
    /// The endgame solver's tables, made when first needed.
    pub(super) endgame: Option<Box<engine::search::Searcher>>,
    /// The endgame solver's tries so far (the play loop times a batch after one).
    pub(super) endgame_solves: u64,
    /// The last batch given back, emptied, for the next [`Search::gather`].
    pub(super) recycled: Option<LeafBatch>,
    /// The buffers of the tree before the last compaction ([`Search::compact`], or a
    /// reroot's), emptied: the next compaction copies the tree into them, so that a game's
    /// trees reuse memory the process already has (fresh pages cost the kernel's zeroing).
    pub(super) spare: Spare,
    /// Scratch of [`Search::expand`]'s sort.
    pub(super) order: Vec<u64>,
    /// Whether a value-only request lists the leaf's moves
    /// ([`Search::set_values_need_moves`]).
    pub(super) values_need_moves: bool,
    /// Where the next descent starts, when the last batch given back was one leaf's
    /// expansion (lazy expansion's second visit) and no other batch was out: that leaf's
    /// position, its path in `resume_path`. A descent from the root would walk that path
    /// again (PUCT picks from visits, values, virtual losses and priors, and an expansion
    /// changes none of them above its leaf), so it goes on from the leaf instead. Never
    /// with the Gumbel root, whose schedule each descent takes from.
    pub(super) resume: Option<State>,
    /// See `resume`: the edges from [`ROOT`] to the expanded leaf.
    pub(super) resume_path: Vec<u32>,
}

impl Search {
    /// A fresh tree rooted at `root`.
    pub fn new(root: State) -> Search {
        Search::in_buffers(root, Spare::default())
    }

    /// A fresh tree rooted at `root` in the memory of `buffers` (emptied).
    pub(super) fn in_buffers(root: State, buffers: Spare) -> Search {
        let symmetries = root.symmetries();
        Search::with_buffers(root, symmetries, buffers.edges, buffers.tails)
    }

    /// The tree's buffers, for another tree (its spare given back).
    pub(super) fn into_buffers(self) -> Spare {
        Spare {
            edges: self.edges,
            tails: self.tails,
            ..Spare::default()
        }
    }

    /// A fresh tree rooted at `root` in `edges`' memory (emptied first).
    pub(super) fn with_buffers(
        root: State,
        symmetries: Vec<Symmetry>,
        mut edges: Vec<Edge>,
        mut tails: Vec<TailMove>,
    ) -> Search {
        edges.clear();
        tails.clear();
        edges.push(root_edge(&root));
        Search {
            edges,
            tails,
            one_leaf: false,
            root_state: root,
            compacted: 1,
            sims_target: 0,
            sims_done: 0,
            depth_sum: 0,
            seldepth: 0,
            full: true,
            in_flight: 0,
            batches_out: 0,
            pending: None,
            gumbel: None,
            root_prior: Vec::new(),
            root_value: 0.0,
            symmetries,
            endgame: None,
            endgame_solves: 0,
            recycled: None,
            spare: Spare::default(),
            order: Vec::new(),
            values_need_moves: true,
            resume: None,
            resume_path: Vec::new(),
        }
    }

    /// Whether the evaluators of this search need a leaf's moves to give its value alone
    /// ([`crate::Evaluator::values_need_moves`]); when not, value-only requests
    /// ([`LeafRequest::value_only`](super::leaves::LeafRequest)) come with none. True
    /// for a new tree.
    pub fn set_values_need_moves(&mut self, need: bool) {
        self.values_need_moves = need;
    }

    /// The root position.
    pub fn root_state(&self) -> State {
        self.root_state
    }

    /// Positions in the tree: the root and every move a descent went through (counted
    /// by a walk of the tree).
    pub fn tree_size(&self) -> usize {
        let reached = self
            .reachable()
            .into_iter()
            .map(|i| &self.edges[i as usize]);
        1 + reached
            .filter(|c| c.visits + u32::from(c.in_flight) > 0)
            .count()
    }

    /// The edges a walk from the root reaches (the root's own excepted), depth first: the
    /// moves of every expanded position of the tree, and nothing a reroot left behind.
    pub(super) fn reachable(&self) -> Vec<u32> {
        let (mut out, mut stack) = (Vec::new(), vec![ROOT]);
        while let Some(e) = stack.pop() {
            for i in self.moves_of(e) {
                out.push(i as u32);
                stack.push(i as u32);
            }
        }
        out
    }

    /// Bytes of the tree's buffer: the moves of the positions it holds, and those of the
    /// positions reroots left behind since the last compaction ([`Search::advance`]).
    pub fn tree_bytes(&self) -> usize {
        self.edges.len() * size_of::<Edge>() + self.tails.len() * size_of::<TailMove>()
    }

    /// Whether leaves are given out one at a time, each given back before the next (one
    /// thread, batches of one: the play loop's), so that positions expanded from now on
    /// may keep their less probable moves in a tail ([`TailMove`]). Turned off, every
    /// tail is grown into edges.
    pub fn set_one_leaf(&mut self, on: bool) {
        // Tails are made only while on: nothing to grow otherwise.
        if !on && self.one_leaf {
            let mut stack = vec![ROOT];
            while let Some(e) = stack.pop() {
                if self.edges[e as usize].has_tail {
                    self.grow(e);
                }
                stack.extend(self.moves_of(e).map(|i| i as u32));
            }
        }
        self.one_leaf = on;
    }

    /// The tail of the position edge `e` leads to, as a range of `tails` (empty without
    /// one).
    pub(super) fn tail_of(&self, e: u32) -> Range<usize> {
        let n = &self.edges[e as usize];
        if !n.has_tail {
            return 0..0;
        }
        self.edges[n.first as usize + usize::from(n.count)].tail()
    }

    /// Turns the tail of the position edge `at` leads to into edges: its moves are
    /// copied to the end of the buffer, the tail's moves after them, in the same order
    /// (each edge takes its subtree along); the old run, its header and the tail stay
    /// behind until a compaction. Returns the index the tail's first move now has. Only
    /// between leaves ([`Search::set_one_leaf`]): a path in flight through the old run
    /// would be left pointing at it.
    pub(super) fn grow(&mut self, at: u32) -> usize {
        let (run, tail) = (self.moves_of(at), self.tail_of(at));
        debug_assert!(!tail.is_empty(), "grow a position with a tail");
        let first = self.edges.len();
        self.edges.extend_from_within(run.clone());
        let grown = self.edges.len();
        order_tail(&mut self.tails[tail.clone()]);
        self.edges
            .extend(self.tails[tail.clone()].iter().map(TailMove::edge));
        let e = &mut self.edges[at as usize];
        e.first = first as u32;
        e.count = u16::try_from(run.len() + tail.len()).expect("fewer than 65,536 moves");
        e.has_tail = false;
        grown
    }

    /// Expands the position edge `at` leads to with its moves and their priors: below
    /// the root the most probable first (ties in the moves' order), so that PUCT meets
    /// the moves it has visited first and stops at the first it has not
    /// ([`Search::pick_puct`]); the root's in the order of its legal moves, the order of
    /// the search's outcome.
    pub(super) fn expand(&mut self, at: u32, moves: &[Move], policy: &[f32]) {
        debug_assert_eq!(moves.len(), policy.len());
        let sum: f32 = policy.iter().sum::<f32>().max(1e-12);
        let mut order = std::mem::take(&mut self.order);
        order.clear();
        order.extend(
            policy
                .iter()
                .enumerate()
                .map(|(i, &p)| prior_key(p / sum, i)),
        );
        let full = self.edges_kept(at, order.len());
        if full < order.len() {
            most_probable_first(&mut order, full + 1);
        } else if at != ROOT {
            order.sort_unstable();
        }
        self.push_moves(
            at,
            full,
            order.iter().map(|&k| {
                let i = k as u32 as usize;
                (moves[i], prior_of_key(k), i)
            }),
        );
        self.order = order;
    }

    /// How many of its `n` moves the position edge `at` leads to keeps as edges when it
    /// is expanded: all, or [`FULL_MOVES`] and a tail for the others where
    /// [`Search::one_leaf`] allows one.
    fn edges_kept(&self, at: u32, n: usize) -> usize {
        if self.one_leaf && at != ROOT && n > FULL_MOVES + 1 {
            FULL_MOVES
        } else {
            n
        }
    }

    /// Expands the position edge `at` leads to with `moves`, each with its prior and its
    /// index among the legal moves, the first `full` ([`Search::edges_kept`]) as edges:
    /// below the root, those in the order of [`prior_key`](super::tree::prior_key), then
    /// the tail's most probable, then the tail's others in any order.
    fn push_moves(
        &mut self,
        at: u32,
        full: usize,
        moves: impl ExactSizeIterator<Item = (Move, f32, usize)>,
    ) {
        let first = self.edges.len() as u32;
        let n = moves.len();
        let tail_start = self.tails.len();
        for (k, (mv, prior, rank)) in moves.enumerate() {
            if k < full {
                self.edges.push(Edge::unvisited(mv, prior));
            } else {
                let rank = u16::try_from(rank).expect("fewer than 65,536 legal moves");
                self.tails.push(TailMove { prior, mv, rank });
            }
        }
        if full < n {
            let first_prior = self.tails[tail_start].prior;
            self.edges
                .push(Edge::tail_header(tail_start, n - full, first_prior));
        }
        let e = &mut self.edges[at as usize];
        e.first = first;
        e.count = u16::try_from(full).expect("fewer than 65,536 legal moves");
        e.has_tail = full < n;
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
    pub fn start(&mut self, sims: u32, full: bool, cfg: &MctsConfig, rng: &mut Rng) {
        self.sims_target = sims.max(1);
        self.sims_done = 0;
        (self.depth_sum, self.seldepth) = (0, 0);
        self.full = full;
        self.pending = None;
        self.in_flight = 0;
        self.batches_out = 0;
        self.gumbel = None;
        self.resume = None;
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

    /// A simulation ended at the last edge of `path` (the root's edge and the moves to
    /// its leaf) with value `v` for the side to move there: backed up, and counted.
    pub(super) fn simulated(&mut self, path: &[u32], v: f32) {
        self.backup(path, v);
        self.sims_done += 1;
        let moves = path.len().saturating_sub(1) as u32;
        self.depth_sum += u64::from(moves);
        self.seldepth = self.seldepth.max(moves);
    }

    /// The current search's simulations' mean number of moves from the root to their leaf
    /// (0 before the first), and the most.
    pub fn depth(&self) -> (f64, u32) {
        let mean = self.depth_sum as f64 / f64::from(self.sims_done.max(1));
        (mean, self.seldepth)
    }

    /// Backs up `v`, the value for the side to move after the last edge of `path`.
    fn backup(&mut self, path: &[u32], v: f32) {
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
    /// its exact one. The mean is a product by [`reciprocal`], as PUCT's scan takes it.
    pub(super) fn q_and_visits(e: &Edge) -> Option<(f32, u32)> {
        let n = e.visits + u32::from(e.in_flight);
        if n == 0 {
            return None;
        }
        let q = match e.exact.get() {
            Some(v) => -v,
            None => (e.value_sum - f32::from(e.in_flight)) * reciprocal(n),
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
            .chain(self.tails[self.tail_of(e)].iter().map(|t| (t.mv, 0)))
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

/// Visit counts below this take their reciprocal from [`RECIPROCALS`].
const TABULATED: usize = 1024;

/// `1 / n` for each `n` below [`TABULATED`] (0 at 0, never read): 4 KiB, which stays in
/// the level-1 cache.
static RECIPROCALS: [f32; TABULATED] = {
    let mut t = [0.0f32; TABULATED];
    let mut n = 1;
    while n < TABULATED {
        t[n] = 1.0 / n as f32;
        n += 1;
    }
    t
};

/// `1 / n` (`n` ≥ 1), read from a table for the counts a search's scan meets most: PUCT's
/// scan took two divisions an edge (a mean, and the exploration term's `1 / (1 + n)`),
/// which held up a fifth of its time; a product by a tabulated reciprocal is rounded
/// twice (within an ulp of the quotient) and took 2.4% more simulations a second
/// (docs/benchmarks.md). Every reader of a mean uses it, so that the values reported are
/// the values searched.
#[inline(always)]
pub(super) fn reciprocal(n: u32) -> f32 {
    match RECIPROCALS.get(n as usize) {
        Some(&r) => r,
        None => 1.0 / n as f32,
    }
}
