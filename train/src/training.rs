//! The training loop: AdamW or SGD with momentum, warm-up then cosine decay, gradient
//! clipping, weighted losses, a metrics CSV, and atomic checkpoints that a run resumes
//! from exactly (same optimizer state, step, data order and random draws).
//!
//! A model directory holds `model.bpk` (the weights, Burn's burnpack), `model.json`
//! (metadata, see `export`), `metrics.csv`, and `checkpoints/step-NNNNNNNN/` with
//! `model.bpk`, `optim.bpk` and `state.json`; `checkpoints/latest` names the newest.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use burn::grad_clipping::GradientClippingConfig;
use burn::module::Module;
use burn::optim::momentum::MomentumConfig;
use burn::optim::{AdamWConfig, GradientsParams, ModuleOptimizer, SgdConfig};
use burn::prelude::*;
use burn::tensor::activation::{log_softmax, softmax};
use engine::Game;
use serde::{Deserialize, Serialize};

use crate::cpu_training::CpuTrainer;
use crate::data::{Batch, batch_stream, load_window};
use crate::encode::PLANES;
use crate::model::{Net, NetConfig};

/// Which optimizer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OptimizerKind {
    /// AdamW with decoupled weight decay.
    Adamw,
    /// SGD with Nesterov-free momentum and weight decay.
    Sgd,
}

/// Training settings: the `[train]` table of a flipzero config file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TrainConfig {
    /// Network preset: tiny (4×32), small (6×64) or standard (10×128).
    pub net: String,
    /// Residual blocks, overriding the preset.
    pub blocks: Option<usize>,
    /// Channels, overriding the preset.
    pub channels: Option<usize>,
    /// Every n-th residual block adds a global-pooling bias (0 = none), overriding the
    /// preset (3).
    pub gpool_every: Option<usize>,
    /// Channels of the policy and value heads, overriding the preset (32).
    pub head_channels: Option<usize>,
    /// Hidden units of the value head, overriding the preset (64).
    pub value_hidden: Option<usize>,
    /// Samples per step.
    pub batch_size: usize,
    /// Steps to train (the total, when resuming).
    pub steps: u64,
    /// adamw or sgd.
    pub optimizer: OptimizerKind,
    /// Peak learning rate.
    pub learning_rate: f64,
    /// Steps of linear warm-up from 0 to the peak.
    pub warmup_steps: u64,
    /// The cosine decay ends at this fraction of the peak.
    pub final_lr_fraction: f64,
    /// Weight decay.
    pub weight_decay: f32,
    /// SGD momentum.
    pub momentum: f64,
    /// Clip each parameter's gradient to this L2 norm (0 = off).
    pub grad_clip_norm: f32,
    /// Weight of the policy cross-entropy.
    pub policy_loss_weight: f32,
    /// Weight of the win/draw/loss cross-entropy.
    pub value_loss_weight: f32,
    /// Weight of the final-score squared error.
    pub score_loss_weight: f32,
    /// Newest positions used for training.
    pub window: usize,
    /// Steps between checkpoints.
    pub checkpoint_every: u64,
    /// Seed of weights, data order and symmetries.
    pub seed: u64,
    /// Where training runs: `cpu` (flipzero's own CPU engine, the fastest on a CPU),
    /// `flex` (Burn's Flex CPU backend with autodiff), `cuda`, `cuda:N` (a build with
    /// `--features cuda`) or `wgpu` (a build with `--features wgpu`: Vulkan, Metal, DX12).
    pub device: String,
}

impl Default for TrainConfig {
    fn default() -> Self {
        TrainConfig {
            net: "tiny".into(),
            blocks: None,
            channels: None,
            gpool_every: None,
            head_channels: None,
            value_hidden: None,
            batch_size: 256,
            steps: 500,
            optimizer: OptimizerKind::Adamw,
            learning_rate: 2e-3,
            warmup_steps: 50,
            final_lr_fraction: 0.1,
            weight_decay: 1e-4,
            momentum: 0.9,
            grad_clip_norm: 5.0,
            policy_loss_weight: 1.0,
            value_loss_weight: 1.0,
            score_loss_weight: 0.25,
            window: 250_000,
            checkpoint_every: 100,
            seed: 1,
            device: "cpu".into(),
        }
    }
}

/// The compute device named by `train.device`, or why this build cannot use it. `cpu`
/// (flipzero's own CPU engine, [`crate::cpu_training`]) keeps its tensors on Burn's Flex
/// device, like `flex`.
pub fn training_device(name: &str) -> Result<Device, &'static str> {
    match name {
        "cpu" | "flex" => Ok(Device::flex()),
        #[cfg(feature = "cuda")]
        "cuda" => Ok(Device::cuda(0)),
        #[cfg(feature = "cuda")]
        n if n.starts_with("cuda:") => n[5..]
            .parse::<usize>()
            .map(Device::cuda)
            .map_err(|_| "cuda:N with N a GPU index"),
        #[cfg(feature = "wgpu")]
        "wgpu" => Ok(Device::wgpu(burn::tensor::DeviceKind::DefaultDevice)),
        #[cfg(not(feature = "cuda"))]
        n if n == "cuda" || n.starts_with("cuda:") => {
            Err("cuda needs a build with `--features cuda` (cargo build --release --features cuda)")
        }
        #[cfg(not(feature = "wgpu"))]
        "wgpu" => {
            Err("wgpu needs a build with `--features wgpu` (cargo build --release --features wgpu)")
        }
        _ => Err("cpu, flex, cuda, cuda:N or wgpu"),
    }
}

/// A `[train]` setting out of range, named (the config error of every table).
pub type TrainConfigError = selfplay::ConfigError;

impl TrainConfig {
    /// Checks every range.
    pub fn validate(&self) -> Result<(), TrainConfigError> {
        if let Err(allowed) = training_device(&self.device) {
            return TrainConfigError::check("train", "device", &self.device, false, allowed);
        }
        fn check<T: std::fmt::Display>(
            k: &'static str,
            v: T,
            ok: bool,
            a: &'static str,
        ) -> Result<(), TrainConfigError> {
            TrainConfigError::check("train", k, v, ok, a)
        }
        check(
            "net",
            &self.net,
            ["tiny", "small", "standard"].contains(&self.net.as_str()),
            "tiny, small or standard",
        )?;
        // The shape's limits do not depend on the game's policy planes.
        if let Some((key, v, allowed)) = self.shape(1).out_of_range() {
            check(key, v, false, allowed)?;
        }
        check(
            "batch_size",
            self.batch_size,
            (1..=8192).contains(&self.batch_size),
            "1..=8192",
        )?;
        check("steps", self.steps, self.steps >= 1, "at least 1")?;
        check(
            "learning_rate",
            self.learning_rate,
            self.learning_rate > 0.0 && self.learning_rate <= 10.0,
            "(0, 10]",
        )?;
        check(
            "final_lr_fraction",
            self.final_lr_fraction,
            (0.0..=1.0).contains(&self.final_lr_fraction),
            "0..=1",
        )?;
        check(
            "weight_decay",
            self.weight_decay,
            (0.0..=1.0).contains(&self.weight_decay),
            "0..=1",
        )?;
        check(
            "momentum",
            self.momentum,
            (0.0..1.0).contains(&self.momentum),
            "0..1",
        )?;
        check(
            "grad_clip_norm",
            self.grad_clip_norm,
            self.grad_clip_norm >= 0.0,
            "0 (off) or more",
        )?;
        for (k, v) in [
            ("policy_loss_weight", self.policy_loss_weight),
            ("value_loss_weight", self.value_loss_weight),
            ("score_loss_weight", self.score_loss_weight),
        ] {
            check(k, v, (0.0..=100.0).contains(&v), "0..=100")?;
        }
        check("window", self.window, self.window >= 1, "at least 1")?;
        check(
            "checkpoint_every",
            self.checkpoint_every,
            self.checkpoint_every >= 1,
            "at least 1",
        )?;
        Ok(())
    }

    /// The network shape for `game`.
    pub fn net_config(&self, game: Game) -> NetConfig {
        self.shape(game.policy_planes())
    }

    /// The preset with this table's overrides, for `policy_planes` policy planes.
    fn shape(&self, policy_planes: usize) -> NetConfig {
        let mut n = NetConfig::preset(&self.net, policy_planes).expect("validated preset");
        if let Some(b) = self.blocks {
            n.blocks = b;
        }
        if let Some(c) = self.channels {
            n.channels = c;
        }
        if let Some(g) = self.gpool_every {
            n.gpool_every = g;
        }
        if let Some(h) = self.head_channels {
            n.head_channels = h;
        }
        if let Some(v) = self.value_hidden {
            n.value_hidden = v;
        }
        n
    }

    /// The learning rate of step `step` (from 0).
    pub fn learning_rate_at(&self, step: u64) -> f64 {
        let peak = self.learning_rate;
        if step < self.warmup_steps {
            return peak * (step + 1) as f64 / self.warmup_steps as f64;
        }
        let span = self.steps.saturating_sub(self.warmup_steps).max(1) as f64;
        let t = ((step - self.warmup_steps) as f64 / span).min(1.0);
        let floor = peak * self.final_lr_fraction;
        floor + (peak - floor) * 0.5 * (1.0 + (std::f64::consts::PI * t).cos())
    }

    /// The optimizer these settings describe.
    pub fn optimizer(&self) -> ModuleOptimizer {
        let clip = (self.grad_clip_norm > 0.0)
            .then_some(GradientClippingConfig::Norm(self.grad_clip_norm));
        match self.optimizer {
            OptimizerKind::Adamw => AdamWConfig::new()
                .with_weight_decay(self.weight_decay)
                .with_grad_clipping(clip)
                .init(),
            OptimizerKind::Sgd => SgdConfig::new()
                .with_momentum(Some(MomentumConfig::new().with_momentum(self.momentum)))
                .with_weight_decay(Some(burn::optim::decay::WeightDecayConfig::new(
                    self.weight_decay,
                )))
                .with_gradient_clipping(clip)
                .init(),
        }
    }
}

/// Errors of training, naming the file at fault.
#[derive(Debug, thiserror::Error)]
pub enum TrainError {
    /// Invalid settings.
    #[error(transparent)]
    Config(#[from] TrainConfigError),
    /// Reading the training data failed.
    #[error(transparent)]
    Data(#[from] selfplay::data::DataError),
    /// A row does not fit the game.
    #[error(transparent)]
    Row(#[from] crate::data::RowError),
    /// No training rows.
    #[error("no training positions found in {0}")]
    NoData(String),
    /// The chosen training engine cannot run this network.
    #[error("{0}")]
    Unsupported(String),
    /// A checkpoint or model file is unreadable or does not match.
    #[error("{path}: {message}")]
    Checkpoint {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// File system error.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> TrainError + '_ {
    move |source| TrainError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Writes `bytes` to `path` atomically (temporary file, fsync, rename).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), TrainError> {
    selfplay::data::write_atomic(path, bytes).map_err(io(path))
}

/// The SHA-256 digest of `bytes`, in lowercase hex (as `sha256sum` prints it).
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Saves a network's weights as burnpack bytes, atomically; returns their SHA-256 digest,
/// which the caller records beside them (model.json, a checkpoint's state.json).
pub fn save_net(net: &Net, path: &Path) -> Result<String, TrainError> {
    let bytes = net
        .clone()
        .into_record()
        .into_bytes()
        .map_err(|e| TrainError::Checkpoint {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
    write_atomic(path, &bytes)?;
    Ok(sha256_hex(&bytes))
}

/// Loads weights into a network of shape `cfg`. When `digest` is given, the file's
/// SHA-256 must equal it (a flipped byte is refused before any weight is read); a corrupt
/// file or a file of another shape is an error naming the file.
pub fn load_net(
    cfg: &NetConfig,
    path: &Path,
    digest: Option<&str>,
    device: &Device,
) -> Result<Net, TrainError> {
    let bytes = std::fs::read(path).map_err(io(path))?;
    if let Some(want) = digest {
        let found = sha256_hex(&bytes);
        if !found.eq_ignore_ascii_case(want) {
            return Err(TrainError::Checkpoint {
                path: path.to_path_buf(),
                message: format!(
                    "weights do not match their recorded digest (sha256 {found}, recorded \
                     {want}): the file is corrupt or was replaced"
                ),
            });
        }
    }
    let bad = |e: &dyn std::fmt::Display| TrainError::Checkpoint {
        path: path.to_path_buf(),
        message: format!(
            "cannot load weights for a {}x{} network: {e}",
            cfg.blocks, cfg.channels
        ),
    };
    let record = burn::store::ModuleRecord::from_bytes(burn::tensor::Bytes::from_bytes_vec(bytes))
        .map_err(|e| bad(&e))?;
    cfg.init(device)
        .try_load_record(record)
        .map_err(|e| bad(&e))
}

/// What a checkpoint records beside the weights and the optimizer state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckpointState {
    /// Steps completed.
    pub step: u64,
    /// The game.
    pub game: String,
    /// The settings of the run.
    pub config: TrainConfig,
    /// Rows in the training window (the data order depends on it).
    pub window_rows: usize,
    /// SHA-256 of the checkpoint's `model.bpk` and of its optimizer file, checked when
    /// the checkpoint is loaded (empty in checkpoints of older versions: not checked).
    #[serde(default)]
    pub digests: Digests,
}

/// The SHA-256 digests of a checkpoint's files.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Digests {
    /// Of `model.bpk`.
    pub weights: String,
    /// Of the optimizer state file.
    pub optimizer: String,
}

/// Metrics of one training step.
#[derive(Clone, Debug, PartialEq)]
pub struct StepMetrics {
    /// Step number, from 1.
    pub step: u64,
    /// Learning rate used.
    pub lr: f64,
    /// Weighted total loss.
    pub loss: f32,
    /// Policy cross-entropy (full-search rows only).
    pub policy_loss: f32,
    /// Win/draw/loss cross-entropy.
    pub value_loss: f32,
    /// Final-score squared error.
    pub score_loss: f32,
    /// Entropy of the predicted policy over legal moves.
    pub policy_entropy: f32,
    /// Share of full-search rows whose top predicted move is the target's top move.
    pub policy_accuracy: f32,
    /// Samples per second of this step.
    pub samples_per_s: f32,
}

const METRICS_HEADER: &str =
    "step,lr,loss,policy_loss,value_loss,score_loss,policy_entropy,policy_accuracy,samples_per_s";

/// How to run `train`.
pub struct TrainOptions<'a> {
    /// Shard directories, oldest first.
    pub data: Vec<PathBuf>,
    /// The model directory to write.
    pub out: PathBuf,
    /// Continue from the newest checkpoint in `out`.
    pub resume: bool,
    /// Start from the weights of this model directory (a previous generation).
    pub init: Option<PathBuf>,
    /// Stop after this many steps of this run without finishing (tests: a crash).
    pub stop_after: Option<u64>,
    /// Called after every step.
    pub on_step: &'a dyn Fn(&StepMetrics),
}

/// What a training run did.
#[derive(Clone, Debug, PartialEq)]
pub struct TrainReport {
    /// Steps completed in total.
    pub steps: u64,
    /// Metrics of the last step.
    pub last: Option<StepMetrics>,
    /// Rows in the window.
    pub window_rows: usize,
    /// Data files skipped.
    pub skipped: Vec<String>,
    /// Whether the run finished (wrote model.bpk and model.json).
    pub finished: bool,
}

fn tensor<const D: usize>(data: Vec<f32>, shape: [usize; D], device: &Device) -> Tensor<D> {
    Tensor::from_data(TensorData::new(data, shape), device)
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
    let out = net.forward(tensor(b.inputs.clone(), [n, PLANES, h, w], device));
    let legal = tensor(b.legal.clone(), [n, p], device);
    let target = tensor(b.policy.clone(), [n, p], device);
    let pw = tensor(b.policy_weight.clone(), [n, 1], device);
    // Illegal moves get a large negative logit, so softmax runs over legal moves only.
    let logits = out.policy + (legal.clone() - 1.0) * 1.0e4;
    let logp = log_softmax(logits.clone(), 1);
    let per_row: Tensor<2> = (target.clone() * logp.clone()).sum_dim(1).neg();
    let weight_sum = b.policy_weight.iter().sum::<f32>().max(1.0);
    let policy_loss: Tensor<1> = (per_row * pw).sum() / weight_sum;
    let wdl = tensor(b.wdl.clone(), [n, 3], device);
    let value_loss: Tensor<1> = (wdl * log_softmax(out.wdl, 1))
        .sum_dim(1)
        .neg()
        .mean()
        .reshape([1]);
    let score = tensor(b.score.clone(), [n, 1], device);
    let score_loss: Tensor<1> = (out.score - score).powi_scalar(2).mean().reshape([1]);
    let loss = policy_loss.clone() * cfg.policy_loss_weight
        + value_loss.clone() * cfg.value_loss_weight
        + score_loss.clone() * cfg.score_loss_weight;
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

/// What a run trains with: flipzero's CPU engine, or Burn's autodiff on a device.
enum Engine {
    /// `device = "cpu"`.
    Cpu(Box<CpuTrainer>),
    /// `flex`, `cuda`, `wgpu`.
    Burn(Box<BurnRun>),
}

/// Burn's autodiff: the network, its optimizer and the device.
struct BurnRun {
    net: Net,
    optim: ModuleOptimizer,
    device: Device,
}

/// The optimizer state's file in a checkpoint of the CPU engine.
const CPU_OPTIM: &str = "optim.bin";
/// The optimizer state's file in a checkpoint of Burn's engine.
const BURN_OPTIM: &str = "optim.bpk";

impl Engine {
    /// A fresh engine for `cfg` from `net` (weights on any device). The CPU engine must
    /// cover every trained tensor of the network's description, or it is refused.
    fn new(
        cfg: &TrainConfig,
        game: Game,
        shape: &NetConfig,
        net: Net,
    ) -> Result<Engine, TrainError> {
        Ok(if cfg.device == "cpu" {
            let trainer = CpuTrainer::new(&net, shape, game, cfg);
            let gaps = trainer.uncovered(shape);
            if !gaps.is_empty() {
                return Err(TrainError::Unsupported(format!(
                    "the CPU training engine cannot train this network: {}; set train.device = \"flex\" to train it with Burn",
                    gaps.join(", ")
                )));
            }
            Engine::Cpu(Box::new(trainer))
        } else {
            let device = training_device(&cfg.device).expect("validated").autodiff();
            // Loaded through a record, as from a file, so that the parameters are tracked
            // by the autodiff device.
            Engine::Burn(Box::new(BurnRun {
                net: shape.init(&device).load_record(net.into_record()),
                optim: cfg.optimizer(),
                device,
            }))
        })
    }

    /// One step; the loss and metrics.
    fn step(&mut self, batch: &Batch, game: Game, cfg: &TrainConfig, lr: f64) -> [f32; 6] {
        match self {
            Engine::Cpu(t) => t.step(batch, lr),
            Engine::Burn(run) => {
                let BurnRun { net, optim, device } = &mut **run;
                let (loss, m) = losses(net, batch, game, cfg, device);
                let grads = GradientsParams::from_grads(loss.backward(), net);
                *net = optim.step(lr, net.clone(), grads);
                m
            }
        }
    }

    /// The network, for inference, on Flex.
    fn net(&self) -> Net {
        match self {
            Engine::Cpu(t) => t.to_net(&Device::flex()),
            Engine::Burn(run) => run.net.valid().fork(&Device::flex()),
        }
    }

    /// Writes `model.bpk` and the optimizer state into `dir`; returns their digests.
    fn save(&self, dir: &Path) -> Result<Digests, TrainError> {
        let weights = save_net(&self.net(), &dir.join("model.bpk"))?;
        let (path, bytes) = match self {
            Engine::Cpu(t) => (dir.join(CPU_OPTIM), t.optimizer_bytes()),
            Engine::Burn(run) => {
                let path = dir.join(BURN_OPTIM);
                let bytes = run.optim.into_bytes().map_err(|e| TrainError::Checkpoint {
                    path: path.clone(),
                    message: e.to_string(),
                })?;
                (path, bytes.to_vec())
            }
        };
        write_atomic(&path, &bytes)?;
        Ok(Digests {
            weights,
            optimizer: sha256_hex(&bytes),
        })
    }

    /// The engine of checkpoint `dir`, its files checked against `digests` (when known).
    fn load(
        cfg: &TrainConfig,
        game: Game,
        shape: &NetConfig,
        dir: &Path,
        digests: &Digests,
    ) -> Result<Engine, TrainError> {
        let known = |d: &str| (!d.is_empty()).then(|| d.to_string());
        let weights = known(&digests.weights);
        let net = load_net(
            shape,
            &dir.join("model.bpk"),
            weights.as_deref(),
            &Device::flex(),
        )?;
        let mut engine = Engine::new(cfg, game, shape, net)?;
        let path = dir.join(match &engine {
            Engine::Cpu(_) => CPU_OPTIM,
            Engine::Burn(_) => BURN_OPTIM,
        });
        let bytes = std::fs::read(&path).map_err(io(&path))?;
        if let Some(want) = known(&digests.optimizer)
            && !sha256_hex(&bytes).eq_ignore_ascii_case(&want)
        {
            return Err(TrainError::Checkpoint {
                path,
                message: "optimizer state does not match its recorded digest (corrupt file)".into(),
            });
        }
        match &mut engine {
            Engine::Cpu(t) => {
                t.load_optimizer(&bytes)
                    .map_err(|message| TrainError::Checkpoint {
                        path: path.clone(),
                        message,
                    })?;
            }
            Engine::Burn(run) => {
                run.optim = run
                    .optim
                    .clone()
                    .from_bytes(burn::tensor::Bytes::from_bytes_vec(bytes))
                    .map_err(|e| TrainError::Checkpoint {
                        path: path.clone(),
                        message: format!("corrupt optimizer state: {e}"),
                    })?;
            }
        }
        Ok(engine)
    }
}

fn checkpoint_dir(out: &Path, step: u64) -> PathBuf {
    out.join("checkpoints").join(format!("step-{step:08}"))
}

fn write_checkpoint(
    out: &Path,
    engine: &Engine,
    state: &CheckpointState,
) -> Result<(), TrainError> {
    let root = out.join("checkpoints");
    let dir = checkpoint_dir(out, state.step);
    let tmp = root.join(format!(".step-{:08}.tmp", state.step));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(io(&tmp))?;
    // A failed write (a full disk) leaves no temporary folder behind.
    let written = engine.save(&tmp).and_then(|digests| {
        let state = CheckpointState {
            digests,
            ..state.clone()
        };
        let json = serde_json::to_string_pretty(&state).expect("state serializes");
        write_atomic(&tmp.join("state.json"), json.as_bytes())
    });
    if let Err(e) = written {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e);
    }
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::rename(&tmp, &dir).map_err(io(&dir))?;
    // `latest` switches to the new checkpoint in one rename.
    write_atomic(
        &root.join("latest"),
        format!("step-{:08}\n", state.step).as_bytes(),
    )?;
    // Keep the two newest checkpoints.
    if let Ok(entries) = std::fs::read_dir(&root) {
        let mut steps: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("step-"))
            })
            .collect();
        steps.sort();
        for old in steps.iter().rev().skip(2) {
            let _ = std::fs::remove_dir_all(old);
        }
    }
    Ok(())
}

/// The newest checkpoint of a model directory, if any: its folder and state.
pub fn latest_checkpoint(out: &Path) -> Result<Option<(PathBuf, CheckpointState)>, TrainError> {
    let latest = out.join("checkpoints").join("latest");
    let name = match std::fs::read_to_string(&latest) {
        Ok(name) => name,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(TrainError::Io {
                path: latest,
                source,
            });
        }
    };
    // Only a checkpoint folder of this model: `step-` and digits, nothing that leads out.
    let name = name.trim();
    let digits = name.strip_prefix("step-").unwrap_or("");
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(TrainError::Checkpoint {
            path: latest,
            message: format!(
                "names `{}`, not a checkpoint folder (step-NNNNNNNN)",
                name.chars().take(40).collect::<String>()
            ),
        });
    }
    let dir = out.join("checkpoints").join(name);
    let state_path = dir.join("state.json");
    let text = std::fs::read_to_string(&state_path).map_err(io(&state_path))?;
    let state: CheckpointState =
        serde_json::from_str(&text).map_err(|e| TrainError::Checkpoint {
            path: state_path.clone(),
            message: format!("corrupt checkpoint state: {e}"),
        })?;
    Ok(Some((dir, state)))
}

/// Keeps the rows of metrics.csv up to `step` (a killed run may have logged past its last
/// checkpoint); creates the file with its header if missing.
fn trim_metrics(path: &Path, step: u64) -> Result<(), TrainError> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut out = String::from(METRICS_HEADER);
    out.push('\n');
    for line in text.lines().skip(1) {
        if line
            .split(',')
            .next()
            .and_then(|s| s.parse::<u64>().ok())
            .is_some_and(|s| s <= step)
        {
            out.push_str(line);
            out.push('\n');
        }
    }
    write_atomic(path, out.as_bytes())
}

/// Removes what a killed run's atomic writes left in `dir`: hidden `.NAME.PID.tmp` files
/// and `.step-N.tmp` checkpoint folders, which only this trainer writes there.
fn remove_stale_temps(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if name.starts_with('.') && name.ends_with(".tmp") {
            let p = e.path();
            let _ = if p.is_dir() {
                std::fs::remove_dir_all(&p)
            } else {
                std::fs::remove_file(&p)
            };
        }
    }
}

/// Trains a network for `game` on the shards of `opts.data`.
pub fn train(
    cfg: &TrainConfig,
    game: Game,
    opts: &TrainOptions,
) -> Result<TrainReport, TrainError> {
    cfg.validate()?;
    let window = load_window(&opts.data, cfg.window)?;
    if window.rows.is_empty() {
        let dirs: Vec<String> = opts.data.iter().map(|d| d.display().to_string()).collect();
        return Err(TrainError::NoData(dirs.join(", ")));
    }
    std::fs::create_dir_all(&opts.out).map_err(io(&opts.out))?;
    remove_stale_temps(&opts.out);
    remove_stale_temps(&opts.out.join("checkpoints"));
    let net_cfg = cfg.net_config(game);
    let flex = Device::flex();
    flex.seed(cfg.seed);
    let mut engine = None;
    let mut start = 0;
    let metrics_path = opts.out.join("metrics.csv");
    match latest_checkpoint(&opts.out)? {
        Some((dir, state)) if opts.resume => {
            let want = CheckpointState {
                step: state.step,
                game: game.to_string(),
                config: cfg.clone(),
                window_rows: window.rows.len(),
                digests: state.digests.clone(),
            };
            if state != want {
                return Err(TrainError::Checkpoint {
                    path: dir.join("state.json"),
                    message: describe_mismatch(&state, &want),
                });
            }
            engine = Some(Engine::load(cfg, game, &net_cfg, &dir, &state.digests)?);
            start = state.step;
        }
        _ => {}
    }
    let mut engine = match engine {
        Some(e) => e,
        None => {
            let net = match &opts.init {
                Some(init) => crate::export::load_init(init, game, &net_cfg)?,
                None => net_cfg.init(&flex),
            };
            Engine::new(cfg, game, &net_cfg, net)?
        }
    };
    trim_metrics(&metrics_path, start)?;
    let mut csv = std::fs::OpenOptions::new()
        .append(true)
        .open(&metrics_path)
        .map_err(io(&metrics_path))?;
    let rows = Arc::new(window.rows);
    let batches = batch_stream(
        game,
        rows.clone(),
        cfg.batch_size,
        cfg.seed,
        start,
        cfg.steps,
    );
    let mut last = None;
    let mut run_steps = 0;
    for step in start..cfg.steps {
        let t = Instant::now();
        let batch = batches
            .recv()
            .expect("the batch thread lives until the last step")?;
        let lr = cfg.learning_rate_at(step);
        let m = engine.step(&batch, game, cfg, lr);
        let metrics = StepMetrics {
            step: step + 1,
            lr,
            loss: m[0],
            policy_loss: m[1],
            value_loss: m[2],
            score_loss: m[3],
            policy_entropy: m[4],
            policy_accuracy: m[5],
            samples_per_s: batch.size as f32 / t.elapsed().as_secs_f32().max(1e-9),
        };
        writeln!(
            csv,
            "{},{:.6e},{:.6},{:.6},{:.6},{:.6},{:.6},{:.4},{:.1}",
            metrics.step,
            lr,
            metrics.loss,
            metrics.policy_loss,
            metrics.value_loss,
            metrics.score_loss,
            metrics.policy_entropy,
            metrics.policy_accuracy,
            metrics.samples_per_s
        )
        .map_err(io(&metrics_path))?;
        (opts.on_step)(&metrics);
        last = Some(metrics);
        run_steps += 1;
        let done = step + 1;
        if done % cfg.checkpoint_every == 0 || done == cfg.steps {
            csv.sync_data().map_err(io(&metrics_path))?;
            let state = CheckpointState {
                step: done,
                game: game.to_string(),
                config: cfg.clone(),
                window_rows: rows.len(),
                digests: Digests::default(),
            };
            write_checkpoint(&opts.out, &engine, &state)?;
        }
        if opts.stop_after == Some(run_steps) && done < cfg.steps {
            return Ok(TrainReport {
                steps: done,
                last,
                window_rows: rows.len(),
                skipped: window.skipped,
                finished: false,
            });
        }
    }
    let digest = save_net(&engine.net(), &opts.out.join("model.bpk"))?;
    crate::export::write_metadata(
        &opts.out,
        game,
        &net_cfg,
        cfg.steps,
        cfg.steps * cfg.batch_size as u64,
        &digest,
    )?;
    Ok(TrainReport {
        steps: cfg.steps,
        last,
        window_rows: rows.len(),
        skipped: window.skipped,
        finished: true,
    })
}

fn describe_mismatch(found: &CheckpointState, want: &CheckpointState) -> String {
    let mut diffs = vec![];
    if found.game != want.game {
        diffs.push(format!(
            "game {} (checkpoint) vs {} (now)",
            found.game, want.game
        ));
    }
    if found.window_rows != want.window_rows {
        diffs.push(format!(
            "training window of {} rows (checkpoint) vs {} (now)",
            found.window_rows, want.window_rows
        ));
    }
    let a = toml::Table::try_from(&found.config).unwrap_or_default();
    let b = toml::Table::try_from(&want.config).unwrap_or_default();
    for (k, v) in &a {
        if b.get(k) != Some(v) {
            diffs.push(format!(
                "train.{k} = {v} (checkpoint) vs {} (now)",
                b.get(k).map_or("unset".into(), |x| x.to_string())
            ));
        }
    }
    for k in b.keys().filter(|k| !a.contains_key(*k)) {
        diffs.push(format!("train.{k} is set now but not in the checkpoint"));
    }
    format!(
        "the checkpoint does not match this run: {}",
        diffs.join("; ")
    )
}
