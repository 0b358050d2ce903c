//! The choice of a move: PUCT with first-play urgency below the root, and at the root
//! PUCT with Dirichlet noise and forced playouts or the Gumbel root's Sequential Halving.

use std::collections::VecDeque;

use engine::Rng;

use super::config::{MctsConfig, RootKind};
use super::gumbel::Gumbel;
use super::noise::{dirichlet, gumbel_noise};
use super::search::Search;
use super::tree::ROOT;

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
    /// flight) are therefore the first of the node's, and one pass over them and the first
    /// unvisited one decides ([`Search::pick_below_root`]). The root's priors carry
    /// noise, and forced playouts visit out of order there: its scan reads every move.
    pub(super) fn pick_puct(&self, at: u32, cfg: &MctsConfig, forced: bool) -> usize {
        if at != ROOT {
            debug_assert!(!forced, "forced playouts are the root's");
            return self.pick_below_root(at, cfg);
        }
        let n = &self.edges[at as usize];
        let range = self.moves_of(at);
        let parent_q = if n.visits > 0 {
            -n.value_sum / n.visits as f32
        } else {
            0.0
        };
        let edges = &self.edges[range.clone()];
        // The prior mass already visited and the children's visits, over the visited.
        let (mut visited_mass, mut child_total) = (0.0f32, 0u32);
        for e in edges {
            if let Some((_, v)) = Search::q_and_visits(e) {
                (visited_mass, child_total) = (visited_mass + e.prior, child_total + v);
            }
        }
        let fpu = parent_q - cfg.fpu_reduction * visited_mass.sqrt();
        let sqrt_n = (child_total.max(1) as f32).sqrt();
        let mut best = 0;
        let mut best_score = f32::NEG_INFINITY;
        for (i, e) in edges.iter().enumerate() {
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
            let score = q + cfg.c_puct * e.prior * sqrt_n / (1 + nv) as f32;
            if score > best_score {
                best_score = score;
                best = i;
            }
        }
        range.start + best
    }

    /// [`Search::pick_puct`] below the root, in one pass: the children's visits are the
    /// node's own less its first (every simulation through a node after its evaluation
    /// goes on through one of its moves, and a simulation in flight holds its virtual
    /// loss on every edge of its path), and the first-play value, which needs the prior
    /// mass of the visited moves, is only read by the first unvisited move, after them.
    /// The same operations in the same order as the root's two passes: the same bits.
    fn pick_below_root(&self, at: u32, cfg: &MctsConfig) -> usize {
        let n = &self.edges[at as usize];
        let range = self.moves_of(at);
        let parent_q = if n.visits > 0 {
            -n.value_sum / n.visits as f32
        } else {
            0.0
        };
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
        let sqrt_n = (child_total.max(1) as f32).sqrt();
        let mut visited_mass = 0.0f32;
        let mut best = 0;
        let mut best_score = f32::NEG_INFINITY;
        for (i, e) in edges.iter().enumerate() {
            let Some((q, nv)) = Search::q_and_visits(e) else {
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
                if fpu + cfg.c_puct * e.prior * sqrt_n > best_score {
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
            let score = q + cfg.c_puct * e.prior * sqrt_n / (1 + nv) as f32;
            if score > best_score {
                best_score = score;
                best = i;
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
