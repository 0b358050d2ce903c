//! The forward pass: the tower layer by layer, then the heads.

use rayon::prelude::*;

use super::layers::{dense_forward, ends_block, prepared};
use super::shapes::{Conv, Dense, Geometry, INPUT_STRIDE, Layers, Op, Partial, TASK};
use super::state::{CpuTrainer, LayerTape, TaskScratch};
use crate::data::{Batch, row_major};
use crate::kernels::winograd::{Io, convolve3x3};
use crate::kernels::{Job, LANES, convolve};
use crate::net::PLANES;

impl CpuTrainer {
    pub(super) fn forward(&mut self, batch: &Batch) {
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
        let inputs = row_major(&batch.inputs);
        t.input[..n * g * INPUT_STRIDE]
            .par_chunks_mut(g * INPUT_STRIDE)
            .zip(inputs.par_chunks(PLANES * area))
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
            .chain(l.ownership_out.as_ref())
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
        if let Some(o) = &l.ownership_out {
            geo.forward_pass(head(3), Src::Plain(&t.v, hp), &mut t.oz, 0, n, &mut t.tasks);
            let op = o.c_pad;
            t.own.resize(n * area, 0.0);
            t.own
                .par_chunks_mut(area)
                .zip(t.oz.par_chunks(g * op))
                .for_each(|(own, oz)| {
                    for (y, &cell) in own.iter_mut().zip(&geo.interior) {
                        *y = oz[cell * op].tanh();
                    }
                });
        }
        t.vm = geo.board_means(&t.v, hp, l.value_conv.c_out, n);
        t.hidden = dense_forward(values, &l.value_fc, &t.vm, true);
        t.wdl = dense_forward(values, &l.wdl_out, &t.hidden, false);
        t.score = dense_forward(values, &l.score_out, &t.hidden, false)
            .iter()
            .map(|u| u.tanh())
            .collect();
    }
}

/// The input of a forward pass.
pub(super) enum Src<'a> {
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
pub(super) struct Gpool<'a> {
    pub(super) dense: &'a Dense,
    pub(super) values: &'a [Vec<f32>],
    pub(super) gmean: &'a mut [f32],
    pub(super) h2: &'a mut [f32],
}

/// The input of the pass after tower layer `i`: the layer's BatchNorm applied to its
/// convolution output (plus the block's input after a block's second layer), written
/// to the layer's activations.
pub(super) fn tower_src<'a>(
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
pub(super) fn task_chunks(
    buf: &mut [f32],
    per: usize,
    n: usize,
) -> impl Iterator<Item = &mut [f32]> {
    buf[..n * per].chunks_mut(TASK * per)
}

/// As [`task_chunks`] for a buffer that may be absent: `None` for every task then.
pub(super) fn task_chunks_opt(
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
    pub(super) fn samples<'a>(
        &self,
        x: &'a [f32],
        stride: usize,
        s0: usize,
        m: usize,
    ) -> &'a [f32] {
        &x[s0 * self.g * stride..(s0 + m) * self.g * stride]
    }

    /// Applies `op` to the `m` samples of `x` (`xs` floats per cell) into `out`, plus
    /// `residual` (both with the op's `c_pad` floats per cell).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn conv_task(
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
    pub(super) fn sums_task(
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
    pub(super) fn stats_task(&self, z: &[f32], stride: usize, c: usize, m: usize) -> Partial {
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
    pub(super) fn apply_task(
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
    pub(super) fn forward_pass(
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

    /// Per-sample means over the board of the first `c` channels of the `m` samples of
    /// `x`, into `out` (`[m][c]`).
    pub(super) fn means_task(&self, x: &[f32], xs: usize, c: usize, out: &mut [f32], m: usize) {
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
    pub(super) fn add_task(
        &self,
        x: &mut [f32],
        xs: usize,
        add: &[f32],
        c: usize,
        scale: f32,
        m: usize,
    ) {
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
    pub(super) fn board_means(&self, x: &[f32], xs: usize, c: usize, n: usize) -> Vec<f32> {
        let mut m = vec![0.0; n * c];
        m.par_chunks_mut(c)
            .enumerate()
            .for_each(|(s, out)| self.means_task(self.samples(x, xs, s, 1), xs, c, out, 1));
        m
    }

    /// Adds `scale · add[s]` (`[n][c]`) to every board cell of sample s.
    pub(super) fn broadcast_add(
        &self,
        x: &mut [f32],
        xs: usize,
        add: &[f32],
        c: usize,
        scale: f32,
        n: usize,
    ) {
        x[..n * self.g * xs]
            .par_chunks_mut(self.g * xs)
            .enumerate()
            .for_each(|(s, xg)| self.add_task(xg, xs, &add[s * c..][..c], c, scale, 1));
    }

    /// Sets every board cell of sample s to `scale · v[s]` (`[n][c]`).
    pub(super) fn broadcast_set(
        &self,
        x: &mut [f32],
        xs: usize,
        v: &[f32],
        c: usize,
        scale: f32,
        n: usize,
    ) {
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
