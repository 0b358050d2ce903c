//! The leaves a search hands out for evaluation, in batches.

use engine::{Move, State};

/// A position for the evaluator, already mapped by the symmetry chosen for it.
#[derive(Clone, Debug)]
pub struct LeafRequest {
    /// The (transformed) position.
    pub state: State,
    /// Its legal moves, transformed the same way and in the tree's order.
    pub moves: Vec<Move>,
    /// The tree's position (untransformed): an evaluation of `state` is one of this
    /// position with its legal moves in the order [`State::legal_moves`] gives.
    pub position: State,
    /// Only the value is wanted ([`crate::Evaluator::evaluate_values`]): a leaf's first
    /// evaluation under [`crate::MctsConfig::lazy_expansion`]. Its `moves` are then
    /// empty where the search was told that its evaluators do not need them
    /// ([`crate::Search::set_values_need_moves`]).
    pub value_only: bool,
}

/// What the evaluation of a leaf does to the tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum LeafKind {
    /// A descent that met a leaf already awaiting its evaluation: it only holds virtual
    /// loss.
    Collision,
    /// Expanded and its value backed up: a simulation.
    Full,
    /// Its value backed up, not expanded (lazy expansion's first visit): a simulation.
    Value,
    /// Expanded, nothing backed up (lazy expansion's second visit): no simulation.
    Expand,
}

/// A leaf handed out by [`Search::gather`] and not yet evaluated.
#[derive(Clone, Debug)]
pub(super) struct PendingLeaf {
    /// The edges from the root to the leaf, `LeafBatch::paths[path.0..path.1]`; each
    /// carries one virtual loss.
    pub(super) path: (u32, u32),
    /// The leaf's legal moves in the tree's order, `LeafBatch::moves[m.0..m.1]`
    /// (none for a collision).
    pub(super) moves: (u32, u32),
    pub(super) kind: LeafKind,
}

/// Leaves gathered by [`Search::gather`]: the positions to evaluate, and the paths to
/// give their evaluations back to with [`Search::apply_batch`]. The paths and moves of
/// all leaves share two buffers, and a batch given back is kept by its search for the
/// next [`Search::gather`], with its requests' move lists: a descent allocates nothing
/// (once the buffers have grown).
#[derive(Debug, Default)]
pub struct LeafBatch {
    /// The positions for the evaluator, in order (collisions have none).
    pub requests: Vec<LeafRequest>,
    pub(super) leaves: Vec<PendingLeaf>,
    pub(super) paths: Vec<u32>,
    pub(super) moves: Vec<Move>,
    /// The emptied move lists of requests given back, for the next requests.
    pub(super) spare_moves: Vec<Vec<Move>>,
}

impl LeafBatch {
    /// Whether the batch holds nothing to evaluate or give back.
    pub fn is_empty(&self) -> bool {
        self.leaves.is_empty()
    }

    pub(super) fn clear(&mut self) {
        while let Some(r) = self.requests.pop() {
            self.give_back(r);
        }
        self.leaves.clear();
        self.paths.clear();
        self.moves.clear();
    }

    /// Hands `request` out, its leaf's path `paths[start..]` and its moves `moves[first..]`.
    pub(super) fn hand_out(
        &mut self,
        request: LeafRequest,
        start: usize,
        first: usize,
        kind: LeafKind,
    ) {
        self.requests.push(request);
        self.leaves.push(PendingLeaf {
            path: (start as u32, self.paths.len() as u32),
            moves: (first as u32, self.moves.len() as u32),
            kind,
        });
    }

    /// Keeps the move list of a request that will not be handed out (or came back),
    /// emptied, for the next request.
    pub(super) fn give_back(&mut self, request: LeafRequest) {
        let mut moves = request.moves;
        moves.clear();
        self.spare_moves.push(moves);
    }

    pub(super) fn path(&self, leaf: &PendingLeaf) -> &[u32] {
        &self.paths[leaf.path.0 as usize..leaf.path.1 as usize]
    }
}

/// What a descent tells its caller on the way ([`Search::gather_with`](super::Search)).
/// A closure of a position is one that only sees the leaves.
pub trait Descent {
    /// A leaf the descent reached, as soon as it is known: every request's, in order, and
    /// those of collisions and of finished or solved games (the play loop prefetches its
    /// evaluation cache's slot). `expands`: lazy expansion's second visit, whose policy
    /// the descent will ask for to expand it (the play loop prefetches the cached
    /// policy too, which lies apart from the slot).
    fn leaf(&mut self, position: &State, expands: bool);

    /// The policy of `request`, lazy expansion's second visit, if the caller gives it at
    /// once: the leaf is then expanded and the descent goes on
    /// below it. Asked only of a search that gives out one leaf at a time with none out,
    /// which would otherwise hand the request out and go on from that leaf at the next
    /// descent: the same tree, without a round trip through the caller's loop (Monty
    /// expands the same way). `None` (the default): the request is handed out.
    fn expand_now(&mut self, request: &LeafRequest) -> Option<&[f32]> {
        let _ = request;
        None
    }

    /// The value of leaf `position`, its first visit under lazy expansion (a value
    /// alone), if the caller gives it at once: it is then backed up and the descent ends
    /// there, a simulation made with nothing handed out. `transformed` gives the position
    /// in the symmetry drawn for its evaluation (as a request's `state`), with no moves
    /// (asked only of a search whose evaluators do not need them for a value,
    /// [`crate::Search::set_values_need_moves`]). Asked, as [`Descent::expand_now`] is,
    /// only of a search that gives out one leaf at a time with none out: the same tree
    /// as handing the request out and giving its evaluation back, without the request
    /// and the round trip through the caller's loop. `None` (the default): the request
    /// is handed out.
    fn value_now(&mut self, position: &State, transformed: impl FnOnce() -> State) -> Option<f32> {
        let _ = (position, transformed);
        None
    }
}

impl<F: FnMut(&State)> Descent for F {
    fn leaf(&mut self, position: &State, _: bool) {
        self(position);
    }
}
