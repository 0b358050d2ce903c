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
//! name. Two kinds of policy read different inputs ([`PolicyKind`]):
//!
//! - `accumulator` (above): the subnets read a shared low-rank projection `z` of the
//!   activations, so that a subnet costs `policy_dim × policy_rank` multiply-adds instead
//!   of `policy_dim × hidden` (the projection once per position);
//! - `board`: Monty's own, each subnet a sparse layer over the cells,
//!   `relu(c + Σ P[f])` over the board features `f` (a cell holding the side to move's
//!   piece, the opponent's, or a blocker: `3 × cells` inputs), so that a policy costs a
//!   few thousand additions and no accumulator ([`board_features`]).

use engine::{Move, MoveKind, Rng, State};
use serde::{Deserialize, Serialize};

use crate::features::{CellState, Layout};

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
    /// Width of the shared projection the policy subnets read (`accumulator` policies).
    pub policy_rank: usize,
    /// What the policy subnets read: `accumulator` (a file without the key) or `board`.
    /// Written only for `board`, so that an accumulator net's `model.json` reads in
    /// builds from before the key.
    #[serde(default, skip_serializing_if = "PolicyKind::is_accumulator")]
    pub policy: PolicyKind,
    /// Accumulator scale of the quantised net (h · qa in i16).
    pub qa: i16,
    /// Output-weight scale of the quantised net (w₂ · qb in i16).
    pub qb: i16,
    /// |weight| bound kept by training on W₁, b₁ (so the i16 accumulator cannot
    /// overflow) and w₂ (so w₂ · qb and clamp(h)·w₂·qb fit an i16).
    pub clip: f32,
}

/// What a fast net's policy subnets read (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PolicyKind {
    /// A low-rank projection of the value's accumulator.
    #[default]
    Accumulator,
    /// The board's cells, sparse (Monty's Ataxx policy).
    Board,
}

impl PolicyKind {
    fn is_accumulator(&self) -> bool {
        *self == PolicyKind::Accumulator
    }
}

impl std::str::FromStr for PolicyKind {
    type Err = crate::Error;
    fn from_str(s: &str) -> Result<PolicyKind, crate::Error> {
        match s {
            "accumulator" => Ok(PolicyKind::Accumulator),
            "board" => Ok(PolicyKind::Board),
            _ => Err(crate::Error::Format(format!(
                "policy `{s}` (`accumulator` or `board`)"
            ))),
        }
    }
}

/// The board features of a position, from the relative cell states of its active tuple
/// features (`active`, as [`Layout::active`] gives them: own 1, the opponent's 2,
/// blocked 3): `(state − 1) × cells + cell` for every cell that is not empty, in cell
/// order, into `out`. What a `board` policy reads; the trainer and the searchers derive
/// them from the same tuple features, so they cannot disagree.
pub fn board_features(layout: &Layout, active: &[u32], out: &mut Vec<u16>) {
    out.clear();
    let cells = layout.cells();
    for c in 0..cells {
        if let Some(st) = layout.cell_state_in(active, c)
            && st != 0
        {
            out.push(((usize::from(st) - 1) * cells + c) as u16);
        }
    }
}

/// [`board_features`] of position `s` straight from its cells (the side to move's view;
/// `states` is scratch): the same features in the same order, without the tuples (what
/// an expansion asks, which needs no accumulator).
pub fn board_features_of(
    layout: &Layout,
    s: &State,
    states: &mut Vec<CellState>,
    out: &mut Vec<u16>,
) {
    if let State::Ataxx(p) = s {
        layout.ataxx_board_features(p, s.side_to_move(), out);
        return;
    }
    layout.relative_states(s, s.side_to_move(), states);
    out.clear();
    let cells = layout.cells();
    for (c, &st) in states[..cells].iter().enumerate() {
        if st != 0 && layout.on_board(c) {
            out.push(((usize::from(st) - 1) * cells + c) as u16);
        }
    }
}

/// Inputs of a `board` policy: three per cell index.
pub fn board_inputs(cells: usize) -> usize {
    3 * cells
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
            policy: PolicyKind::Accumulator,
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
    /// B: `policy_rank × hidden` (`accumulator` policies; empty for `board` ones).
    pub p_proj: Vec<f32>,
    /// P: `subnets × policy_dim × policy_rank` (`accumulator`), or
    /// `board_inputs × subnets × policy_dim` (`board`: a row per board feature).
    pub p_w: Vec<f32>,
    /// c: `subnets × policy_dim`.
    pub p_b: Vec<f32>,
}

/// The named tensors of a net, in file order, with their shapes.
pub fn tensor_shapes(cfg: &FastNetConfig, layout: &Layout) -> Vec<(&'static str, Vec<usize>)> {
    let s = subnets(layout.cells());
    let mut t = vec![
        ("l1.weight", vec![layout.inputs(), cfg.hidden]),
        ("l1.bias", vec![cfg.hidden]),
        ("value.weight", vec![cfg.hidden]),
        ("value.bias", vec![1]),
    ];
    match cfg.policy {
        PolicyKind::Accumulator => {
            t.push(("policy.proj", vec![cfg.policy_rank, cfg.hidden]));
            t.push(("policy.weight", vec![s, cfg.policy_dim, cfg.policy_rank]));
        }
        PolicyKind::Board => {
            t.push((
                "policy.cells",
                vec![board_inputs(layout.cells()), s, cfg.policy_dim],
            ));
        }
    }
    t.push(("policy.bias", vec![s, cfg.policy_dim]));
    t
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
        let board = cfg.policy == PolicyKind::Board;
        let net = FloatNet {
            l1_w: uni(layout.inputs() * h, 0.5 / t),
            l1_b: uni(h, 0.1).iter().map(|b| b + 0.25).collect(),
            v_w: uni(h, 1.0 / (h as f32).sqrt()),
            v_b: 0.0,
            p_proj: if board {
                Vec::new()
            } else {
                uni(cfg.policy_rank * h, 1.0 / (h as f32).sqrt())
            },
            // A board row is added once for each piece on the board (tens of them).
            p_w: if board {
                uni(board_inputs(layout.cells()) * s * cfg.policy_dim, 0.5 / t)
            } else {
                uni(
                    s * cfg.policy_dim * cfg.policy_rank,
                    1.0 / (cfg.policy_rank as f32).sqrt(),
                )
            },
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

    /// Every subnet's outputs (before their ReLU) of a `board` policy on board features
    /// `board`: the biases, then each feature's row added in turn (the order the
    /// searchers add them in: the same bits).
    pub fn board_outputs(&self, board: &[u16], out: &mut Vec<f32>) {
        let n = self.p_b.len();
        out.clear();
        out.extend_from_slice(&self.p_b);
        for &f in board {
            let row = &self.p_w[usize::from(f) * n..(usize::from(f) + 1) * n];
            for (o, w) in out.iter_mut().zip(row) {
                *o += w;
            }
        }
    }

    /// The policy logits of `moves` (0 for the pass) from the side to move's accumulator
    /// `acc` (an `accumulator` policy) or its board features `board` (a `board` one).
    pub fn logits(&self, acc: &[f32], board: &[u16], moves: &[Move], cells: usize) -> Vec<f32> {
        let d = self.cfg.policy_dim;
        let mut ef = vec![0f32; d];
        let mut et = vec![0f32; d];
        let mut outs = Vec::new();
        let z = match self.cfg.policy {
            PolicyKind::Accumulator => {
                let a: Vec<f32> = acc.iter().map(|x| x.clamp(0.0, 1.0)).collect();
                self.project(&a)
            }
            PolicyKind::Board => {
                self.board_outputs(board, &mut outs);
                Vec::new()
            }
        };
        moves
            .iter()
            .map(|&m| match move_slots(m, cells) {
                None => 0.0,
                Some((f, t)) => {
                    if self.cfg.policy == PolicyKind::Board {
                        ef.copy_from_slice(&outs[f * d..(f + 1) * d]);
                        et.copy_from_slice(&outs[t * d..(t + 1) * d]);
                    } else {
                        self.subnet(f, &z, &mut ef);
                        self.subnet(t, &z, &mut et);
                    }
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
        let mut t: Vec<&[f32]> = vec![
            &self.l1_w,
            &self.l1_b,
            &self.v_w,
            std::slice::from_ref(&self.v_b),
        ];
        if self.cfg.policy == PolicyKind::Accumulator {
            t.push(&self.p_proj);
        }
        t.push(&self.p_w);
        t.push(&self.p_b);
        t
    }

    /// [`FloatNet::tensors`], to change.
    pub fn tensors_mut(&mut self) -> Vec<&mut [f32]> {
        let mut t: Vec<&mut [f32]> = vec![
            &mut self.l1_w,
            &mut self.l1_b,
            &mut self.v_w,
            std::slice::from_mut(&mut self.v_b),
        ];
        if self.cfg.policy == PolicyKind::Accumulator {
            t.push(&mut self.p_proj);
        }
        t.push(&mut self.p_w);
        t.push(&mut self.p_b);
        t
    }

    /// A net of `tensors` in [`tensor_shapes`] order (their lengths checked by the
    /// caller).
    pub fn from_tensors(cfg: FastNetConfig, tensors: Vec<Vec<f32>>) -> FloatNet {
        let mut it = tensors.into_iter();
        let mut next = || it.next().expect("a tensor of each shape");
        let (l1_w, l1_b, v_w, v_b) = (next(), next(), next(), next()[0]);
        let p_proj = match cfg.policy {
            PolicyKind::Accumulator => next(),
            PolicyKind::Board => Vec::new(),
        };
        FloatNet {
            l1_w,
            l1_b,
            v_w,
            v_b,
            p_proj,
            p_w: next(),
            p_b: next(),
            cfg,
        }
    }

    /// The same accumulator and value head under a fresh policy head of kind `policy`
    /// with `policy_dim`-wide subnets (seeded): how a policy of another kind is trained
    /// on a net's value.
    pub fn with_fresh_policy(
        &self,
        policy: PolicyKind,
        policy_dim: usize,
        seed: u64,
    ) -> Result<FloatNet, crate::Error> {
        let cfg = FastNetConfig {
            policy,
            policy_dim,
            ..self.cfg.clone()
        };
        let fresh = FloatNet::init(cfg, seed)?;
        Ok(FloatNet {
            l1_w: self.l1_w.clone(),
            l1_b: self.l1_b.clone(),
            v_w: self.v_w.clone(),
            v_b: self.v_b,
            ..fresh
        })
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
