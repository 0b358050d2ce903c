//! Tree reuse: moving the root down the tree between moves.

use engine::{Move, State};

use super::search::Search;
use super::tree::{Edge, NONE, ROOT, Spare, TailMove};

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
        self.tails = Vec::new();
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
        let tails = std::mem::take(&mut self.tails);
        let (values_need_moves, one_leaf) = (self.values_need_moves, self.one_leaf);
        *self = Search::with_buffers(root, symmetries, edges, tails);
        self.endgame = endgame;
        self.values_need_moves = values_need_moves;
        self.one_leaf = one_leaf;
        self.keep_spare(spare);
    }

    /// Keeps `spare` for the next tree, within its bound ([`Spare::within_bound`]).
    fn keep_spare(&mut self, spare: Spare) {
        self.spare = spare.within_bound();
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
            // A root's scan reads all its moves, as edges.
            if e.has_tail {
                self.grow(ROOT);
            }
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
        std::mem::swap(&mut self.tails, &mut spare.tails);
        self.keep_spare(spare);
        self.compacted = self.edges.len();
    }

    /// Copies the subtree of edge `top` (at `state`) into `into`'s buffers (emptied
    /// first), `top` as the root edge with its moves in the order of its legal moves, as
    /// a root's are ([`Search::expand`]); the root's tail, if it has one, as edges, the
    /// other positions' tails as tails.
    fn copy_subtree(&self, top: u32, state: &State, into: &mut Spare) {
        let Spare {
            edges,
            tails,
            queue,
        } = into;
        edges.clear();
        tails.clear();
        queue.clear();
        edges.push(Edge {
            first: NONE,
            in_flight: 0,
            count: 0,
            has_tail: false,
            ..self.edges[top as usize]
        });
        queue.push_back((top, ROOT));
        while let Some((old, copy)) = queue.pop_front() {
            let range = self.moves_of(old);
            if range.is_empty() {
                continue;
            }
            let first = edges.len() as u32;
            let tail = self.tail_of(old);
            let as_edges = copy == ROOT;
            let c = &mut edges[copy as usize];
            c.first = first;
            c.count = u16::try_from(range.len() + if as_edges { tail.len() } else { 0 })
                .expect("fewer than 65,536 moves");
            c.has_tail = !as_edges && !tail.is_empty();
            for i in range {
                let e = self.edges[i];
                let slot = edges.len() as u32;
                edges.push(Edge {
                    first: NONE,
                    in_flight: 0,
                    count: 0,
                    has_tail: false,
                    ..e
                });
                if e.visits > 0 {
                    queue.push_back((i as u32, slot));
                }
            }
            if tail.is_empty() {
                continue;
            }
            if as_edges {
                edges.extend(self.tails[tail].iter().map(TailMove::edge));
            } else {
                let first_prior = self.tails[tail.start].prior;
                edges.push(Edge::tail_header(tails.len(), tail.len(), first_prior));
                tails.extend_from_slice(&self.tails[tail]);
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
    use crate::mcts::tree::{FULL_MOVES, order_tail};

    /// Searches `s` on by `sims` simulations, one leaf a batch (the play loop's).
    fn search(s: &mut Search, sims: u32, cfg: &MctsConfig, rng: &mut Rng) {
        s.start(sims, true, cfg, rng);
        while !s.finished() {
            let b = s.gather(1, cfg, rng);
            answer(s, b, cfg, rng);
        }
    }

    /// The play-time settings, and two searches of the start position with random
    /// sources of the same seed.
    fn twins(seed: u64) -> (MctsConfig, (Search, Rng), (Search, Rng)) {
        let root = "ataxx".parse::<engine::Game>().unwrap().startpos();
        let one = || (Search::new(root), Rng::new(seed));
        (MctsConfig::for_play(), one(), one())
    }

    /// Edges the tree reaches: the root's and every expanded position's moves.
    fn reachable(s: &Search) -> usize {
        1 + s.reachable().len()
    }

    /// The tree from the root, depth first: every expanded position's moves with their
    /// statistics (bits), as the search reads them, tails included (as moves never
    /// searched), so that a tree with tails and one without compare. The last field is
    /// the position's number of moves.
    fn dump(s: &Search) -> Vec<(Move, u32, u32, u32, Option<f32>, usize)> {
        let (mut out, mut stack) = (Vec::new(), vec![ROOT]);
        while let Some(e) = stack.pop() {
            for i in s.moves_of(e) {
                let c = &s.edges[i];
                let moves = usize::from(c.count) + s.tail_of(i as u32).len();
                let (value, prior) = (c.value_sum.to_bits(), c.prior.to_bits());
                out.push((c.mv, c.visits, value, prior, c.exact.get(), moves));
                stack.push(i as u32);
            }
            // A tail's order is its edges' once grown.
            let mut tail = s.tails[s.tail_of(e)].to_vec();
            order_tail(&mut tail);
            for t in &tail {
                out.push((t.mv, 0, 0, t.prior.to_bits(), None, 0));
            }
        }
        out
    }

    /// A search whose positions keep tails (one leaf at a time) builds the tree, visit
    /// for visit, that one whose positions hold all their moves as edges builds, across
    /// reroots in place and compactions; its tails were grown often, and it takes well
    /// under the memory.
    #[test]
    fn a_tree_with_tails_searches_as_one_without() {
        let (cfg, (mut a, mut rng_a), (mut b, mut rng_b)) = twins(5);
        a.set_one_leaf(true);
        for ply in 0..4 {
            search(&mut a, 3_000, &cfg, &mut rng_a);
            search(&mut b, 3_000, &cfg, &mut rng_b);
            assert_eq!(dump(&a), dump(&b), "ply {ply}");
            assert_eq!(a.outcome(&cfg), b.outcome(&cfg), "ply {ply}");
            let expanded = a.reachable().into_iter().filter(|&e| a.expanded(e));
            let (tailed, grown) = expanded.fold((0, 0), |(t, g), e| {
                let n = &a.edges[e as usize];
                let grown = !n.has_tail && usize::from(n.count) > FULL_MOVES + 1;
                (t + usize::from(n.has_tail), g + usize::from(grown))
            });
            eprintln!(
                "ply {ply}: {tailed} tails, {grown} grown, {} against {} bytes",
                a.tree_bytes(),
                b.tree_bytes()
            );
            assert!(
                tailed > 500 && grown > 50,
                "ply {ply}: {tailed} tails, {grown} grown"
            );
            if ply == 0 {
                // A fresh tree: 53% of the bytes at 3,000 simulations (46% at 600,000).
                assert!(a.tree_bytes() * 10 < b.tree_bytes() * 6);
            }
            let best = a.outcome(&cfg).best;
            a.advance(best, true);
            b.advance(best, true);
            if ply == 1 {
                a.compact();
                b.compact();
                assert!(a.tree_bytes() * 10 < b.tree_bytes() * 6, "compacted");
            }
            assert_eq!(dump(&a), dump(&b), "ply {ply}");
            assert!(
                !a.edges[ROOT as usize].has_tail,
                "a root holds its moves as edges"
            );
        }
        // Turned off, every tail becomes edges.
        a.set_one_leaf(false);
        assert!(a.reachable().iter().all(|&e| !a.edges[e as usize].has_tail));
        assert_eq!(dump(&a), dump(&b));
        search(&mut a, 1_000, &cfg, &mut rng_a);
        search(&mut b, 1_000, &cfg, &mut rng_b);
        assert_eq!(dump(&a), dump(&b));
    }

    /// A subtree kept in place (the rest of the old tree left in the buffer) holds what
    /// a copied one holds, and the searches after the two agree simulation for
    /// simulation; a tree grown past [`COMPACT_GROWTH`] times what its last compaction
    /// left is compacted at the next reroot.
    #[test]
    fn a_subtree_kept_in_place_searches_as_a_copied_one() {
        let (cfg, (mut a, mut rng_a), (mut b, mut rng_b)) = twins(3);
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
