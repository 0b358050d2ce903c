//! The training losses on Burn tensors (the reference the CPU engine is held to).

use burn::prelude::*;
use burn::tensor::activation::{log_softmax, softmax};
use engine::Game;
use ndarray::{ArrayRef, Dimension};

use crate::config::TrainConfig;
use crate::data::{Batch, row_major};
use crate::net::{Net, PLANES};

/// A tensor of `shape` holding the values of `a` in row-major order (a batch's arrays are
/// in standard layout, so this is one copy, as before the arrays).
fn tensor<const D: usize, E: Dimension>(
    a: &ArrayRef<f32, E>,
    shape: [usize; D],
    device: &Device,
) -> Tensor<D> {
    Tensor::from_data(TensorData::new(row_major(a).into_owned(), shape), device)
}

fn scalar(t: Tensor<1>) -> f32 {
    t.into_data().try_to_vec::<f32>().expect("f32 data")[0]
}

/// Losses and metrics of `net` on a batch, on `device`.
pub fn losses(
    net: &Net,
    b: &Batch,
    game: Game,
    cfg: &TrainConfig,
    device: &Device,
) -> (Tensor<1>, [f32; 6]) {
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
    let policy_loss: Tensor<1> = (per_row * pw).sum() / weight_sum;
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
    // Metrics, without gradients.
    let probs = softmax(logits.clone().detach(), 1);
    let entropy: Tensor<1> = ((probs * logp.detach() * legal).sum_dim(1).neg())
        .mean()
        .reshape([1]);
    let pred = logits
        .detach()
        .argmax(1)
        .float()
        .into_data()
        .try_to_vec::<f32>()
        .unwrap_or_default();
    let best = target
        .argmax(1)
        .float()
        .into_data()
        .try_to_vec::<f32>()
        .unwrap_or_default();
    let (mut hits, mut count) = (0.0, 0.0);
    for i in 0..n {
        if b.policy_weight[i] > 0.0 {
            count += 1.0;
            hits += f32::from(u8::from(pred.get(i) == best.get(i)));
        }
    }
    let metrics = [
        scalar(loss.clone().detach()),
        scalar(policy_loss.detach()),
        scalar(value_loss.detach()),
        scalar(score_loss.detach()),
        scalar(entropy),
        if count > 0.0 { hits / count } else { 0.0 },
    ];
    (loss, metrics)
}
