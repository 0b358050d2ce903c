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

use burn::prelude::*;
use engine::Game;
use rayon::prelude::*;

use crate::config::{OptimizerKind, TrainConfig};
use crate::data::{Batch, row_major};
use crate::error::TrainError;
use crate::infer::fast::transpose;
use crate::kernels::winograd::{self, Grid, Io, Tile, Winograd, convolve3x3};
use crate::kernels::{GradJob, Job, Kernel, LANES, Packed, convolve, weight_gradient};
use crate::net::PLANES;
use crate::net::{NamedTensors, Net, NetConfig};

/// Samples per parallel task.
const TASK: usize = 16;

/// The Winograd tiling of the 3×3 convolutions and their weight gradients.
const TILE: Tile = Tile::F4;

/// Samples per cache block of a weight gradient (its input and output gradient, or their
/// Winograd transforms, stay in L2 while every channel group streams over them).
const SUB: usize = 8;

/// Floats per cell of the encoded input: the planes, padded to whole vectors (zeros).
const INPUT_STRIDE: usize = PLANES.next_multiple_of(LANES);

/// A convolution without bias unless `bias` names one: weights packed `[tap][c_in][c_pad]`.
#[derive(Clone, Copy, Debug)]
struct Conv {
    k: usize,
    c_in: usize,
    c_out: usize,
    c_pad: usize,
    w: usize,
    bias: Option<usize>,
}

/// BatchNorm: learned scale and shift, running statistics.
#[derive(Clone, Debug)]
struct Bn {
    /// The conv-BN's name in the description (`stem`, `blocks.0.a`, …).
    name: String,
    c: usize,
    gamma: usize,
    beta: usize,
    mean: Vec<f32>,
    var: Vec<f32>,
    eps: f32,
    momentum: f32,
}

/// A dense layer, weights `[out][in]`.
#[derive(Clone, Copy, Debug)]
struct Dense {
    d_in: usize,
    d_out: usize,
    w: usize,
    b: usize,
}

#[derive(Clone, Debug)]
struct Block {
    a: Conv,
    a_bn: Bn,
    b: Conv,
    b_bn: Bn,
    gpool: Option<Dense>,
}

#[derive(Clone, Debug)]
struct Layers {
    stem: Conv,
    stem_bn: Bn,
    blocks: Vec<Block>,
    policy_conv: Conv,
    policy_bn: Bn,
    policy_out: Conv,
    pass_out: Dense,
    value_conv: Conv,
    value_bn: Bn,
    value_fc: Dense,
    wdl_out: Dense,
    score_out: Dense,
    /// The ownership head (1×1 convolution with bias, tanh), if the net has one.
    ownership_out: Option<Conv>,
}

/// Board geometry, shared read-only by the parallel tasks.
struct Geometry {
    kernel: Kernel,
    grid: Grid,
    /// Cells of one sample's bordered grid.
    g: usize,
    /// Board cells.
    area: usize,
    /// The board's cells in one sample's grid, row by row.
    interior: Vec<usize>,
    /// Board cells of [`TASK`] consecutive samples.
    task_cells: Vec<usize>,
    /// Runs of board cells (one per board row) of [`SUB`] consecutive samples.
    runs: Vec<(usize, usize)>,
}

/// Batch statistics of one BatchNorm.
#[derive(Clone, Debug, Default)]
struct Stats {
    mean: Vec<f32>,
    inv_std: Vec<f32>,
}

/// A prepared convolution: Winograd for 3×3, the direct kernel for 1×1.
enum Op {
    Winograd(Winograd),
    Direct(Packed),
}

/// Per-task scratch, kept between steps so that no step allocates or faults in pages.
#[derive(Default)]
struct TaskScratch {
    winograd: winograd::Scratch,
    /// This task's share of a weight gradient.
    partial: Vec<f32>,
}

/// One layer of the tower in the tape.
#[derive(Default)]
struct LayerTape {
    /// The convolution's output.
    z: Vec<f32>,
    /// Its batch statistics.
    stats: Stats,
    /// The BatchNorm's output (after the residual sum and ReLU).
    a: Vec<f32>,
    /// With global pooling after the layer: `a` plus the pooled bias, and the means.
    a2: Vec<f32>,
    gmean: Vec<f32>,
}

/// Activations of the forward pass and gradient buffers, sized for one batch size.
/// Only board cells are ever written, so the border cells stay zero between steps.
#[derive(Default)]
struct Tape {
    n: usize,
    input: Vec<f32>,
    /// The stem, then each block's two layers.
    tower: Vec<LayerTape>,
    pz: Vec<f32>,
    p_stats: Stats,
    p: Vec<f32>,
    pooled: Vec<f32>,
    q: Vec<f32>,
    logits: Vec<f32>,
    vz: Vec<f32>,
    v_stats: Stats,
    v: Vec<f32>,
    vm: Vec<f32>,
    hidden: Vec<f32>,
    wdl: Vec<f32>,
    score: Vec<f32>,
    /// The ownership head's convolution output (its stride) and its tanh per cell
    /// `[n][area]`; the gradient of the convolution output.
    oz: Vec<f32>,
    own: Vec<f32>,
    doz: Vec<f32>,
    // Gradients: tower stride.
    da: Vec<f32>,
    da2: Vec<f32>,
    dpre: Vec<f32>,
    dz: Vec<f32>,
    // Gradients: head stride.
    dhead: Vec<f32>,
    dzh: Vec<f32>,
    // Gradient: policy-plane stride.
    dq: Vec<f32>,
    tasks: Vec<TaskScratch>,
}

/// Optimizer state, per parameter.
#[derive(Clone, Debug, PartialEq)]
enum OptimState {
    Adamw { m: Vec<Vec<f32>>, v: Vec<Vec<f32>> },
    Sgd { velocity: Vec<Vec<f32>> },
}

/// The network, its optimizer state and the training buffers.
pub struct CpuTrainer {
    game: Game,
    net: NetConfig,
    geo: Geometry,
    names: Vec<String>,
    values: Vec<Vec<f32>>,
    grads: Vec<Vec<f32>>,
    layers: Layers,
    optim: OptimState,
    /// Optimizer steps taken.
    time: u64,
    settings: OptimSettings,
    tape: Tape,
}

#[derive(Clone, Copy, Debug)]
struct OptimSettings {
    kind: OptimizerKind,
    weight_decay: f32,
    momentum: f32,
    clip: f32,
    /// Loss weights: policy, win/draw/loss, score, ownership.
    weights: [f32; 4],
}

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
#[cfg(test)]
mod tests;

use batchnorm::*;
use forward::*;
use layers::*;
use losses::*;
