//! The network description and its float weights: the one place the fast nets' shapes
//! and parameters are defined (the trainer, the quantised inference, the file format and
//! `model.json` all derive theirs from [`FastNetConfig`]).
//!
//! ```text
//! features (one per tuple, per perspective; features.rs)
//!   └─ accumulator  h = b₁ + Σ W₁[f]                       (hidden, per perspective)
//!        ├─ value   v = tanh(w₂ · clamp(h, 0, 1)² + b₂)    (SCReLU, the side to move's h)
//!        └─ policy  z = B a, a = clamp(h, 0, 1)                  (policy_rank, shared)
//!                   for a move from-slot f, to-slot t:
//!                   logit = relu(P_f z + c_f) · relu(P_t z + c_t)
//! ```
//! The policy's "subnets" are Monty's: one small projection per from-slot (a jump's
//! source; one shared slot for clones and placements) and per to-slot (the target cell),
//! their dot product the move's score; a node evaluates only the subnets its legal moves
//! name. The subnets read a shared low-rank projection `z` of the activations, so that a
//! subnet costs `policy_dim × policy_rank` multiply-adds instead of
//! `policy_dim × hidden` (the projection once per position).

use engine::{Move, MoveKind, Rng};
use serde::{Deserialize, Serialize};

use crate::features::Layout;

/// The fast net's description, written to `model.json` (see docs/export.md).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FastNetConfig {
    /// The game (`ataxx`, `othello`, …).
    pub game: String,
    /// The input features: `tuple2x2x4` (features.rs).
    pub features: String,
    /// Width of the accumulator.
    pub hidden: usize,
    /// Width of each policy subnet's output.
    pub policy_dim: usize,
    /// Width of the shared projection the policy subnets read.
    pub policy_rank: usize,
    /// Accumulator scale of the quantised net (h · qa in i16).
    pub qa: i16,
    /// Output-weight scale of the quantised net (w₂ · qb in i16).
    pub qb: i16,
    /// |weight| bound kept by training on W₁, b₁ (so the i16 accumulator cannot
    /// overflow) and w₂ (so w₂ · qb and clamp(h)·w₂·qb fit an i16).
    pub clip: f32,
}

/// The feature set this build knows.
pub const FEATURES: &str = "tuple2x2x4";

impl FastNetConfig {
    /// The default shape for `game`: 256 hidden, 4-wide policy subnets, Monty's scales.
    pub fn for_game(game: engine::Game, hidden: usize) -> FastNetConfig {
        let layout = Layout::new(game);
        // The accumulator sums one weight per tuple plus the bias; keep it in i16.
        let bound = 32_000.0 / (255.0 * (layout.tuples() as f32 + 1.0));
        FastNetConfig {
            game: game.to_string(),
            features: FEATURES.into(),
            hidden,
            policy_dim: 4,
            policy_rank: 32,
            qa: 255,
            qb: 64,
            clip: bound.min(1.98),
        }
    }

    /// Checks what a loaded description claims against this build.
    pub fn check(&self) -> Result<engine::Game, crate::Error> {
        let game: engine::Game = self
            .game
            .parse()
            .map_err(|_| crate::Error::Format(format!("unknown game `{}`", self.game)))?;
        if self.features != FEATURES {
            return Err(crate::Error::Format(format!(
                "features `{}` (this build knows `{FEATURES}`)",
                self.features
            )));
        }
        if self.hidden == 0 || !self.hidden.is_multiple_of(32) || self.hidden > 2048 {
            return Err(crate::Error::Format(format!(
                "hidden {} (a multiple of 32, at most 2048)",
                self.hidden
            )));
        }
        if !(1..=64).contains(&self.policy_dim) || !(1..=self.hidden).contains(&self.policy_rank) {
            return Err(crate::Error::Format(format!(
                "policy_dim {} (1 to 64), policy_rank {} (1 to hidden)",
                self.policy_dim, self.policy_rank
            )));
        }
        if !(1..=255).contains(&self.qa) || !(1..=128).contains(&self.qb) {
            return Err(crate::Error::Format(
                "qa must be 1..=255, qb 1..=128".into(),
            ));
        }
        let tuples = Layout::new(game).tuples() as f32;
        if !(self.clip > 0.0
            && self.clip * f32::from(self.qb) <= 127.0
            && self.clip * f32::from(self.qa) * (tuples + 1.0) <= 32_767.0)
        {
            return Err(crate::Error::Format(format!(
                "clip {} lets the quantised sums overflow",
                self.clip
            )));
        }
        Ok(game)
    }
}

/// The policy slots of a game with `cells` cell indices: from-slots `0..cells` (a jump's
/// source), `cells` (clones and placements), to-slots `cells + 1 + target`.
pub fn subnets(cells: usize) -> usize {
    2 * cells + 1
}

/// The (from, to) subnets of a move; `None` for the pass.
#[inline]
pub fn move_slots(mv: Move, cells: usize) -> Option<(usize, usize)> {
    match mv.kind() {
        MoveKind::Pass => None,
        MoveKind::Clone { to } => Some((cells, cells + 1 + to.index())),
        MoveKind::Jump { from, to } => Some((from.index(), cells + 1 + to.index())),
    }
}

/// The float weights (the trainer's and the reference's).
#[derive(Clone, Debug, PartialEq)]
pub struct FloatNet {
    /// The description.
    pub cfg: FastNetConfig,
    /// W₁: `inputs × hidden`, a feature's row contiguous.
    pub l1_w: Vec<f32>,
    /// b₁: `hidden`.
    pub l1_b: Vec<f32>,
    /// w₂: `hidden`.
    pub v_w: Vec<f32>,
    /// b₂.
    pub v_b: f32,
    /// B: `policy_rank × hidden`.
    pub p_proj: Vec<f32>,
    /// P: `subnets × policy_dim × policy_rank`.
    pub p_w: Vec<f32>,
    /// c: `subnets × policy_dim`.
    pub p_b: Vec<f32>,
}

/// The named tensors of a net, in file order, with their shapes.
pub fn tensor_shapes(cfg: &FastNetConfig, layout: &Layout) -> Vec<(&'static str, Vec<usize>)> {
    let s = subnets(layout.cells());
    vec![
        ("l1.weight", vec![layout.inputs(), cfg.hidden]),
        ("l1.bias", vec![cfg.hidden]),
        ("value.weight", vec![cfg.hidden]),
        ("value.bias", vec![1]),
        ("policy.proj", vec![cfg.policy_rank, cfg.hidden]),
        ("policy.weight", vec![s, cfg.policy_dim, cfg.policy_rank]),
        ("policy.bias", vec![s, cfg.policy_dim]),
    ]
}

impl FloatNet {
    /// Fresh weights for `cfg`, seeded: small uniform W₁ (about 1/√tuples, so the
    /// accumulator starts inside SCReLU's range), the rest uniform in ±1/√hidden.
    pub fn init(cfg: FastNetConfig, seed: u64) -> Result<FloatNet, crate::Error> {
        let game = cfg.check()?;
        let layout = Layout::new(game);
        let mut r = Rng::new(seed);
        let mut uni = |n: usize, scale: f32| -> Vec<f32> {
            (0..n)
                .map(|_| (r.next_f64() as f32 * 2.0 - 1.0) * scale)
                .collect()
        };
        let h = cfg.hidden;
        let s = subnets(layout.cells());
        let t = (layout.tuples() as f32).sqrt();
        let net = FloatNet {
            l1_w: uni(layout.inputs() * h, 0.5 / t),
            l1_b: uni(h, 0.1).iter().map(|b| b + 0.25).collect(),
            v_w: uni(h, 1.0 / (h as f32).sqrt()),
            v_b: 0.0,
            p_proj: uni(cfg.policy_rank * h, 1.0 / (h as f32).sqrt()),
            p_w: uni(
                s * cfg.policy_dim * cfg.policy_rank,
                1.0 / (cfg.policy_rank as f32).sqrt(),
            ),
            p_b: uni(s * cfg.policy_dim, 0.1)
                .iter()
                .map(|b| b + 0.1)
                .collect(),
            cfg,
        };
        Ok(net)
    }

    /// The accumulator of one perspective's active features, in floats.
    pub fn accumulate(&self, active: &[u32], out: &mut [f32]) {
        let h = self.cfg.hidden;
        out.copy_from_slice(&self.l1_b);
        for &f in active {
            let row = &self.l1_w[f as usize * h..(f as usize + 1) * h];
            for (o, w) in out.iter_mut().zip(row) {
                *o += w;
            }
        }
    }

    /// The value (side to move's view, in [−1, 1]) of an accumulator.
    pub fn value(&self, acc: &[f32]) -> f32 {
        let out: f32 = acc
            .iter()
            .zip(&self.v_w)
            .map(|(a, w)| {
                let c = a.clamp(0.0, 1.0);
                c * c * w
            })
            .sum::<f32>()
            + self.v_b;
        out.tanh()
    }

    /// The policy's shared projection `z = B a` of activations `a`.
    pub fn project(&self, a: &[f32]) -> Vec<f32> {
        let h = self.cfg.hidden;
        (0..self.cfg.policy_rank)
            .map(|r| {
                self.p_proj[r * h..(r + 1) * h]
                    .iter()
                    .zip(a)
                    .map(|(w, x)| w * x)
                    .sum()
            })
            .collect()
    }

    /// The output of subnet `k` on the projection `z` (before its ReLU).
    pub fn subnet(&self, k: usize, z: &[f32], out: &mut [f32]) {
        let (d, r) = (self.cfg.policy_dim, self.cfg.policy_rank);
        for (j, o) in out.iter_mut().enumerate() {
            let row = &self.p_w[(k * d + j) * r..(k * d + j + 1) * r];
            *o = self.p_b[k * d + j] + row.iter().zip(z).map(|(w, x)| w * x).sum::<f32>();
        }
    }

    /// The policy logits of `moves` (0 for the pass) from the side to move's accumulator.
    pub fn logits(&self, acc: &[f32], moves: &[Move], cells: usize) -> Vec<f32> {
        let a: Vec<f32> = acc.iter().map(|x| x.clamp(0.0, 1.0)).collect();
        let z = self.project(&a);
        let d = self.cfg.policy_dim;
        let mut ef = vec![0f32; d];
        let mut et = vec![0f32; d];
        moves
            .iter()
            .map(|&m| match move_slots(m, cells) {
                None => 0.0,
                Some((f, t)) => {
                    self.subnet(f, &z, &mut ef);
                    self.subnet(t, &z, &mut et);
                    ef.iter()
                        .zip(&et)
                        .map(|(x, y)| x.max(0.0) * y.max(0.0))
                        .sum()
                }
            })
            .collect()
    }

    /// The tensors in [`tensor_shapes`] order.
    pub fn tensors(&self) -> Vec<&[f32]> {
        vec![
            &self.l1_w,
            &self.l1_b,
            &self.v_w,
            std::slice::from_ref(&self.v_b),
            &self.p_proj,
            &self.p_w,
            &self.p_b,
        ]
    }

    /// Keeps the clipped tensors inside ±clip (the trainer calls it after each step).
    pub fn clip(&mut self) {
        let c = self.cfg.clip;
        for x in self
            .l1_w
            .iter_mut()
            .chain(self.l1_b.iter_mut())
            .chain(self.v_w.iter_mut())
        {
            *x = x.clamp(-c, c);
        }
    }
}
