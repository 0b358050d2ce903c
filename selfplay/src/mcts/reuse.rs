//! Tree reuse: moving the root down the tree between moves.

use std::collections::VecDeque;

use engine::{Move, State};

use super::{Edge, NONE, Node, Search};

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
            _ => {
                let symmetries = std::mem::take(&mut self.symmetries);
                let endgame = self.endgame.take();
                *self = Search::with_symmetries(next_state, symmetries);
                self.endgame = endgame;
            }
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
                let endgame = self.endgame.take();
                *self = Search::new(*target);
                self.endgame = endgame;
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

    /// Makes node `top` the root, keeping its subtree only.
    fn keep_subtree(&mut self, top: u32) {
        let (nodes, states, edges, root) = self.copy_subtree(top);
        self.nodes = nodes;
        self.states = states;
        self.edges = edges;
        self.root = root;
        self.gumbel = None;
        self.pending = None;
        self.in_flight = 0;
        let r = &self.nodes[root as usize];
        if r.visits > 0 {
            self.root_value = -r.value_sum / r.visits as f32;
        }
    }

    fn copy_subtree(&self, top: u32) -> (Vec<Node>, Vec<State>, Vec<Edge>, u32) {
        let mut nodes = Vec::new();
        let mut states = Vec::new();
        let mut edges = Vec::new();
        let mut queue = VecDeque::from([(top, NONE)]);
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
        (nodes, states, edges, 0)
    }
}
