//! The fast net as the tree search's evaluator ([`selfplay::Evaluator`]): a full
//! accumulator refresh per position (a leaf is reached by a path of moves from the
//! root, which MCTS does not keep accumulators for), the quantised value and policy.

use std::sync::Arc;

use engine::{Move, State};
use selfplay::{Evaluation, Evaluator};

use crate::quant::{Leaf, QuantNet, Scratch};

/// Evaluates positions with a shared quantised net.
pub struct FastEvaluator {
    net: Arc<QuantNet>,
    name: String,
    leaf: Leaf,
    scratch: Scratch,
}

impl FastEvaluator {
    /// An evaluator of `net`, whose data carries `name`.
    pub fn new(net: Arc<QuantNet>, name: &str) -> FastEvaluator {
        FastEvaluator {
            leaf: Leaf::new(&net),
            net,
            name: name.to_string(),
            scratch: Scratch::default(),
        }
    }

    /// [`Evaluator::evaluate_into`] into a new evaluation.
    fn fresh(&mut self, s: &State, moves: &[Move], value_only: bool) -> Evaluation {
        let mut e = Evaluation {
            policy: Vec::with_capacity(moves.len()),
            ..Evaluation::default()
        };
        self.evaluate_into(s, moves, value_only, &mut e);
        e
    }

    /// One position: its policy over `moves` into `policy`, and its value.
    pub fn evaluate_one(&mut self, s: &State, moves: &[Move], policy: &mut Vec<f32>) -> f32 {
        self.net.side_lanes(s, &mut self.leaf);
        if self.net.policy_reads_board() {
            self.net
                .board_policy_of(s, moves, policy, &mut self.scratch);
        } else {
            self.net
                .policy_of(&self.leaf.lanes, moves, policy, &mut self.scratch);
        }
        self.net.value_of(&self.leaf.lanes)
    }
}

impl Evaluator for FastEvaluator {
    fn evaluate(&mut self, states: &[State], moves: &[Vec<Move>]) -> Vec<Evaluation> {
        states
            .iter()
            .zip(moves)
            .map(|(s, m)| self.fresh(s, m, false))
            .collect()
    }

    /// The value alone: the accumulator and the value head, no policy.
    fn evaluate_values(&mut self, states: &[State], _moves: &[Vec<Move>]) -> Vec<Evaluation> {
        states.iter().map(|s| self.fresh(s, &[], true)).collect()
    }

    fn evaluate_into(
        &mut self,
        state: &State,
        moves: &[Move],
        value_only: bool,
        out: &mut Evaluation,
    ) {
        (out.wdl, out.score) = (None, None);
        out.value = if value_only {
            out.policy.clear();
            self.net.side_lanes(state, &mut self.leaf);
            self.net.value_of(&self.leaf.lanes)
        } else {
            self.evaluate_one(state, moves, &mut out.policy)
        };
    }

    fn values_need_moves(&self) -> bool {
        false
    }

    /// A `board` policy needs no accumulator: the policy alone costs a few thousand
    /// additions, against the accumulator's refresh and the value.
    fn policy_alone(&self) -> bool {
        self.net.policy_reads_board()
    }

    fn policy_into(&mut self, state: &State, moves: &[Move], out: &mut Vec<f32>) {
        if self.net.policy_reads_board() {
            self.net
                .board_policy_of(state, moves, out, &mut self.scratch);
        } else {
            self.evaluate_one(state, moves, out);
        }
    }

    fn name(&self) -> String {
        self.name.clone()
    }

    fn leaf_eval(&self) -> Option<selfplay::LeafEval> {
        Some(selfplay::LeafEval::Net(Box::new(FastValue::new(
            self.net.clone(),
        ))))
    }
}

/// The fast net's value as the alpha-beta search's leaf evaluation
/// ([`engine::search::StaticEval`]), in the search's units (400 per unit of the net's
/// output before tanh).
pub struct FastValue {
    net: Arc<QuantNet>,
    leaf: Leaf,
}

impl FastValue {
    /// The leaf evaluation of `net`.
    pub fn new(net: Arc<QuantNet>) -> FastValue {
        FastValue {
            leaf: Leaf::new(&net),
            net,
        }
    }
}

impl engine::search::StaticEval for FastValue {
    fn evaluate(&mut self, s: &State) -> i32 {
        self.net.side_lanes(s, &mut self.leaf);
        self.net.value_cp_of(&self.leaf.lanes)
    }
}
