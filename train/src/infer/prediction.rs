//! The network's raw output, Burn's forward pass that gives it, and the self-play
//! evaluations made from it.

use burn::prelude::*;
use burn::tensor::activation::softmax;
use engine::{Move, State};
use selfplay::Evaluation;

use crate::store::LoadedModel;

/// The network's raw output for one position.
#[derive(Clone, Debug, PartialEq)]
pub struct Prediction {
    /// Logits over the whole policy index.
    pub policy_logits: Vec<f32>,
    /// Win / draw / loss probabilities for the side to move.
    pub wdl: [f32; 3],
    /// Expected final score (margin / playable cells).
    pub score: f32,
}

/// Runs the network on a batch of positions of the model's game.
pub fn predict(model: &LoadedModel, states: &[State]) -> Vec<Prediction> {
    if states.is_empty() {
        return Vec::new();
    }
    let n = states.len();
    let out = model.net.forward_states(states, &model.device);
    let p = model.game.policy_size();
    // One read of the device for the batch: each row is the policy's logits, the
    // win/draw/loss probabilities and the score.
    let rows = crate::reads::read(Tensor::cat(
        vec![out.policy, softmax(out.wdl, 1), out.score],
        1,
    ));
    let w = p + 4;
    (0..n)
        .map(|i| {
            let r = &rows[i * w..(i + 1) * w];
            Prediction {
                policy_logits: r[..p].to_vec(),
                wdl: [r[p], r[p + 1], r[p + 2]],
                score: r[p + 3],
            }
        })
        .collect()
}

/// Softmax of `logits` over the policy indices of `moves` (in that order).
pub fn move_probabilities(state: &State, moves: &[Move], logits: &[f32]) -> Vec<f32> {
    let z: Vec<f32> = moves
        .iter()
        .map(|&m| logits[state.policy_index(m)])
        .collect();
    let max = z.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
    let e: Vec<f32> = z.iter().map(|v| (v - max).exp()).collect();
    let sum: f32 = e.iter().sum();
    e.iter().map(|v| v / sum).collect()
}

/// The legal moves of `state` with their probabilities under `logits`, most likely
/// first (ties in legal-move order): what `flipzero infer` prints.
pub fn ranked_moves(state: &State, logits: &[f32]) -> Vec<(Move, f32)> {
    let moves = state.legal_moves();
    let probs = move_probabilities(state, &moves, logits);
    let mut ranked: Vec<(Move, f32)> = moves.into_iter().zip(probs).collect();
    ranked.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap_or(std::cmp::Ordering::Equal));
    ranked
}

impl Prediction {
    /// The evaluation self-play needs: the policy over `moves` (legal in `state`), the
    /// value win − loss, and the auxiliary outputs.
    pub fn evaluation(&self, state: &State, moves: &[Move]) -> Evaluation {
        Evaluation {
            policy: move_probabilities(state, moves, &self.policy_logits),
            value: self.wdl[0] - self.wdl[2],
            wdl: Some(self.wdl),
            score: Some(self.score),
        }
    }
}

/// The self-play evaluations of a batch of predictions (`preds[i]` of `states[i]`).
pub fn evaluations(preds: &[Prediction], states: &[State], moves: &[Vec<Move>]) -> Vec<Evaluation> {
    preds
        .iter()
        .zip(states.iter().zip(moves))
        .map(|(p, (s, m))| p.evaluation(s, m))
        .collect()
}
