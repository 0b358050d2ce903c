//! The losses of the heads and their gradients, as `crate::training::losses` computes
//! them with Burn.

use rayon::prelude::*;

use super::state::CpuTrainer;
use crate::data::{Batch, row_major};

impl CpuTrainer {
    /// Losses and metrics of the forward pass, and the gradients of the weighted loss
    /// with respect to the policy logits, the WDL logits and the score's pre-activation.
    pub(super) fn loss(&self, b: &Batch) -> ([f32; 6], HeadGrads) {
        let t = &self.tape;
        let n = b.size;
        let size = self.game.policy_size();
        assert_eq!(t.logits.len(), n * size, "policy size of the game");
        let [wp, wv, ws, wo] = self.settings.weights;
        // The targets as flat row-major slices (the batch's layout, see `Batch`).
        let (legal, policy, wdl) = (row_major(&b.legal), row_major(&b.policy), row_major(&b.wdl));
        let (policy_weight, score) = (row_major(&b.policy_weight), row_major(&b.score));
        let weight_sum = policy_weight.iter().sum::<f32>().max(1.0);
        let mut dlogits = vec![0.0; n * size];
        // Per sample in parallel: (weighted loss, entropy, hit, counted), summed in order.
        let rows: Vec<(f32, f32, bool, bool)> = dlogits
            .par_chunks_mut(size)
            .enumerate()
            .map(|(s, dlogits)| {
                let logits = &t.logits[s * size..][..size];
                let legal = &legal[s * size..][..size];
                let target = &policy[s * size..][..size];
                // Illegal moves get a large negative logit, as in `training::losses`.
                let z: Vec<f32> = logits
                    .iter()
                    .zip(legal)
                    .map(|(l, m)| l + (m - 1.0) * 1.0e4)
                    .collect();
                let max = z.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
                // Illegal moves' terms are exactly 0 (their exponentials underflow): they
                // are skipped, as glibc's expf takes a slow path on underflow.
                let sum: f32 = z
                    .iter()
                    .zip(legal)
                    .filter(|&(_, &m)| m > 0.0)
                    .map(|(v, _)| (v - max).exp())
                    .sum();
                let lse = max + sum.ln();
                let tsum: f32 = target.iter().sum();
                let mut row_loss = 0.0f32;
                let mut row_entropy = 0.0f32;
                let scale = wp * policy_weight[s] / weight_sum;
                for j in 0..size {
                    let logp = z[j] - lse;
                    let p = if legal[j] > 0.0 { logp.exp() } else { 0.0 };
                    row_loss -= target[j] * logp;
                    row_entropy -= p * logp * legal[j];
                    dlogits[j] = scale * (p * tsum - target[j]);
                }
                let argmax = |v: &[f32]| {
                    v.iter()
                        .enumerate()
                        .fold((0, f32::NEG_INFINITY), |(bi, bv), (i, &x)| {
                            if x > bv { (i, x) } else { (bi, bv) }
                        })
                        .0
                };
                let counted = policy_weight[s] > 0.0;
                let hit = counted && argmax(&z) == argmax(target);
                (row_loss * policy_weight[s], row_entropy, hit, counted)
            })
            .collect();
        let (mut policy_loss, mut entropy) = (0.0f64, 0.0f64);
        let (mut hits, mut count) = (0.0f32, 0.0f32);
        for &(loss, ent, hit, counted) in &rows {
            policy_loss += loss as f64;
            entropy += ent as f64;
            hits += f32::from(u8::from(hit));
            count += f32::from(u8::from(counted));
        }
        let policy_loss = (policy_loss / weight_sum as f64) as f32;
        let mut dwdl = vec![0.0; n * 3];
        let mut value_loss = 0.0f64;
        let mut dscore = vec![0.0; n];
        let mut score_loss = 0.0f64;
        for s in 0..n {
            let z = &t.wdl[s * 3..][..3];
            let target = &wdl[s * 3..][..3];
            let max = z.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
            let lse = max + z.iter().map(|v| (v - max).exp()).sum::<f32>().ln();
            let tsum: f32 = target.iter().sum();
            for j in 0..3 {
                let logp = z[j] - lse;
                value_loss -= (target[j] * logp) as f64;
                dwdl[s * 3 + j] = wv / n as f32 * (logp.exp() * tsum - target[j]);
            }
            let (y, want) = (t.score[s], score[s]);
            score_loss += ((y - want) * (y - want)) as f64;
            dscore[s] = ws / n as f32 * 2.0 * (y - want) * (1.0 - y * y);
        }
        let value_loss = (value_loss / n as f64) as f32;
        let score_loss = (score_loss / n as f64) as f32;
        let mut loss = wp * policy_loss + wv * value_loss + ws * score_loss;
        // Ownership: per row the mean squared error over the cells, weighted, summed
        // over the rows with a target; the gradient is taken before the tanh.
        let mut downership = Vec::new();
        if self.layers.ownership_out.is_some() {
            let area = t.own.len() / n;
            let (ownership, weight) = (row_major(&b.ownership), row_major(&b.ownership_weight));
            let count = weight.iter().sum::<f32>().max(1.0);
            downership = vec![0.0; n * area];
            let mut own_loss = 0.0f64;
            for s in 0..n {
                let w = weight[s];
                let y = &t.own[s * area..][..area];
                let want = &ownership[s * area..][..area];
                let scale = wo * w / count * 2.0 / area as f32;
                let mut row = 0.0f64;
                for i in 0..area {
                    let e = y[i] - want[i];
                    row += (e * e) as f64;
                    downership[s * area + i] = scale * e * (1.0 - y[i] * y[i]);
                }
                own_loss += row / area as f64 * w as f64;
            }
            loss += wo * (own_loss / count as f64) as f32;
        }
        let metrics = [
            loss,
            policy_loss,
            value_loss,
            score_loss,
            (entropy / n as f64) as f32,
            if count > 0.0 { hits / count } else { 0.0 },
        ];
        (
            metrics,
            HeadGrads {
                logits: dlogits,
                wdl: dwdl,
                score: dscore,
                ownership: downership,
            },
        )
    }
}

/// Gradients of the weighted loss with respect to the heads' outputs.
pub(super) struct HeadGrads {
    pub(super) logits: Vec<f32>,
    pub(super) wdl: Vec<f32>,
    /// With respect to the score before its tanh.
    pub(super) score: Vec<f32>,
    /// With respect to the ownership before its tanh, `[n][area]` (empty without the
    /// head).
    pub(super) ownership: Vec<f32>,
}
