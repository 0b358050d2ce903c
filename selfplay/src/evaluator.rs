//! Position evaluators for the search: a policy over a position's legal moves and a value.
//! Networks implement [`Evaluator`] in the `train` crate; the ones here need no network
//! (tests, generation 0).

use std::sync::atomic::AtomicBool;

use engine::search::{Limits, Searcher};
use engine::{Move, State, splitmix64};

/// The evaluation of one position, from the side to move's view.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Evaluation {
    /// Probabilities over the legal moves, in the order they were given (sums to 1).
    pub policy: Vec<f32>,
    /// Expected outcome in [−1, 1]: win − loss probability.
    pub value: f32,
    /// Win / draw / loss probabilities, when the evaluator models them.
    pub wdl: Option<[f32; 3]>,
    /// Expected final piece margin scaled to [−1, 1], when the evaluator predicts it.
    pub score: Option<f32>,
}

/// Evaluates batches of positions. One evaluator serves one worker thread, so
/// implementations need not be shareable, only sendable.
pub trait Evaluator: Send {
    /// Evaluates `states[i]` with legal moves `moves[i]` (non-empty), for every `i`.
    fn evaluate(&mut self, states: &[State], moves: &[Vec<Move>]) -> Vec<Evaluation>;

    /// The values of `states[i]` (legal moves `moves[i]`) alone: the search asks for a
    /// leaf's value before it needs its policy ([`crate::MctsConfig::lazy_expansion`]).
    /// The policies returned may be empty; by default they are [`Evaluator::evaluate`]'s.
    fn evaluate_values(&mut self, states: &[State], moves: &[Vec<Move>]) -> Vec<Evaluation> {
        self.evaluate(states, moves)
    }

    /// Evaluates one position into `out` (its value alone where `value_only`, as
    /// [`Evaluator::evaluate_values`] does), reusing `out`'s memory: the play-time search
    /// evaluates one leaf a call on one thread, where a batch's vectors would cost more
    /// than a small net. By default through [`Evaluator::evaluate`] or
    /// [`Evaluator::evaluate_values`].
    fn evaluate_into(
        &mut self,
        state: &State,
        moves: &[Move],
        value_only: bool,
        out: &mut Evaluation,
    ) {
        let (states, moves) = (std::slice::from_ref(state), [moves.to_vec()]);
        let mut evals = if value_only {
            self.evaluate_values(states, &moves)
        } else {
            self.evaluate(states, &moves)
        };
        *out = evals.pop().expect("an evaluation for the position");
    }

    /// Whether [`Evaluator::policy_into`] gives a position's policy alone at less cost
    /// than a whole evaluation (false by default): the play-time search then asks a
    /// leaf's expansion for its policy alone where its evaluation cache holds the leaf's
    /// value.
    fn policy_alone(&self) -> bool {
        false
    }

    /// The policy of `state` over `moves` alone into `out` (reusing its memory), as
    /// [`Evaluator::evaluate_into`] would give it. By default a whole evaluation's.
    fn policy_into(&mut self, state: &State, moves: &[Move], out: &mut Vec<f32>) {
        let mut e = Evaluation {
            policy: std::mem::take(out),
            ..Evaluation::default()
        };
        self.evaluate_into(state, moves, false, &mut e);
        *out = e.policy;
    }

    /// Whether [`Evaluator::evaluate_values`] needs the positions' legal moves (true by
    /// default, where it is [`Evaluator::evaluate`]); an evaluator that says false is
    /// given empty move lists there, and a search spares itself listing them. Such an
    /// evaluator gives values alone (empty policies) whatever the moves, so that the
    /// search is the same with the moves or without.
    fn values_need_moves(&self) -> bool {
        true
    }

    /// A name for the data this evaluator produces (the `model` column).
    fn name(&self) -> String;

    /// Positions per call at which this evaluator is efficient: a network whose cost per
    /// position falls with the batch says how large a batch pays; 1 (the default) for
    /// an evaluator whose cost does not (a batch then only spreads a search thin under
    /// virtual loss).
    fn preferred_batch(&self) -> usize {
        1
    }

    /// This evaluator's value as the leaf evaluation of an alpha-beta search
    /// (alpha-beta self-play); `None` (the default) when it has none.
    fn leaf_eval(&self) -> Option<LeafEval> {
        None
    }
}

/// Evaluates `states[i]` with legal moves `moves[i]`, only for the value where
/// `value_only[i]` ([`Evaluator::evaluate_values`]): one call for the positions whose
/// policy is wanted and one for the others; the evaluations in the order given.
pub fn evaluate_mixed(
    ev: &mut dyn Evaluator,
    states: &[State],
    moves: &[Vec<Move>],
    value_only: &[bool],
) -> Vec<Evaluation> {
    if value_only.iter().all(|&v| !v) {
        return ev.evaluate(states, moves);
    }
    if value_only.iter().all(|&v| v) {
        return ev.evaluate_values(states, moves);
    }
    let pick = |want: bool| {
        let idx: Vec<usize> = (0..states.len())
            .filter(|&i| value_only[i] == want)
            .collect();
        let s: Vec<State> = idx.iter().map(|&i| states[i]).collect();
        let m: Vec<Vec<Move>> = idx.iter().map(|&i| moves[i].clone()).collect();
        (idx, s, m)
    };
    let (full_idx, full_states, full_moves) = pick(false);
    let (value_idx, value_states, value_moves) = pick(true);
    let full = ev.evaluate(&full_states, &full_moves);
    let values = ev.evaluate_values(&value_states, &value_moves);
    let mut out: Vec<Option<Evaluation>> = vec![None; states.len()];
    for (i, e) in full_idx
        .into_iter()
        .zip(full)
        .chain(value_idx.into_iter().zip(values))
    {
        out[i] = Some(e);
    }
    out.into_iter()
        .map(|e| e.expect("an evaluation for every position"))
        .collect()
}

/// The leaves' evaluation of an alpha-beta search that an evaluator stands for.
pub enum LeafEval {
    /// The search's hand-written evaluation (the bootstrap evaluator's place).
    HandWritten,
    /// A network's value, in the search's units.
    Net(Box<dyn engine::search::StaticEval>),
}

/// Which built-in evaluator to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BuiltinEvaluator {
    /// Flat policy, value 0.
    Uniform,
    /// Deterministic pseudo-random policy and value, seeded by the position's hash.
    Random,
    /// Priors from one-ply piece gain, value from a shallow alpha-beta search.
    Bootstrap,
}

impl BuiltinEvaluator {
    /// A fresh evaluator.
    pub fn build(self) -> Box<dyn Evaluator> {
        match self {
            BuiltinEvaluator::Uniform => Box::new(Uniform),
            BuiltinEvaluator::Random => Box::new(HashRandom),
            BuiltinEvaluator::Bootstrap => Box::new(Bootstrap::new(2)),
        }
    }
}

impl std::str::FromStr for BuiltinEvaluator {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "uniform" => Ok(BuiltinEvaluator::Uniform),
            "random" => Ok(BuiltinEvaluator::Random),
            "bootstrap" => Ok(BuiltinEvaluator::Bootstrap),
            _ => Err(format!(
                "unknown evaluator `{s}` (expected uniform, random or bootstrap)"
            )),
        }
    }
}

/// Flat policy and a value of 0: search alone decides.
pub struct Uniform;

impl Evaluator for Uniform {
    fn evaluate(&mut self, _states: &[State], moves: &[Vec<Move>]) -> Vec<Evaluation> {
        moves
            .iter()
            .map(|m| Evaluation {
                policy: vec![1.0 / m.len() as f32; m.len()],
                value: 0.0,
                wdl: None,
                score: None,
            })
            .collect()
    }

    fn name(&self) -> String {
        "uniform".into()
    }
}

/// A deterministic pseudo-random evaluation: the same position always gets the same
/// policy and value (a fixed function of its hash), whatever the batch.
pub struct HashRandom;

fn unit(x: u64) -> f32 {
    (x >> 40) as f32 / (1u64 << 24) as f32
}

impl Evaluator for HashRandom {
    fn evaluate(&mut self, states: &[State], moves: &[Vec<Move>]) -> Vec<Evaluation> {
        states
            .iter()
            .zip(moves)
            .map(|(s, m)| {
                let h = s.hash();
                let raw: Vec<f32> = (0..m.len())
                    .map(|i| 0.05 + unit(splitmix64(h ^ (i as u64 + 1).wrapping_mul(0x9E37)).1))
                    .collect();
                let sum: f32 = raw.iter().sum();
                Evaluation {
                    policy: raw.iter().map(|r| r / sum).collect(),
                    value: unit(splitmix64(h).1) * 2.0 - 1.0,
                    wdl: None,
                    score: None,
                }
            })
            .collect()
    }

    fn name(&self) -> String {
        "random".into()
    }
}

/// Cheap domain knowledge for generation 0: priors are a softmax of each move's immediate
/// change of the piece margin; the value is a shallow alpha-beta score squashed to
/// [−1, 1] (exact ±1 for forced wins and losses).
pub struct Bootstrap {
    searcher: Searcher,
    depth: u32,
}

impl Bootstrap {
    /// A bootstrap evaluator searching `depth` plies for its value.
    pub fn new(depth: u32) -> Bootstrap {
        Bootstrap {
            searcher: Searcher::full_width(1),
            depth,
        }
    }
}

impl Evaluator for Bootstrap {
    fn evaluate(&mut self, states: &[State], moves: &[Vec<Move>]) -> Vec<Evaluation> {
        let stop = AtomicBool::new(false);
        states
            .iter()
            .zip(moves)
            .map(|(s, m)| {
                let sign = if s.game().misere() { -1.0 } else { 1.0 };
                let gains: Vec<f32> = m
                    .iter()
                    .map(|&mv| sign * (s.gain(mv) + s.flips(mv)) as f32)
                    .collect();
                let max = gains.iter().cloned().fold(f32::MIN, f32::max);
                let exp: Vec<f32> = gains.iter().map(|g| ((g - max) * 0.7).exp()).collect();
                let sum: f32 = exp.iter().sum();
                let limits = Limits {
                    depth: Some(self.depth),
                    ..Limits::default()
                };
                let score = self
                    .searcher
                    .search(s, limits, &stop, |_| {})
                    .map_or(0, |r| r.score);
                let value = engine::search::value_of_score(score);
                Evaluation {
                    policy: exp.iter().map(|e| e / sum).collect(),
                    value,
                    wdl: None,
                    score: None,
                }
            })
            .collect()
    }

    fn leaf_eval(&self) -> Option<LeafEval> {
        Some(LeafEval::HandWritten)
    }

    fn name(&self) -> String {
        format!("bootstrap-ab{}", self.depth)
    }
}

/// Which engine runs a trained network: the fast CPU path (the default), or Burn's
/// forward pass, which runs any architecture Burn can build (slower).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NetEngine {
    /// `train::FastNet`: BatchNorm folded, SIMD kernels; checked against Burn at load.
    #[default]
    Fast,
    /// `train::NetEvaluator`: Burn's Flex backend.
    Burn,
}

impl std::str::FromStr for NetEngine {
    type Err = String;

    fn from_str(s: &str) -> Result<NetEngine, String> {
        match s {
            "fast" => Ok(NetEngine::Fast),
            "burn" => Ok(NetEngine::Burn),
            _ => Err(format!("unknown network engine `{s}` (fast or burn)")),
        }
    }
}

impl std::fmt::Display for NetEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            NetEngine::Fast => "fast",
            NetEngine::Burn => "burn",
        })
    }
}

/// An evaluator that costs a fixed time per position (spinning, like a network would
/// keep the core busy) and answers like `uniform`: what the self-play benchmark measures
/// the search's own cost against.
pub struct FixedCost {
    per_position: std::time::Duration,
}

impl FixedCost {
    /// An evaluator that spends `per_position` on each position.
    pub fn new(per_position: std::time::Duration) -> FixedCost {
        FixedCost { per_position }
    }
}

impl Evaluator for FixedCost {
    fn evaluate(&mut self, states: &[State], moves: &[Vec<Move>]) -> Vec<Evaluation> {
        let until = std::time::Instant::now() + self.per_position * states.len() as u32;
        while std::time::Instant::now() < until {
            std::hint::spin_loop();
        }
        Uniform.evaluate(states, moves)
    }

    fn name(&self) -> String {
        format!("fixed-cost-{}us", self.per_position.as_micros())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values by the position's hash; a value alone is marked by its sign, and every call
    /// is counted.
    struct Marked {
        calls: usize,
    }

    impl Evaluator for Marked {
        fn evaluate(&mut self, states: &[State], moves: &[Vec<Move>]) -> Vec<Evaluation> {
            self.calls += 1;
            let mut out = Uniform.evaluate(states, moves);
            for (e, s) in out.iter_mut().zip(states) {
                e.value = 1.0 + (s.hash() % 7) as f32;
            }
            out
        }

        fn evaluate_values(&mut self, states: &[State], moves: &[Vec<Move>]) -> Vec<Evaluation> {
            let mut out = self.evaluate(states, moves);
            for e in &mut out {
                (e.value, e.policy) = (-e.value, Vec::new());
            }
            out
        }

        fn name(&self) -> String {
            "marked".into()
        }
    }

    #[test]
    fn a_mixed_batch_comes_back_in_order_in_two_calls() {
        let game: engine::Game = "ataxx".parse().unwrap();
        let mut states = vec![game.startpos()];
        for i in 0..5 {
            let s = states[i];
            states.push(s.after(s.legal_moves()[i]));
        }
        let moves: Vec<Vec<Move>> = states.iter().map(|s| s.legal_moves()).collect();
        let value_only = [true, false, false, true, false, true];
        let mut ev = Marked { calls: 0 };
        let out = evaluate_mixed(&mut ev, &states, &moves, &value_only);
        assert_eq!(ev.calls, 2);
        for (i, e) in out.iter().enumerate() {
            let v = 1.0 + (states[i].hash() % 7) as f32;
            if value_only[i] {
                assert_eq!((e.value, e.policy.len()), (-v, 0), "{i}");
            } else {
                assert_eq!((e.value, e.policy.len()), (v, moves[i].len()), "{i}");
            }
        }
        // One kind only: one call.
        let mut ev = Marked { calls: 0 };
        evaluate_mixed(&mut ev, &states, &moves, &[false; 6]);
        evaluate_mixed(&mut ev, &states, &moves, &[true; 6]);
        assert_eq!(ev.calls, 2);
    }

    /// The default single-position call gives the batch calls' evaluations, in the
    /// memory of whatever it is handed (its stale policy, W/D/L and score replaced).
    #[test]
    fn evaluate_into_gives_the_batch_calls_evaluations() {
        let game: engine::Game = "ataxx".parse().unwrap();
        let s = game.startpos().after(game.startpos().legal_moves()[3]);
        let moves = s.legal_moves();
        let mut ev = Marked { calls: 0 };
        let mut out = Evaluation {
            policy: vec![7.0; 3],
            value: 7.0,
            wdl: Some([7.0; 3]),
            score: Some(7.0),
        };
        for value_only in [false, true, false] {
            ev.evaluate_into(&s, &moves, value_only, &mut out);
            let batch = if value_only {
                ev.evaluate_values(std::slice::from_ref(&s), std::slice::from_ref(&moves))
            } else {
                ev.evaluate(std::slice::from_ref(&s), std::slice::from_ref(&moves))
            };
            assert_eq!(out, batch[0], "value only: {value_only}");
        }
    }
}
