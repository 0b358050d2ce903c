//! Running a trained network: raw predictions, and an [`Evaluator`] for self-play.

use burn::prelude::*;
use burn::tensor::activation::softmax;
use engine::{Move, State};
use selfplay::{Evaluation, Evaluator, NetEngine};

use crate::error::TrainError;
use crate::net::{PLANES, encode_into};
use crate::store::LoadedModel;

pub mod fast;
mod network;

pub use network::{Network, Predictions};

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
    let (w, h) = model.game.grid();
    let area = PLANES * w * h;
    let mut input = vec![0.0f32; states.len() * area];
    for (i, s) in states.iter().enumerate() {
        encode_into(s, &mut input[i * area..(i + 1) * area]);
    }
    let n = states.len();
    let x = Tensor::<4>::from_data(TensorData::new(input, [n, PLANES, h, w]), &model.device);
    let out = model.net.forward(x);
    let p = model.game.policy_size();
    let logits = out.policy.into_data().try_to_vec::<f32>().expect("f32");
    let wdl = softmax(out.wdl, 1)
        .into_data()
        .try_to_vec::<f32>()
        .expect("f32");
    let score = out.score.into_data().try_to_vec::<f32>().expect("f32");
    (0..n)
        .map(|i| Prediction {
            policy_logits: logits[i * p..(i + 1) * p].to_vec(),
            wdl: [wdl[i * 3], wdl[i * 3 + 1], wdl[i * 3 + 2]],
            score: score[i],
        })
        .collect()
}

/// The positions every engine check runs on: the start and positions after random
/// legal moves of `game`, from a fixed seed.
pub fn check_positions(game: engine::Game) -> Vec<State> {
    let mut rng = engine::Rng::new(0x5EED);
    (0..8)
        .map(|k| {
            let mut s = game.startpos();
            for _ in 0..k * 3 {
                let moves = s.legal_moves();
                if moves.is_empty() {
                    break;
                }
                s.play(moves[rng.below(moves.len() as u64) as usize]);
            }
            s
        })
        .collect()
}

/// The largest difference between two engines' outputs on the same positions (every
/// policy logit, the WDL probabilities and the score), each divided by `scale(reference
/// value)`; NaN counts as infinitely far.
pub fn max_difference(got: &[Prediction], want: &[Prediction], scale: impl Fn(f32) -> f32) -> f32 {
    got.iter()
        .zip(want)
        .flat_map(|(a, b)| {
            a.policy_logits
                .iter()
                .zip(&b.policy_logits)
                .chain(a.wdl.iter().zip(&b.wdl))
                .chain([(&a.score, &b.score)])
                .map(|(x, y)| (x - y).abs() / scale(*y))
        })
        .fold(
            0.0f32,
            |m, d| if d.is_nan() { f32::INFINITY } else { m.max(d) },
        )
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

/// The largest difference between Burn's outputs on a GPU and the CPU's that
/// [`evaluators`] accepts, relative to the CPU's value (at least 1). Wider than
/// [`fast::FAST_PATH_TOLERANCE`]: GPU matrix units may multiply in reduced precision
/// (TF32 keeps 10 bits of mantissa, about 1e-3 relative); a layer read wrongly moves
/// the outputs by far more.
pub const DEVICE_TOLERANCE: f32 = 1e-2;

/// A factory of evaluators of `model` on `engine`, one per worker thread; `name` goes
/// into the data's `model` column. `device` is where Burn's engine runs (`cpu`, `cuda`,
/// `cuda:N`, `wgpu`; the fast path runs on the CPU only). The fast path is checked
/// against Burn once, here ([`fast::FastNet::check_against_burn`]), and a model it does
/// not run is refused; a model moved to a GPU is checked before it plays against the
/// fast path's outputs (Burn's on the CPU where the fast path does not run the network),
/// within [`DEVICE_TOLERANCE`]; a device that cannot be used is refused, not a panic.
pub fn evaluators(
    model: &LoadedModel,
    name: &str,
    engine: NetEngine,
    device: &str,
) -> Result<impl Fn() -> Box<dyn Evaluator> + Sync + use<>, TrainError> {
    let model = match (engine, device) {
        (NetEngine::Fast, "cpu") => {
            fast::FastNet::new(model).check_against_burn(model)?;
            model.clone()
        }
        (NetEngine::Burn, "cpu") => model.clone(),
        (NetEngine::Fast, d) => {
            return Err(TrainError::Unsupported(format!(
                "device {d}: the fast path runs on the CPU; a GPU runs the network through Burn (net_engine = \"burn\")"
            )));
        }
        (NetEngine::Burn, d) => {
            let dev = crate::training_device(d)
                .map_err(|allowed| TrainError::Unsupported(format!("device {d}: {allowed}")))?;
            let states = check_positions(model.game);
            let mut fast = fast::FastNet::new(model);
            let (want, reference) = if fast.check_against_burn(model).is_ok() {
                (fast.predict(&states), "the fast path")
            } else {
                (predict(model, &states), "Burn on the CPU")
            };
            // Burn panics on a device it cannot open (no driver, cuda:N past the last GPU).
            let moved = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let on = model.to_device(&dev);
                let got = predict(&on, &states);
                (on, got)
            }));
            let (on, got) = moved.map_err(|panic| {
                let why = panic
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| panic.downcast_ref::<&str>().copied())
                    .unwrap_or("a panic in the backend");
                TrainError::Unsupported(format!("device {d} cannot run the network: {why}"))
            })?;
            let diff = max_difference(&got, &want, |y| y.abs().max(1.0));
            if diff > DEVICE_TOLERANCE {
                return Err(TrainError::Unsupported(format!(
                    "Burn's forward pass on {d} differs from {reference} by {diff:.3e} (relative, more than {DEVICE_TOLERANCE:e}) on this network: the device computes it wrongly; run it on the CPU (device = \"cpu\")"
                )));
            }
            on
        }
    };
    let name = name.to_string();
    Ok(move || -> Box<dyn Evaluator> {
        match engine {
            NetEngine::Fast => Box::new(fast::FastEvaluator::new(&model, name.clone())),
            NetEngine::Burn => Box::new(NetEvaluator::new(model.clone(), name.clone())),
        }
    })
}

/// A trained network as a self-play evaluator (Burn's Flex backend).
pub struct NetEvaluator {
    model: LoadedModel,
    name: String,
}

impl NetEvaluator {
    /// Wraps a loaded model; `name` goes into the `model` column of the data.
    pub fn new(model: LoadedModel, name: String) -> NetEvaluator {
        NetEvaluator { model, name }
    }
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

impl Evaluator for NetEvaluator {
    fn evaluate(&mut self, states: &[State], moves: &[Vec<Move>]) -> Vec<Evaluation> {
        evaluations(&predict(&self.model, states), states, moves)
    }

    fn name(&self) -> String {
        self.name.clone()
    }
}
