//! A training run's settings (`[train]`): optimizer, schedule, loss weights, the
//! network's shape, the engine that trains it; their validation.

use burn::grad_clipping::GradientClippingConfig;
use burn::optim::momentum::MomentumConfig;
use burn::optim::{AdamWConfig, ModuleOptimizer, SgdConfig};
use burn::prelude::*;
use engine::Game;
use serde::{Deserialize, Serialize};

use crate::net::{Head, NetConfig};

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
    /// The network's heads: `policy`, `wdl` and `score` (always), and the auxiliary
    /// training targets `ownership` (each cell's final owner) and `reply` (the
    /// opponent's reply policy).
    pub heads: Vec<Head>,
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
    /// Weight of the ownership head's squared error (mean over the cells).
    pub ownership_loss_weight: f32,
    /// Weight of the opponent's-reply policy cross-entropy.
    pub reply_loss_weight: f32,
    /// Newest positions used for training (with `window_exponent`, the window's size
    /// until the run has produced that many).
    pub window: usize,
    /// How the window grows with the run's positions (KataGo's power law): 0 keeps it
    /// at `window`; α in (0, 1] makes it `window · (1 + β((N / window)^α − 1) / α)` once
    /// the run has produced N > `window` positions (see [`TrainConfig::window_for`]).
    pub window_exponent: f64,
    /// β of the power-law window.
    pub window_scale: f64,
    /// Policy-surprise weighting (KataGo), 0..=1: the share of a policy-target row's
    /// sampling weight that is proportional to its surprise (see
    /// [`crate::data::epoch_rows`]); 0 samples every row equally.
    pub surprise_weight: f32,
    /// Steps between checkpoints.
    pub checkpoint_every: u64,
    /// Steps between rows of `metrics.csv` (the step's losses and metrics, its rate the
    /// mean since the last row); 0: every step on the CPU engines, every 20th on a GPU,
    /// where reading the metrics back waits for the device to finish the step (with
    /// nothing queued behind it) and so leaves it idle once a row.
    pub metrics_every: u64,
    /// Seed of weights, data order and symmetries.
    pub seed: u64,
    /// Where training runs: `cpu` (flipzero's own CPU engine, the fastest on a CPU),
    /// `flex` (Burn's Flex CPU backend with autodiff) or `wgpu` (a build with
    /// `--features wgpu`: Vulkan, Metal, DX12); `cuda` and `cuda:N` are names this
    /// build refuses with the reason (no build has Burn's CUDA backend).
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
            heads: vec![Head::Policy, Head::Wdl, Head::Score],
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
            ownership_loss_weight: 0.5,
            reply_loss_weight: 0.15,
            window: 250_000,
            window_exponent: 0.0,
            window_scale: 0.4,
            surprise_weight: 0.0,
            checkpoint_every: 100,
            metrics_every: 0,
            seed: 1,
            device: "cpu".into(),
        }
    }
}

/// Why `cuda` is refused: no build of flipzero has Burn's CUDA backend.
const NO_CUDA: &str = "no build of flipzero has Burn's CUDA backend (Burn 0.22's links an LLVM that its build script downloads from outside the package registries); NVIDIA GPUs train through Vulkan: build with `make build-gpu` (--features wgpu) and set device = \"wgpu\"";

/// The compute device named by `train.device`, or why this build cannot use it. `cpu`
/// (flipzero's own CPU engine, [`crate::backend::cpu`]) keeps its tensors on Burn's Flex
/// device, like `flex`.
pub fn training_device(name: &str) -> Result<Device, &'static str> {
    if !device_name_is_valid(name) {
        return Err("cpu, flex, cuda, cuda:N or wgpu");
    }
    match name {
        "cpu" | "flex" => Ok(Device::flex()),
        #[cfg(feature = "wgpu")]
        "wgpu" => Ok(Device::wgpu(burn::tensor::DeviceKind::DefaultDevice)),
        n if n == "cuda" || n.starts_with("cuda:") => Err(NO_CUDA),
        #[cfg(not(feature = "wgpu"))]
        "wgpu" => {
            Err("wgpu needs a build with `--features wgpu` (cargo build --release --features wgpu)")
        }
        _ => Err("cpu, flex, cuda, cuda:N or wgpu"),
    }
}

/// Whether `name` is a device name (`cpu`, `flex`, `cuda`, `cuda:N`, `wgpu`), whether or
/// not this build has that device ([`training_device`] says).
pub fn device_name_is_valid(name: &str) -> bool {
    matches!(name, "cpu" | "flex" | "cuda" | "wgpu")
        || name
            .strip_prefix("cuda:")
            .is_some_and(|n| n.parse::<usize>().is_ok())
}

/// A `[train]` setting out of range, named (the config error of every table).
pub type TrainConfigError = selfplay::ConfigError;

impl TrainConfig {
    /// Checks every range.
    pub fn validate(&self) -> Result<(), TrainConfigError> {
        // The name only: whether this build has the device is checked where a run uses
        // it (training_device), so that a config naming a GPU stays readable by the
        // CPU-only builds of the same run's other roles.
        if !device_name_is_valid(&self.device) {
            return TrainConfigError::check(
                "train",
                "device",
                &self.device,
                false,
                "cpu, flex, cuda, cuda:N or wgpu",
            );
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
            ("ownership_loss_weight", self.ownership_loss_weight),
            ("reply_loss_weight", self.reply_loss_weight),
        ] {
            check(k, v, (0.0..=100.0).contains(&v), "0..=100")?;
        }
        let names: Vec<&str> = self.heads.iter().map(|h| h.name()).collect();
        let mut sorted = self.heads.clone();
        sorted.sort();
        sorted.dedup();
        check(
            "heads",
            format!("[{}]", names.join(", ")),
            sorted.len() == self.heads.len()
                && [Head::Policy, Head::Wdl, Head::Score]
                    .iter()
                    .all(|h| self.heads.contains(h)),
            "policy, wdl and score, each head once, and any of ownership, reply",
        )?;
        // Found here rather than after a generation of self-play: the CPU engine refuses
        // the reply head when it is built (`CpuTrainer::uncovered`).
        check(
            "heads",
            format!("[{}] with device = \"{}\"", names.join(", "), self.device),
            !(self.device == "cpu" && self.heads.contains(&Head::Reply)),
            "without reply on the CPU engine (device = \"cpu\"), which does not train it; set train.device = \"flex\" to train it with Burn",
        )?;
        check(
            "window_exponent",
            self.window_exponent,
            (0.0..=1.0).contains(&self.window_exponent),
            "0 (a fixed window) ..=1",
        )?;
        check(
            "surprise_weight",
            self.surprise_weight,
            (0.0..=1.0).contains(&self.surprise_weight),
            "0 (off) ..=1",
        )?;
        check(
            "window_scale",
            self.window_scale,
            (0.0..=10.0).contains(&self.window_scale),
            "0..=10",
        )?;
        check("window", self.window, self.window >= 1, "at least 1")?;
        check(
            "checkpoint_every",
            self.checkpoint_every,
            self.checkpoint_every >= 1,
            "at least 1",
        )?;
        check(
            "metrics_every",
            self.metrics_every,
            self.metrics_every <= 1_000_000,
            "0 (automatic) to 1000000",
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
        n.aux_heads = Head::ALL
            .into_iter()
            .filter(|h| !h.is_main() && self.heads.contains(h))
            .collect();
        n
    }

    /// The training window of a run that has produced `total` positions: `window`
    /// until then, growing as KataGo's power law after (with α = `window_exponent`,
    /// β = `window_scale`), never more than `total`. With α = 0.75 and β = 0.4, a
    /// 250,000-position window becomes 493,790 at 1,000,000 positions and 2,237,389 at
    /// 10,000,000: the window covers a shrinking share of an ever longer run, so old
    /// data from weak networks leaves it, but it grows so that training does not overfit
    /// the newest games.
    pub fn window_for(&self, total: u64) -> usize {
        let c = self.window as f64;
        let n = total as f64;
        let alpha = self.window_exponent;
        if alpha <= 0.0 || n <= c {
            return self.window;
        }
        let grown = c * (1.0 + self.window_scale * ((n / c).powf(alpha) - 1.0) / alpha);
        grown.min(n).round() as usize
    }

    /// Steps between rows of `metrics.csv` on this config's device
    /// ([`TrainConfig::metrics_every`]).
    pub fn metrics_interval(&self) -> u64 {
        match self.metrics_every {
            0 if matches!(self.device.as_str(), "cpu" | "flex") => 1,
            0 => 20,
            n => n,
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_grows_as_katagos_power_law() {
        let fixed = TrainConfig {
            window: 250_000,
            ..TrainConfig::default()
        };
        assert_eq!(fixed.window_for(10_000_000), 250_000);
        let grows = TrainConfig {
            window_exponent: 0.75,
            window_scale: 0.4,
            ..fixed
        };
        assert_eq!(grows.window_for(100_000), 250_000);
        assert_eq!(grows.window_for(250_000), 250_000);
        // 250,000 · (1 + 0.4 · (4^0.75 − 1) / 0.75) = 493,790.
        assert_eq!(grows.window_for(1_000_000), 493_790);
        // 250,000 · (1 + 0.4 · (40^0.75 − 1) / 0.75) = 2,237,389.
        assert_eq!(grows.window_for(10_000_000), 2_237_389);
        // Steeper than the run itself near the start: capped at what exists.
        let steep = TrainConfig {
            window: 100,
            window_exponent: 1.0,
            window_scale: 5.0,
            ..TrainConfig::default()
        };
        assert_eq!(steep.window_for(150), 150);
        assert!(grows.validate().is_ok());
        let bad = TrainConfig {
            window_exponent: 1.5,
            ..TrainConfig::default()
        };
        assert!(
            bad.validate()
                .unwrap_err()
                .to_string()
                .contains("window_exponent")
        );
    }
}
