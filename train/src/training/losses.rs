//! The training losses on Burn tensors (the reference the CPU engine is held to).

use burn::prelude::*;
use burn::tensor::activation::{log_softmax, softmax};
use engine::Game;
use ndarray::{ArrayRef, Dimension};

use crate::config::TrainConfig;
use crate::data::{Batch, row_major};
use crate::net::{Net, PLANES};
use crate::reads::read;

/// A tensor of `shape` holding the values of `a` in row-major order (a batch's arrays are
/// in standard layout, so this is one copy, as before the arrays).
fn tensor<const D: usize, E: Dimension>(
    a: &ArrayRef<f32, E>,
    shape: [usize; D],
    device: &Device,
) -> Tensor<D> {
    Tensor::from_data(TensorData::new(row_major(a).into_owned(), shape), device)
}

/// The metrics of a step, still on the device: [`StepMetricsOnDevice::read`] brings them
/// to the host (one wait for the device), or they are dropped unread.
pub struct StepMetricsOnDevice {
    /// Loss, policy, value and score losses, policy entropy, policy hits.
    values: Tensor<1>,
    /// Rows with a policy target (the accuracy's denominator, known on the host).
    policy_rows: f32,
}

impl StepMetricsOnDevice {
    /// Loss, policy loss, value loss, score loss, policy entropy and policy accuracy.
    pub fn read(self) -> [f32; 6] {
        let m = read(self.values);
        let accuracy = if self.policy_rows > 0.0 {
            m[5] / self.policy_rows
        } else {
            0.0
        };
        [m[0], m[1], m[2], m[3], m[4], accuracy]
    }
}

/// Losses and metrics of `net` on a batch, on `device` (the metrics read: one wait for
/// the device).
pub fn losses(
    net: &Net,
    b: &Batch,
    game: Game,
    cfg: &TrainConfig,
    device: &Device,
) -> (Tensor<1>, [f32; 6]) {
    let (loss, m) = losses_on_device(net, b, game, cfg, device, true);
    (loss, m.expect("metrics asked for").read())
}

/// Losses of `net` on a batch and, when `metrics` asks, its metrics, both left on
/// `device` (metrics not asked for are not computed: fewer kernels a step on a GPU).
pub fn losses_on_device(
    net: &Net,
    b: &Batch,
    game: Game,
    cfg: &TrainConfig,
    device: &Device,
    metrics: bool,
) -> (Tensor<1>, Option<StepMetricsOnDevice>) {
    let (w, h) = game.grid();
    let p = game.policy_size();
    let n = b.size;
    let out = net.forward(tensor(&b.inputs, [n, PLANES, h, w], device));
    let legal = tensor(&b.legal, [n, p], device);
    let target = tensor(&b.policy, [n, p], device);
    let pw = tensor(&b.policy_weight, [n, 1], device);
    // Illegal moves get a large negative logit, so softmax runs over legal moves only.
    let logits = out.policy + (legal.clone() - 1.0) * 1.0e4;
    let logp = log_softmax(logits.clone(), 1);
    let per_row: Tensor<2> = (target.clone() * logp.clone()).sum_dim(1).neg();
    let weight_sum = b.policy_weight.iter().sum::<f32>().max(1.0);
    let policy_loss: Tensor<1> = (per_row * pw.clone()).sum() / weight_sum;
    let wdl = tensor(&b.wdl, [n, 3], device);
    let value_loss: Tensor<1> = (wdl * log_softmax(out.wdl, 1))
        .sum_dim(1)
        .neg()
        .mean()
        .reshape([1]);
    let score = tensor(&b.score, [n, 1], device);
    let score_loss: Tensor<1> = (out.score - score).powi_scalar(2).mean().reshape([1]);
    let mut loss = policy_loss.clone() * cfg.policy_loss_weight
        + value_loss.clone() * cfg.value_loss_weight
        + score_loss.clone() * cfg.score_loss_weight;
    // Auxiliary heads: rows without a target weigh 0; the sums are over the rows that
    // have one (at least 1, as for the policy).
    if let Some(own) = out.ownership {
        let target = tensor(&b.ownership, [n, h * w], device);
        let ow = tensor(&b.ownership_weight, [n, 1], device);
        let rows: Tensor<2> = (own - target).powi_scalar(2).mean_dim(1);
        let count = b.ownership_weight.iter().sum::<f32>().max(1.0);
        let own_loss: Tensor<1> = (rows * ow).sum() / count;
        loss = loss + own_loss * cfg.ownership_loss_weight;
    }
    if let Some(reply) = out.reply {
        let target = tensor(&b.reply_policy, [n, p], device);
        let rw = tensor(&b.reply_weight, [n, 1], device);
        // The reply's legal moves are not in the row: a softmax over every index,
        // which the target's zeros teach to put no weight off the reply's moves.
        let rows: Tensor<2> = (target * log_softmax(reply, 1)).sum_dim(1).neg();
        let count = b.reply_weight.iter().sum::<f32>().max(1.0);
        let reply_loss: Tensor<1> = (rows * rw).sum() / count;
        loss = loss + reply_loss * cfg.reply_loss_weight;
    }
    // Metrics, without gradients, gathered on the device to be read in one go (a read
    // is a wait for the device: one a step at most, not one a metric).
    let metrics = metrics.then(|| {
        let probs = softmax(logits.clone().detach(), 1);
        let entropy: Tensor<1> = ((probs * logp.detach() * legal).sum_dim(1).neg())
            .mean()
            .reshape([1]);
        // Rows with a policy target (full searches): the accuracy's rows.
        let has_policy = pw.clone().greater_elem(0.0).float();
        let hits: Tensor<1> =
            (logits.detach().argmax(1).equal(target.argmax(1)).float() * has_policy).sum();
        StepMetricsOnDevice {
            values: Tensor::cat(
                vec![
                    loss.clone().detach(),
                    policy_loss.detach(),
                    value_loss.detach(),
                    score_loss.detach(),
                    entropy,
                    hits,
                ],
                0,
            ),
            policy_rows: b.policy_weight.iter().filter(|&&w| w > 0.0).count() as f32,
        }
    });
    (loss, metrics)
}
