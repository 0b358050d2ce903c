//! The fast nets' trainer: hand-written forward and backward passes (the layers are a
//! sparse sum, SCReLU/CReLU and small projections, so there is nothing for a tensor
//! library to win on a CPU), Adam with lazy updates of the feature rows a batch touched,
//! the clip bound kept after every step, threads over each batch's positions.
//!
//! Losses: value (tanh(out) − target)², policy cross-entropy against the search's visit
//! distribution over the legal moves (positions with a policy target only).

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::data::Examples;
use crate::features::Layout;
use crate::net::{FloatNet, PolicyKind, board_features};

/// Training settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TrainConfig {
    /// Passes over the data.
    pub epochs: u32,
    /// Positions per step.
    pub batch_size: usize,
    /// Adam's step size.
    pub lr: f32,
    /// The step size at the last epoch, as a fraction of `lr` (cosine in between).
    pub final_lr_fraction: f32,
    /// Weight of the policy loss against the value loss.
    pub policy_weight: f32,
    /// Share of the game's result in the value target (the rest the root value).
    pub result_weight: f32,
    /// Every n-th game (by id) is held out to measure the losses.
    pub holdout_every: u64,
    /// Seed of the initial weights and the order of the examples.
    pub seed: u64,
    /// Width of the accumulator of a fresh net.
    pub hidden: usize,
    /// When positive, an epoch is `replay` × the new positions ([`Job::new_positions`])
    /// drawn at random from the window without replacement (the whole window when that is
    /// fewer), instead of the whole window: in a loop that trains every generation, a
    /// position then takes part in about `replay × epochs` steps over its life in the
    /// window, however large the window is (KataGo's bound on reuse per new datum).
    /// 0: every epoch is the whole window.
    #[serde(default)]
    pub replay: f32,
    /// What the policy of a fresh net reads: `accumulator` or `board` (see
    /// [`crate::net::PolicyKind`]). Starting from a net (`--init`) whose policy is of the
    /// other kind keeps its accumulator and value head and puts a fresh policy head of
    /// this kind on them.
    #[serde(default)]
    pub policy: PolicyKind,
    /// Width of each policy subnet's output (a fresh policy head's; 4, Monty's).
    #[serde(default = "four")]
    pub policy_dim: usize,
    /// Whether the accumulator and the value head train (false: they are kept as they
    /// are, and only the policy head learns; a new policy head on a trained net).
    #[serde(default = "yes")]
    pub train_value: bool,
}

fn yes() -> bool {
    true
}

fn four() -> usize {
    4
}

impl Default for TrainConfig {
    fn default() -> Self {
        TrainConfig {
            epochs: 10,
            batch_size: 1024,
            lr: 1e-3,
            final_lr_fraction: 0.1,
            policy_weight: 1.0,
            result_weight: 0.5,
            holdout_every: 20,
            seed: 1,
            hidden: 256,
            replay: 0.0,
            policy: PolicyKind::Accumulator,
            policy_dim: 4,
            train_value: true,
        }
    }
}

/// Losses over a set of examples.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Losses {
    /// Mean squared value error.
    pub value: f64,
    /// Mean policy cross-entropy (positions with a target).
    pub policy: f64,
    /// Share of positions with a target whose most likely move is the target's.
    pub policy_accuracy: f64,
}

impl std::ops::AddAssign for Losses {
    fn add_assign(&mut self, o: Losses) {
        self.value += o.value;
        self.policy += o.policy;
        self.policy_accuracy += o.policy_accuracy;
    }
}

impl Losses {
    /// The loss the trainer minimises: value plus `policy_weight` × policy.
    pub fn total(&self, policy_weight: f32) -> f64 {
        self.value + f64::from(policy_weight) * self.policy
    }

    /// Sums over `n` positions (`with_policy` of them with a policy target) as means.
    fn per(self, n: usize, with_policy: usize) -> Losses {
        let (n, np) = (n.max(1) as f64, with_policy.max(1) as f64);
        Losses {
            value: self.value / n,
            policy: self.policy / np,
            policy_accuracy: self.policy_accuracy / np,
        }
    }
}

/// The gradients of one batch (empty tensors when only the losses are wanted).
#[derive(Default)]
struct Grads {
    v_w: Vec<f32>,
    v_b: f32,
    p_proj: Vec<f32>,
    p_w: Vec<f32>,
    p_b: Vec<f32>,
    l1_b: Vec<f32>,
    /// Per position: its features and the gradient of its accumulator.
    rows: Vec<(usize, Vec<f32>)>,
    loss: Losses,
    with_policy: usize,
}

impl Grads {
    fn zero(net: &FloatNet) -> Grads {
        Grads {
            v_w: vec![0.0; net.v_w.len()],
            v_b: 0.0,
            p_proj: vec![0.0; net.p_proj.len()],
            p_w: vec![0.0; net.p_w.len()],
            p_b: vec![0.0; net.p_b.len()],
            l1_b: vec![0.0; net.l1_b.len()],
            ..Grads::default()
        }
    }

    /// The gradients in [`FloatNet::tensors`] order, W₁'s left out (its rows are
    /// gathered from `rows`).
    fn tensors(&self, policy: PolicyKind) -> Vec<&[f32]> {
        let mut t: Vec<&[f32]> = vec![&self.l1_b, &self.v_w, std::slice::from_ref(&self.v_b)];
        if policy == PolicyKind::Accumulator {
            t.push(&self.p_proj);
        }
        t.push(&self.p_w);
        t.push(&self.p_b);
        t
    }

    fn merge(mut self, o: Grads) -> Grads {
        let add = |a: &mut [f32], b: &[f32]| a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
        add(&mut self.v_w, &o.v_w);
        self.v_b += o.v_b;
        add(&mut self.p_proj, &o.p_proj);
        add(&mut self.p_w, &o.p_w);
        add(&mut self.p_b, &o.p_b);
        add(&mut self.l1_b, &o.l1_b);
        self.rows.extend(o.rows);
        self.loss += o.loss;
        self.with_policy += o.with_policy;
        self
    }
}

/// Forward and backward of one position; adds its gradients into `g` (scaled by
/// `scale`), and its losses. With `backward` false only the losses.
/// What a pass over a position computes: the net's game's layout, the policy loss's
/// weight, whether the accumulator and the value head train, the gradients' scale and
/// whether there are gradients at all.
struct Pass<'a> {
    layout: &'a Layout,
    policy_weight: f32,
    train_value: bool,
    scale: f32,
    backward: bool,
}

fn position(net: &FloatNet, ex: &Examples, i: usize, pass: &Pass, g: &mut Grads) {
    let Pass {
        layout,
        policy_weight,
        scale,
        backward,
        ..
    } = *pass;
    let (h, d) = (net.cfg.hidden, net.cfg.policy_dim);
    let mut acc = vec![0f32; h];
    net.accumulate(ex.features_of(i), &mut acc);
    let a: Vec<f32> = acc.iter().map(|x| x.clamp(0.0, 1.0)).collect();
    // Value.
    let out: f32 = a.iter().zip(&net.v_w).map(|(c, w)| c * c * w).sum::<f32>() + net.v_b;
    let v = out.tanh();
    let err = v - ex.value[i];
    g.loss.value += f64::from(err * err);
    let mut dacc = vec![0f32; h];
    if backward && pass.train_value {
        let dout = 2.0 * err * (1.0 - v * v) * scale;
        g.v_b += dout;
        for k in 0..h {
            g.v_w[k] += dout * a[k] * a[k];
            if acc[k] > 0.0 && acc[k] < 1.0 {
                dacc[k] += dout * net.v_w[k] * 2.0 * a[k];
            }
        }
    }
    // Policy (not computed in a step that does not train it: a value-only net, the
    // alpha-beta family, trains at the cost of its value head alone).
    let (s, e) = ex.moves[i];
    let (s, e) = (s as usize, e as usize);
    if e > s && !(backward && policy_weight == 0.0) {
        g.with_policy += 1;
        let board_policy = net.cfg.policy == PolicyKind::Board;
        // The subnets this position names, each once (a board policy: every subnet's
        // outputs, at the subnet's own place).
        let (mut board, mut all) = (Vec::new(), Vec::new());
        let z = if board_policy {
            board_features(layout, ex.features_of(i), &mut board);
            net.board_outputs(&board, &mut all);
            Vec::new()
        } else {
            net.project(&a)
        };
        let mut slot_of: Vec<(u16, usize)> = Vec::new();
        let mut outs: Vec<f32> = Vec::new();
        let index = |k: u16, outs: &mut Vec<f32>, slot_of: &mut Vec<(u16, usize)>| -> usize {
            if let Some(&(_, j)) = slot_of.iter().find(|(kk, _)| *kk == k) {
                return j;
            }
            let j = outs.len();
            outs.resize(j + d, 0.0);
            if board_policy {
                let k = usize::from(k);
                outs[j..j + d].copy_from_slice(&all[k * d..(k + 1) * d]);
            } else {
                net.subnet(usize::from(k), &z, &mut outs[j..j + d]);
            }
            slot_of.push((k, j));
            j
        };
        let mut logits = Vec::with_capacity(e - s);
        let mut pairs = Vec::with_capacity(e - s);
        for m in s..e {
            let (f, t) = ex.slots[m];
            let jf = index(f, &mut outs, &mut slot_of);
            let jt = index(t, &mut outs, &mut slot_of);
            let l: f32 = (0..d)
                .map(|k| outs[jf + k].max(0.0) * outs[jt + k].max(0.0))
                .sum();
            logits.push(l);
            pairs.push((jf, jt));
        }
        let mut p = logits.clone();
        crate::quant::softmax(&mut p);
        let target = &ex.target[s..e];
        let ce: f64 = p
            .iter()
            .zip(target)
            .map(|(q, t)| -f64::from(*t) * f64::from(q.max(1e-12)).ln())
            .sum();
        g.loss.policy += ce;
        let best = |v: &[f32]| {
            v.iter()
                .enumerate()
                .max_by(|x, y| x.1.total_cmp(y.1))
                .map(|(i, _)| i)
        };
        g.loss.policy_accuracy += f64::from(u8::from(best(&p) == best(target)));
        if backward {
            let mut dout = vec![0f32; outs.len()];
            for (m, &(jf, jt)) in pairs.iter().enumerate() {
                let dl = (p[m] - target[m]) * policy_weight * scale;
                for k in 0..d {
                    let (uf, ut) = (outs[jf + k], outs[jt + k]);
                    if uf > 0.0 {
                        dout[jf + k] += dl * ut.max(0.0);
                    }
                    if ut > 0.0 {
                        dout[jt + k] += dl * uf.max(0.0);
                    }
                }
            }
            // Each used output's gradient: to its bias and its weights (a board
            // policy's: its column of every board feature's row; an accumulator
            // policy's: its row of P, and on through z).
            let (n, rank) = (net.p_b.len(), net.cfg.policy_rank);
            let mut dz = vec![0f32; if board_policy { 0 } else { rank }];
            for &(k, j) in &slot_of {
                let k = usize::from(k);
                for r in 0..d {
                    let go = dout[j + r];
                    if go == 0.0 {
                        continue;
                    }
                    let o = k * d + r;
                    g.p_b[o] += go;
                    if board_policy {
                        for &f in &board {
                            g.p_w[usize::from(f) * n + o] += go;
                        }
                    } else {
                        let w = &net.p_w[o * rank..(o + 1) * rank];
                        let gw = &mut g.p_w[o * rank..(o + 1) * rank];
                        for c in 0..rank {
                            gw[c] += go * z[c];
                            dz[c] += go * w[c];
                        }
                    }
                }
            }
            if !board_policy {
                projection_backward(net, &dz, &a, &acc, pass.train_value, g, &mut dacc);
            }
        }
    }
    if backward {
        for (b, x) in g.l1_b.iter_mut().zip(&dacc) {
            *b += x;
        }
        if pass.train_value {
            g.rows.push((i, dacc));
        }
    }
}

/// The backward pass of an `accumulator` policy's projection `z = B a`: `dz` to B, and
/// (where the accumulator trains) on to the accumulator's gradient `dacc`.
fn projection_backward(
    net: &FloatNet,
    dz: &[f32],
    a: &[f32],
    acc: &[f32],
    train_value: bool,
    g: &mut Grads,
    dacc: &mut [f32],
) {
    let h = net.cfg.hidden;
    let mut da = vec![0f32; if train_value { h } else { 0 }];
    for (r, &gz) in dz.iter().enumerate() {
        let gb = &mut g.p_proj[r * h..(r + 1) * h];
        for c in 0..h {
            gb[c] += gz * a[c];
        }
        if train_value {
            let b = &net.p_proj[r * h..(r + 1) * h];
            for c in 0..h {
                da[c] += gz * b[c];
            }
        }
    }
    for k in 0..da.len() {
        if acc[k] > 0.0 && acc[k] < 1.0 {
            dacc[k] += da[k];
        }
    }
}

/// The losses of `net` over examples `which`.
pub fn losses(net: &FloatNet, ex: &Examples, which: &[usize], policy_weight: f32) -> Losses {
    let layout = layout_of(net);
    let pass = Pass {
        layout: &layout,
        policy_weight,
        train_value: false,
        scale: 0.0,
        backward: false,
    };
    let g = which
        .par_chunks(256)
        .map(|chunk| {
            let mut g = Grads::default();
            for &i in chunk {
                position(net, ex, i, &pass, &mut g);
            }
            g
        })
        .collect::<Vec<_>>()
        .into_iter()
        .fold(Grads::default(), Grads::merge);
    g.loss.per(which.len(), g.with_policy)
}

/// The gradients of the mean loss over `batch` (for the tests: the same function the
/// trainer steps with), as flat vectors in [`FloatNet::tensors`] order.
pub fn gradients(
    net: &FloatNet,
    ex: &Examples,
    batch: &[usize],
    policy_weight: f32,
) -> Vec<Vec<f32>> {
    let g = batch_grads(net, ex, batch, policy_weight, true);
    let mut l1 = vec![0f32; net.l1_w.len()];
    let h = net.cfg.hidden;
    for (i, dacc) in &g.rows {
        for &f in ex.features_of(*i) {
            let row = &mut l1[f as usize * h..(f as usize + 1) * h];
            row.iter_mut().zip(dacc).for_each(|(x, y)| *x += y);
        }
    }
    std::iter::once(l1)
        .chain(g.tensors(net.cfg.policy).into_iter().map(<[f32]>::to_vec))
        .collect()
}

/// The layout of `net`'s game (a net that is trained has passed its checks).
fn layout_of(net: &FloatNet) -> Layout {
    Layout::new(
        net.cfg
            .check()
            .expect("a net being trained is of a known game"),
    )
}

/// Parts a batch's gradient is summed in: a fixed count, and merged in order, so that
/// the sums (and so a run) are the same bit for bit whatever the threads.
const PARTS: usize = 16;

fn batch_grads(
    net: &FloatNet,
    ex: &Examples,
    batch: &[usize],
    policy_weight: f32,
    train_value: bool,
) -> Grads {
    let layout = layout_of(net);
    let pass = Pass {
        layout: &layout,
        policy_weight,
        train_value,
        scale: 1.0 / batch.len().max(1) as f32,
        backward: true,
    };
    let parts: Vec<Grads> = batch
        .par_chunks(batch.len().div_ceil(PARTS).max(1))
        .map(|chunk| {
            let mut g = Grads::zero(net);
            for &i in chunk {
                position(net, ex, i, &pass, &mut g);
            }
            g
        })
        .collect();
    parts.into_iter().fold(Grads::zero(net), Grads::merge)
}

/// Adam's moments and step count.
pub struct Adam {
    m: Vec<Vec<f32>>,
    v: Vec<Vec<f32>>,
    /// Steps taken (for the bias correction).
    step: u64,
}

const B1: f32 = 0.9;
const B2: f32 = 0.999;
const EPS: f32 = 1e-8;

impl Adam {
    /// Zero moments for `net`.
    pub fn new(net: &FloatNet) -> Adam {
        let m: Vec<Vec<f32>> = net.tensors().iter().map(|t| vec![0.0; t.len()]).collect();
        Adam {
            v: m.clone(),
            m,
            step: 0,
        }
    }

    /// One step on `batch` at step size `lr`; returns the batch's losses. With
    /// `train_value` false, W₁, b₁ and the value head are left as they are.
    pub fn step(
        &mut self,
        net: &mut FloatNet,
        ex: &Examples,
        batch: &[usize],
        lr: f32,
        policy_weight: f32,
        train_value: bool,
    ) -> Losses {
        let g = batch_grads(net, ex, batch, policy_weight, train_value);
        self.step += 1;
        let t = self.step as i32;
        let c1 = 1.0 - B1.powi(t);
        let c2 = 1.0 - B2.powi(t);
        let upd = |w: &mut [f32], g: &[f32], m: &mut [f32], v: &mut [f32]| {
            for k in 0..w.len() {
                m[k] = B1 * m[k] + (1.0 - B1) * g[k];
                v[k] = B2 * v[k] + (1.0 - B2) * g[k] * g[k];
                w[k] -= lr * (m[k] / c1) / ((v[k] / c2).sqrt() + EPS);
            }
        };
        // W₁: only the rows this batch touched (their gradient summed first).
        let h = net.cfg.hidden;
        let mut rows: Vec<(u32, Vec<f32>)> = Vec::new();
        {
            let mut at: std::collections::HashMap<u32, usize> = std::collections::HashMap::new();
            for (i, dacc) in &g.rows {
                for &f in ex.features_of(*i) {
                    let j = *at.entry(f).or_insert_with(|| {
                        rows.push((f, vec![0.0; h]));
                        rows.len() - 1
                    });
                    rows[j].1.iter_mut().zip(dacc).for_each(|(x, y)| *x += y);
                }
            }
        }
        let (m0, v0) = (&mut self.m[0], &mut self.v[0]);
        for (f, gr) in &rows {
            let r = *f as usize * h..(*f as usize + 1) * h;
            upd(&mut net.l1_w[r.clone()], gr, &mut m0[r.clone()], &mut v0[r]);
        }
        // The rest in `tensors` order: b₁, w₂, b₂ (the value's), then the policy's.
        let grads = g.tensors(net.cfg.policy);
        let mut tensors = net.tensors_mut();
        for (k, (w, gr)) in tensors.iter_mut().skip(1).zip(grads).enumerate() {
            if k < 3 && !train_value {
                continue;
            }
            upd(w, gr, &mut self.m[k + 1], &mut self.v[k + 1]);
        }
        // The clip bounds what training moves; frozen weights stay as they came.
        if train_value {
            net.clip();
        }
        g.loss.per(batch.len(), g.with_policy)
    }
}

/// One epoch's line of the metrics.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct EpochMetrics {
    /// The epoch, from 1.
    pub epoch: u32,
    /// Its step size.
    pub lr: f32,
    /// Mean of the batches' training losses.
    pub train: Losses,
    /// On the held-out games.
    pub holdout: Losses,
    /// Positions trained per second.
    pub positions_per_s: f64,
    /// Positions read: trained on, and held out.
    pub positions: usize,
    /// Positions this epoch trained on.
    #[serde(default)]
    pub trained: usize,
}

/// Trains `net` on `ex` for `cfg.epochs`, calling `on_epoch` after each (the caller saves
/// and reports). The order of examples is seeded; the held-out games are every
/// `holdout_every`-th game id. An epoch trains on `per_epoch` examples of the shuffled
/// training part (all of it when `None` or more).
pub fn train(
    net: &mut FloatNet,
    ex: &Examples,
    cfg: &TrainConfig,
    per_epoch: Option<usize>,
    mut on_epoch: impl FnMut(&FloatNet, &EpochMetrics),
) {
    let (mut fit, mut held): (Vec<usize>, Vec<usize>) = (Vec::new(), Vec::new());
    for i in 0..ex.len() {
        if cfg.holdout_every > 0 && ex.game_id[i].is_multiple_of(cfg.holdout_every) {
            held.push(i);
        } else {
            fit.push(i);
        }
    }
    let mut adam = Adam::new(net);
    let mut rng = engine::Rng::new(cfg.seed ^ 0x5eed);
    for epoch in 1..=cfg.epochs {
        let frac = if cfg.epochs > 1 {
            f32::from(u16::try_from(epoch - 1).unwrap_or(u16::MAX)) / (cfg.epochs - 1) as f32
        } else {
            0.0
        };
        let lr = cfg.lr
            * (cfg.final_lr_fraction
                + (1.0 - cfg.final_lr_fraction)
                    * 0.5
                    * (1.0 + (std::f32::consts::PI * frac).cos()));
        for i in (1..fit.len()).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            fit.swap(i, j);
        }
        let start = std::time::Instant::now();
        let mut sum = Losses::default();
        let mut batches = 0;
        let epoch_fit = &fit[..per_epoch.map_or(fit.len(), |n| n.min(fit.len()))];
        for batch in epoch_fit.chunks(cfg.batch_size.max(1)) {
            sum += adam.step(net, ex, batch, lr, cfg.policy_weight, cfg.train_value);
            batches += 1;
        }
        let m = EpochMetrics {
            epoch,
            lr,
            train: sum.per(batches, batches),
            holdout: losses(net, ex, &held, cfg.policy_weight),
            positions_per_s: epoch_fit.len() as f64 / start.elapsed().as_secs_f64().max(1e-9),
            positions: ex.len(),
            trained: epoch_fit.len(),
        };
        on_epoch(net, &m);
    }
}

impl TrainConfig {
    /// These settings with `key=value` overrides (numbers, `true`/`false`, words); an
    /// unknown key or a value of the wrong type is an error naming it.
    pub fn with_sets(&self, sets: &[String]) -> Result<TrainConfig, crate::Error> {
        let mut v = serde_json::to_value(self).expect("plain values");
        for s in sets {
            let (k, val) = s
                .split_once('=')
                .ok_or_else(|| crate::Error::Format(format!("`{s}`: expected KEY=VALUE")))?;
            let k = k.trim().trim_start_matches("train.");
            if v.get(k).is_none() {
                return Err(crate::Error::Format(format!(
                    "`{k}` is no fast-net training setting (they are: {})",
                    v.as_object()
                        .expect("a struct")
                        .keys()
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
            // A number or a boolean, else a word (`policy=board`).
            v[k] = serde_json::from_str(val.trim())
                .unwrap_or_else(|_| serde_json::Value::String(val.trim().to_string()));
            if let Err(e) = serde_json::from_value::<TrainConfig>(v.clone()) {
                return Err(crate::Error::Format(format!("`{s}`: {e}")));
            }
        }
        let cfg: TrainConfig = serde_json::from_value(v)
            .map_err(|e| crate::Error::Format(format!("fast-net training settings: {e}")))?;
        if cfg.epochs == 0 || cfg.batch_size == 0 || !(cfg.lr > 0.0 && cfg.lr.is_finite()) {
            return Err(crate::Error::Format(
                "epochs and batch_size must be positive, lr a positive number".into(),
            ));
        }
        if cfg.hidden == 0 || !cfg.hidden.is_multiple_of(32) || cfg.hidden > 2048 {
            return Err(crate::Error::Format(format!(
                "hidden = {}: a multiple of 32, at most 2048",
                cfg.hidden
            )));
        }
        if !(0.0..=1.0).contains(&cfg.result_weight)
            || !(0.0..=1.0).contains(&cfg.final_lr_fraction)
        {
            return Err(crate::Error::Format(
                "result_weight and final_lr_fraction must be in [0, 1]".into(),
            ));
        }
        if !(cfg.replay >= 0.0 && cfg.replay.is_finite()) {
            return Err(crate::Error::Format(
                "replay must be a number of 0 or more".into(),
            ));
        }
        if !(1..=64).contains(&cfg.policy_dim) {
            return Err(crate::Error::Format(format!(
                "policy_dim = {}: 1 to 64",
                cfg.policy_dim
            )));
        }
        if !(cfg.policy_weight >= 0.0 && cfg.policy_weight.is_finite()) {
            return Err(crate::Error::Format(
                "policy_weight must be a number of 0 or more".into(),
            ));
        }
        Ok(cfg)
    }
}

/// What [`train_to_dir`] trains on and from.
#[derive(Clone, Debug)]
pub struct Job<'a> {
    /// Shard folders (each walked for `*.parquet`), oldest first.
    pub data: &'a [std::path::PathBuf],
    /// The game.
    pub game: engine::Game,
    /// The model folder written after every epoch.
    pub out: &'a std::path::Path,
    /// Train on the newest this many positions only (`None`: all).
    pub window: Option<usize>,
    /// A fast-net folder whose float weights start the training (of the same shape as
    /// the settings give), instead of fresh ones.
    pub init: Option<&'a std::path::Path>,
    /// The positions new since the previous training (the loop's newest generation's),
    /// which `replay` scales; `None`: every position read is new.
    pub new_positions: Option<usize>,
    /// Shards decoded by an earlier training of this process (the loop's), reused.
    pub cache: Option<&'a crate::data::ShardCache>,
    /// Also write the quantised weights ([`crate::io::QUANT`]) when training ends.
    pub quantised: bool,
}

/// Trains a fast net for `job.game` on `job.data` and writes it to `job.out` after every
/// epoch, with `metrics.csv` (one line an epoch); `progress` hears what happens. Returns
/// the last epoch's metrics.
pub fn train_to_dir(
    job: &Job,
    cfg: &TrainConfig,
    mut progress: impl FnMut(&str),
) -> Result<EpochMetrics, crate::Error> {
    let (data, game, out) = (job.data, job.game, job.out);
    let cfg = &cfg.with_sets(&[])?;
    let mut paths = Vec::new();
    for d in data {
        paths.extend(crate::data::shard_paths(d)?);
    }
    let ex = crate::data::read_examples(
        &paths,
        game,
        cfg.result_weight,
        job.window,
        job.cache,
        &mut progress,
    )?;
    if ex.is_empty() {
        return Err(crate::Error::Format(format!(
            "no positions of {game} in {} shard(s)",
            paths.len()
        )));
    }
    let per_epoch = (cfg.replay > 0.0).then(|| {
        (f64::from(cfg.replay) * job.new_positions.unwrap_or(ex.len()) as f64).ceil() as usize
    });
    progress(&format!(
        "{} positions from {} shards; {} epochs of {} positions in batches of {}",
        ex.len(),
        paths.len(),
        cfg.epochs,
        per_epoch.map_or("all".to_string(), |n| format!("at most {n}")),
        cfg.batch_size
    ));
    let shape = crate::FastNetConfig {
        policy: cfg.policy,
        policy_dim: cfg.policy_dim,
        ..crate::FastNetConfig::for_game(game, cfg.hidden)
    };
    let mut net = match job.init {
        None if !cfg.train_value => {
            return Err(crate::Error::Format(
                "train_value = false keeps the accumulator and value head of the net training \
                 starts from: name one (--init); a fresh net's would stay random"
                    .into(),
            ));
        }
        None => FloatNet::init(shape, cfg.seed)?,
        Some(dir) => {
            if crate::io::weights_file(dir) == crate::io::QUANT {
                return Err(crate::Error::Format(format!(
                    "{}: holds the quantised form of a net alone (no {}): its weights are rounded, \
                     not a start for training; start from a folder with the float weights",
                    dir.display(),
                    crate::io::WEIGHTS
                )));
            }
            let (net, _) = crate::io::load(dir)?;
            // A policy of the other kind is replaced, the rest must be these settings'.
            let theirs_shape = crate::FastNetConfig {
                policy: net.cfg.policy,
                policy_dim: net.cfg.policy_dim,
                ..shape.clone()
            };
            if net.cfg != theirs_shape {
                // Every setting that differs, by name.
                let (theirs, ours) = (
                    serde_json::to_value(&net.cfg).expect("plain values"),
                    serde_json::to_value(&shape).expect("plain values"),
                );
                let differ: Vec<String> = ours
                    .as_object()
                    .expect("a struct")
                    .iter()
                    .filter(|(k, v)| theirs.get(k.as_str()) != Some(v))
                    .map(|(k, v)| format!("{k} {} (these settings: {v})", theirs[k.as_str()]))
                    .collect();
                return Err(crate::Error::Format(format!(
                    "{}: its net is not the shape these settings train: {}",
                    dir.display(),
                    differ.join(", ")
                )));
            }
            progress(&format!("starting from {}", dir.display()));
            if (net.cfg.policy, net.cfg.policy_dim) == (cfg.policy, cfg.policy_dim) {
                net
            } else {
                progress(&format!(
                    "its accumulator and value head under a fresh {:?} policy of {}-wide subnets",
                    cfg.policy, cfg.policy_dim
                ));
                net.with_fresh_policy(cfg.policy, cfg.policy_dim, cfg.seed)?
            }
        }
    };
    // The columns `loss`, `policy_loss` and `value_loss` are named as the CNN trainer's
    // are, so that a run's report plots either family's curve.
    let mut csv = String::from(
        "epoch,lr,loss,policy_loss,value_loss,policy_accuracy,holdout_loss,holdout_policy_loss,holdout_value_loss,holdout_policy_accuracy,positions_per_s\n",
    );
    let mut last = None;
    let mut failed = None;
    train(&mut net, &ex, cfg, per_epoch, |net, m| {
        if failed.is_some() {
            return;
        }
        csv.push_str(&format!(
            "{},{:e},{:.6},{:.6},{:.6},{:.4},{:.6},{:.6},{:.6},{:.4},{:.0}\n",
            m.epoch,
            m.lr,
            m.train.total(cfg.policy_weight),
            m.train.policy,
            m.train.value,
            m.train.policy_accuracy,
            m.holdout.total(cfg.policy_weight),
            m.holdout.policy,
            m.holdout.value,
            m.holdout.policy_accuracy,
            m.positions_per_s
        ));
        progress(&format!(
            "epoch {}: value loss {:.4} (held out {:.4}), policy loss {:.4} (held out {:.4}, accuracy {:.3}), {:.0} positions/s",
            m.epoch,
            m.train.value,
            m.holdout.value,
            m.train.policy,
            m.holdout.policy,
            m.holdout.policy_accuracy,
            m.positions_per_s
        ));
        let trained = serde_json::json!({
            "positions": ex.len(),
            "shards": paths.len(),
            "data": data.iter().map(|d| d.display().to_string()).collect::<Vec<_>>(),
            "init": job.init.map(|d| d.display().to_string()),
            "config": cfg,
            "epochs_done": m.epoch,
            "last": m,
        });
        // A net whose policy was not trained is for the alpha-beta searcher.
        let search = if cfg.policy_weight == 0.0 {
            selfplay::SearchKind::AlphaBeta
        } else {
            selfplay::SearchKind::Mcts
        };
        let saved = crate::io::save(net, out, trained, search).and_then(|()| {
            let p = out.join("metrics.csv");
            rundir::write_atomic(&p, csv.as_bytes())
                .map_err(|e| crate::Error::Io { path: p, source: e })
        });
        if let Err(e) = saved {
            failed = Some(e);
        }
        last = Some(m.clone());
    });
    if let Some(e) = failed {
        return Err(e);
    }
    if job.quantised {
        crate::io::save_quantised(&net, out)?;
    }
    Ok(last.expect("at least one epoch"))
}
