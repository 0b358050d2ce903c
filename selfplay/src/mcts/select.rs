//! The choice of a move: PUCT with first-play urgency below the root, and at the root
//! PUCT with Dirichlet noise and forced playouts or the Gumbel root's Sequential Halving.

use std::collections::VecDeque;

use engine::Rng;

use super::config::{MctsConfig, RootKind};
use super::gumbel::Gumbel;
use super::noise::{dirichlet, gumbel_noise};
use super::search::{Search, reciprocal};
use super::tree::{Edge, NONE, ROOT};

/// What [`Search::pick_puct`] returns for the first move of a position's tail.
pub(super) const TAIL: usize = usize::MAX;

/// PUCT's score of a move of value `q` (the first-play value where it is unvisited),
/// prior `prior` and `n` visits, `exploration` being its node's c·√N. (An unvisited
/// move's term is `exploration · prior` exactly: the reciprocal of 1 is 1.)
#[inline(always)]
fn puct(q: f32, prior: f32, exploration: f32, n: u32) -> f32 {
    q + exploration * prior * reciprocal(1 + n)
}

impl Search {
    /// Noise and the Gumbel schedule, once the root has priors.
    pub(super) fn prepare_root(&mut self, cfg: &MctsConfig, rng: &mut Rng) {
        let range = self.moves_of(ROOT);
        let count = range.len();
        self.root_prior = self.edges[range.clone()].iter().map(|e| e.prior).collect();
        if cfg.root == RootKind::Gumbel {
            let logits: Vec<f32> = self.edges[range.clone()]
                .iter()
                .map(|e| e.prior.max(1e-12).ln())
                .collect();
            let g: Vec<f32> = if self.full {
                (0..logits.len()).map(|_| gumbel_noise(rng)).collect()
            } else {
                vec![0.0; logits.len()]
            };
            let mut order: Vec<usize> = (0..logits.len()).collect();
            order.sort_by(|&a, &b| (g[b] + logits[b]).total_cmp(&(g[a] + logits[a])));
            let m = cfg.gumbel_k.clamp(1, logits.len());
            order.truncate(m);
            let phases = (m as f32).log2().ceil().max(1.0) as u32;
            let mut gs = Gumbel {
                g,
                logits,
                remaining: order,
                queue: VecDeque::new(),
                phases_left: phases,
                budget: self.sims_target,
                scheduled: 0,
            };
            gs.plan_phase();
            self.gumbel = Some(gs);
        } else if self.full && cfg.dirichlet_epsilon > 0.0 && count > 1 {
            let alpha = cfg.dirichlet_total_alpha / count as f32;
            let noise = dirichlet(rng, alpha, count);
            for (e, n) in self.edges[range].iter_mut().zip(noise) {
                e.prior = (1.0 - cfg.dirichlet_epsilon) * e.prior + cfg.dirichlet_epsilon * n;
            }
        }
    }

    /// The move PUCT picks at the position edge `at` leads to (an index into `edges`).
    ///
    /// Below the root a node's moves are in prior order ([`Search::expand`]) and PUCT
    /// meets them in that order: the moves not yet visited share the first-play value, so
    /// of them it can only pick the most probable, the first. The moves visited (or in
    /// flight) are therefore the first of the node's, and the scan stops after them
    /// instead of reading every move; in one pass where no other batch is out
    /// ([`Search::pick_below_root`]). The root's priors carry noise, and forced playouts
    /// visit out of order there: its scan reads every move.
    ///
    /// [`TAIL`] when that move is the first of the position's tail ([`Search::grow`]).
    pub(super) fn pick_puct(&self, at: u32, cfg: &MctsConfig, forced: bool) -> usize {
        if self.one_pass_at(at) {
            debug_assert!(!forced, "forced playouts are the root's");
            return self.pick_below_root(at, cfg);
        }
        self.pick_scan(at, cfg, forced)
    }

    /// The mean value of the position edge `n` leads to, for its side to move (0 before
    /// a visit): the first-play value's base.
    fn parent_q(n: &Edge) -> f32 {
        if n.visits > 0 {
            -n.value_sum / n.visits as f32
        } else {
            0.0
        }
    }

    /// Whether [`Search::pick_puct`] takes one pass at the position edge `at` leads to.
    fn one_pass_at(&self, at: u32) -> bool {
        at != ROOT && self.batches_out == 0
    }

    /// [`Search::pick_puct`] in two passes over the moves: the children's visits and the
    /// prior mass visited, then the scores.
    fn pick_scan(&self, at: u32, cfg: &MctsConfig, forced: bool) -> usize {
        let n = &self.edges[at as usize];
        debug_assert!(!n.has_tail, "tails are kept only one leaf at a time");
        let range = self.moves_of(at);
        let parent_q = Search::parent_q(n);
        let edges = &self.edges[range.clone()];
        // The prior mass already visited and the children's visits, over the visited.
        let (mut visited_mass, mut child_total, mut visited) = (0.0f32, 0u32, 0);
        if at == ROOT {
            for e in edges {
                if let Some((_, v)) = Search::q_and_visits(e) {
                    (visited_mass, child_total) = (visited_mass + e.prior, child_total + v);
                }
            }
            visited = edges.len();
        } else {
            for e in edges {
                let Some((_, v)) = Search::q_and_visits(e) else {
                    break;
                };
                (visited_mass, child_total) = (visited_mass + e.prior, child_total + v);
                visited += 1;
            }
            debug_assert!(
                edges[visited..]
                    .iter()
                    .all(|e| e.visits + u32::from(e.in_flight) == 0),
                "the visited moves come first below the root"
            );
        }
        let fpu = parent_q - cfg.fpu_reduction * visited_mass.sqrt();
        let exploration = cfg.c_puct * (child_total.max(1) as f32).sqrt();
        let mut best = 0;
        let mut best_score = f32::NEG_INFINITY;
        for (i, e) in edges[..(visited + 1).min(edges.len())].iter().enumerate() {
            match e.exact.get().map(|v| -v) {
                // A proven win is taken; a proven loss is never searched again (the node
                // would be proven lost if every move were).
                Some(p) if p >= 1.0 => return range.start + i,
                Some(p) if p <= -1.0 => continue,
                _ => {}
            }
            let (q, nv) = Search::q_and_visits(e).unwrap_or((fpu, 0));
            if forced && (nv as f32) < (2.0 * e.prior * child_total as f32).sqrt() {
                return range.start + i;
            }
            let score = puct(q, e.prior, exploration, nv);
            if score > best_score {
                best_score = score;
                best = i;
            }
        }
        range.start + best
    }

    /// [`Search::pick_puct`] below the root, in one pass, while no other batch is out: the
    /// children's visits are then the node's own less its first (every simulation
    /// through a node after its evaluation goes on through one of its moves, and a
    /// simulation in flight holds its virtual loss on every edge of its path; a
    /// collision of another batch, still out, at a leaf since expanded holds one on the
    /// node and none on a child, hence the condition), and the first-play value, which
    /// needs the prior mass of the visited moves, is only read by the first unvisited
    /// move, after them. The same operations in the same order as the two passes: the
    /// same bits.
    fn pick_below_root(&self, at: u32, cfg: &MctsConfig) -> usize {
        let n = &self.edges[at as usize];
        let range = self.moves_of(at);
        let parent_q = Search::parent_q(n);
        let child_total = (n.visits + u32::from(n.in_flight)).saturating_sub(1);
        let edges = &self.edges[range.clone()];
        debug_assert_eq!(
            child_total,
            edges
                .iter()
                .map(|e| e.visits + u32::from(e.in_flight))
                .sum::<u32>(),
            "a node's visits are its first and its children's"
        );
        let exploration = cfg.c_puct * (child_total.max(1) as f32).sqrt();
        let mut visited_mass = 0.0f32;
        let mut best = 0;
        let mut best_score = f32::NEG_INFINITY;
        let mut unvisited_met = false;
        for (i, e) in edges.iter().enumerate() {
            let Some((q, nv)) = Search::q_and_visits(e) else {
                unvisited_met = true;
                // The first move not visited, and the last that can win.
                debug_assert!(
                    edges[i..]
                        .iter()
                        .all(|e| e.visits + u32::from(e.in_flight) == 0),
                    "the visited moves come first below the root"
                );
                match e.exact.get().map(|v| -v) {
                    Some(p) if p >= 1.0 => return range.start + i,
                    Some(p) if p <= -1.0 => break,
                    _ => {}
                }
                let fpu = parent_q - cfg.fpu_reduction * visited_mass.sqrt();
                if puct(fpu, e.prior, exploration, 0) > best_score {
                    best = i;
                }
                break;
            };
            visited_mass += e.prior;
            match e.exact.get().map(|v| -v) {
                Some(p) if p >= 1.0 => return range.start + i,
                Some(p) if p <= -1.0 => continue,
                _ => {}
            }
            let score = puct(q, e.prior, exploration, nv);
            if score > best_score {
                best_score = score;
                best = i;
                // The leader's moves, fetched while the scan goes on: the next pick
                // reads them if it stays the leader, as it mostly does (the descent
                // fetches the rest once the move is chosen).
                if e.first != NONE {
                    engine::prefetch(&self.edges[e.first as usize]);
                }
            }
        }
        // Every edge visited: the first unvisited move is the tail's first, scored as the
        // first unvisited edge is above (a move never searched is not proven).
        if !unvisited_met && n.has_tail {
            let first_prior = self.edges[range.end].prior;
            debug_assert_eq!(first_prior, self.tails[self.tail_of(at).start].prior);
            let fpu = parent_q - cfg.fpu_reduction * visited_mass.sqrt();
            if puct(fpu, first_prior, exploration, 0) > best_score {
                return TAIL;
            }
        }
        range.start + best
    }

    /// The move the root's rule picks (an index into `edges`).
    pub(super) fn pick_root(&mut self, cfg: &MctsConfig) -> usize {
        let first = self.moves_of(ROOT).start;
        if self.gumbel.is_some() {
            if self.gumbel.as_ref().is_some_and(|g| g.queue.is_empty()) {
                self.halve(cfg);
            }
            let g = self.gumbel.as_mut().expect("gumbel root");
            let a = g.queue.pop_front().expect("the schedule covers the budget");
            return first + a;
        }
        let forced = self.full && cfg.forced_playouts;
        self.pick_puct(ROOT, cfg, forced)
    }

    /// Gives the Gumbel root's schedule back the visit of root move `edge` (an index into
    /// `edges`) that a descent spent without a simulation (a collision); nothing for the
    /// PUCT root.
    pub(super) fn unschedule(&mut self, edge: usize) {
        let first = self.moves_of(ROOT).start;
        if let Some(g) = &mut self.gumbel {
            g.queue.push_front(edge - first);
        }
    }

    /// Gumbel score of root action `a`: g + logit + σ(q̂).
    pub(super) fn gumbel_score(&self, a: usize, cfg: &MctsConfig) -> f32 {
        let g = self.gumbel.as_ref().expect("gumbel root");
        let first = self.moves_of(ROOT).start;
        let max_n = self.root_child_visits().into_iter().max().unwrap_or(0) as f32;
        let q = Search::q_and_visits(&self.edges[first + a]).map_or(self.root_value, |(q, _)| q);
        g.g[a] + g.logits[a] + (cfg.gumbel_c_visit + max_n) * cfg.gumbel_c_scale * (q + 1.0) / 2.0
    }

    /// Keeps the better half of the remaining Gumbel actions and plans the next phase.
    fn halve(&mut self, cfg: &MctsConfig) {
        let mut remaining = self.gumbel.as_ref().expect("gumbel").remaining.clone();
        if remaining.len() > 1 {
            remaining.sort_by(|&a, &b| {
                self.gumbel_score(b, cfg)
                    .total_cmp(&self.gumbel_score(a, cfg))
            });
            remaining.truncate(remaining.len().div_ceil(2));
        }
        let g = self.gumbel.as_mut().expect("gumbel");
        g.remaining = remaining;
        g.phases_left = g.phases_left.saturating_sub(1).max(1);
        g.plan_phase();
    }
}

#[cfg(test)]
pub(super) mod tests {
    use engine::{Move, State};

    use super::*;
    use crate::evaluator::Evaluation;
    use crate::mcts::LeafBatch;

    /// A made-up evaluation that depends on the position alone.
    pub(in crate::mcts) fn eval(position: &State, moves: &[Move], value_only: bool) -> Evaluation {
        let h = position.hash();
        let policy = if value_only {
            Vec::new()
        } else {
            (0..moves.len() as u64)
                .map(|i| 1.0 + ((h >> (i % 48)) & 15) as f32)
                .collect()
        };
        Evaluation {
            policy,
            value: ((h % 2001) as f32 - 1000.0) / 1000.0,
            wdl: None,
            score: None,
        }
    }

    /// Gives batch `b` back to `s` with made-up evaluations of its requests ([`eval`]).
    pub(in crate::mcts) fn answer(
        s: &mut Search,
        b: LeafBatch,
        cfg: &MctsConfig,
        rng: &mut engine::Rng,
    ) {
        let evals: Vec<Evaluation> = b
            .requests
            .iter()
            .map(|r| eval(&r.position, &r.moves, r.value_only))
            .collect();
        s.apply_batch(b, &evals, cfg, rng);
    }

    /// Every expanded position below the root whose moves hold a visit.
    fn expanded_below_root(s: &Search) -> Vec<u32> {
        (1..s.edges.len() as u32)
            .filter(|&e| s.expanded(e) && s.child_visits(e).count() > 0)
            .collect()
    }

    #[test]
    fn one_pass_puct_agrees_with_two_while_batches_interleave() {
        let cfg = MctsConfig::for_play();
        let mut rng = engine::Rng::new(5);
        let root = "ataxx".parse::<engine::Game>().unwrap().startpos();
        let mut s = Search::new(root);
        s.start(4000, false, &cfg, &mut rng);
        // Two "threads": each gathers a batch of 4 while the other's is out, as the play
        // loop's threads do, so that collisions of one batch meet leaves the other expands.
        let mut out: Vec<LeafBatch> = Vec::new();
        let (mut broken_while_out, mut checked) = (0, 0);
        for step in 0..3000 {
            if out.len() == 2 || (step % 3 == 0 && !out.is_empty()) {
                answer(&mut s, out.remove(0), &cfg, &mut rng);
            }
            for at in expanded_below_root(&s) {
                let range = s.moves_of(at);
                let sum: u32 = s.edges[range]
                    .iter()
                    .map(|e| e.visits + u32::from(e.in_flight))
                    .sum();
                let n = &s.edges[at as usize];
                let holds = sum + 1 == n.visits + u32::from(n.in_flight);
                if s.one_pass_at(at) {
                    assert!(holds, "step {step}: one pass where its invariant fails");
                    checked += 1;
                } else if !holds {
                    broken_while_out += 1;
                }
                assert_eq!(s.pick_puct(at, &cfg, false), s.pick_scan(at, &cfg, false));
            }
            if s.finished() {
                break;
            }
            let b = s.gather(4, &cfg, &mut rng);
            if !b.is_empty() {
                out.push(b);
            }
        }
        assert!(
            checked > 1000,
            "{checked} positions checked with no batch out"
        );
        // Another batch's collision at a leaf since expanded: the one pass would count it
        // as a child's visit, which is why it waits for no batch to be out.
        assert!(broken_while_out > 0, "the interleaving never met the case");
    }
}
