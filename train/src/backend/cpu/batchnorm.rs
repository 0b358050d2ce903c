//! BatchNorm in training mode: batch statistics, running statistics, and the backward
//! coefficients.

use rayon::prelude::*;

use super::forward::task_chunks;
use super::shapes::{Bn, Geometry, Partial, TASK};
use super::state::Stats;
use crate::kernels::LANES;

/// The coefficients of a BatchNorm's backward: `dz = coef · (g − k1 − x̂ · k2)` with
/// `g` the gradient of its output through the ReLU and `x̂ = z · inv + centre`.
pub(super) struct BnCoefs {
    pub(super) coef: Vec<f32>,
    pub(super) k1: Vec<f32>,
    pub(super) k2: Vec<f32>,
    pub(super) inv: Vec<f32>,
    pub(super) centre: Vec<f32>,
}

impl BnCoefs {
    /// The backward of the BatchNorm whose input was `z`, output `a` and output
    /// gradient `d_out`.
    pub(super) fn on<'a>(&'a self, z: &'a [f32], a: &'a [f32], d_out: &'a [f32]) -> BnGrad<'a> {
        BnGrad {
            k: self,
            z,
            a,
            d_out,
        }
    }
}

/// [`BnCoefs`] with the buffers they apply to.
pub(super) struct BnGrad<'a> {
    pub(super) k: &'a BnCoefs,
    pub(super) z: &'a [f32],
    pub(super) a: &'a [f32],
    pub(super) d_out: &'a [f32],
}

/// The per-sample inverse std and centre of `x̂ = z · inv + centre`.
pub(super) fn normalizer(st: &Stats, c: usize) -> (Vec<f32>, Vec<f32>) {
    let inv = st.inv_std[..c].to_vec();
    let centre = (0..c).map(|i| -st.mean[i] * inv[i]).collect();
    (inv, centre)
}

impl Bn {
    /// Batch statistics from the per-task sums of `z` and `z²` over `count` cells;
    /// updates the running statistics as Burn does (momentum, biased variance).
    pub(super) fn finish(&mut self, parts: &[Partial], count: usize) -> Stats {
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
    pub(super) fn affine(&self, values: &[Vec<f32>], st: &Stats) -> (Vec<f32>, Vec<f32>) {
        let (gamma, beta) = (&values[self.gamma], &values[self.beta]);
        let scale: Vec<f32> = gamma.iter().zip(&st.inv_std).map(|(a, b)| a * b).collect();
        let shift = (0..self.c)
            .map(|i| beta[i] - st.mean[i] * scale[i])
            .collect();
        (scale, shift)
    }

    /// From the per-task sums of `g` and `g · x̂` over `count` cells: accumulates γ's
    /// and β's gradients, returns the coefficients of the backward.
    pub(super) fn gradients(
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

impl Geometry {
    /// The sums for a BatchNorm's backward over the batch (see [`Geometry::reduce_task`]),
    /// one [`Partial`] per task.
    pub(super) fn bn_reduce(
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
    pub(super) fn bn_apply(
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
}
