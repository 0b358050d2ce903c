//! Tree reuse: moving the root down the tree between moves.

use engine::{Move, State};

use super::search::Search;
use super::tree::{Edge, MAX_SPARE_BYTES, NONE, ROOT, Spare};

/// A reroot compacts the tree only once its buffer holds more than [`COMPACT_GROWTH`]
/// times what the last compaction left, and times this (96 KB): a small tree is left in
/// place. Small, for self-play's many games a thread (each holds its tree: a floor of
/// 4 × 96 KB a game, where the copy before this held about twice its tree).
const COMPACT_FROM: usize = 1 << 12;

/// See [`COMPACT_FROM`]. Along the line of the engine's own moves (the most kept at each
/// ply), 40 plies at 50,000 simulations a ply (`bench/uai-line-nps.py`), compacting at
/// 2× searched 238,071–240,875 nodes a wall-clock second, at 4× 245,276–248,595, never
/// 243,872–245,102.
const COMPACT_GROWTH: usize = 4;

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
            in_legal_order(&mut children, &state, |c| c.0);
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
    /// only. In place, the rest of the old tree left in the buffer (copying the subtree
    /// took a seventh of a game's time at 50,000 simulations a move), unless the buffer
    /// holds more than [`COMPACT_GROWTH`] times what the last compaction left
    /// ([`COMPACT_FROM`] at least): then the subtree is copied into the spare buffer and
    /// the rest dropped. A compaction copies at most the buffer, which grew by three
    /// quarters of it at least since the one before: over a game, copies cost no more
    /// than 4/3 of the search's own writes.
    fn keep_subtree(&mut self, top: u32, state: State) {
        if self.edges.len() > COMPACT_GROWTH * self.compacted.max(COMPACT_FROM) {
            self.compact_at(top, state);
        } else {
            let e = self.edges[top as usize];
            self.edges[ROOT as usize] = Edge { in_flight: 0, ..e };
            // Each edge takes its own subtree along.
            let range = self.moves_of(ROOT);
            in_legal_order(&mut self.edges[range], &state, |c| c.mv);
        }
        self.resume = None;
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

    /// Copies the tree into the spare buffer, dropping what reroots left behind. Call it
    /// between searches (no batch in flight).
    pub fn compact(&mut self) {
        self.compact_at(ROOT, self.root_state);
    }

    /// Copies the subtree of edge `top` (at `state`) into the spare buffer and makes it
    /// the tree; the old buffer becomes the spare.
    fn compact_at(&mut self, top: u32, state: State) {
        let mut spare = std::mem::take(&mut self.spare);
        self.copy_subtree(top, &state, &mut spare);
        std::mem::swap(&mut self.edges, &mut spare.edges);
        self.keep_spare(spare);
        self.compacted = self.edges.len();
    }

    /// Copies the subtree of edge `top` (at `state`) into `into`'s buffers (emptied
    /// first), `top` as the root edge with its moves in the order of its legal moves, as
    /// a root's are ([`Search::expand`]).
    fn copy_subtree(&self, top: u32, state: &State, into: &mut Spare) {
        let Spare { edges, queue } = into;
        edges.clear();
        queue.clear();
        edges.push(Edge {
            first: NONE,
            in_flight: 0,
            count: 0,
            ..self.edges[top as usize]
        });
        queue.push_back((top, ROOT));
        while let Some((old, copy)) = queue.pop_front() {
            let range = self.moves_of(old);
            if range.is_empty() {
                continue;
            }
            let first = edges.len() as u32;
            let c = &mut edges[copy as usize];
            (c.first, c.count) = (first, self.edges[old as usize].count);
            for i in range {
                let e = self.edges[i];
                let slot = edges.len() as u32;
                edges.push(Edge {
                    first: NONE,
                    in_flight: 0,
                    count: 0,
                    ..e
                });
                if e.visits > 0 {
                    queue.push_back((i as u32, slot));
                }
            }
        }
        // Sorted once copied: each edge takes its own subtree along.
        let root = &edges[ROOT as usize];
        if root.first != NONE {
            let run = root.first as usize..root.first as usize + usize::from(root.count);
            in_legal_order(&mut edges[run], state, |c| c.mv);
        }
    }
}

/// Sorts `moves` into the order of `state`'s legal moves, a root's order
/// ([`Search::expand`]); `mv` gives an item's move.
fn in_legal_order<T>(moves: &mut [T], state: &State, mv: impl Fn(&T) -> Move) {
    let legal = state.legal_moves();
    moves.sort_by_key(|x| legal.iter().position(|&m| m == mv(x)));
}

#[cfg(test)]
mod tests {
    use engine::Rng;

    use super::*;
    use crate::MctsConfig;
    use crate::mcts::select::tests::answer;

    /// Searches `s` on by `sims` simulations, one leaf a batch (the play loop's).
    fn search(s: &mut Search, sims: u32, cfg: &MctsConfig, rng: &mut Rng) {
        s.start(sims, true, cfg, rng);
        while !s.finished() {
            let b = s.gather(1, cfg, rng);
            answer(s, b, cfg, rng);
        }
    }

    /// The tree from the root, depth first: each visited position's moves with their
    /// statistics (bits), as the search reads them.
    fn dump(s: &Search) -> Vec<(Move, u32, u32, u32, Option<f32>, u16)> {
        s.reachable()
            .into_iter()
            .map(|i| {
                let c = &s.edges[i as usize];
                (
                    c.mv,
                    c.visits,
                    c.value_sum.to_bits(),
                    c.prior.to_bits(),
                    c.exact.get(),
                    c.count,
                )
            })
            .collect()
    }

    /// Edges the tree reaches: the root's and every expanded position's moves.
    fn reachable(s: &Search) -> usize {
        1 + s.reachable().len()
    }

    /// A subtree kept in place (the rest of the old tree left in the buffer) holds what
    /// a copied one holds, and the searches after the two agree simulation for
    /// simulation; a tree grown past [`COMPACT_GROWTH`] times what its last compaction
    /// left is compacted at the next reroot.
    #[test]
    fn a_subtree_kept_in_place_searches_as_a_copied_one() {
        let cfg = MctsConfig::for_play();
        let root = "ataxx".parse::<engine::Game>().unwrap().startpos();
        let (mut rng_a, mut rng_b) = (Rng::new(3), Rng::new(3));
        let (mut a, mut b) = (Search::new(root), Search::new(root));
        for ply in 0..3 {
            search(&mut a, 300, &cfg, &mut rng_a);
            search(&mut b, 300, &cfg, &mut rng_b);
            assert_eq!(dump(&a), dump(&b), "ply {ply}");
            let best = a.outcome(&cfg).best;
            assert_eq!(best, b.outcome(&cfg).best);
            a.advance(best, true);
            b.advance(best, true);
            b.compact();
            assert!(
                a.edges.len() > reachable(&a),
                "ply {ply}: kept in place, the old tree's other moves still in the buffer"
            );
            assert_eq!(b.edges.len(), reachable(&b), "ply {ply}: compacted");
            assert_eq!(dump(&a), dump(&b), "ply {ply}");
            assert_eq!(a.tree_size(), b.tree_size());
            assert_eq!(a.root_state(), b.root_state());
        }
        // Past `COMPACT_GROWTH` times what the last compaction left, the next reroot
        // compacts.
        search(&mut a, 3_000, &cfg, &mut rng_a);
        assert!(a.edges.len() > COMPACT_GROWTH * a.compacted.max(COMPACT_FROM));
        let best = a.outcome(&cfg).best;
        a.advance(best, true);
        assert_eq!(a.edges.len(), reachable(&a));
        assert_eq!(a.compacted, a.edges.len());
    }
}
