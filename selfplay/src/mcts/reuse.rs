//! Tree reuse: moving the root down the tree between moves.

use engine::{Move, State};

use super::search::Search;
use super::tree::{Edge, MAX_SPARE_BYTES, NONE, ROOT, Spare};

impl Search {
    /// Moves the root to the child reached by `mv`, keeping its subtree (tree reuse), or
    /// starts a fresh tree when `keep` is false or the child was never visited.
    pub fn advance(&mut self, mv: Move, keep: bool) {
        let child = self
            .moves_of(ROOT)
            .find(|&i| self.edges[i].mv == mv)
            .filter(|&i| self.edges[i].visits > 0);
        let next_state = self.root_state.after(mv);
        match child {
            Some(c) if keep => self.keep_subtree(c as u32, next_state),
            _ => self.restart(next_state),
        }
    }

    /// Moves the root to `target` when the tree holds it: the root itself, a child, or a
    /// grandchild (the position after this player's move and the opponent's reply), and
    /// keeps its subtree; otherwise starts a fresh tree at `target`. Returns whether a
    /// subtree was kept. Call it between searches (no batch in flight).
    pub fn reroot(&mut self, target: &State) -> bool {
        let found = if self.root_state == *target {
            Some((ROOT, self.root_state))
        } else {
            let children = self.children(ROOT, self.root_state);
            children
                .iter()
                .find(|c| c.1 == *target)
                .copied()
                .or_else(|| {
                    children
                        .iter()
                        .flat_map(|&(c, s)| self.children(c, s))
                        .find(|g| g.1 == *target)
                })
        };
        match found {
            Some((e, s)) if self.expanded(e) => {
                if e != ROOT {
                    self.keep_subtree(e, s);
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

    /// The moves the tree went through from the position edge `at` leads to (at `s`),
    /// with their positions.
    fn children(&self, at: u32, s: State) -> Vec<(u32, State)> {
        self.moves_of(at)
            .filter(|&i| self.edges[i].visits > 0)
            .map(|i| (i as u32, s.after(self.edges[i].mv)))
            .collect()
    }

    /// The visits of the position reached from the root by `moves`, and those of each of
    /// its moves in the order of its legal moves (0 for a move never searched); `None`
    /// when the tree does not hold that position. The root's own evaluation counts as one
    /// of its visits.
    pub fn visits_at(&self, moves: &[Move]) -> Option<(u32, Vec<(Move, u32)>)> {
        let mut at = ROOT;
        let mut state = self.root_state;
        for &mv in moves {
            at = self
                .moves_of(at)
                .find(|&i| self.edges[i].mv == mv)
                .filter(|&i| self.edges[i].visits > 0)? as u32;
            state = state.after(mv);
        }
        let mut children: Vec<(Move, u32)> = self.child_visits(at).collect();
        if at != ROOT {
            let legal = state.legal_moves();
            children.sort_by_key(|c| legal.iter().position(|&m| m == c.0));
        }
        Some((self.edges[at as usize].visits, children))
    }

    /// Forgets the tree below the root: a fresh tree at the same position, its memory
    /// given back (not kept for the next tree, as [`Search::advance`] keeps it).
    pub fn clear(&mut self) {
        let root = self.root_state;
        self.edges = Vec::new();
        self.spare = Spare::default();
        self.restart(root);
    }

    /// A fresh tree at `root`, in this tree's buffers (emptied), with its symmetries,
    /// endgame tables, spare and settings kept.
    fn restart(&mut self, root: State) {
        let symmetries = std::mem::take(&mut self.symmetries);
        let endgame = self.endgame.take();
        let spare = std::mem::take(&mut self.spare);
        let edges = std::mem::take(&mut self.edges);
        let values_need_moves = self.values_need_moves;
        *self = Search::with_buffers(root, symmetries, edges);
        self.endgame = endgame;
        self.values_need_moves = values_need_moves;
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

    /// Makes the position edge `top` leads to (at `state`) the root, keeping its subtree
    /// only.
    fn keep_subtree(&mut self, top: u32, state: State) {
        self.resume = None;
        let mut spare = std::mem::take(&mut self.spare);
        self.positions = self.copy_subtree(top, &state, &mut spare);
        std::mem::swap(&mut self.edges, &mut spare.edges);
        self.keep_spare(spare);
        self.root_state = state;
        self.gumbel = None;
        self.pending = None;
        self.in_flight = 0;
        self.batches_out = 0;
        let r = &self.edges[ROOT as usize];
        if r.visits > 0 {
            self.root_value = -r.value_sum / r.visits as f32;
        }
    }

    /// Copies the subtree of edge `top` (at `state`) into `into`'s buffers (emptied
    /// first), `top` as the root edge with its moves in the order of its legal moves, as
    /// a root's are ([`Search::expand`]); returns the positions it holds.
    fn copy_subtree(&self, top: u32, state: &State, into: &mut Spare) -> usize {
        let Spare { edges, queue } = into;
        edges.clear();
        queue.clear();
        edges.push(Edge {
            first: NONE,
            in_flight: 0,
            count: 0,
            ..self.edges[top as usize]
        });
        let mut positions = 1;
        queue.push_back((top, ROOT));
        while let Some((old, copy)) = queue.pop_front() {
            let range = self.moves_of(old);
            if range.is_empty() {
                continue;
            }
            let first = edges.len() as u32;
            let c = &mut edges[copy as usize];
            (c.first, c.count) = (first, self.edges[old as usize].count);
            let mut root_order = Vec::new();
            if copy == ROOT {
                let legal = state.legal_moves();
                root_order.extend(range.clone());
                root_order.sort_by_key(|&i| legal.iter().position(|&m| m == self.edges[i].mv));
            }
            for i in range.filter(|_| copy != ROOT).chain(root_order) {
                let e = self.edges[i];
                let slot = edges.len() as u32;
                edges.push(Edge {
                    first: NONE,
                    in_flight: 0,
                    count: 0,
                    ..e
                });
                if e.visits > 0 {
                    positions += 1;
                    queue.push_back((i as u32, slot));
                }
            }
        }
        positions
    }
}
