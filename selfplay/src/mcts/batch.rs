//! Leaves handed out and given back: descents under virtual loss gather a batch of leaves
//! for one evaluator call ([`Search::gather`]), and their evaluations expand them and are
//! backed up ([`Search::apply_batch`]). [`Search::next_request`] and [`Search::apply`] do
//! the same one leaf at a time.

use engine::{Rng, State};

use super::config::MctsConfig;
use super::leaves::{Descent, LeafBatch, LeafKind, LeafRequest, PendingLeaf};
use super::search::Search;
use super::select::TAIL;
use super::tree::{Exact, MAX_IN_FLIGHT, NONE, ROOT, terminal_value};
use crate::evaluator::Evaluation;

impl Search {
    /// The next leaf to evaluate, or `None` when the search is finished. Finished games
    /// met on the way are scored exactly and count as simulations.
    pub fn next_request(&mut self, cfg: &MctsConfig, rng: &mut Rng) -> Option<LeafRequest> {
        debug_assert!(self.pending.is_none(), "apply the pending evaluation first");
        loop {
            if self.finished() {
                return None;
            }
            let batch = self.gather(1, cfg, rng);
            if let Some(req) = batch.requests.first().cloned() {
                self.pending = Some(batch);
                return Some(req);
            }
            // A descent that ended in a finished game: already backed up.
            debug_assert!(batch.leaves.is_empty());
            self.recycle(batch);
        }
    }

    /// Takes the evaluation of the last requested leaf: expands it and backs the value up.
    pub fn apply(&mut self, eval: &Evaluation, cfg: &MctsConfig, rng: &mut Rng) {
        let batch = self.pending.take().expect("an evaluation was requested");
        self.apply_batch(batch, std::slice::from_ref(eval), cfg, rng);
    }

    /// Descents from the root under virtual loss, for one evaluator call, until `max`
    /// leaves are gathered or `max` descents did not find one: each descent ends at a
    /// leaf to evaluate, at a finished game (scored and backed up at once, a simulation),
    /// or at a leaf already awaiting its evaluation (a collision: it holds its virtual
    /// loss until the batch is given back, so that the next descents go elsewhere). With
    /// `max` 1, one descent is made. The batch may be empty: the search is finished, its
    /// remaining simulations are all in flight, or the root awaits its evaluation.
    /// Several batches may be in flight at once; give each back with
    /// [`Search::apply_batch`] before [`Search::outcome`] or [`Search::advance`].
    pub fn gather(&mut self, max: usize, cfg: &MctsConfig, rng: &mut Rng) -> LeafBatch {
        self.gather_with(max, cfg, rng, &mut |_: &State| {})
    }

    /// [`Search::gather`], calling `leaf` with the position of each leaf a descent
    /// reaches as soon as it is known: every request's, in order, and those of collisions
    /// and of finished or solved games (the play loop prefetches its evaluation cache's
    /// slot).
    pub fn gather_with(
        &mut self,
        max: usize,
        cfg: &MctsConfig,
        rng: &mut Rng,
        descent: &mut impl Descent,
    ) -> LeafBatch {
        // A tail grown under a leaf in flight would leave its path on the old run.
        assert!(
            !self.one_leaf || (max <= 1 && self.batches_out == 0),
            "a search with tails gives out one leaf at a time (Search::set_one_leaf)"
        );
        let mut batch = self.recycled.take().unwrap_or_default();
        if !self.expanded(ROOT) {
            if self.edges[ROOT as usize].in_flight == 0 {
                let start = batch.paths.len();
                batch.paths.push(ROOT);
                self.add_virtual_loss(&[ROOT]);
                let root = self.root_state;
                descent.leaf(&root, false);
                let sym = self.draw_symmetry(cfg, rng);
                let (req, first) = self.leaf_request(&root, &mut batch, LeafKind::Full, sym);
                batch.hand_out(req, start, first, LeafKind::Full);
                self.batches_out += 1;
            }
            return batch;
        }
        let max = max.max(1);
        // Descents that found no leaf to evaluate, less those that did.
        let mut misses = 0;
        // One endgame solve a batch at most: each may take its whole node budget, and a
        // timed search can only stop between batches.
        let mut may_solve = true;
        let mut resume = self.resume.take();
        while batch.requests.len() < max && misses < max {
            let root = &self.edges[ROOT as usize];
            if self.sims_done + self.in_flight >= self.sims_target
                || root.exact.get().is_some()
                || root.in_flight >= MAX_IN_FLIGHT
            {
                break;
            }
            misses += 1;
            let start = batch.paths.len();
            batch.paths.push(ROOT);
            let mut at = ROOT;
            let mut state = self.root_state;
            if let Some(leaf) = resume.take() {
                batch.paths.extend_from_slice(&self.resume_path[1..]);
                at = *self.resume_path.last().expect("a path holds its leaf");
                state = leaf;
            }
            loop {
                let e = &self.edges[at as usize];
                if let Some(v) = e.exact.get() {
                    self.score_exact(&mut batch, start, v);
                    break;
                }
                if e.first == NONE {
                    let collision = e.in_flight > 0;
                    let first_visit = e.visits == 0;
                    self.add_virtual_loss(&batch.paths[start..]);
                    if collision {
                        let path = (start as u32, batch.paths.len() as u32);
                        let none = batch.moves.len() as u32;
                        batch.leaves.push(PendingLeaf {
                            path,
                            moves: (none, none),
                            kind: LeafKind::Collision,
                        });
                        // Not a simulation: the Gumbel root's schedule gets its visit back.
                        self.unschedule(batch.paths[start + 1] as usize);
                        break;
                    }
                    let kind = if !first_visit {
                        // Lazy expansion's second visit: the policy, no simulation.
                        LeafKind::Expand
                    } else if let Some(v) = self.solve_endgame(&state, cfg, &mut may_solve) {
                        // Solved: a finished game from now on.
                        self.remove_virtual_loss(&batch.paths[start..]);
                        self.edges[at as usize].exact = Exact::of(v);
                        self.score_exact(&mut batch, start, v);
                        break;
                    } else if cfg.lazy_expansion {
                        LeafKind::Value
                    } else {
                        LeafKind::Full
                    };
                    let sym = self.draw_symmetry(cfg, rng);
                    // A first visit's value at once where the caller gives it: backed up
                    // as `apply_batch` would back it up, the descent ends here. No request
                    // is made: a value alone needs no moves here, and the position in its
                    // symmetry only where the caller evaluates it.
                    if kind == LeafKind::Value
                        && self.one_leaf
                        && !self.values_need_moves
                        && let Some(v) = descent.value_now(&state, || self.transformed(&state, sym))
                    {
                        self.simulated(&batch.paths[start..], v);
                        batch.paths.truncate(start);
                        break;
                    }
                    let (req, first) = self.leaf_request(&state, &mut batch, kind, sym);
                    // An expansion at once where the caller evaluates it (and no other
                    // leaf is out); then below the leaf, as from the root (resume's
                    // reason).
                    if kind == LeafKind::Expand
                        && self.one_leaf
                        && self.goes_on_below_an_expansion()
                        && let Some(policy) = descent.expand_now(&req)
                    {
                        self.remove_virtual_loss(&batch.paths[start..]);
                        self.expand(at, &batch.moves[first..], policy);
                        batch.moves.truncate(first);
                        batch.give_back(req);
                        continue;
                    }
                    batch.hand_out(req, start, first, kind);
                    misses -= 1;
                    if kind == LeafKind::Expand {
                        self.unschedule(batch.paths[start + 1] as usize);
                    } else {
                        self.in_flight += 1;
                    }
                    break;
                }
                let next = if at == ROOT {
                    self.pick_root(cfg)
                } else {
                    match self.pick_puct(at, cfg, false) {
                        // The tail's first move: made an edge, with the rest of the tail.
                        TAIL => self.grow(at),
                        next => next,
                    }
                };
                let e = &self.edges[next];
                if e.first != NONE {
                    // The edges the next pick scans (below the root, the visited moves
                    // and the first unvisited: at most as many as the node's visits),
                    // fetched while the move is made; the scan waited on them for a
                    // third of its time.
                    let scanned = (e.visits.max(1) as usize).min(usize::from(e.count));
                    let first = e.first as usize;
                    engine::prefetch(&self.edges[first..first + scanned]);
                }
                let e = &mut self.edges[next];
                state.play(e.mv);
                if e.first == NONE {
                    // A leaf, as early as it is known.
                    descent.leaf(&state, e.awaits_expansion());
                }
                if e.visits + u32::from(e.in_flight) == 0 {
                    // The first descent through this move.
                    e.exact = terminal_value(&state).map_or(Exact::UNKNOWN, Exact::of);
                }
                at = next as u32;
                batch.paths.push(at);
            }
        }
        if !batch.is_empty() {
            self.batches_out += 1;
        }
        batch
    }

    /// Whether the descent after an expansion may start below the expanded leaf (where
    /// an expansion alone was given back, `Search::resume`; or at once, in the descent,
    /// [`Descent::expand_now`]): no other batch is out, whose virtual losses the descent
    /// from the root would meet, and no Gumbel root, whose schedule each descent takes
    /// from.
    fn goes_on_below_an_expansion(&self) -> bool {
        self.batches_out == 0 && self.gumbel.is_none()
    }

    /// Keeps a batch given back (emptied) for the next [`Search::gather`].
    pub(super) fn recycle(&mut self, mut batch: LeafBatch) {
        batch.clear();
        self.recycled = Some(batch);
    }

    /// Backs up `v`, the exact value at the end of the descent `batch.paths[start..]`,
    /// proves what it can above it, and counts the simulation; the descent leaves the
    /// batch.
    fn score_exact(&mut self, batch: &mut LeafBatch, start: usize, v: f32) {
        let path = &batch.paths[start..];
        self.simulated(path, v);
        self.prove_path(path);
        batch.paths.truncate(start);
    }

    /// Virtual loss on every edge of `path`: none where leaves are given out one at a
    /// time, each back before the next descent (no descent would meet it).
    fn add_virtual_loss(&mut self, path: &[u32]) {
        if self.one_leaf {
            return;
        }
        for &e in path {
            self.edges[e as usize].in_flight += 1;
        }
    }

    fn remove_virtual_loss(&mut self, path: &[u32]) {
        if self.one_leaf {
            return;
        }
        for &e in path {
            let e = &mut self.edges[e as usize];
            e.in_flight = e.in_flight.saturating_sub(1);
        }
    }

    /// The symmetry a leaf's evaluation is asked in (an index into `symmetries`): drawn
    /// at random where the configuration asks for one, for every leaf.
    fn draw_symmetry(&self, cfg: &MctsConfig, rng: &mut Rng) -> Option<usize> {
        (cfg.symmetry && self.symmetries.len() > 1)
            .then(|| rng.below(self.symmetries.len() as u64) as usize)
    }

    /// `state` in symmetry `sym` ([`Search::draw_symmetry`]).
    fn transformed(&self, state: &State, sym: Option<usize>) -> State {
        sym.map_or(*state, |k| state.transform(&self.symmetries[k]))
    }

    /// The request of leaf `state` for a `kind` of evaluation, in symmetry `sym`, and
    /// where its moves start in `batch.moves` (listed there in the tree's order; a value
    /// alone expands nothing, and lists them only for an evaluator that needs them).
    fn leaf_request(
        &self,
        state: &State,
        batch: &mut LeafBatch,
        kind: LeafKind,
        sym: Option<usize>,
    ) -> (LeafRequest, usize) {
        let value_only = kind == LeafKind::Value;
        let first = batch.moves.len();
        if !value_only || self.values_need_moves {
            state.for_each_legal(|m| batch.moves.push(m));
        }
        let moves = &batch.moves[first..];
        let mut buffer = batch.spare_moves.pop().unwrap_or_default();
        match sym {
            Some(k) => {
                let sym = &self.symmetries[k];
                buffer.extend(moves.iter().map(|&m| sym.apply(m)));
            }
            None => buffer.extend_from_slice(moves),
        }
        let req = LeafRequest {
            state: self.transformed(state, sym),
            moves: buffer,
            position: *state,
            value_only,
        };
        (req, first)
    }

    /// Gives back a batch from [`Search::gather`] with the evaluations of its requests
    /// (in order): removes its virtual losses, expands its leaves and backs their values
    /// up. Collisions only give their virtual loss back.
    pub fn apply_batch(
        &mut self,
        batch: LeafBatch,
        evals: &[Evaluation],
        cfg: &MctsConfig,
        rng: &mut Rng,
    ) {
        debug_assert_eq!(batch.requests.len(), evals.len());
        if !batch.is_empty() {
            self.batches_out = self.batches_out.saturating_sub(1);
        }
        let mut evals = evals.iter();
        for leaf in &batch.leaves {
            let path = batch.path(leaf);
            self.remove_virtual_loss(path);
            if leaf.kind == LeafKind::Collision {
                continue;
            }
            let eval = evals.next().expect("an evaluation for every request");
            let at = *path.last().expect("a path holds its leaf");
            if leaf.kind == LeafKind::Value {
                self.in_flight = self.in_flight.saturating_sub(1);
                self.simulated(path, eval.value);
                continue;
            }
            let (m0, m1) = leaf.moves;
            self.expand(at, &batch.moves[m0 as usize..m1 as usize], &eval.policy);
            if leaf.kind == LeafKind::Expand {
                continue;
            }
            if at == ROOT {
                // The root is only requested before its expansion: its own evaluation
                // is not a simulation.
                self.root_value = eval.value;
                let root = &mut self.edges[ROOT as usize];
                root.visits += 1;
                root.value_sum -= eval.value;
                self.prepare_root(cfg, rng);
                continue;
            }
            self.in_flight = self.in_flight.saturating_sub(1);
            self.simulated(path, eval.value);
        }
        self.resume = None;
        if let [leaf] = &batch.leaves[..]
            && leaf.kind == LeafKind::Expand
            && self.goes_on_below_an_expansion()
        {
            self.resume_path.clear();
            self.resume_path.extend_from_slice(batch.path(leaf));
            self.resume = Some(batch.requests[0].position);
        }
        self.recycle(batch);
    }
}

#[cfg(test)]
mod tests;
