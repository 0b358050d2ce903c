//! Tree reuse: moving the root down the tree between moves.

use engine::{Move, State};

use super::{Edge, NONE, Node, Search, Spare};

/// A spare larger than this is given back to the allocator instead of kept: a long
/// analysis may grow a tree of gigabytes, and a game's moves at the clock use far less.
const MAX_SPARE_BYTES: usize = 256 << 20;

impl Spare {
    fn bytes(&self) -> usize {
        self.nodes.capacity() * size_of::<Node>()
            + self.states.capacity() * size_of::<State>()
            + self.edges.capacity() * size_of::<Edge>()
    }
}

impl Search {
    /// Moves the root to the child reached by `mv`, keeping its subtree (tree reuse), or
    /// starts a fresh tree when `keep` is false or the child was never visited.
    pub fn advance(&mut self, mv: Move, keep: bool) {
        let r = self.nodes[self.root as usize].clone();
        let child = (r.first_edge..r.first_edge + r.num_edges)
            .map(|i| self.edges[i as usize])
            .find(|e| e.mv == mv)
            .map(|e| e.child)
            .filter(|&c| c != NONE);
        let next_state = self.states[self.root as usize].after(mv);
        match child {
            Some(c) if keep => self.keep_subtree(c),
            _ => self.restart(next_state),
        }
    }

    /// Moves the root to `target` when the tree holds it: the root itself, a child, or a
    /// grandchild (the position after this player's move and the opponent's reply), and
    /// keeps its subtree; otherwise starts a fresh tree at `target`. Returns whether a
    /// subtree was kept. Call it between searches (no batch in flight).
    pub fn reroot(&mut self, target: &State) -> bool {
        let found = if self.root_state() == *target {
            Some(self.root)
        } else {
            let children = self.children(self.root);
            children
                .iter()
                .find(|&&c| self.states[c as usize] == *target)
                .copied()
                .or_else(|| {
                    children
                        .iter()
                        .flat_map(|&c| self.children(c))
                        .find(|&g| self.states[g as usize] == *target)
                })
        };
        match found {
            Some(id) if self.nodes[id as usize].expanded => {
                if id != self.root {
                    self.keep_subtree(id);
                }
                true
            }
            _ => {
                self.symmetries = target.symmetries();
                self.restart(*target);
                false
            }
        }
    }

    /// The nodes the tree holds below `id`.
    fn children(&self, id: u32) -> Vec<u32> {
        let n = &self.nodes[id as usize];
        (n.first_edge..n.first_edge + n.num_edges)
            .map(|i| self.edges[i as usize].child)
            .filter(|&c| c != NONE)
            .collect()
    }

    /// The visits of the node reached from the root by `moves`, and those of each of its
    /// moves in the tree's order (0 for a move never searched); `None` when the tree
    /// does not hold that node. The root's own evaluation counts as one of its visits.
    pub fn visits_at(&self, moves: &[Move]) -> Option<(u32, Vec<(Move, u32)>)> {
        let mut id = self.root;
        for &mv in moves {
            let n = &self.nodes[id as usize];
            id = (n.first_edge..n.first_edge + n.num_edges)
                .map(|i| self.edges[i as usize])
                .find(|e| e.mv == mv)
                .map(|e| e.child)
                .filter(|&c| c != NONE)?;
        }
        Some((
            self.nodes[id as usize].visits,
            self.child_visits(id).collect(),
        ))
    }

    /// Forgets the tree below the root: a fresh tree at the same position, its memory
    /// given back (not kept for the next tree, as [`Search::advance`] keeps it).
    pub fn clear(&mut self) {
        let root = self.root_state();
        self.nodes = Vec::new();
        self.states = Vec::new();
        self.edges = Vec::new();
        self.spare = Spare::default();
        self.restart(root);
    }

    /// A fresh tree at `root`, in this tree's buffers (emptied), with its symmetries,
    /// endgame tables and spare kept.
    fn restart(&mut self, root: State) {
        let symmetries = std::mem::take(&mut self.symmetries);
        let endgame = self.endgame.take();
        let spare = std::mem::take(&mut self.spare);
        let (mut nodes, mut states, mut edges) = (
            std::mem::take(&mut self.nodes),
            std::mem::take(&mut self.states),
            std::mem::take(&mut self.edges),
        );
        nodes.clear();
        states.clear();
        edges.clear();
        *self = Search::with_symmetries(root, symmetries);
        // The root `with_symmetries` made, moved into the kept buffers.
        nodes.append(&mut self.nodes);
        states.append(&mut self.states);
        (self.nodes, self.states, self.edges) = (nodes, states, edges);
        self.endgame = endgame;
        self.keep_spare(spare);
    }

    /// Keeps `spare` for the next tree, unless it is larger than [`MAX_SPARE_BYTES`].
    fn keep_spare(&mut self, spare: Spare) {
        self.spare = if spare.bytes() > MAX_SPARE_BYTES {
            Spare::default()
        } else {
            spare
        };
    }

    /// Makes node `top` the root, keeping its subtree only.
    fn keep_subtree(&mut self, top: u32) {
        let mut spare = std::mem::take(&mut self.spare);
        self.copy_subtree(top, &mut spare);
        std::mem::swap(&mut self.nodes, &mut spare.nodes);
        std::mem::swap(&mut self.states, &mut spare.states);
        std::mem::swap(&mut self.edges, &mut spare.edges);
        self.keep_spare(spare);
        self.root = 0;
        self.gumbel = None;
        self.pending = None;
        self.in_flight = 0;
        let r = &self.nodes[0];
        if r.visits > 0 {
            self.root_value = -r.value_sum / r.visits as f32;
        }
    }

    /// Copies the subtree of `top` into `into`'s buffers (emptied first), `top` at 0.
    fn copy_subtree(&self, top: u32, into: &mut Spare) {
        let Spare {
            nodes,
            states,
            edges,
            queue,
        } = into;
        nodes.clear();
        states.clear();
        edges.clear();
        queue.clear();
        queue.push_back((top, NONE));
        // (old id, index of the edge in `edges` that points to it)
        while let Some((old, parent_edge)) = queue.pop_front() {
            let n = &self.nodes[old as usize];
            let id = nodes.len() as u32;
            let mut copy = n.clone();
            copy.first_edge = edges.len() as u32;
            if parent_edge != NONE {
                let pe: &mut Edge = &mut edges[parent_edge as usize];
                pe.child = id;
            }
            for i in n.first_edge..n.first_edge + n.num_edges {
                let e = self.edges[i as usize];
                let slot = edges.len() as u32;
                edges.push(Edge { child: NONE, ..e });
                if e.child != NONE {
                    queue.push_back((e.child, slot));
                }
            }
            nodes.push(copy);
            states.push(self.states[old as usize]);
        }
    }
}
