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

use burn::module::{Param, RunningState};
use burn::prelude::*;
use engine::Game;
use rayon::prelude::*;

use crate::config::{OptimizerKind, TrainConfig};
use crate::data::Batch;
use crate::infer::fast::{bias_or_zero, transpose, values};
use crate::kernels::winograd::{self, Grid, Io, Tile, Winograd, convolve3x3};
use crate::kernels::{GradJob, Job, Kernel, LANES, Packed, convolve, weight_gradient};
use crate::net::PLANES;
use crate::net::{ConvBn, Net, NetConfig};

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
    weights: [f32; 3],
}

impl CpuTrainer {
    /// Takes the weights, running statistics and shape of `net` (any device), with a
    /// fresh optimizer state for the settings of `cfg`, on the fastest kernel this CPU
    /// supports.
    pub fn new(net: &Net, shape: &NetConfig, game: Game, cfg: &TrainConfig) -> CpuTrainer {
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
    ) -> CpuTrainer {
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
        let mut b = Builder::default();
        let layers = b.layers(net);
        let settings = OptimSettings {
            kind: cfg.optimizer,
            weight_decay: cfg.weight_decay,
            momentum: cfg.momentum as f32,
            clip: cfg.grad_clip_norm,
            weights: [
                cfg.policy_loss_weight,
                cfg.value_loss_weight,
                cfg.score_loss_weight,
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
        CpuTrainer {
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
        }
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

    /// The network as Burn's module (weights and running statistics), on `device`.
    pub fn to_net(&self, device: &Device) -> Net {
        let mut net = self.net.init(device);
        let p1 = |i: usize, dims: [usize; 1]| {
            Param::from_tensor(Tensor::from_data(
                TensorData::new(self.burn_layout(i, &self.values[i]), dims),
                device,
            ))
        };
        let running = |v: &[f32]| {
            RunningState::new(Tensor::from_data(
                TensorData::new(v.to_vec(), [v.len()]),
                device,
            ))
        };
        let conv_w = |c: &Conv| {
            Param::from_tensor(Tensor::<4>::from_data(
                TensorData::new(
                    self.burn_layout(c.w, &self.values[c.w]),
                    [c.c_out, c.c_in, c.k, c.k],
                ),
                device,
            ))
        };
        let set_conv_bn = |cb: &mut ConvBn, c: &Conv, bn: &Bn| {
            cb.conv.weight = conv_w(c);
            cb.bn.gamma = p1(bn.gamma, [bn.c]);
            cb.bn.beta = p1(bn.beta, [bn.c]);
            cb.bn.running_mean = running(&bn.mean);
            cb.bn.running_var = running(&bn.var);
        };
        let linear = |l: &mut burn::nn::Linear, d: &Dense| {
            l.weight = Param::from_tensor(Tensor::from_data(
                TensorData::new(self.burn_layout(d.w, &self.values[d.w]), [d.d_in, d.d_out]),
                device,
            ));
            l.bias = Some(p1(d.b, [d.d_out]));
        };
        let l = &self.layers;
        set_conv_bn(&mut net.stem, &l.stem, &l.stem_bn);
        for (nb, b) in net.blocks.iter_mut().zip(&l.blocks) {
            set_conv_bn(&mut nb.a, &b.a, &b.a_bn);
            set_conv_bn(&mut nb.b, &b.b, &b.b_bn);
            if let (Some(conv), Some(d)) = (nb.gpool.as_mut(), &b.gpool) {
                conv.weight = Param::from_tensor(Tensor::from_data(
                    TensorData::new(self.values[d.w].clone(), [d.d_out, d.d_in, 1, 1]),
                    device,
                ));
                conv.bias = Some(p1(d.b, [d.d_out]));
            }
        }
        set_conv_bn(&mut net.policy_conv, &l.policy_conv, &l.policy_bn);
        net.policy_out.weight = conv_w(&l.policy_out);
        net.policy_out.bias = l.policy_out.bias.map(|b| p1(b, [l.policy_out.c_out]));
        linear(&mut net.pass_out, &l.pass_out);
        set_conv_bn(&mut net.value_conv, &l.value_conv, &l.value_bn);
        linear(&mut net.value_fc, &l.value_fc);
        linear(&mut net.wdl_out, &l.wdl_out);
        linear(&mut net.score_out, &l.score_out);
        net
    }

    /// Parameter `i`'s values (or gradient) in Burn's layout.
    fn burn_layout(&self, i: usize, data: &[f32]) -> Vec<f32> {
        let l = &self.layers;
        let mut convs = vec![l.stem, l.policy_conv, l.policy_out, l.value_conv];
        for b in &l.blocks {
            convs.extend([b.a, b.b]);
        }
        if let Some(c) = convs.iter().find(|c| c.w == i) {
            return unpack(c, data);
        }
        let dense = [l.pass_out, l.value_fc, l.wdl_out, l.score_out];
        if let Some(d) = dense.iter().find(|d| d.w == i) {
            // Burn's Linear stores [in, out].
            return transpose(data, d.d_out, d.d_in);
        }
        data.to_vec()
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

    fn forward(&mut self, batch: &Batch) {
        let n = batch.size;
        let CpuTrainer {
            geo,
            values,
            layers: l,
            tape: t,
            ..
        } = self;
        let (g, area) = (geo.g, geo.area);
        // Encode [plane][y][x] into the bordered channel-last input.
        t.input[..n * g * INPUT_STRIDE]
            .par_chunks_mut(g * INPUT_STRIDE)
            .zip(batch.inputs.par_chunks(PLANES * area))
            .for_each(|(x, planes)| {
                for (i, &cell) in geo.interior.iter().enumerate() {
                    let dst = &mut x[cell * INPUT_STRIDE..][..PLANES];
                    for (c, d) in dst.iter_mut().enumerate() {
                        *d = planes[c * area + i];
                    }
                }
            });
        // Every convolution's Winograd or packed weights, prepared in parallel.
        let convs: Vec<&Conv> = (0..l.tower_len())
            .map(|i| l.tower(i).0)
            .chain([&l.policy_conv, &l.policy_out, &l.value_conv])
            .collect();
        let ops: Vec<Op> = convs.par_iter().map(|c| prepared(values, c)).collect();
        let heads = l.tower_len();
        let head = |k: usize| &ops[heads + k];
        // Each pass convolves one layer and sums its batch statistics while its output is
        // in cache; the next pass applies the BatchNorm (ReLU, residual, global pooling)
        // to its own samples just before it convolves them.
        let parts = geo.forward_pass(
            &ops[0],
            Src::Plain(&t.input, INPUT_STRIDE),
            &mut t.tower[0].z,
            l.stem_bn.c,
            n,
            &mut t.tasks,
        );
        t.tower[0].stats = l.stem_bn.finish(&parts, n * area);
        let last = t.tower.len() - 1;
        for (i, op) in ops.iter().enumerate().take(last + 1).skip(1) {
            let (conv, _, _) = l.tower(i);
            let parts = {
                let (before, rest) = t.tower.split_at_mut(i - 1);
                let (prev, cur) = rest.split_at_mut(1);
                let src = tower_src(l, values, i - 1, &mut prev[0], before);
                geo.forward_pass(op, src, &mut cur[0].z, conv.c_out, n, &mut t.tasks)
            };
            t.tower[i].stats = l.tower_bn_mut(i).finish(&parts, n * area);
        }
        // The policy head's 1×1 convolution applies the tower's last BatchNorm.
        let parts = {
            let (before, rest) = t.tower.split_at_mut(last);
            let src = tower_src(l, values, last, &mut rest[0], before);
            let c = &l.policy_conv;
            geo.forward_pass(head(0), src, &mut t.pz, c.c_out, n, &mut t.tasks)
        };
        t.p_stats = l.policy_bn.finish(&parts, n * area);
        let trunk: &[f32] = &t.tower[last].a;
        let cp = l.stem.c_pad;
        let hp = l.policy_conv.c_pad;
        let (scale, shift) = l.policy_bn.affine(values, &t.p_stats);
        geo.bn_apply(&t.pz, hp, (&scale, &shift), None, &mut t.p, n);
        t.pooled = geo.board_means(&t.p, hp, l.policy_conv.c_out, n);
        geo.forward_pass(head(1), Src::Plain(&t.p, hp), &mut t.q, 0, n, &mut t.tasks);
        let pass = dense_forward(values, &l.pass_out, &t.pooled, false);
        let slots = l.policy_out.c_out;
        let qp = l.policy_out.c_pad;
        let size = slots * area + 1;
        t.logits.resize(n * size, 0.0);
        t.logits
            .par_chunks_mut(size)
            .zip(t.q.par_chunks(g * qp))
            .zip(&pass)
            .for_each(|((logits, q), &pass)| {
                for (slot, row) in logits.chunks_mut(area).take(slots).enumerate() {
                    for (l, &cell) in row.iter_mut().zip(&geo.interior) {
                        *l = q[cell * qp + slot];
                    }
                }
                logits[size - 1] = pass;
            });
        debug_assert_eq!(t.logits.len(), n * size);
        // Value head.
        let c = &l.value_conv;
        let parts = geo.forward_pass(
            head(2),
            Src::Plain(trunk, cp),
            &mut t.vz,
            c.c_out,
            n,
            &mut t.tasks,
        );
        t.v_stats = l.value_bn.finish(&parts, n * area);
        let (scale, shift) = l.value_bn.affine(values, &t.v_stats);
        geo.bn_apply(&t.vz, hp, (&scale, &shift), None, &mut t.v, n);
        t.vm = geo.board_means(&t.v, hp, l.value_conv.c_out, n);
        t.hidden = dense_forward(values, &l.value_fc, &t.vm, true);
        t.wdl = dense_forward(values, &l.wdl_out, &t.hidden, false);
        t.score = dense_forward(values, &l.score_out, &t.hidden, false)
            .iter()
            .map(|u| u.tanh())
            .collect();
    }

    /// Losses and metrics of the forward pass, and the gradients of the weighted loss
    /// with respect to the policy logits, the WDL logits and the score's pre-activation.
    fn loss(&self, b: &Batch) -> ([f32; 6], HeadGrads) {
        let t = &self.tape;
        let n = b.size;
        let size = self.game.policy_size();
        assert_eq!(t.logits.len(), n * size, "policy size of the game");
        let [wp, wv, ws] = self.settings.weights;
        let weight_sum = b.policy_weight.iter().sum::<f32>().max(1.0);
        let mut dlogits = vec![0.0; n * size];
        // Per sample in parallel: (weighted loss, entropy, hit, counted), summed in order.
        let rows: Vec<(f32, f32, bool, bool)> = dlogits
            .par_chunks_mut(size)
            .enumerate()
            .map(|(s, dlogits)| {
                let logits = &t.logits[s * size..][..size];
                let legal = &b.legal[s * size..][..size];
                let target = &b.policy[s * size..][..size];
                // Illegal moves get a large negative logit, as in `training::losses`.
                let z: Vec<f32> = logits
                    .iter()
                    .zip(legal)
                    .map(|(l, m)| l + (m - 1.0) * 1.0e4)
                    .collect();
                let max = z.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
                // Illegal moves' terms are exactly 0 (their exponentials underflow): they
                // are skipped, as glibc's expf takes a slow path on underflow.
                let sum: f32 = z
                    .iter()
                    .zip(legal)
                    .filter(|&(_, &m)| m > 0.0)
                    .map(|(v, _)| (v - max).exp())
                    .sum();
                let lse = max + sum.ln();
                let tsum: f32 = target.iter().sum();
                let mut row_loss = 0.0f32;
                let mut row_entropy = 0.0f32;
                let scale = wp * b.policy_weight[s] / weight_sum;
                for j in 0..size {
                    let logp = z[j] - lse;
                    let p = if legal[j] > 0.0 { logp.exp() } else { 0.0 };
                    row_loss -= target[j] * logp;
                    row_entropy -= p * logp * legal[j];
                    dlogits[j] = scale * (p * tsum - target[j]);
                }
                let argmax = |v: &[f32]| {
                    v.iter()
                        .enumerate()
                        .fold((0, f32::NEG_INFINITY), |(bi, bv), (i, &x)| {
                            if x > bv { (i, x) } else { (bi, bv) }
                        })
                        .0
                };
                let counted = b.policy_weight[s] > 0.0;
                let hit = counted && argmax(&z) == argmax(target);
                (row_loss * b.policy_weight[s], row_entropy, hit, counted)
            })
            .collect();
        let (mut policy_loss, mut entropy) = (0.0f64, 0.0f64);
        let (mut hits, mut count) = (0.0f32, 0.0f32);
        for &(loss, ent, hit, counted) in &rows {
            policy_loss += loss as f64;
            entropy += ent as f64;
            hits += f32::from(u8::from(hit));
            count += f32::from(u8::from(counted));
        }
        let policy_loss = (policy_loss / weight_sum as f64) as f32;
        let mut dwdl = vec![0.0; n * 3];
        let mut value_loss = 0.0f64;
        let mut dscore = vec![0.0; n];
        let mut score_loss = 0.0f64;
        for s in 0..n {
            let z = &t.wdl[s * 3..][..3];
            let target = &b.wdl[s * 3..][..3];
            let max = z.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
            let lse = max + z.iter().map(|v| (v - max).exp()).sum::<f32>().ln();
            let tsum: f32 = target.iter().sum();
            for j in 0..3 {
                let logp = z[j] - lse;
                value_loss -= (target[j] * logp) as f64;
                dwdl[s * 3 + j] = wv / n as f32 * (logp.exp() * tsum - target[j]);
            }
            let (y, want) = (t.score[s], b.score[s]);
            score_loss += ((y - want) * (y - want)) as f64;
            dscore[s] = ws / n as f32 * 2.0 * (y - want) * (1.0 - y * y);
        }
        let value_loss = (value_loss / n as f64) as f32;
        let score_loss = (score_loss / n as f64) as f32;
        let loss = wp * policy_loss + wv * value_loss + ws * score_loss;
        let metrics = [
            loss,
            policy_loss,
            value_loss,
            score_loss,
            (entropy / n as f64) as f32,
            if count > 0.0 { hits / count } else { 0.0 },
        ];
        (
            metrics,
            HeadGrads {
                logits: dlogits,
                wdl: dwdl,
                score: dscore,
            },
        )
    }

    fn backward(&mut self, d: HeadGrads) {
        let CpuTrainer {
            geo,
            values,
            grads,
            layers: l,
            tape: t,
            ..
        } = self;
        let n = t.n;
        let (g, area) = (geo.g, geo.area);
        let last = t.tower.len() - 1;
        let cp = l.stem.c_pad;
        // The input-gradient convolutions (all but the stem's), prepared in parallel.
        let convs: Vec<&Conv> = (1..=last)
            .map(|i| l.tower(i).0)
            .chain([&l.policy_conv, &l.policy_out, &l.value_conv])
            .collect();
        let ops: Vec<Op> = convs.par_iter().map(|c| transposed(values, c)).collect();
        let head = |k: usize| &ops[last + k];
        // Value head: dense layers, then the board mean, BatchNorm and 1×1 convolution.
        let dh1 = dense_backward(values, grads, &l.wdl_out, &t.hidden, &d.wdl);
        let dh2 = dense_backward(values, grads, &l.score_out, &t.hidden, &d.score);
        let dhidden: Vec<f32> = dh1
            .iter()
            .zip(&dh2)
            .zip(&t.hidden)
            .map(|((a, b), h)| if *h > 0.0 { a + b } else { 0.0 })
            .collect();
        let dvm = dense_backward(values, grads, &l.value_fc, &t.vm, &dhidden);
        let hp = l.value_conv.c_pad;
        geo.broadcast_set(
            &mut t.dhead,
            hp,
            &dvm,
            l.value_conv.c_out,
            1.0 / area as f32,
            n,
        );
        let parts = geo.bn_reduce(&t.v_stats, &t.vz, &t.v, &t.dhead, l.value_bn.c, n);
        let k = l
            .value_bn
            .gradients(values, grads, &t.v_stats, &parts, n * area);
        let dz = Dz::Bn {
            grad: k.on(&t.vz, &t.v, &t.dhead),
            dz: &mut t.dzh,
            dpre: None,
        };
        let trunk = (&t.tower[last].a[..], cp);
        geo.backward_pass(
            grads,
            &l.value_conv,
            trunk,
            dz,
            Some(InputGrad::new(head(2), &mut t.da, None)),
            None,
            n,
            &mut t.tasks,
        );
        // Policy head: cell logits and the pass logit.
        let slots = l.policy_out.c_out;
        let qp = l.policy_out.c_pad;
        let size = slots * area + 1;
        // Scatter the cell logits' gradients to the planes; the bias gradient sums them
        // per sample, then over the batch in order.
        let sums: Vec<Vec<f32>> = t.dq[..n * g * qp]
            .par_chunks_mut(g * qp)
            .zip(d.logits.par_chunks(size))
            .map(|(dq, dl)| {
                let mut db = vec![0.0; slots];
                for (slot, db) in db.iter_mut().enumerate() {
                    for (i, &cell) in geo.interior.iter().enumerate() {
                        let v = dl[slot * area + i];
                        dq[cell * qp + slot] = v;
                        *db += v;
                    }
                }
                db
            })
            .collect();
        let mut dbias = vec![0.0; slots];
        for db in &sums {
            dbias.iter_mut().zip(db).for_each(|(a, b)| *a += b);
        }
        if let Some(b) = l.policy_out.bias {
            grads[b].iter_mut().zip(&dbias).for_each(|(a, b)| *a += b);
        }
        let hp = l.policy_conv.c_pad;
        geo.backward_pass(
            grads,
            &l.policy_out,
            (&t.p, hp),
            Dz::Given(&t.dq, qp),
            Some(InputGrad::new(head(1), &mut t.dhead, None)),
            None,
            n,
            &mut t.tasks,
        );
        let dpass: Vec<f32> = (0..n).map(|s| d.logits[s * size + size - 1]).collect();
        let dpooled = dense_backward(values, grads, &l.pass_out, &t.pooled, &dpass);
        geo.broadcast_add(
            &mut t.dhead,
            hp,
            &dpooled,
            l.policy_conv.c_out,
            1.0 / area as f32,
            n,
        );
        let parts = geo.bn_reduce(&t.p_stats, &t.pz, &t.p, &t.dhead, l.policy_bn.c, n);
        let k = l
            .policy_bn
            .gradients(values, grads, &t.p_stats, &parts, n * area);
        // The trunk's gradient (value head's plus policy head's) is summed while the
        // tower's last BatchNorm reduces it.
        let parts = {
            let lt = &t.tower[last];
            geo.backward_pass(
                grads,
                &l.policy_conv,
                trunk,
                Dz::Bn {
                    grad: k.on(&t.pz, &t.p, &t.dhead),
                    dz: &mut t.dzh,
                    dpre: None,
                },
                Some(InputGrad::new(head(0), &mut t.da2, Some(&t.da))),
                Some(Reduce {
                    stats: &lt.stats,
                    z: &lt.z,
                    a: &lt.a,
                    c: l.tower(last).1.c,
                }),
                n,
                &mut t.tasks,
            )
        };
        std::mem::swap(&mut t.da, &mut t.da2);
        // The tower, last layer first. Each pass finishes a layer's BatchNorm backward
        // (`da` holds the gradient of its output), accumulates its weight gradient, writes
        // the gradient of its input (plus the residual's gradient at a block's input)
        // and reduces the previous layer's BatchNorm sums on it while it is in cache.
        let mut parts = parts;
        for i in (0..=last).rev() {
            let (conv, bn, _) = l.tower(i);
            let lt = &t.tower[i];
            let k = bn.gradients(values, grads, &lt.stats, &parts, n * area);
            let input = if i == 0 {
                (&t.input[..], INPUT_STRIDE)
            } else {
                let prev = &t.tower[i - 1];
                let h = if prev.a2.is_empty() {
                    &prev.a
                } else {
                    &prev.a2
                };
                (&h[..], cp)
            };
            // A block's second layer (even i ≥ 2) sends its gradient to the block's input
            // through the residual too; the block's first layer (odd i) adds it there.
            let (dpre, residual) = if ends_block(i) {
                (Some(&mut t.dpre[..]), None)
            } else if i % 2 == 1 {
                (None, Some(&t.dpre[..]))
            } else {
                (None, None)
            };
            let dz = Dz::Bn {
                grad: k.on(&lt.z, &lt.a, &t.da),
                dz: &mut t.dz,
                dpre,
            };
            let gpool_before = i >= 1 && l.tower(i - 1).2.is_some();
            let reduce = (i >= 1 && !gpool_before).then(|| {
                let prev = &t.tower[i - 1];
                Reduce {
                    stats: &prev.stats,
                    z: &prev.z,
                    a: &prev.a,
                    c: l.tower(i - 1).1.c,
                }
            });
            let dx = (i >= 1).then(|| InputGrad::new(&ops[i - 1], &mut t.da2, residual));
            parts = geo.backward_pass(grads, conv, input, dz, dx, reduce, n, &mut t.tasks);
            if i == 0 {
                break;
            }
            std::mem::swap(&mut t.da, &mut t.da2);
            if let Some(dg) = l.tower(i - 1).2 {
                // Global pooling: the bias added to every cell came from the board means
                // of the previous layer's output.
                let prev = &t.tower[i - 1];
                let sums = geo.board_means(&t.da, cp, dg.d_out, n);
                // board_means divides by the area; the bias gradient is the plain sum.
                let du: Vec<f32> = sums.iter().map(|v| v * area as f32).collect();
                let dm = dense_backward(values, grads, dg, &prev.gmean, &du);
                geo.broadcast_add(&mut t.da, cp, &dm, dg.d_in, 1.0 / area as f32, n);
                parts = geo.bn_reduce(&prev.stats, &prev.z, &prev.a, &t.da, dg.d_in, n);
            }
        }
    }

    /// Applies the optimizer to the gradients.
    fn update(&mut self, lr: f64) {
        self.time += 1;
        let s = self.settings;
        let lr = lr as f32;
        let time = self.time.min(i32::MAX as u64) as i32;
        // Each parameter on its own: in parallel over the parameters.
        let clip = |g: &mut [f32]| {
            if s.clip > 0.0 {
                let norm = g
                    .iter()
                    .map(|v| (*v as f64) * (*v as f64))
                    .sum::<f64>()
                    .sqrt() as f32;
                let coef = (s.clip / (norm + f32::MIN_POSITIVE)).min(1.0);
                if coef < 1.0 {
                    g.iter_mut().for_each(|v| *v *= coef);
                }
            }
        };
        let params = self.values.par_iter_mut().zip(self.grads.par_iter_mut());
        match &mut self.optim {
            OptimState::Adamw { m, v } => {
                // Burn's AdamW: β = (0.9, 0.999), ε = 1e-5, bias correction, decoupled
                // weight decay.
                let (b1, b2, eps) = (0.9f32, 0.999f32, 1e-5f32);
                let (c1, c2) = (1.0 - b1.powi(time), 1.0 - b2.powi(time));
                let decay = 1.0 - lr * s.weight_decay;
                params
                    .zip(m.par_iter_mut().zip(v.par_iter_mut()))
                    .for_each(|((w, g), (m, v))| {
                        clip(g);
                        for ((w, g), (m, v)) in w
                            .iter_mut()
                            .zip(g.iter())
                            .zip(m.iter_mut().zip(v.iter_mut()))
                        {
                            *m = b1 * *m + (1.0 - b1) * g;
                            *v = b2 * *v + (1.0 - b2) * g * g;
                            let delta = (*m / c1) / ((*v / c2).sqrt() + eps);
                            *w = *w * decay - lr * delta;
                        }
                    });
            }
            OptimState::Sgd { velocity } => {
                // Burn's SGD: L2 weight decay into the gradient, momentum with dampening
                // 0.1 (the first step takes the gradient as it is).
                let first = time == 1;
                params.zip(velocity.par_iter_mut()).for_each(|((w, g), u)| {
                    clip(g);
                    for ((w, g), u) in w.iter_mut().zip(g.iter()).zip(u.iter_mut()) {
                        let g = g + s.weight_decay * *w;
                        *u = if first { g } else { 0.9 * g + s.momentum * *u };
                        *w -= lr * *u;
                    }
                });
            }
        }
    }

    /// The optimizer state as bytes (see [`CpuTrainer::load_optimizer`]).
    pub fn optimizer_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(OPTIM_MAGIC);
        let (kind, bufs): (u8, Vec<&Vec<f32>>) = match &self.optim {
            OptimState::Adamw { m, v } => (0, m.iter().chain(v).collect()),
            OptimState::Sgd { velocity } => (1, velocity.iter().collect()),
        };
        out.push(kind);
        out.extend_from_slice(&self.time.to_le_bytes());
        out.extend_from_slice(&(bufs.len() as u64).to_le_bytes());
        for b in bufs {
            out.extend_from_slice(&(b.len() as u64).to_le_bytes());
            for v in b {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
        let hash = fnv1a(&out);
        out.extend_from_slice(&hash.to_le_bytes());
        out
    }

    /// Restores an optimizer state written by [`CpuTrainer::optimizer_bytes`]; a corrupt
    /// state, or one of another optimizer or network shape, is an error saying which.
    pub fn load_optimizer(&mut self, bytes: &[u8]) -> Result<(), String> {
        let body_len = bytes
            .len()
            .checked_sub(8)
            .filter(|&l| l >= OPTIM_MAGIC.len() + 17)
            .ok_or("truncated optimizer state")?;
        let (body, hash) = bytes.split_at(body_len);
        if !body.starts_with(OPTIM_MAGIC) {
            return Err("not a flipzero optimizer state".into());
        }
        if fnv1a(body).to_le_bytes() != hash {
            return Err("optimizer state checksum mismatch (corrupt file)".into());
        }
        let mut r = &body[OPTIM_MAGIC.len()..];
        let mut take = |n: usize| -> Result<&[u8], String> {
            if r.len() < n {
                return Err("truncated optimizer state".into());
            }
            let (a, b) = r.split_at(n);
            r = b;
            Ok(a)
        };
        let kind = take(1)?[0];
        let u64_at = |b: &[u8]| u64::from_le_bytes(b.try_into().expect("8 bytes"));
        let time = u64_at(take(8)?);
        let count = u64_at(take(8)?) as usize;
        let params = self.values.len();
        let (want_kind, want_count) = match self.settings.kind {
            OptimizerKind::Adamw => (0, 2 * params),
            OptimizerKind::Sgd => (1, params),
        };
        if kind != want_kind {
            return Err(format!(
                "optimizer state of {} but this run uses {:?}",
                if kind == 0 { "adamw" } else { "sgd" },
                self.settings.kind
            ));
        }
        if count != want_count {
            return Err(format!(
                "optimizer state for {count} tensors, this network needs {want_count}"
            ));
        }
        let mut bufs = Vec::with_capacity(count);
        for k in 0..count {
            let len = u64_at(take(8)?) as usize;
            let want = self.values[k % params].len();
            if len != want {
                return Err(format!(
                    "optimizer state tensor {k} has {len} values, this network needs {want}"
                ));
            }
            let raw = take(len.checked_mul(4).ok_or("bad length")?)?;
            bufs.push(
                raw.chunks_exact(4)
                    .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")))
                    .collect::<Vec<f32>>(),
            );
        }
        self.time = time;
        self.optim = match kind {
            0 => {
                let v = bufs.split_off(params);
                OptimState::Adamw { m: bufs, v }
            }
            _ => OptimState::Sgd { velocity: bufs },
        };
        Ok(())
    }
}

const OPTIM_MAGIC: &[u8] = b"flipzero-optimizer-v1\n";

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Gradients of the weighted loss with respect to the heads' outputs.
struct HeadGrads {
    logits: Vec<f32>,
    wdl: Vec<f32>,
    /// With respect to the score before its tanh.
    score: Vec<f32>,
}

/// Collects the parameters of a Burn network in a fixed order.
#[derive(Default)]
struct Builder {
    names: Vec<String>,
    values: Vec<Vec<f32>>,
}

impl Builder {
    fn add(&mut self, name: String, v: Vec<f32>) -> usize {
        self.names.push(name);
        self.values.push(v);
        self.values.len() - 1
    }

    fn conv(&mut self, name: &str, conv: &burn::nn::conv::Conv2d) -> Conv {
        let [c_out, c_in, k, _] = conv.weight.val().dims();
        let zero = vec![0.0; c_out];
        let packed = Packed::new(c_out, c_in, k, &values(conv.weight.val()), &zero);
        let c_pad = packed.c_pad();
        let w = self.add(format!("{name}.weight"), packed.into_weights());
        let bias = conv
            .bias
            .as_ref()
            .map(|b| self.add(format!("{name}.bias"), values(b.val())));
        Conv {
            k,
            c_in,
            c_out,
            c_pad,
            w,
            bias,
        }
    }

    fn bn(&mut self, name: &str, bn: &burn::nn::BatchNorm) -> Bn {
        let gamma = self.add(format!("{name}.gamma"), values(bn.gamma.val()));
        let beta = self.add(format!("{name}.beta"), values(bn.beta.val()));
        Bn {
            c: self.values[gamma].len(),
            gamma,
            beta,
            mean: values(bn.running_mean.value()),
            var: values(bn.running_var.value()),
            eps: bn.epsilon as f32,
            momentum: bn.momentum as f32,
        }
    }

    fn conv_bn(&mut self, name: &str, cb: &ConvBn) -> (Conv, Bn) {
        (
            self.conv(&format!("{name}.conv"), &cb.conv),
            self.bn(&format!("{name}.bn"), &cb.bn),
        )
    }

    fn linear(&mut self, name: &str, l: &burn::nn::Linear) -> Dense {
        // Burn stores Linear weights as [in, out]; the engine as [out][in].
        let [d_in, d_out] = l.weight.val().dims();
        let w = transpose(&values(l.weight.val()), d_in, d_out);
        let w = self.add(format!("{name}.weight"), w);
        let b = self.add(format!("{name}.bias"), bias_or_zero(&l.bias, d_out));
        Dense { d_in, d_out, w, b }
    }

    fn layers(&mut self, net: &Net) -> Layers {
        let (stem, stem_bn) = self.conv_bn("stem", &net.stem);
        let blocks = net
            .blocks
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let (a, a_bn) = self.conv_bn(&format!("blocks.{i}.a"), &b.a);
                let (bc, b_bn) = self.conv_bn(&format!("blocks.{i}.b"), &b.b);
                let gpool = b.gpool.as_ref().map(|conv| {
                    let [d_out, d_in, _, _] = conv.weight.val().dims();
                    let w = self.add(
                        format!("blocks.{i}.gpool.weight"),
                        values(conv.weight.val()),
                    );
                    let bias = bias_or_zero(&conv.bias, d_out);
                    let b = self.add(format!("blocks.{i}.gpool.bias"), bias);
                    Dense { d_in, d_out, w, b }
                });
                Block {
                    a,
                    a_bn,
                    b: bc,
                    b_bn,
                    gpool,
                }
            })
            .collect();
        let (policy_conv, policy_bn) = self.conv_bn("policy_conv", &net.policy_conv);
        let policy_out = self.conv("policy_out", &net.policy_out);
        let pass_out = self.linear("pass_out", &net.pass_out);
        let (value_conv, value_bn) = self.conv_bn("value_conv", &net.value_conv);
        let value_fc = self.linear("value_fc", &net.value_fc);
        let wdl_out = self.linear("wdl_out", &net.wdl_out);
        let score_out = self.linear("score_out", &net.score_out);
        Layers {
            stem,
            stem_bn,
            blocks,
            policy_conv,
            policy_bn,
            policy_out,
            pass_out,
            value_conv,
            value_bn,
            value_fc,
            wdl_out,
            score_out,
        }
    }
}

/// Packed weights `[tap][c_in][c_pad]` back to PyTorch's `[c_out][c_in][k][k]`.
fn unpack(c: &Conv, data: &[f32]) -> Vec<f32> {
    let taps = c.k * c.k;
    let mut w = vec![0.0; c.c_out * c.c_in * taps];
    for o in 0..c.c_out {
        for i in 0..c.c_in {
            for t in 0..taps {
                w[(o * c.c_in + i) * taps + t] = data[(t * c.c_in + i) * c.c_pad + o];
            }
        }
    }
    w
}

/// The forward convolution of `c` with the current weights.
fn prepared(values: &[Vec<f32>], c: &Conv) -> Op {
    let mut bias = vec![0.0; c.c_pad];
    if let Some(b) = c.bias {
        bias[..c.c_out].copy_from_slice(&values[b]);
    }
    let packed = Packed::from_packed(c.c_in, c.c_out, c.k * c.k, values[c.w].clone(), bias);
    if c.k == 3 {
        Op::Winograd(Winograd::with_tile(&packed, TILE))
    } else {
        Op::Direct(packed)
    }
}

/// The convolution that gives `c`'s input gradient from its output gradient: weights
/// transposed (`c_out` → `c_in`) and taps reversed, no bias.
fn transposed(values: &[Vec<f32>], c: &Conv) -> Op {
    let taps = c.k * c.k;
    let c_pad = c.c_in.next_multiple_of(LANES);
    let w = &values[c.w];
    let mut t = vec![0.0; taps * c.c_out * c_pad];
    for tap in 0..taps {
        for o in 0..c.c_out {
            for i in 0..c.c_in {
                t[(tap * c.c_out + o) * c_pad + i] =
                    w[((taps - 1 - tap) * c.c_in + i) * c.c_pad + o];
            }
        }
    }
    let packed = Packed::from_packed(c.c_out, c.c_in, taps, t, vec![0.0; c_pad]);
    if c.k == 3 {
        Op::Winograd(Winograd::with_tile(&packed, TILE))
    } else {
        Op::Direct(packed)
    }
}

/// `x` `[n][d_in]` through a dense layer: `[n][d_out]`.
fn dense_forward(values: &[Vec<f32>], d: &Dense, x: &[f32], relu: bool) -> Vec<f32> {
    let (w, b) = (&values[d.w], &values[d.b]);
    x.chunks(d.d_in)
        .flat_map(|row| {
            w.chunks(d.d_in).zip(b).map(move |(w, b)| {
                let y = b + w.iter().zip(row).map(|(a, b)| a * b).sum::<f32>();
                if relu { y.max(0.0) } else { y }
            })
        })
        .collect()
}

/// Accumulates a dense layer's weight and bias gradients from its input `x` and output
/// gradient `dy`; returns the input gradient.
fn dense_backward(
    values: &[Vec<f32>],
    grads: &mut [Vec<f32>],
    d: &Dense,
    x: &[f32],
    dy: &[f32],
) -> Vec<f32> {
    let n = dy.len() / d.d_out;
    let w = &values[d.w];
    let mut dx = vec![0.0; n * d.d_in];
    let [dw, db] = grads
        .get_disjoint_mut([d.w, d.b])
        .expect("distinct parameters");
    for s in 0..n {
        let xs = &x[s * d.d_in..][..d.d_in];
        let dxs = &mut dx[s * d.d_in..][..d.d_in];
        for o in 0..d.d_out {
            let g = dy[s * d.d_out + o];
            if g == 0.0 {
                continue;
            }
            db[o] += g;
            let wo = &w[o * d.d_in..][..d.d_in];
            let dwo = &mut dw[o * d.d_in..][..d.d_in];
            for i in 0..d.d_in {
                dwo[i] += g * xs[i];
                dxs[i] += g * wo[i];
            }
        }
    }
    dx
}

/// The input of a forward pass.
enum Src<'a> {
    /// Activations as they are, `.1` floats per cell.
    Plain(&'a [f32], usize),
    /// A layer's convolution output `z`, through its BatchNorm (`scale`, `shift`), plus
    /// `residual`, ReLU: written to `out` sample by sample, then, with global pooling,
    /// plus the pooled bias into `gpool.h2`.
    Bn {
        z: &'a [f32],
        stride: usize,
        scale: Vec<f32>,
        shift: Vec<f32>,
        residual: Option<&'a [f32]>,
        out: &'a mut [f32],
        gpool: Option<Gpool<'a>>,
    },
}

/// A global-pooling bias: `h2 = h + dense(board mean of h)`, the means kept in `gmean`.
struct Gpool<'a> {
    dense: &'a Dense,
    values: &'a [Vec<f32>],
    gmean: &'a mut [f32],
    h2: &'a mut [f32],
}

/// The output gradient of a backward pass.
enum Dz<'a> {
    /// Given as it is, `.1` floats per cell.
    Given(&'a [f32], usize),
    /// The backward of a BatchNorm with ReLU, written to `dz` sample by sample, and the
    /// gradient before the BatchNorm's residual sum to `dpre` if given.
    Bn {
        grad: BnGrad<'a>,
        dz: &'a mut [f32],
        dpre: Option<&'a mut [f32]>,
    },
}

/// The input gradient of a backward pass: `op` (the convolution with its weights
/// transposed and flipped) on the output gradient, plus `residual`, into `dx`.
struct InputGrad<'a> {
    op: &'a Op,
    dx: &'a mut [f32],
    residual: Option<&'a [f32]>,
}

impl<'a> InputGrad<'a> {
    fn new(op: &'a Op, dx: &'a mut [f32], residual: Option<&'a [f32]>) -> Self {
        InputGrad { op, dx, residual }
    }
}

/// A BatchNorm whose backward sums a backward pass computes on the input gradient it
/// writes.
struct Reduce<'a> {
    stats: &'a Stats,
    z: &'a [f32],
    a: &'a [f32],
    c: usize,
}

/// Per-task partial sums over the batch, per channel, in f64: reduced in task order.
type Partial = (Vec<f64>, Vec<f64>);

/// The coefficients of a BatchNorm's backward: `dz = coef · (g − k1 − x̂ · k2)` with
/// `g` the gradient of its output through the ReLU and `x̂ = z · inv + centre`.
struct BnCoefs {
    coef: Vec<f32>,
    k1: Vec<f32>,
    k2: Vec<f32>,
    inv: Vec<f32>,
    centre: Vec<f32>,
}

impl BnCoefs {
    /// The backward of the BatchNorm whose input was `z`, output `a` and output
    /// gradient `d_out`.
    fn on<'a>(&'a self, z: &'a [f32], a: &'a [f32], d_out: &'a [f32]) -> BnGrad<'a> {
        BnGrad {
            k: self,
            z,
            a,
            d_out,
        }
    }
}

/// [`BnCoefs`] with the buffers they apply to.
struct BnGrad<'a> {
    k: &'a BnCoefs,
    z: &'a [f32],
    a: &'a [f32],
    d_out: &'a [f32],
}

/// The per-sample inverse std and centre of `x̂ = z · inv + centre`.
fn normalizer(st: &Stats, c: usize) -> (Vec<f32>, Vec<f32>) {
    let inv = st.inv_std[..c].to_vec();
    let centre = (0..c).map(|i| -st.mean[i] * inv[i]).collect();
    (inv, centre)
}

impl Bn {
    /// Batch statistics from the per-task sums of `z` and `z²` over `count` cells;
    /// updates the running statistics as Burn does (momentum, biased variance).
    fn finish(&mut self, parts: &[Partial], count: usize) -> Stats {
        let c = self.c;
        let count = count as f64;
        let mut mean = vec![0.0f32; c];
        let mut inv_std = vec![0.0f32; c];
        for i in 0..c {
            let (sum, sq) = parts
                .iter()
                .fold((0.0, 0.0), |(a, b), p| (a + p.0[i], b + p.1[i]));
            let mu = sum / count;
            let var = (sq / count - mu * mu).max(0.0);
            mean[i] = mu as f32;
            inv_std[i] = 1.0 / (var as f32 + self.eps).sqrt();
            self.mean[i] = self.mean[i] * (1.0 - self.momentum) + mu as f32 * self.momentum;
            self.var[i] = self.var[i] * (1.0 - self.momentum) + var as f32 * self.momentum;
        }
        Stats { mean, inv_std }
    }

    /// `y = z · scale + shift`, with scale = γ/σ and shift = β − μ · scale.
    fn affine(&self, values: &[Vec<f32>], st: &Stats) -> (Vec<f32>, Vec<f32>) {
        let (gamma, beta) = (&values[self.gamma], &values[self.beta]);
        let scale: Vec<f32> = gamma.iter().zip(&st.inv_std).map(|(a, b)| a * b).collect();
        let shift = (0..self.c)
            .map(|i| beta[i] - st.mean[i] * scale[i])
            .collect();
        (scale, shift)
    }

    /// From the per-task sums of `g` and `g · x̂` over `count` cells: accumulates γ's
    /// and β's gradients, returns the coefficients of the backward.
    fn gradients(
        &self,
        values: &[Vec<f32>],
        grads: &mut [Vec<f32>],
        st: &Stats,
        parts: &[Partial],
        count: usize,
    ) -> BnCoefs {
        let c = self.c;
        let count = count as f64;
        let (mut k1, mut k2) = (vec![0.0f32; c], vec![0.0f32; c]);
        let [dgamma, dbeta] = grads
            .get_disjoint_mut([self.gamma, self.beta])
            .expect("distinct parameters");
        for i in 0..c {
            let (sg, sx) = parts
                .iter()
                .fold((0.0, 0.0), |(a, b), p| (a + p.0[i], b + p.1[i]));
            dgamma[i] += sx as f32;
            dbeta[i] += sg as f32;
            k1[i] = (sg / count) as f32;
            k2[i] = (sx / count) as f32;
        }
        let coef = values[self.gamma]
            .iter()
            .zip(&st.inv_std)
            .map(|(a, b)| a * b)
            .collect();
        let (inv, centre) = normalizer(st, c);
        BnCoefs {
            coef,
            k1,
            k2,
            inv,
            centre,
        }
    }
}

impl Layers {
    /// Layers of the tower, input first.
    fn tower_len(&self) -> usize {
        1 + 2 * self.blocks.len()
    }

    /// Tower layer `i`: the stem (0), then each block's first (odd) and second (even)
    /// layer; its convolution, BatchNorm and the global pooling that follows it.
    fn tower(&self, i: usize) -> (&Conv, &Bn, Option<&Dense>) {
        if i == 0 {
            return (&self.stem, &self.stem_bn, None);
        }
        let b = &self.blocks[(i - 1) / 2];
        if i % 2 == 1 {
            (&b.a, &b.a_bn, b.gpool.as_ref())
        } else {
            (&b.b, &b.b_bn, None)
        }
    }

    /// The BatchNorm of tower layer `i`.
    fn tower_bn_mut(&mut self, i: usize) -> &mut Bn {
        if i == 0 {
            return &mut self.stem_bn;
        }
        let b = &mut self.blocks[(i - 1) / 2];
        if i % 2 == 1 { &mut b.a_bn } else { &mut b.b_bn }
    }
}

/// Whether tower layer `i` is a block's second layer, whose output adds the block's
/// input (the output of layer `i − 2`).
fn ends_block(i: usize) -> bool {
    i >= 2 && i.is_multiple_of(2)
}

/// The input of the pass after tower layer `i`: the layer's BatchNorm applied to its
/// convolution output (plus the block's input after a block's second layer), written
/// to the layer's activations.
fn tower_src<'a>(
    l: &'a Layers,
    values: &'a [Vec<f32>],
    i: usize,
    layer: &'a mut LayerTape,
    before: &'a [LayerTape],
) -> Src<'a> {
    let (_, bn, gpool) = l.tower(i);
    let (scale, shift) = bn.affine(values, &layer.stats);
    let residual = ends_block(i).then(|| &before[i - 2].a[..]);
    let LayerTape {
        z, a, a2, gmean, ..
    } = layer;
    Src::Bn {
        z,
        stride: bn.c.next_multiple_of(LANES),
        scale,
        shift,
        residual,
        out: a,
        gpool: gpool.map(|dense| Gpool {
            dense,
            values,
            gmean,
            h2: a2,
        }),
    }
}

/// `buf[..n · per]` in chunks of [`TASK`] samples (`per` floats per sample).
fn task_chunks(buf: &mut [f32], per: usize, n: usize) -> impl Iterator<Item = &mut [f32]> {
    buf[..n * per].chunks_mut(TASK * per)
}

/// As [`task_chunks`] for a buffer that may be absent: `None` for every task then.
fn task_chunks_opt(
    buf: Option<&mut [f32]>,
    per: usize,
    n: usize,
) -> impl Iterator<Item = Option<&mut [f32]>> {
    let tasks = n.div_ceil(TASK);
    let mut chunks = buf.map(|b| task_chunks(b, per, n));
    (0..tasks).map(move |_| chunks.as_mut().and_then(Iterator::next))
}

impl Geometry {
    /// Samples `s0..s0 + m` of a buffer with `stride` floats per cell.
    fn samples<'a>(&self, x: &'a [f32], stride: usize, s0: usize, m: usize) -> &'a [f32] {
        &x[s0 * self.g * stride..(s0 + m) * self.g * stride]
    }

    /// Applies `op` to the `m` samples of `x` (`xs` floats per cell) into `out`, plus
    /// `residual` (both with the op's `c_pad` floats per cell).
    #[allow(clippy::too_many_arguments)]
    fn conv_task(
        &self,
        op: &Op,
        x: &[f32],
        xs: usize,
        out: &mut [f32],
        residual: Option<&[f32]>,
        m: usize,
        scratch: &mut TaskScratch,
    ) {
        match op {
            Op::Winograd(w) => {
                let io = Io {
                    x,
                    x_stride: xs,
                    out,
                    residual,
                    relu: false,
                };
                convolve3x3(self.kernel, w, self.grid, m, io, &mut scratch.winograd);
            }
            Op::Direct(p) => convolve(
                self.kernel,
                p,
                Job {
                    x,
                    x_stride: xs,
                    taps: &[0],
                    cells: &self.task_cells[..m * self.area],
                    out,
                    out_stride: p.c_pad(),
                    residual,
                    relu: false,
                },
            ),
        }
    }

    /// Two per-channel sums over the board cells of `m` samples: `add(at, s1, s2)` adds
    /// the terms of the cell at float offset `at` (`stride` floats per cell). Each
    /// sample's sums are taken in f32, then added up over the samples in f64, in order.
    #[inline(always)]
    fn sums_task(
        &self,
        stride: usize,
        c: usize,
        m: usize,
        mut add: impl FnMut(usize, &mut [f32], &mut [f32]),
    ) -> Partial {
        let (mut s1, mut s2) = (vec![0f64; c], vec![0f64; c]);
        let (mut f1, mut f2) = (vec![0f32; c], vec![0f32; c]);
        for smp in 0..m {
            f1.fill(0.0);
            f2.fill(0.0);
            for &cell in &self.interior {
                add((smp * self.g + cell) * stride, &mut f1, &mut f2);
            }
            for i in 0..c {
                s1[i] += f1[i] as f64;
                s2[i] += f2[i] as f64;
            }
        }
        (s1, s2)
    }

    /// The per-channel sums of `z` and `z²` over the board cells of `m` samples
    /// (`stride` floats per cell, the first `c` channels).
    fn stats_task(&self, z: &[f32], stride: usize, c: usize, m: usize) -> Partial {
        self.sums_task(stride, c, m, |at, fs, fq| {
            let v = &z[at..][..c];
            for ((s, q), &v) in fs.iter_mut().zip(fq.iter_mut()).zip(v) {
                *s += v;
                *q += v * v;
            }
        })
    }

    /// `out = relu(z · scale + shift + residual)` on the board cells of `m` samples.
    #[allow(clippy::too_many_arguments)]
    fn apply_task(
        &self,
        z: &[f32],
        stride: usize,
        (scale, shift): (&[f32], &[f32]),
        residual: Option<&[f32]>,
        out: &mut [f32],
        m: usize,
    ) {
        let c = scale.len();
        for smp in 0..m {
            let base = smp * self.g * stride;
            for &cell in &self.interior {
                let at = base + cell * stride;
                let zv = &z[at..][..c];
                let o = &mut out[at..][..c];
                let affine = o.iter_mut().zip(zv).zip(scale.iter().zip(shift));
                match residual {
                    Some(r) => {
                        for (((o, &z), (&a, &b)), &r) in affine.zip(&r[at..][..c]) {
                            *o = (z * a + b + r).max(0.0);
                        }
                    }
                    None => {
                        for ((o, &z), (&a, &b)) in affine {
                            *o = (z * a + b).max(0.0);
                        }
                    }
                }
            }
        }
    }

    /// One forward pass over the batch, by tasks: the input from `src`, `op` into `z`
    /// (the op's `c_pad` floats per cell), and the sums for the batch statistics of
    /// `z`'s first `c` channels (none when `c` is 0), one [`Partial`] per task.
    fn forward_pass(
        &self,
        op: &Op,
        src: Src<'_>,
        z: &mut [f32],
        c: usize,
        n: usize,
        tasks: &mut [TaskScratch],
    ) -> Vec<Partial> {
        let g = self.g;
        let os = match op {
            Op::Winograd(w) => w.c_pad(),
            Op::Direct(p) => p.c_pad(),
        };
        let (plain, bn, out, gpool) = match src {
            Src::Plain(x, xs) => (Some((x, xs)), None, None, None),
            Src::Bn {
                z,
                stride,
                scale,
                shift,
                residual,
                out,
                gpool,
            } => (
                None,
                Some((z, stride, scale, shift, residual)),
                Some(out),
                gpool,
            ),
        };
        let stride = bn.as_ref().map_or(0, |b| b.1);
        let outs = task_chunks_opt(out, g * stride, n);
        let (dense, values, gmean, h2) = match gpool {
            Some(Gpool {
                dense,
                values,
                gmean,
                h2,
            }) => (Some(dense), Some(values), Some(gmean), Some(h2)),
            None => (None, None, None, None),
        };
        let gmeans = task_chunks_opt(gmean, dense.map_or(0, |d| d.d_in), n);
        let h2s = task_chunks_opt(h2, g * stride, n);
        let bn = bn.as_ref().map(|b| (b.0, b.1, (&b.2[..], &b.3[..]), b.4));
        let jobs: Vec<_> = task_chunks(z, g * os, n)
            .zip(tasks.iter_mut())
            .zip(outs.zip(gmeans).zip(h2s))
            .enumerate()
            .collect();
        jobs.into_par_iter()
            .map(|(k, ((zc, t), ((out, gmean), h2)))| {
                let s0 = k * TASK;
                let m = zc.len() / (g * os);
                let (x, xs): (&[f32], usize) = match (plain, bn, out) {
                    (Some((x, xs)), _, _) => (self.samples(x, xs, s0, m), xs),
                    (None, Some((z, s, affine, residual)), Some(out)) => {
                        let r = residual.map(|r| self.samples(r, s, s0, m));
                        self.apply_task(self.samples(z, s, s0, m), s, affine, r, out, m);
                        match (dense, values, gmean, h2) {
                            (Some(d), Some(values), Some(gmean), Some(h2)) => {
                                self.means_task(out, s, d.d_in, gmean, m);
                                let bias = dense_forward(values, d, gmean, false);
                                h2.copy_from_slice(out);
                                self.add_task(h2, s, &bias, d.d_out, 1.0, m);
                                (h2, s)
                            }
                            _ => (out, s),
                        }
                    }
                    _ => unreachable!("a BatchNorm source has its output chunks"),
                };
                self.conv_task(op, x, xs, zc, None, m, t);
                if c == 0 {
                    (Vec::new(), Vec::new())
                } else {
                    self.stats_task(zc, os, c, m)
                }
            })
            .collect()
    }

    /// One backward pass through convolution `c` over the batch, by tasks: the output
    /// gradient from `dz`; the weight gradient (of input `x`, `xs` floats per cell)
    /// accumulated into `grads`; the input gradient, plus a residual, written to `dx`;
    /// and the backward sums of the BatchNorm `reduce` on that input gradient.
    #[allow(clippy::too_many_arguments)]
    fn backward_pass(
        &self,
        grads: &mut [Vec<f32>],
        c: &Conv,
        (x, xs): (&[f32], usize),
        dz: Dz<'_>,
        dx: Option<InputGrad<'_>>,
        reduce: Option<Reduce<'_>>,
        n: usize,
        tasks: &mut [TaskScratch],
    ) -> Vec<Partial> {
        let g = self.g;
        let cp = c.c_pad;
        let xp = c.c_in.next_multiple_of(LANES);
        let (given, grad, dz, dpre) = match dz {
            Dz::Given(d, s) => (Some((d, s)), None, None, None),
            Dz::Bn { grad, dz, dpre } => (None, Some(grad), Some(dz), dpre),
        };
        let dzs = task_chunks_opt(dz, g * cp, n);
        let dpres = task_chunks_opt(dpre, g * cp, n);
        let grad = grad.as_ref();
        let (op, dx, residual) = match dx {
            Some(InputGrad { op, dx, residual }) => (Some(op), Some(dx), residual),
            None => (None, None, None),
        };
        let dxs = task_chunks_opt(dx, g * xp, n);
        // 3×3 weight gradients are summed in the Winograd domain ((m+2)² products per
        // block and channel pair instead of 9 per cell) and brought back to the taps once,
        // after the tasks' sums.
        let winograd = c.k == 3;
        let products = if winograd { TILE.products() } else { c.k * c.k };
        let len = products * c.c_in * c.c_pad;
        let norm = reduce.as_ref().map(|r| normalizer(r.stats, r.c));
        let jobs: Vec<_> = tasks[..n.div_ceil(TASK)]
            .iter_mut()
            .zip(dzs.zip(dpres).zip(dxs))
            .enumerate()
            .collect();
        let parts = jobs
            .into_par_iter()
            .map(|(k, (t, ((dzc, dpre), dxc)))| {
                let s0 = k * TASK;
                let m = TASK.min(n - s0);
                let (dz, dzs): (&[f32], usize) = match (given, grad, dzc) {
                    (Some((d, s)), _, _) => (self.samples(d, s, s0, m), s),
                    (None, Some(gr), Some(dzc)) => {
                        self.grad_task(gr, s0, m, dzc, dpre);
                        (dzc, cp)
                    }
                    _ => unreachable!("a BatchNorm gradient has its output chunks"),
                };
                let xt = self.samples(x, xs, s0, m);
                t.partial.clear();
                t.partial.resize(len, 0.0);
                for sub in (0..m).step_by(SUB) {
                    let ms = SUB.min(m - sub);
                    let (x, dy) = (
                        self.samples(xt, xs, sub, ms),
                        self.samples(dz, dzs, sub, ms),
                    );
                    if winograd {
                        winograd::gradient3x3(
                            self.kernel,
                            TILE,
                            self.grid,
                            ms,
                            (x, xs, c.c_in),
                            (dy, dzs, c.c_pad),
                            &mut t.partial,
                            &mut t.winograd,
                        );
                        continue;
                    }
                    weight_gradient(
                        self.kernel,
                        GradJob {
                            x,
                            x_stride: xs,
                            c_in: c.c_in,
                            taps: &[0],
                            runs: &self.runs[..ms * self.grid.height],
                            dy,
                            dy_stride: dzs,
                            c_pad: c.c_pad,
                            out: &mut t.partial,
                        },
                    );
                }
                let (Some(op), Some(dxc)) = (op, dxc) else {
                    return (Vec::new(), Vec::new());
                };
                let r = residual.map(|r| self.samples(r, xp, s0, m));
                self.conv_task(op, dz, dzs, dxc, r, m, t);
                match (&reduce, &norm) {
                    (Some(red), Some((inv, centre))) => {
                        let (a, z) = (
                            self.samples(red.a, xp, s0, m),
                            self.samples(red.z, xp, s0, m),
                        );
                        self.reduce_task(z, a, dxc, xp, (inv, centre), m)
                    }
                    _ => (Vec::new(), Vec::new()),
                }
            })
            .collect();
        // The tasks' shares, summed in task order, in parallel over the weights.
        let shares = &tasks[..n.div_ceil(TASK)];
        let mut sum = vec![0.0f32; len];
        sum.par_chunks_mut(4096).enumerate().for_each(|(j, sum)| {
            for t in shares {
                let part = &t.partial[j * 4096..][..sum.len()];
                sum.iter_mut().zip(part).for_each(|(a, b)| *a += b);
            }
        });
        if winograd {
            winograd::gradient_taps(TILE, &sum, c.c_in, c.c_pad, &mut grads[c.w]);
        } else {
            grads[c.w].iter_mut().zip(&sum).for_each(|(a, b)| *a += b);
        }
        parts
    }

    /// The sums of `g` and `g · x̂` of one task for a BatchNorm's backward, with `g`
    /// the output gradient `d_out` through the ReLU of `a`, and `x̂ = z · inv + centre`.
    #[allow(clippy::too_many_arguments)]
    fn reduce_task(
        &self,
        z: &[f32],
        a: &[f32],
        d_out: &[f32],
        stride: usize,
        (inv, centre): (&[f32], &[f32]),
        m: usize,
    ) -> Partial {
        let c = inv.len();
        self.sums_task(stride, c, m, |at, fg, fx| {
            let (av, dv, zv) = (&a[at..][..c], &d_out[at..][..c], &z[at..][..c]);
            let sums = fg.iter_mut().zip(fx.iter_mut());
            let xhat = zv.iter().zip(inv).zip(centre);
            for (((g, x), (&a, &d)), ((&z, &i), &ce)) in sums.zip(av.iter().zip(dv)).zip(xhat) {
                let gr = if a > 0.0 { d } else { 0.0 };
                *g += gr;
                *x += gr * (z * i + ce);
            }
        })
    }

    /// A BatchNorm's backward on samples `s0..s0 + m`: `dz` (task-local), and the
    /// gradient through the ReLU alone into `pre` if given.
    fn grad_task(
        &self,
        gr: &BnGrad<'_>,
        s0: usize,
        m: usize,
        dz: &mut [f32],
        mut pre: Option<&mut [f32]>,
    ) {
        let k = gr.k;
        let c = k.coef.len();
        let s = c.next_multiple_of(LANES);
        let (a, d_out, z) = (
            self.samples(gr.a, s, s0, m),
            self.samples(gr.d_out, s, s0, m),
            self.samples(gr.z, s, s0, m),
        );
        let (coef, k1, k2) = (&k.coef[..c], &k.k1[..c], &k.k2[..c]);
        let (inv, centre) = (&k.inv[..c], &k.centre[..c]);
        for smp in 0..m {
            for &cell in &self.interior {
                let at = (smp * self.g + cell) * s;
                let (av, dv, zv) = (&a[at..][..c], &d_out[at..][..c], &z[at..][..c]);
                let out = &mut dz[at..][..c];
                let xhat = zv.iter().zip(inv).zip(centre);
                let kk = coef.iter().zip(k1).zip(k2);
                for (((o, (&a, &d)), ((&z, &i), &ce)), ((&cf, &k1), &k2)) in
                    out.iter_mut().zip(av.iter().zip(dv)).zip(xhat).zip(kk)
                {
                    let gr = if a > 0.0 { d } else { 0.0 };
                    *o = cf * (gr - k1 - (z * i + ce) * k2);
                }
                if let Some(p) = pre.as_deref_mut() {
                    for (p, (&a, &d)) in p[at..][..c].iter_mut().zip(av.iter().zip(dv)) {
                        *p = if a > 0.0 { d } else { 0.0 };
                    }
                }
            }
        }
    }

    /// The sums for a BatchNorm's backward over the batch (see [`Geometry::reduce_task`]),
    /// one [`Partial`] per task.
    fn bn_reduce(
        &self,
        st: &Stats,
        z: &[f32],
        a: &[f32],
        d_out: &[f32],
        c: usize,
        n: usize,
    ) -> Vec<Partial> {
        let s = c.next_multiple_of(LANES);
        let (inv, centre) = normalizer(st, c);
        (0..n.div_ceil(TASK))
            .into_par_iter()
            .map(|k| {
                let (s0, m) = (k * TASK, TASK.min(n - k * TASK));
                let at = |x| self.samples(x, s, s0, m);
                self.reduce_task(at(z), at(a), at(d_out), s, (&inv, &centre), m)
            })
            .collect()
    }

    /// `out = relu(z · scale + shift + residual)` over the batch.
    fn bn_apply(
        &self,
        z: &[f32],
        stride: usize,
        affine: (&[f32], &[f32]),
        residual: Option<&[f32]>,
        out: &mut [f32],
        n: usize,
    ) {
        let per = self.g * stride;
        let chunks: Vec<_> = task_chunks(out, per, n).enumerate().collect();
        chunks.into_par_iter().for_each(|(k, o)| {
            let (s0, m) = (k * TASK, o.len() / per);
            let r = residual.map(|r| self.samples(r, stride, s0, m));
            self.apply_task(self.samples(z, stride, s0, m), stride, affine, r, o, m);
        });
    }

    /// Per-sample means over the board of the first `c` channels of the `m` samples of
    /// `x`, into `out` (`[m][c]`).
    fn means_task(&self, x: &[f32], xs: usize, c: usize, out: &mut [f32], m: usize) {
        let area = self.area as f32;
        for (s, out) in out[..m * c].chunks_mut(c).enumerate() {
            out.fill(0.0);
            for &cell in &self.interior {
                let v = &x[(s * self.g + cell) * xs..][..c];
                out.iter_mut().zip(v).for_each(|(a, b)| *a += b);
            }
            out.iter_mut().for_each(|a| *a /= area);
        }
    }

    /// Adds `scale · add[s]` (`[m][c]`) to every board cell of each of the `m` samples.
    fn add_task(&self, x: &mut [f32], xs: usize, add: &[f32], c: usize, scale: f32, m: usize) {
        for s in 0..m {
            let a: Vec<f32> = add[s * c..][..c].iter().map(|v| v * scale).collect();
            for &cell in &self.interior {
                x[(s * self.g + cell) * xs..][..c]
                    .iter_mut()
                    .zip(&a)
                    .for_each(|(x, a)| *x += a);
            }
        }
    }

    /// Per-sample means over the board of the first `c` channels of `x`: `[n][c]`.
    fn board_means(&self, x: &[f32], xs: usize, c: usize, n: usize) -> Vec<f32> {
        let mut m = vec![0.0; n * c];
        m.par_chunks_mut(c)
            .enumerate()
            .for_each(|(s, out)| self.means_task(self.samples(x, xs, s, 1), xs, c, out, 1));
        m
    }

    /// Adds `scale · add[s]` (`[n][c]`) to every board cell of sample s.
    fn broadcast_add(&self, x: &mut [f32], xs: usize, add: &[f32], c: usize, scale: f32, n: usize) {
        x[..n * self.g * xs]
            .par_chunks_mut(self.g * xs)
            .enumerate()
            .for_each(|(s, xg)| self.add_task(xg, xs, &add[s * c..][..c], c, scale, 1));
    }

    /// Sets every board cell of sample s to `scale · v[s]` (`[n][c]`).
    fn broadcast_set(&self, x: &mut [f32], xs: usize, v: &[f32], c: usize, scale: f32, n: usize) {
        let g = self.g;
        x[..n * g * xs]
            .par_chunks_mut(g * xs)
            .enumerate()
            .for_each(|(s, xg)| {
                let a: Vec<f32> = v[s * c..][..c].iter().map(|v| v * scale).collect();
                for &cell in &self.interior {
                    xg[cell * xs..][..c].copy_from_slice(&a);
                }
            });
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use burn::optim::GradientsParams;

    use super::*;
    use crate::kernels::noise;

    /// A batch of random inputs and targets: legal masks, policy targets over the legal
    /// moves, value-only rows, one-hot results and scores.
    fn random_batch(game: Game, n: usize, seed: u64) -> Batch {
        let (w, h) = game.grid();
        let size = game.policy_size();
        let u = |k: u64, len: usize| noise(seed * 10 + k, len);
        let inputs = u(1, n * PLANES * w * h)
            .iter()
            .map(|v| f32::from(*v > 0.3))
            .collect();
        let legal: Vec<f32> = u(2, n * size).iter().map(|v| f32::from(*v > 0.6)).collect();
        let mut policy: Vec<f32> = u(3, n * size)
            .iter()
            .zip(&legal)
            .map(|(v, l)| (v + 1.0) * l)
            .collect();
        for row in policy.chunks_mut(size) {
            let sum: f32 = row.iter().sum();
            row.iter_mut().for_each(|v| *v /= sum.max(1e-6));
        }
        let policy_weight = u(4, n).iter().map(|v| f32::from(*v > -0.5)).collect();
        let wdl = u(5, n)
            .iter()
            .flat_map(|v| {
                let k = ((v + 1.0) * 1.5) as usize;
                (0..3).map(move |j| f32::from(j == k.min(2)))
            })
            .collect();
        Batch {
            size: n,
            inputs,
            policy,
            legal,
            policy_weight,
            wdl,
            score: u(6, n),
            ..Batch::zeros(game, n)
        }
    }

    /// Three steps of AdamW, and of SGD with momentum, from the same random weights on
    /// the same batches: the CPU engine's weight changes equal those of Burn's optimizer.
    /// (The gradients themselves differ by float rounding, see the test above; the step
    /// formulas, weight decay, bias correction and per-parameter clipping must agree.)
    #[test]
    fn optimizer_steps_match_burn() {
        let game: Game = "ataxx".parse().unwrap();
        let shape = NetConfig {
            blocks: 2,
            channels: 16,
            gpool_every: 1,
            head_channels: 8,
            value_hidden: 16,
            in_planes: PLANES,
            policy_planes: game.policy_planes(),
        };
        for optimizer in [OptimizerKind::Adamw, OptimizerKind::Sgd] {
            let cfg = TrainConfig {
                optimizer,
                weight_decay: 0.01,
                grad_clip_norm: 0.5,
                ..TrainConfig::default()
            };
            let device = Device::flex().autodiff();
            device.seed(5);
            let net0 = randomize_batch_norm(shape.init(&device), &device, 7);
            let kernel = Kernel::detect();
            let start = CpuTrainer::with_kernel(&net0, &shape, game, &cfg, kernel);
            let mut mine = CpuTrainer::with_kernel(&net0, &shape, game, &cfg, kernel);
            let (mut theirs, mut optim) = (net0.clone(), cfg.optimizer());
            for step in 0..3 {
                let batch = random_batch(game, 24, 20 + step);
                let lr = 3e-3;
                mine.step(&batch, lr);
                let (loss, _) = crate::training::losses(&theirs, &batch, game, &cfg, &device);
                let grads = GradientsParams::from_grads(loss.backward(), &theirs);
                theirs = optim.step(lr, theirs, grads);
            }
            let theirs = CpuTrainer::with_kernel(&theirs, &shape, game, &cfg, kernel);
            assert_eq!(mine.names, theirs.names);
            let mut worst = 0.0f64;
            for (i, name) in mine.names.iter().enumerate() {
                let delta = |t: &CpuTrainer| -> Vec<f64> {
                    t.values[i]
                        .iter()
                        .zip(&start.values[i])
                        .map(|(a, b)| f64::from(a - b))
                        .collect()
                };
                let (a, b) = (delta(&mine), delta(&theirs));
                let norm = |v: &mut dyn Iterator<Item = f64>| v.map(|x| x * x).sum::<f64>().sqrt();
                let moved = norm(&mut b.iter().copied());
                assert!(moved > 0.0, "{optimizer:?} {name}: Burn did not move it");
                let err = norm(&mut a.iter().zip(&b).map(|(x, y)| x - y)) / moved;
                // Observed: 2e-5 for SGD, whose step is linear in the gradient; 3.4e-3 for
                // AdamW, whose first steps are about lr·sign(g), so that a gradient within
                // rounding of zero moves its entry by up to 2·lr either way.
                let bound = match optimizer {
                    OptimizerKind::Sgd => 1e-4,
                    OptimizerKind::Adamw => 1e-2,
                };
                assert!(
                    err < bound,
                    "{optimizer:?} {name}: relative error {err:.2e}"
                );
                worst = worst.max(err);
            }
            eprintln!("{optimizer:?}: largest relative error of a weight change {worst:.2e}");
        }
    }

    /// `net` with every BatchNorm's γ in [0.5, 1.5], β in [-0.5, 0.5], running mean in
    /// [-0.5, 0.5] and running variance in [0.5, 1.5], drawn from `seed`.
    fn randomize_batch_norm(mut net: Net, device: &Device, seed: u64) -> Net {
        let mut k = seed * 100;
        let mut draw = |c: usize, centre: f32| {
            k += 1;
            let v: Vec<f32> = noise(k, c).iter().map(|x| centre + 0.5 * x).collect();
            Tensor::<1>::from_data(TensorData::new(v, [c]), device)
        };
        let mut bn = |b: &mut burn::nn::BatchNorm| {
            let c = b.gamma.dims()[0];
            b.gamma = Param::from_tensor(draw(c, 1.0));
            b.beta = Param::from_tensor(draw(c, 0.0));
            b.running_mean = RunningState::new(draw(c, 0.0));
            b.running_var = RunningState::new(draw(c, 1.0));
        };
        bn(&mut net.stem.bn);
        for b in &mut net.blocks {
            bn(&mut b.a.bn);
            bn(&mut b.b.bn);
        }
        bn(&mut net.policy_conv.bn);
        bn(&mut net.value_conv.bn);
        net
    }

    /// Burn's gradients of `net`'s parameters, by the trainer's names.
    fn burn_grads(net: &Net, grads: &GradientsParams) -> HashMap<String, Vec<f32>> {
        let mut out = HashMap::new();
        let mut put = |name: String, v: Option<Vec<f32>>| {
            out.insert(name, v.expect("a gradient for every parameter"));
        };
        let conv = |put: &mut dyn FnMut(String, Option<Vec<f32>>),
                    name: &str,
                    c: &burn::nn::conv::Conv2d| {
            put(
                format!("{name}.weight"),
                grads.get::<4>(c.weight.id).map(values),
            );
            if let Some(b) = &c.bias {
                put(format!("{name}.bias"), grads.get::<1>(b.id).map(values));
            }
        };
        let bn =
            |put: &mut dyn FnMut(String, Option<Vec<f32>>), name: &str, b: &burn::nn::BatchNorm| {
                put(
                    format!("{name}.gamma"),
                    grads.get::<1>(b.gamma.id).map(values),
                );
                put(
                    format!("{name}.beta"),
                    grads.get::<1>(b.beta.id).map(values),
                );
            };
        let linear =
            |put: &mut dyn FnMut(String, Option<Vec<f32>>), name: &str, l: &burn::nn::Linear| {
                put(
                    format!("{name}.weight"),
                    grads.get::<2>(l.weight.id).map(values),
                );
                let b = l.bias.as_ref().expect("bias");
                put(format!("{name}.bias"), grads.get::<1>(b.id).map(values));
            };
        let conv_bn = |put: &mut dyn FnMut(String, Option<Vec<f32>>), name: &str, cb: &ConvBn| {
            conv(put, &format!("{name}.conv"), &cb.conv);
            bn(put, &format!("{name}.bn"), &cb.bn);
        };
        conv_bn(&mut put, "stem", &net.stem);
        for (i, b) in net.blocks.iter().enumerate() {
            conv_bn(&mut put, &format!("blocks.{i}.a"), &b.a);
            conv_bn(&mut put, &format!("blocks.{i}.b"), &b.b);
            if let Some(g) = &b.gpool {
                put(
                    format!("blocks.{i}.gpool.weight"),
                    grads.get::<4>(g.weight.id).map(values),
                );
                let bias = g.bias.as_ref().expect("bias");
                put(
                    format!("blocks.{i}.gpool.bias"),
                    grads.get::<1>(bias.id).map(values),
                );
            }
        }
        conv_bn(&mut put, "policy_conv", &net.policy_conv);
        put(
            "policy_out.weight".into(),
            grads.get::<4>(net.policy_out.weight.id).map(values),
        );
        let b = net.policy_out.bias.as_ref().expect("bias");
        put("policy_out.bias".into(), grads.get::<1>(b.id).map(values));
        linear(&mut put, "pass_out", &net.pass_out);
        conv_bn(&mut put, "value_conv", &net.value_conv);
        linear(&mut put, "value_fc", &net.value_fc);
        linear(&mut put, "wdl_out", &net.wdl_out);
        linear(&mut put, "score_out", &net.score_out);
        out
    }

    /// The hand-written forward and backward passes against Burn's autodiff: the same
    /// losses, the same gradient for every parameter (Winograd and summation order
    /// differ, so within a relative error), the same running statistics, for
    /// every kernel build, on a 7×7 and an 8×8 board, with channel counts that are not
    /// whole vectors and a batch that is not a whole number of tasks.
    #[test]
    fn gradients_match_burn_autodiff() {
        // Four architectures: gpool every other block, none, every block; narrow and
        // wide heads; BatchNorm γ, β and running statistics random (fresh ones are 1, 0,
        // 0, 1, which would hide a γ or β mistake).
        let archs = [
            (3, 24, 2, 8, 16),
            (2, 16, 0, 12, 8),
            (4, 20, 1, 6, 10),
            (1, 40, 1, 20, 32),
        ];
        for (game, (blocks, channels, gpool_every, head_channels, value_hidden)) in
            ["ataxx", "othello", "ataxx", "othello"]
                .into_iter()
                .zip(archs)
        {
            let game: Game = game.parse().unwrap();
            let shape = NetConfig {
                blocks,
                channels,
                gpool_every,
                head_channels,
                value_hidden,
                in_planes: PLANES,
                policy_planes: game.policy_planes(),
            };
            let cfg = TrainConfig::default();
            let batch = random_batch(game, 40, 8);
            let device = Device::flex().autodiff();
            device.seed(3);
            let net = randomize_batch_norm(shape.init(&device), &device, blocks as u64 + 10);
            let mut worst = 0.0f64;
            for kernel in Kernel::available() {
                let mut trainer = CpuTrainer::with_kernel(&net, &shape, game, &cfg, kernel);
                assert_eq!(trainer.uncovered(&shape), Vec::<String>::new());
                let other = NetConfig {
                    gpool_every: if gpool_every == 0 { 1 } else { 0 },
                    ..shape.clone()
                };
                let gaps = trainer.uncovered(&other);
                assert!(
                    !gaps.is_empty() && gaps.iter().all(|g| g.contains("gpool")),
                    "{gaps:?}"
                );
                let ours = trainer.forward_backward(&batch);
                let burn_net = net.clone();
                let (loss, theirs) =
                    crate::training::losses(&burn_net, &batch, game, &cfg, &device);
                let grads = GradientsParams::from_grads(loss.backward(), &burn_net);
                for (k, (a, b)) in ours.iter().zip(&theirs).enumerate() {
                    assert!(
                        (a - b).abs() <= 1e-4 * b.abs().max(1.0),
                        "{game} {kernel:?} metric {k}: {a} vs {b}"
                    );
                }
                let want = burn_grads(&burn_net, &grads);
                let got = trainer.gradients();
                assert_eq!(got.len(), want.len());
                for (name, g) in &got {
                    let w = &want[name];
                    assert_eq!(g.len(), w.len(), "{name}");
                    // Relative L2 error, about 3e-6 here. A ReLU input within rounding of
                    // zero can fall on the other side of the kink in one implementation
                    // and move a few entries by more than rounding (seed 7 does that on
                    // Othello: 1.3e-2 in one tensor); a wrong formula moves them all.
                    let norm = |v: &mut dyn Iterator<Item = f32>| {
                        v.map(|x| (x as f64).powi(2)).sum::<f64>().sqrt()
                    };
                    let err = norm(&mut g.iter().zip(w).map(|(a, b)| a - b))
                        / norm(&mut w.iter().copied()).max(1e-12);
                    assert!(
                        err < 1e-3,
                        "{game} {kernel:?} {name}: relative error {err:.2e}"
                    );
                    worst = worst.max(err);
                }
                // Running statistics after one training forward pass.
                let mine = trainer.to_net(&Device::flex());
                let stat = |t: Tensor<1>| values(t);
                for (a, b) in [
                    (
                        mine.stem.bn.running_mean.value(),
                        burn_net.stem.bn.running_mean.value_sync(),
                    ),
                    (
                        mine.blocks[blocks - 1].b.bn.running_var.value(),
                        burn_net.blocks[blocks - 1].b.bn.running_var.value_sync(),
                    ),
                    (
                        mine.value_conv.bn.running_var.value(),
                        burn_net.value_conv.bn.running_var.value_sync(),
                    ),
                ] {
                    for (x, y) in stat(a).iter().zip(stat(b.to_device(&Device::flex()))) {
                        assert!(
                            (x - y).abs() < 1e-4,
                            "{game} {kernel:?}: running stat {x} vs {y}"
                        );
                    }
                }
            }
            eprintln!("{game} {shape:?}: largest relative gradient error {worst:.2e}");
        }
    }
}
