//! A fast single-threaded CPU forward pass for self-play: BatchNorm folded into the
//! convolutions, activations kept channel-last on a grid with a zero border (see
//! [`Grid`]), 3×3 layers by Winograd F(4×4, 3×3) ([`crate::kernels::winograd`]) and 1×1 layers by
//! the kernel of [`crate::kernels`] (AVX-512 where the CPU has it). Checked against Burn's
//! forward pass in the tests (within 1e-4), for every kernel build the CPU can run; on
//! trained tiny 4×32 nets (the former `make run` config's) it is within 1e-5 of Burn
//! (F(2×2, 3×3) is about 5× closer, and 1.4× slower).

#[cfg(test)]
use burn::prelude::*;
use engine::{Game, Move, State};
use selfplay::{Evaluation, Evaluator};

use crate::error::TrainError;
use crate::infer::prediction::Prediction;
use crate::kernels::winograd::{self, Grid, Io, Tile, Winograd, convolve3x3};
use crate::kernels::{Job, Kernel, Packed, convolve};
use crate::net::{ConvSpec, LinearSpec, NamedTensors, Net};
use crate::net::{PLANES, encode_into};
use crate::store::LoadedModel;

#[cfg(test)]
/// A tensor's values, row-major.
pub(crate) fn values<const D: usize>(t: Tensor<D>) -> Vec<f32> {
    t.into_data().try_to_vec::<f32>().expect("f32 weights")
}

/// A conv-BN layer of the description with its BatchNorm (running statistics, `eps`)
/// folded into the weights and a bias.
fn folded(named: &NamedTensors, s: &ConvSpec, eps: f32) -> Packed {
    let (c_out, c_in, k) = (s.c_out, s.c_in, s.k);
    let mut w = named.get(&s.weight(), &[c_out, c_in, k, k]).to_vec();
    let bn = |t: &str| named.get(&s.bn(t), &[c_out]);
    let (gamma, beta, mean, var) = (
        bn("gamma"),
        bn("beta"),
        bn("running_mean"),
        bn("running_var"),
    );
    let per = c_in * k * k;
    let mut b = vec![0.0; c_out];
    for o in 0..c_out {
        let scale = gamma[o] / (var[o] + eps).sqrt();
        for v in &mut w[o * per..(o + 1) * per] {
            *v *= scale;
        }
        b[o] = beta[o] - mean[o] * scale;
    }
    Packed::new(c_out, c_in, k, &w, &b)
}

/// A row-major `rows × cols` matrix, transposed.
pub(crate) fn transpose(w: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    let mut t = vec![0.0; rows * cols];
    for r in 0..rows {
        for c in 0..cols {
            t[c * rows + r] = w[r * cols + c];
        }
    }
    t
}

/// A convolution of the description with its own bias.
fn plain(named: &NamedTensors, s: &ConvSpec) -> Packed {
    let w = named.get(&s.weight(), &[s.c_out, s.c_in, s.k, s.k]);
    let bias = s
        .bias()
        .expect("a convolution without BatchNorm has a bias");
    Packed::new(s.c_out, s.c_in, s.k, w, named.get(&bias, &[s.c_out]))
}

/// A small dense layer (heads and global pooling), weights `[out][in]`.
struct Dense {
    d_in: usize,
    d_out: usize,
    w: Vec<f32>,
    b: Vec<f32>,
}

impl Dense {
    fn linear(named: &NamedTensors, s: &LinearSpec) -> Dense {
        // Burn stores Linear weights as [in, out]; transpose to [out][in].
        let w = named.get(&s.weight(), &[s.d_in, s.d_out]);
        Dense {
            d_in: s.d_in,
            d_out: s.d_out,
            w: transpose(w, s.d_in, s.d_out),
            b: named.get(&s.bias(), &[s.d_out]).to_vec(),
        }
    }

    /// A 1×1 convolution with bias applied to pooled features: its `[out, in, 1, 1]`
    /// weights are already `[out][in]`.
    fn pointwise(named: &NamedTensors, s: &ConvSpec) -> Dense {
        let bias = s.bias().expect("a global-pooling bias has a bias");
        Dense {
            d_in: s.c_in,
            d_out: s.c_out,
            w: named.get(&s.weight(), &[s.c_out, s.c_in, 1, 1]).to_vec(),
            b: named.get(&bias, &[s.c_out]).to_vec(),
        }
    }

    /// `x` is `[n][d_in]`; returns `[n][d_out]`.
    fn forward(&self, x: &[f32], relu: bool) -> Vec<f32> {
        x.chunks(self.d_in)
            .flat_map(|row| {
                self.w.chunks(self.d_in).zip(&self.b).map(move |(w, b)| {
                    let y = b + w.iter().zip(row).map(|(a, b)| a * b).sum::<f32>();
                    if relu { y.max(0.0) } else { y }
                })
            })
            .collect()
    }
}

struct Block {
    a: Winograd,
    b: Winograd,
    gpool: Option<Dense>,
}

/// Floats per cell of the encoded input: the planes, padded to whole vectors (zeros).
const INPUT_STRIDE: usize = PLANES.next_multiple_of(crate::kernels::LANES);

/// Positions per forward pass of the fast path, so that the activations stay in L2
/// (8, 16, 32 and 64 measured the same within noise for the tiny and small nets).
const CHUNK: usize = 32;

/// Activation buffers, reused between calls. Each keeps one stride, so a cell of the
/// border is a border cell whatever the batch size, and stays zero: only interior cells
/// are ever written.
#[derive(Default)]
struct Scratch {
    input: Vec<f32>,
    h: Vec<f32>,
    t: Vec<f32>,
    y: Vec<f32>,
    policy: Vec<f32>,
    planes: Vec<f32>,
    value: Vec<f32>,
    cells: Vec<usize>,
    winograd: winograd::Scratch,
}

fn sized(buf: &mut Vec<f32>, len: usize) -> &mut Vec<f32> {
    if buf.len() < len {
        buf.resize(len, 0.0);
    }
    buf
}

/// The network with BatchNorm folded, ready for fast batched inference.
pub struct FastNet {
    game: Game,
    kernel: Kernel,
    grid: Grid,
    stem: Winograd,
    blocks: Vec<Block>,
    policy_conv: Packed,
    policy_out: Packed,
    pass_out: Dense,
    value_conv: Packed,
    value_fc: Dense,
    wdl_out: Dense,
    score_out: Dense,
    /// The board's cells in the bordered grid of one position, row by row.
    interior: Vec<usize>,
    scratch: Scratch,
}

impl FastNet {
    /// Folds a loaded model, for the fastest kernel this CPU supports.
    pub fn new(model: &LoadedModel) -> FastNet {
        FastNet::with_kernel(model, Kernel::detect())
    }

    /// Folds a loaded model for a given kernel (see [`Kernel::available`]; a `Kernel`
    /// exists only for a build this CPU runs).
    pub fn with_kernel(model: &LoadedModel, kernel: Kernel) -> FastNet {
        let net: &Net = &model.net;
        let (width, height) = model.game.grid();
        let grid = Grid { width, height };
        let interior = (0..height)
            .flat_map(|y| (0..width).map(move |x| grid.cell(x, y)))
            .collect();
        // Every tensor by its name in the description. The auxiliary heads are training
        // targets, not read in play: the fast path runs the three main heads.
        let named = NamedTensors::of(net);
        let eps = net.stem.bn.epsilon as f32;
        let l = model.meta.network.layout();
        let f4 = |s: &ConvSpec| Winograd::with_tile(&folded(&named, s, eps), Tile::F4);
        FastNet {
            game: model.game,
            kernel,
            grid,
            stem: f4(&l.stem),
            blocks: l
                .blocks
                .iter()
                .map(|b| Block {
                    a: f4(&b.a),
                    b: f4(&b.b),
                    gpool: b.gpool.as_ref().map(|g| Dense::pointwise(&named, g)),
                })
                .collect(),
            policy_conv: folded(&named, &l.policy_conv, eps),
            policy_out: plain(&named, &l.policy_out),
            pass_out: Dense::linear(&named, &l.pass_out),
            value_conv: folded(&named, &l.value_conv, eps),
            value_fc: Dense::linear(&named, &l.value_fc),
            wdl_out: Dense::linear(&named, &l.wdl_out),
            score_out: Dense::linear(&named, &l.score_out),
            interior,
            scratch: Scratch::default(),
        }
    }

    /// The kernel this network runs with.
    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// Cells of one position's bordered grid.
    fn grid_cells(&self) -> usize {
        self.grid.cells()
    }

    /// Per-position means over the board of the first `channels` channels of `x`
    /// (`stride` floats per cell): `[n][channels]`.
    fn board_mean(&self, x: &[f32], stride: usize, channels: usize, n: usize) -> Vec<f32> {
        let mut m = vec![0.0; n * channels];
        let g = self.grid_cells();
        for (p, out) in m.chunks_mut(channels).enumerate() {
            for &cell in &self.interior {
                let v = &x[(p * g + cell) * stride..][..channels];
                out.iter_mut().zip(v).for_each(|(a, b)| *a += b);
            }
            let area = self.interior.len() as f32;
            out.iter_mut().for_each(|a| *a /= area);
        }
        m
    }

    /// Runs the network on a batch of positions of its game, in chunks small enough for
    /// the activations to stay in cache.
    pub fn predict(&mut self, states: &[State]) -> Vec<Prediction> {
        states
            .chunks(CHUNK)
            .flat_map(|c| self.predict_chunk(c))
            .collect()
    }

    fn predict_chunk(&mut self, states: &[State]) -> Vec<Prediction> {
        let n = states.len();
        if n == 0 {
            return Vec::new();
        }
        let area = self.interior.len();
        let g = self.grid_cells();
        let mut s = std::mem::take(&mut self.scratch);
        s.cells.clear();
        for p in 0..n {
            s.cells.extend(self.interior.iter().map(|c| p * g + c));
        }
        // Encode [plane][y][x] into the bordered channel-last input.
        let mut one = vec![0.0; PLANES * area];
        let input = sized(&mut s.input, n * g * INPUT_STRIDE);
        for (p, st) in states.iter().enumerate() {
            encode_into(st, &mut one);
            for (i, &cell) in self.interior.iter().enumerate() {
                let dst = &mut input[(p * g + cell) * INPUT_STRIDE..][..PLANES];
                for (c, d) in dst.iter_mut().enumerate() {
                    *d = one[c * area + i];
                }
            }
        }
        let c = self.stem.c_pad();
        let kernel = self.kernel;
        let grid = self.grid;
        // 1×1 convolutions (the heads).
        let run = |conv: &Packed,
                   x: &[f32],
                   x_stride: usize,
                   out: &mut Vec<f32>,
                   residual: Option<&[f32]>,
                   relu: bool| {
            let cp = conv.c_pad();
            let out = sized(out, n * g * cp);
            convolve(
                kernel,
                conv,
                Job {
                    x: &x[..n * g * x_stride],
                    x_stride,
                    taps: &[0],
                    cells: &s.cells,
                    out: &mut out[..n * g * cp],
                    out_stride: cp,
                    residual: residual.map(|r| &r[..n * g * cp]),
                    relu,
                },
            );
        };
        let mut wino = std::mem::take(&mut s.winograd);
        let mut conv3 = |conv: &Winograd,
                         x: &[f32],
                         x_stride: usize,
                         out: &mut Vec<f32>,
                         residual: Option<&[f32]>| {
            let out = sized(out, n * g * c);
            let io = Io {
                x,
                x_stride,
                out,
                residual,
                relu: true,
            };
            convolve3x3(kernel, conv, grid, n, io, &mut wino);
        };
        conv3(&self.stem, &s.input, INPUT_STRIDE, &mut s.h, None);
        for b in &self.blocks {
            conv3(&b.a, &s.h, c, &mut s.t, None);
            if let Some(gp) = &b.gpool {
                let bias = gp.forward(&self.board_mean(&s.t, c, gp.d_in, n), false);
                for p in 0..n {
                    let add = &bias[p * gp.d_out..][..gp.d_out];
                    for &cell in &self.interior {
                        let v = &mut s.t[(p * g + cell) * c..][..gp.d_out];
                        v.iter_mut().zip(add).for_each(|(a, b)| *a += b);
                    }
                }
            }
            conv3(&b.b, &s.t, c, &mut s.y, Some(&s.h));
            std::mem::swap(&mut s.h, &mut s.y);
        }
        s.winograd = wino;
        let hp = self.policy_conv.c_pad();
        run(&self.policy_conv, &s.h, c, &mut s.policy, None, true);
        let pooled = self.board_mean(&s.policy, hp, self.policy_conv.c_out(), n);
        run(&self.policy_out, &s.policy, hp, &mut s.planes, None, false);
        let hv = self.value_conv.c_pad();
        run(&self.value_conv, &s.h, c, &mut s.value, None, true);
        let vmean = self.board_mean(&s.value, hv, self.value_conv.c_out(), n);
        let pass = self.pass_out.forward(&pooled, false);
        let hidden = self.value_fc.forward(&vmean, true);
        let wdl = self.wdl_out.forward(&hidden, false);
        let score = self.score_out.forward(&hidden, false);
        let slots = self.policy_out.c_out();
        let ps = self.policy_out.c_pad();
        let size = self.game.policy_size();
        let out = (0..n)
            .map(|i| {
                let mut logits = Vec::with_capacity(size);
                for slot in 0..slots {
                    logits.extend(
                        self.interior
                            .iter()
                            .map(|&cell| s.planes[(i * g + cell) * ps + slot]),
                    );
                }
                logits.push(pass[i]);
                let z = &wdl[i * 3..][..3];
                let m = z.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
                let e: Vec<f32> = z.iter().map(|v| (v - m).exp()).collect();
                let sum: f32 = e.iter().sum();
                Prediction {
                    policy_logits: logits,
                    wdl: [e[0] / sum, e[1] / sum, e[2] / sum],
                    score: score[i].tanh(),
                }
            })
            .collect();
        self.scratch = s;
        out
    }
}

/// The largest difference between the fast path's outputs (policy and WDL logits, score)
/// and Burn's that [`FastNet::check_against_burn`] accepts. Observed: within 1e-5 on
/// trained nets (Winograd F(4×4, 3×3) rounding); a layer the fast path misses or
/// misreads moves the outputs by far more.
pub const FAST_PATH_TOLERANCE: f32 = 1e-3;

impl FastNet {
    /// The largest difference between this fast net's outputs and Burn's forward pass
    /// of `model` (on whatever device it lives) over a few positions of its game: the
    /// start and positions after random legal moves, from a fixed seed. NaN counts as
    /// infinitely far.
    pub fn difference_from_burn(&mut self, model: &LoadedModel) -> f32 {
        let states = self.game.check_positions();
        let want = crate::infer::prediction::predict(model, &states);
        let got = self.predict(&states);
        crate::infer::compare::max_difference(&got, &want, |_| 1.0)
    }

    /// Runs this fast net and Burn's forward pass of `model` on a few positions of its
    /// game (the start and positions after random legal moves, from a fixed seed) and
    /// returns the largest difference of their outputs; above [`FAST_PATH_TOLERANCE`],
    /// the model is refused with [`TrainError::Unsupported`], which names the
    /// alternative (Burn's evaluator).
    pub fn check_against_burn(&mut self, model: &LoadedModel) -> Result<f32, TrainError> {
        let diff = self.difference_from_burn(model);
        if diff > FAST_PATH_TOLERANCE {
            return Err(TrainError::Unsupported(format!(
                "the fast inference path differs from Burn's forward pass by {diff:.3e} \
                 (more than {FAST_PATH_TOLERANCE:e}) on this network: run it with Burn's \
                 evaluator (selfplay.net_engine = \"burn\", or the player option engine=burn)"
            )));
        }
        Ok(diff)
    }
}

/// The fast path as a self-play evaluator: one thread, batched.
pub struct FastEvaluator {
    net: FastNet,
    name: String,
}

impl FastEvaluator {
    /// Folds `model`; `name` goes into the data's `model` column.
    pub fn new(model: &LoadedModel, name: String) -> FastEvaluator {
        FastEvaluator {
            net: FastNet::new(model),
            name,
        }
    }
}

impl Evaluator for FastEvaluator {
    fn evaluate(&mut self, states: &[State], moves: &[Vec<Move>]) -> Vec<Evaluation> {
        crate::infer::prediction::evaluations(&self.net.predict(states), states, moves)
    }

    fn name(&self) -> String {
        self.name.clone()
    }

    /// Where the fast path's cost per position levels off (`flipzero bench play`: 16,
    /// 32 and 64 measured, docs/benchmarks.md).
    fn preferred_batch(&self) -> usize {
        32
    }
}
