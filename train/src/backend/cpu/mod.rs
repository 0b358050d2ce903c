//! flipzero's own CPU training engine: the network of [`crate::net`] trained with
//! hand-written forward and backward passes on the kernels of the fast path, because
//! Burn's Flex backend runs its convolutions as one small matrix product per sample and
//! trains at about a quarter of PyTorch's speed on the same CPU.
//!
//! - Activations are channel-last on the zero-bordered grid of [`Grid`], as in the fast
//!   path. 3×3 convolutions run by Winograd F(4×4, 3×3): forward, for the input
//!   gradient (the same convolution with its weights transposed and flipped) and for
//!   the weight gradient (summed in the Winograd domain, then brought back to the taps).
//!   F(4×4, 3×3) needs fewer products and moves less memory than F(2×2, 3×3), whose
//!   extra precision a gradient step does not need. 1×1 convolutions run by the direct
//!   kernel, their weight gradients by [`weight_gradient`] (the convolution tile with
//!   cells and channels swapped).
//! - Each layer is one parallel pass forward and one backward: a pass applies the
//!   previous layer's BatchNorm to its samples before convolving them and sums its own
//!   batch statistics while they are in cache (backward: finishes its BatchNorm's
//!   backward, then the weight and input gradients, then the previous BatchNorm's sums).
//! - BatchNorm uses batch statistics and updates its running statistics as Burn's does
//!   (momentum 0.1, biased variance), so a network trained here is the same
//!   [`crate::net::Net`] for export, inference and Burn.
//! - Work is split into tasks of [`TASK`] samples run on rayon's pool; sums over the batch
//!   are reduced in task order, so a run gives the same numbers whatever the thread count.
//! - AdamW and SGD with momentum follow Burn's formulas (including per-parameter gradient
//!   clipping), so the settings mean what they mean with the Burn backends.
//!
//! The gradients are checked against Burn's autodiff in this module's tests.
//!
//! [`weight_gradient`]: crate::kernels::weight_gradient

use engine::Game;

use crate::config::{OptimizerKind, TrainConfig};
use crate::data::Batch;
use crate::error::TrainError;
use crate::kernels::winograd::Grid;
use crate::kernels::{Kernel, LANES};
use crate::net::{NamedTensors, Net, NetConfig};
use layers::Builder;
use shapes::{Geometry, INPUT_STRIDE, SUB, TASK};
use state::{LayerTape, OptimSettings, OptimState, Tape, TaskScratch};

pub use state::CpuTrainer;

impl CpuTrainer {
    /// Takes the weights, running statistics and shape of `net` (any device), with a
    /// fresh optimizer state for the settings of `cfg`, on the fastest kernel this CPU
    /// supports.
    ///
    /// A network with a part this engine does not train (see [`CpuTrainer::uncovered`])
    /// is refused with [`TrainError::Unsupported`], which names the part.
    pub fn new(
        net: &Net,
        shape: &NetConfig,
        game: Game,
        cfg: &TrainConfig,
    ) -> Result<CpuTrainer, TrainError> {
        CpuTrainer::with_kernel(net, shape, game, cfg, Kernel::detect())
    }

    /// As [`CpuTrainer::new`], with a given kernel build (see [`Kernel::available`]; a
    /// `Kernel` exists only for a build this CPU runs).
    pub fn with_kernel(
        net: &Net,
        shape: &NetConfig,
        game: Game,
        cfg: &TrainConfig,
        kernel: Kernel,
    ) -> Result<CpuTrainer, TrainError> {
        let (width, height) = game.grid();
        let grid = Grid { width, height };
        let g = grid.cells();
        let interior: Vec<usize> = (0..height)
            .flat_map(|y| (0..width).map(move |x| grid.cell(x, y)))
            .collect();
        let task_cells = (0..TASK)
            .flat_map(|s| interior.iter().map(move |c| s * g + c))
            .collect();
        let runs = (0..SUB)
            .flat_map(|s| (0..height).map(move |y| (s * g + grid.cell(0, y), width)))
            .collect();
        let geo = Geometry {
            kernel,
            grid,
            g,
            area: width * height,
            interior,
            task_cells,
            runs,
        };
        let named = NamedTensors::of(net);
        let mut b = Builder::new(
            &named,
            net.stem.bn.epsilon as f32,
            net.stem.bn.momentum as f32,
        );
        let layers = b.layers(&shape.layout());
        let settings = OptimSettings {
            kind: cfg.optimizer,
            weight_decay: cfg.weight_decay,
            momentum: cfg.momentum as f32,
            clip: cfg.grad_clip_norm,
            weights: [
                cfg.policy_loss_weight,
                cfg.value_loss_weight,
                cfg.score_loss_weight,
                cfg.ownership_loss_weight,
            ],
        };
        let zeros = |v: &Vec<Vec<f32>>| v.iter().map(|p| vec![0.0; p.len()]).collect::<Vec<_>>();
        let optim = match cfg.optimizer {
            OptimizerKind::Adamw => OptimState::Adamw {
                m: zeros(&b.values),
                v: zeros(&b.values),
            },
            OptimizerKind::Sgd => OptimState::Sgd {
                velocity: zeros(&b.values),
            },
        };
        let trainer = CpuTrainer {
            game,
            net: shape.clone(),
            geo,
            grads: zeros(&b.values),
            names: b.names,
            values: b.values,
            layers,
            optim,
            time: 0,
            settings,
            tape: Tape::default(),
        };
        let gaps = trainer.uncovered(shape);
        if !gaps.is_empty() {
            return Err(TrainError::Unsupported(format!(
                "the CPU training engine cannot train this network: {}; set train.device = \"flex\" to train it with Burn",
                gaps.join(", ")
            )));
        }
        Ok(trainer)
    }

    /// The kernel build this trainer runs.
    pub fn kernel(&self) -> Kernel {
        self.geo.kernel
    }

    /// The trained tensors of `shape`'s description (`NetConfig::tensors`) that this
    /// trainer does not train, and those it trains that the description lacks: empty
    /// when it covers the network exactly. A layer added to the network and not to this
    /// engine shows up here instead of going silently untrained.
    pub fn uncovered(&self, shape: &NetConfig) -> Vec<String> {
        let described: Vec<String> = shape
            .tensors()
            .into_iter()
            .filter(|t| t.trained)
            .map(|t| t.name)
            .collect();
        let missing = described.iter().filter(|n| !self.names.contains(n));
        let extra = self.names.iter().filter(|n| !described.contains(n));
        missing
            .map(|n| format!("{n} (not trained by the CPU engine)"))
            .chain(extra.map(|n| format!("{n} (not in the network's description)")))
            .collect()
    }

    /// One training step on `batch` at learning rate `lr`: forward, backward, optimizer.
    /// Returns the loss and metrics in the order of [`crate::training::losses`].
    pub fn step(&mut self, batch: &Batch, lr: f64) -> [f32; 6] {
        let metrics = self.forward_backward(batch);
        self.update(lr);
        metrics
    }

    /// The gradients of the last [`CpuTrainer::step`] (or forward-backward), named and laid
    /// out as Burn's parameters (`stem.conv.weight` as `[c_out, c_in, k, k]`, Linear
    /// weights as `[in, out]`), for the checks against Burn.
    pub fn gradients(&self) -> Vec<(String, Vec<f32>)> {
        self.names
            .iter()
            .enumerate()
            .map(|(i, name)| (name.clone(), self.burn_layout(i, &self.grads[i])))
            .collect()
    }

    /// Sizes the tape for batches of `n`.
    fn prepare(&mut self, n: usize) {
        if self.tape.n == n {
            return;
        }
        let g = self.geo.g;
        let c = self.net.channels.next_multiple_of(LANES);
        let hp = self.net.head_channels.next_multiple_of(LANES);
        let qp = self.layers.policy_out.c_pad;
        let t = &mut self.tape;
        *t = Tape {
            n,
            ..Tape::default()
        };
        let cells = n * g;
        t.input = vec![0.0; cells * INPUT_STRIDE];
        for v in [&mut t.da, &mut t.da2, &mut t.dpre, &mut t.dz] {
            *v = vec![0.0; cells * c];
        }
        for v in [
            &mut t.pz,
            &mut t.p,
            &mut t.vz,
            &mut t.v,
            &mut t.dhead,
            &mut t.dzh,
        ] {
            *v = vec![0.0; cells * hp];
        }
        t.q = vec![0.0; cells * qp];
        t.dq = vec![0.0; cells * qp];
        if let Some(o) = &self.layers.ownership_out {
            t.oz = vec![0.0; cells * o.c_pad];
            t.doz = vec![0.0; cells * o.c_pad];
        }
        let l = &self.layers;
        t.tower = (0..l.tower_len())
            .map(|i| {
                let gpool = l.tower(i).2;
                LayerTape {
                    z: vec![0.0; cells * c],
                    a: vec![0.0; cells * c],
                    a2: gpool.map_or(Vec::new(), |_| vec![0.0; cells * c]),
                    gmean: gpool.map_or(Vec::new(), |d| vec![0.0; n * d.d_in]),
                    ..LayerTape::default()
                }
            })
            .collect();
        t.tasks = (0..n.div_ceil(TASK))
            .map(|_| TaskScratch::default())
            .collect();
    }

    /// Forward and backward on `batch`: fills the gradients, updates the BatchNorm
    /// running statistics, returns the loss and metrics.
    pub fn forward_backward(&mut self, batch: &Batch) -> [f32; 6] {
        let n = batch.size;
        assert!(n > 0, "empty batch");
        self.prepare(n);
        self.forward(batch);
        let (metrics, heads) = self.loss(batch);
        for g in &mut self.grads {
            g.fill(0.0);
        }
        self.backward(heads);
        metrics
    }
}

mod backward;
mod batchnorm;
mod forward;
mod layers;
mod losses;
mod optimizer;
mod shapes;
mod state;
#[cfg(test)]
mod tests;
