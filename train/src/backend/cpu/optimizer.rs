//! AdamW and SGD with momentum, as Burn computes them, and the optimizer state's file.

use rayon::prelude::*;

use super::state::{CpuTrainer, OptimState};
use crate::config::OptimizerKind;

impl CpuTrainer {
    /// Applies the optimizer to the gradients.
    pub(super) fn update(&mut self, lr: f64) {
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
        let hash = engine::fnv1a(&out);
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
        if engine::fnv1a(body).to_le_bytes() != hash {
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

pub(super) const OPTIM_MAGIC: &[u8] = b"flipzero-optimizer-v1\n";
