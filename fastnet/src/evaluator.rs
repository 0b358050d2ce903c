//! The fast net as the tree search's evaluator ([`selfplay::Evaluator`]): a full
//! accumulator refresh per position (a leaf is reached by a path of moves from the
//! root, which MCTS does not keep accumulators for), the quantised value and policy.

use std::sync::Arc;

use engine::{Move, State};
use selfplay::{Evaluation, Evaluator};

use crate::quant::{Accumulator, QuantNet};

/// Evaluates positions with a shared quantised net.
pub struct FastEvaluator {
    net: Arc<QuantNet>,
    name: String,
    acc: Option<Accumulator>,
}

impl FastEvaluator {
    /// An evaluator of `net`, whose data carries `name`.
    pub fn new(net: Arc<QuantNet>, name: &str) -> FastEvaluator {
        FastEvaluator {
            net,
            name: name.to_string(),
            acc: None,
        }
    }

    /// One position: its policy over `moves` into `policy`, and its value.
    pub fn evaluate_one(&mut self, s: &State, moves: &[Move], policy: &mut Vec<f32>) -> f32 {
        let net = &self.net;
        let acc = match &mut self.acc {
            Some(a) => {
                net.refresh(a, s);
                a
            }
            None => self.acc.insert(net.accumulator(s)),
        };
        let stm = s.side_to_move();
        net.policy(acc, stm, moves, policy);
        net.value(acc, stm)
    }
}

impl Evaluator for FastEvaluator {
    fn evaluate(&mut self, states: &[State], moves: &[Vec<Move>]) -> Vec<Evaluation> {
        states
            .iter()
            .zip(moves)
            .map(|(s, m)| {
                let mut policy = Vec::with_capacity(m.len());
                let value = self.evaluate_one(s, m, &mut policy);
                Evaluation {
                    policy,
                    value,
                    wdl: None,
                    score: None,
                }
            })
            .collect()
    }

    fn name(&self) -> String {
        self.name.clone()
    }
}
