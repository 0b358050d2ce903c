//! What a finished search reports: the root's lines for an analysis board, the move, the
//! policy target (visits, KataGo's pruning of forced playouts, or the Gumbel root's
//! completed-Q policy), the value and the proofs.

use engine::Move;

use super::config::MctsConfig;
use super::outcome::{RootLine, SearchOutcome};
use super::search::Search;
use super::tree::ROOT;

impl Search {
    /// Each root move's visits, those in flight counted.
    pub(super) fn root_child_visits(&self) -> Vec<u32> {
        self.edges[self.moves_of(ROOT)]
            .iter()
            .map(|e| Search::q_and_visits(e).map_or(0, |x| x.1))
            .collect()
    }

    /// Each root move's line of the search as an analysis board shows it, most visited
    /// first: visits, mean value and prior, proof, and the principal variation (the most
    /// visited reply at each step, up to `pv_len` moves from the root move on).
    pub fn root_lines(&self, pv_len: usize) -> Vec<RootLine> {
        let mut lines: Vec<RootLine> = self
            .moves_of(ROOT)
            .map(|i| {
                let e = &self.edges[i];
                let qv = Search::q_and_visits(e);
                let mut pv = vec![e.mv];
                let mut at = i as u32;
                while pv.len() < pv_len.max(1) {
                    // The most visited reply; of equally visited ones the most probable
                    // (the first in the tree's order, whatever that order is).
                    let next = self
                        .moves_of(at)
                        .filter_map(|c| Search::q_and_visits(&self.edges[c]).map(|(_, v)| (v, c)))
                        .reduce(|best, x| {
                            let better =
                                (x.0, self.edges[x.1].prior) > (best.0, self.edges[best.1].prior);
                            if better { x } else { best }
                        });
                    let Some((_, c)) = next else { break };
                    pv.push(self.edges[c].mv);
                    at = c as u32;
                }
                RootLine {
                    mv: e.mv,
                    visits: qv.map_or(0, |x| x.1),
                    q: qv.map(|x| x.0),
                    prior: e.prior,
                    proof: Search::edge_proof(e),
                    pv,
                }
            })
            .collect();
        lines.sort_by(|a, b| b.visits.cmp(&a.visits).then(b.prior.total_cmp(&a.prior)));
        lines
    }

    /// The result of the finished search.
    pub fn outcome(&self, cfg: &MctsConfig) -> SearchOutcome {
        let range = self.moves_of(ROOT);
        let moves: Vec<Move> = self.edges[range.clone()].iter().map(|e| e.mv).collect();
        let visits = self.root_child_visits();
        let root_q = self.root_value();
        let proofs: Vec<Option<f32>> = self.edges[range.clone()]
            .iter()
            .map(Search::edge_proof)
            .collect();
        let (mut policy, best) = if let Some(g) = &self.gumbel {
            let best = *g
                .remaining
                .iter()
                .max_by(|&&a, &&b| {
                    self.gumbel_score(a, cfg)
                        .total_cmp(&self.gumbel_score(b, cfg))
                })
                .expect("at least one action");
            (self.completed_q_policy(cfg), best)
        } else {
            let best = (0..visits.len())
                .max_by_key(|&i| (visits[i], std::cmp::Reverse(i)))
                .unwrap_or(0);
            let target = if self.full && cfg.forced_playouts {
                self.pruned_visits(cfg, best)
            } else {
                visits.clone()
            };
            let total: u32 = target.iter().sum();
            let policy = if total == 0 {
                vec![1.0 / visits.len() as f32; visits.len()]
            } else {
                target.iter().map(|&v| v as f32 / total as f32).collect()
            };
            (policy, best)
        };
        // The solver's word over the visits: a proven win is played (and is the policy
        // target), a proven loss only when every move loses.
        let most_visited = |keep: &dyn Fn(Option<f32>) -> bool| {
            (0..visits.len())
                .filter(|&i| keep(proofs[i]))
                .max_by_key(|&i| (visits[i], std::cmp::Reverse(i)))
        };
        let best = if let Some(win) = most_visited(&|p| p.is_some_and(|p| p >= 1.0)) {
            policy = (0..visits.len())
                .map(|i| f32::from(u8::from(i == win)))
                .collect();
            win
        } else if proofs[best].is_some_and(|p| p <= -1.0) {
            most_visited(&|p| p.is_none_or(|p| p > -1.0)).unwrap_or(best)
        } else {
            best
        };
        SearchOutcome {
            best: moves[best],
            moves,
            policy,
            visits,
            root_q,
            prior: self.root_prior.clone(),
            proven: self.proven(),
            move_proofs: proofs,
        }
    }

    /// KataGo's policy-target pruning: take back from each non-best child the forced
    /// playouts that its PUCT value would not have earned.
    fn pruned_visits(&self, cfg: &MctsConfig, best: usize) -> Vec<u32> {
        let first = self.moves_of(ROOT).start;
        let mut visits = self.root_child_visits();
        let total: u32 = visits.iter().sum();
        let sqrt_n = (total.max(1) as f32).sqrt();
        let edge = |i: usize| &self.edges[first + i];
        let (qb, nb) = Search::q_and_visits(edge(best)).unwrap_or((0.0, 0));
        let best_puct = qb + cfg.c_puct * edge(best).prior * sqrt_n / (1 + nb) as f32;
        for (i, v) in visits.iter_mut().enumerate() {
            if i == best || *v == 0 {
                continue;
            }
            let (q, _) = Search::q_and_visits(edge(i)).expect("visited");
            let forced = (2.0 * edge(i).prior * total as f32).sqrt() as u32;
            let floor = v.saturating_sub(forced);
            while *v > floor && q + cfg.c_puct * edge(i).prior * sqrt_n / (*v as f32) < best_puct {
                *v -= 1;
            }
            if *v <= 1 {
                *v = 0;
            }
        }
        visits
    }

    /// softmax(logits + σ(completed Q)) over every root move (Gumbel MuZero).
    fn completed_q_policy(&self, cfg: &MctsConfig) -> Vec<f32> {
        let g = self.gumbel.as_ref().expect("gumbel root");
        let first = self.moves_of(ROOT).start;
        let visits = self.root_child_visits();
        let total: u32 = visits.iter().sum();
        let max_n = visits.iter().copied().max().unwrap_or(0) as f32;
        let scale = |q: f32| (cfg.gumbel_c_visit + max_n) * cfg.gumbel_c_scale * (q + 1.0) / 2.0;
        // v_mix: the network value blended with the prior-weighted value of visited moves.
        let (mut mass, mut weighted) = (0.0f32, 0.0f32);
        for i in 0..visits.len() {
            if let Some((q, _)) = Search::q_and_visits(&self.edges[first + i]) {
                mass += self.edges[first + i].prior;
                weighted += self.edges[first + i].prior * q;
            }
        }
        let v_mix = if mass > 0.0 {
            (self.root_value + total as f32 * weighted / mass) / (1.0 + total as f32)
        } else {
            self.root_value
        };
        let z: Vec<f32> = (0..visits.len())
            .map(|i| {
                let q = Search::q_and_visits(&self.edges[first + i]).map_or(v_mix, |(q, _)| q);
                g.logits[i] + scale(q)
            })
            .collect();
        let m = z.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
        let e: Vec<f32> = z.iter().map(|x| (x - m).exp()).collect();
        let s: f32 = e.iter().sum();
        e.iter().map(|x| x / s).collect()
    }
}
