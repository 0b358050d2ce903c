//! Running a trained network: raw predictions, and an [`Evaluator`] for self-play.

use engine::{Move, State};
use selfplay::{Evaluation, Evaluator, NetEngine};

use crate::error::TrainError;
use crate::store::LoadedModel;

mod compare;
pub mod fast;
mod network;
mod prediction;

pub use compare::max_difference;
pub use network::{Network, Predictions};
pub use prediction::{Prediction, evaluations, move_probabilities, predict, ranked_moves};

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
            let states = model.game.check_positions();
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

impl Evaluator for NetEvaluator {
    fn evaluate(&mut self, states: &[State], moves: &[Vec<Move>]) -> Vec<Evaluation> {
        evaluations(&predict(&self.model, states), states, moves)
    }

    fn name(&self) -> String {
        self.name.clone()
    }

    /// Burn's forward pass on a CPU costs as the fast path's does; a GPU wants far
    /// larger batches, which self-play's many games give it (`games_per_thread`).
    fn preferred_batch(&self) -> usize {
        32
    }
}
