//! A trained network for Rust programs that embed one: load a model directory, predict
//! batches of positions, get arrays back.

use std::path::Path;

use engine::{Game, State};
use ndarray::{Array1, Array2};

use crate::error::TrainError;
use crate::infer::fast::FastNet;
use crate::store::{LoadedModel, ModelMeta, load_model};

/// A trained network, ready to predict batches of positions of its game on the CPU.
///
/// It runs on the fast path ([`FastNet`]: BatchNorm folded, SIMD Winograd kernels),
/// which [`Network::load`] first checks against Burn's forward pass of the same weights
/// ([`FastNet::check_against_burn`]); a network the fast path does not reproduce is
/// refused, there is no silent fallback.
///
/// ```
/// use train::net::NetConfig;
/// use train::{Network, move_probabilities};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// // A model directory: an untrained tiny net, as `flipzero train` would write one.
/// let game: engine::Game = "ataxx".parse()?;
/// let shape = NetConfig::preset("tiny", game.policy_planes()).expect("a preset");
/// let dir = std::env::temp_dir().join(format!("flipzero-network-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// let net = shape.init(&burn::prelude::Device::flex());
/// let digest = train::store::save_net(&net, &dir.join("model.bpk"))?;
/// train::store::write_metadata(&dir, game, &shape, 0, 0, &digest)?;
///
/// let mut network = Network::load(&dir)?;
/// assert_eq!(network.game(), game);
/// let start = game.startpos();
/// let mut next = start;
/// next.play(start.legal_moves()[0]);
/// let p = network.predict(&[start, next])?;
/// assert_eq!(p.policy.shape(), [2, game.policy_size()]);
/// assert_eq!(p.wdl.shape(), [2, 3]);
/// assert_eq!(p.score.shape(), [2]);
/// // The WDL are probabilities; the policy, logits over every index.
/// assert!((p.wdl.row(0).sum() - 1.0).abs() < 1e-5);
/// let moves = start.legal_moves();
/// let probs = move_probabilities(&start, &moves, p.policy.row(0).as_slice().unwrap());
/// assert_eq!(probs.len(), moves.len());
/// assert!((probs.iter().sum::<f32>() - 1.0).abs() < 1e-5);
/// // The same numbers as Burn's forward pass, within the fast path's bound.
/// let burn = train::predict(&train::load_model(&dir)?, &[start, next]);
/// for (i, want) in burn.iter().enumerate() {
///     let got: Vec<f32> = p.policy.row(i).iter().chain(p.wdl.row(i)).copied().collect();
///     let want: Vec<f32> = want.policy_logits.iter().chain(&want.wdl).copied().collect();
///     assert!(got.iter().zip(&want).all(|(a, b)| (a - b).abs() <= 1e-3));
///     assert!((p.score[i] - burn[i].score).abs() <= 1e-3);
/// }
/// // A position of another game is refused.
/// let hex: engine::Game = "hexxagon".parse()?;
/// assert!(matches!(
///     network.predict(&[hex.startpos()]),
///     Err(train::TrainError::OtherGame { .. })
/// ));
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok(())
/// # }
/// ```
pub struct Network {
    model: LoadedModel,
    fast: FastNet,
}

/// The outputs of a [`Network`] for a batch of `n` positions; row `i` is position `i`.
#[derive(Clone, Debug, PartialEq)]
pub struct Predictions {
    /// `[n, policy_size]` policy logits over the game's whole policy index (see
    /// `model.json`'s `policy_layout`); [`crate::move_probabilities`] turns a row into
    /// probabilities over the legal moves.
    pub policy: Array2<f32>,
    /// `[n, 3]` win, draw, loss probabilities for the side to move (a softmax of the
    /// network's WDL logits; each row sums to 1).
    pub wdl: Array2<f32>,
    /// `[n]` the expected final score (margin / playable cells, in −1..=1).
    pub score: Array1<f32>,
}

impl Network {
    /// Loads the model in `dir` (`model.json` and `model.bpk`, the weights checked
    /// against their recorded digest) and builds its fast path, which must agree with
    /// Burn's forward pass within [`crate::infer::fast::FAST_PATH_TOLERANCE`] on a few
    /// positions, else [`TrainError::Unsupported`].
    pub fn load(dir: &Path) -> Result<Network, TrainError> {
        let model = load_model(dir)?;
        let mut fast = FastNet::new(&model);
        fast.check_against_burn(&model)?;
        Ok(Network { model, fast })
    }

    /// The game the network plays.
    pub fn game(&self) -> Game {
        self.model.game
    }

    /// The model's metadata (`model.json`): shape, input planes, policy layout, steps.
    pub fn meta(&self) -> &ModelMeta {
        &self.model.meta
    }

    /// The network's outputs for `states` (any number, positions of [`Network::game`]);
    /// a position of another game is refused with [`TrainError::OtherGame`].
    pub fn predict(&mut self, states: &[State]) -> Result<Predictions, TrainError> {
        let game = self.game();
        if let Some(s) = states.iter().find(|s| s.game() != game) {
            return Err(TrainError::OtherGame {
                network: game,
                position: s.game(),
            });
        }
        let n = states.len();
        let size = game.policy_size();
        let mut out = Predictions {
            policy: Array2::zeros((n, size)),
            wdl: Array2::zeros((n, 3)),
            score: Array1::zeros(n),
        };
        for (i, p) in self.fast.predict(states).into_iter().enumerate() {
            out.policy
                .row_mut(i)
                .assign(&ndarray::ArrayView1::from(&p.policy_logits));
            out.wdl
                .row_mut(i)
                .assign(&ndarray::ArrayView1::from(&p.wdl));
            out.score[i] = p.score;
        }
        Ok(out)
    }
}
