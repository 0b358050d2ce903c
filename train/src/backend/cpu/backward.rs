//! The backward pass: the heads, then the tower from the last layer to the first.

use rayon::prelude::*;

use super::batchnorm::{BnGrad, normalizer};
use super::forward::task_chunks_opt;
use super::layers::{dense_backward, ends_block, transposed};
use super::losses::HeadGrads;
use super::shapes::{Conv, Geometry, INPUT_STRIDE, Op, Partial, SUB, TASK, TILE};
use super::state::{CpuTrainer, Stats, TaskScratch};
use crate::kernels::winograd;
use crate::kernels::{GradJob, LANES, weight_gradient};

impl CpuTrainer {
    pub(super) fn backward(&mut self, d: HeadGrads) {
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
            .chain(l.ownership_out.as_ref())
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
        if let Some(o) = &l.ownership_out {
            // The ownership head's input gradient is written to `dhead`; the board
            // mean's is added to it.
            let op = o.c_pad;
            let mut dbias = 0.0f32;
            for (s, dy) in d.ownership.chunks(area).enumerate() {
                for (i, &cell) in geo.interior.iter().enumerate() {
                    t.doz[(s * g + cell) * op] = dy[i];
                    dbias += dy[i];
                }
            }
            if let Some(b) = o.bias {
                grads[b][0] += dbias;
            }
            geo.backward_pass(
                grads,
                o,
                (&t.v, hp),
                Dz::Given(&t.doz, op),
                Some(InputGrad::new(head(3), &mut t.dhead, None)),
                None,
                n,
                &mut t.tasks,
            );
            geo.broadcast_add(
                &mut t.dhead,
                hp,
                &dvm,
                l.value_conv.c_out,
                1.0 / area as f32,
                n,
            );
        } else {
            geo.broadcast_set(
                &mut t.dhead,
                hp,
                &dvm,
                l.value_conv.c_out,
                1.0 / area as f32,
                n,
            );
        }
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
}

/// The output gradient of a backward pass.
pub(super) enum Dz<'a> {
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
pub(super) struct InputGrad<'a> {
    pub(super) op: &'a Op,
    pub(super) dx: &'a mut [f32],
    pub(super) residual: Option<&'a [f32]>,
}

impl<'a> InputGrad<'a> {
    pub(super) fn new(op: &'a Op, dx: &'a mut [f32], residual: Option<&'a [f32]>) -> Self {
        InputGrad { op, dx, residual }
    }
}

/// A BatchNorm whose backward sums a backward pass computes on the input gradient it
/// writes.
pub(super) struct Reduce<'a> {
    pub(super) stats: &'a Stats,
    pub(super) z: &'a [f32],
    pub(super) a: &'a [f32],
    pub(super) c: usize,
}

impl Geometry {
    /// One backward pass through convolution `c` over the batch, by tasks: the output
    /// gradient from `dz`; the weight gradient (of input `x`, `xs` floats per cell)
    /// accumulated into `grads`; the input gradient, plus a residual, written to `dx`;
    /// and the backward sums of the BatchNorm `reduce` on that input gradient.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn backward_pass(
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
    pub(super) fn reduce_task(
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
    pub(super) fn grad_task(
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
}
