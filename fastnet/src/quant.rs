//! The quantised net the searchers run: W₁ and b₁ as i16 scaled by `qa`, w₂ as i16 scaled
//! by `qb`, the policy in f32 on the dequantised activations. The accumulator of each
//! perspective follows make/unmake: a move changes a handful of cells, so only the
//! tuples holding them are taken out and put back ([`Accumulator::apply`]).
//!
//! Against the float net (the same weights) the value differs by the rounding of the
//! weights only: |Δh| ≤ (tuples + 1) / (2 qa) per accumulator lane, bounded in the tests.

use engine::{Change, Isa, Move, Side, State};

use crate::features::{CellState, Layout, PER_TUPLE};
use crate::net::{FastNetConfig, FloatNet, move_slots};
use crate::simd;

/// The quantised weights and the layout of their game.
#[derive(Clone, Debug)]
pub struct QuantNet {
    /// The description.
    pub cfg: FastNetConfig,
    /// The tuples.
    pub layout: Layout,
    isa: Isa,
    l1_w: Vec<i16>,
    l1_b: Vec<i16>,
    v_w: Vec<i16>,
    v_b: f32,
    p_proj: Vec<f32>,
    p_w: Vec<f32>,
    p_b: Vec<f32>,
}

/// The accumulators of both perspectives, and what they were built from.
#[derive(Clone, Debug)]
pub struct Accumulator {
    /// Per perspective (x, o): the i16 lanes.
    vals: [Vec<i16>; 2],
    /// Per perspective: each tuple's index.
    idx: [Vec<u16>; 2],
    /// The cells (x's view).
    states: Vec<CellState>,
}

fn quantise(x: &[f32], scale: f32) -> Vec<i16> {
    x.iter()
        .map(|v| (v * scale).round().clamp(-32_767.0, 32_767.0) as i16)
        .collect()
}

impl QuantNet {
    /// Quantises a float net (its weights inside the clip bound, as training keeps them).
    pub fn new(net: &FloatNet) -> Result<QuantNet, crate::Error> {
        let game = net.cfg.check()?;
        let cfg = net.cfg.clone();
        let clip = cfg.clip * 1.0001;
        if net
            .l1_w
            .iter()
            .chain(&net.l1_b)
            .chain(&net.v_w)
            .any(|w| !w.is_finite() || w.abs() > clip)
        {
            return Err(crate::Error::Format(format!(
                "a clipped weight lies outside ±{} or is not finite",
                cfg.clip
            )));
        }
        Ok(QuantNet {
            layout: Layout::new(game),
            isa: Isa::current(),
            l1_w: quantise(&net.l1_w, f32::from(cfg.qa)),
            l1_b: quantise(&net.l1_b, f32::from(cfg.qa)),
            v_w: quantise(&net.v_w, f32::from(cfg.qb)),
            v_b: net.v_b,
            p_proj: net.p_proj.clone(),
            p_w: net.p_w.clone(),
            p_b: net.p_b.clone(),
            cfg,
        })
    }

    /// The same net with another kernel build (the tests compare them).
    pub fn with_isa(mut self, isa: Isa) -> QuantNet {
        assert!(isa.is_supported());
        self.isa = isa;
        self
    }

    /// The i16 tensors: W₁, b₁, w₂.
    pub fn quantised(&self) -> (&[i16], &[i16], &[i16]) {
        (&self.l1_w, &self.l1_b, &self.v_w)
    }

    fn row(&self, t: usize, idx: u16) -> &[i16] {
        let h = self.cfg.hidden;
        let f = t * PER_TUPLE + usize::from(idx);
        &self.l1_w[f * h..(f + 1) * h]
    }

    /// A fresh accumulator of `s`.
    pub fn accumulator(&self, s: &State) -> Accumulator {
        let mut acc = Accumulator {
            vals: [self.l1_b.clone(), self.l1_b.clone()],
            idx: [vec![0; self.layout.tuples()], vec![0; self.layout.tuples()]],
            states: vec![0; self.layout.cells()],
        };
        self.refresh(&mut acc, s);
        acc
    }

    /// Rebuilds `acc` from the position (a full recompute).
    pub fn refresh(&self, acc: &mut Accumulator, s: &State) {
        self.layout.cell_states_into(s, &mut acc.states);
        self.rebuild(acc);
    }

    /// Follows a move: `change` is what [`engine::StateUndo::change`] reports for it.
    pub fn apply(&self, acc: &mut Accumulator, change: &Change) {
        let mover = match change.mover {
            Side::X => 1,
            Side::O => 2,
        };
        let mut touched = [0u16; 64];
        let mut n = 0;
        let mut touch = |c: usize, st: CellState, acc: &mut Accumulator| {
            acc.states[c] = st;
            for t in self.layout.tuples_of(c) {
                if n < touched.len() && !touched[..n].contains(&(t as u16)) {
                    touched[n] = t as u16;
                    n += 1;
                }
            }
        };
        if let Some(c) = change.placed {
            touch(c, mover, acc);
        }
        if let Some(c) = change.vacated {
            touch(c, 0, acc);
        }
        for c in change.flipped.iter() {
            touch(c, mover, acc);
        }
        if n == touched.len() {
            // More tuples than the list holds (a move flipping most of a big board).
            self.rebuild(acc);
            return;
        }
        for &t in &touched[..n] {
            let t = usize::from(t);
            for (p, persp) in [Side::X, Side::O].into_iter().enumerate() {
                let new = self.layout.tuple_index(t, &acc.states, persp);
                let old = acc.idx[p][t];
                if new != old {
                    simd::sub(self.isa, &mut acc.vals[p], self.row(t, old));
                    simd::add(self.isa, &mut acc.vals[p], self.row(t, new));
                    acc.idx[p][t] = new;
                }
            }
        }
    }

    /// Recomputes both perspectives' lanes and indices from `acc`'s cells.
    fn rebuild(&self, acc: &mut Accumulator) {
        let Accumulator { vals, idx, states } = acc;
        for (p, persp) in [Side::X, Side::O].into_iter().enumerate() {
            vals[p].copy_from_slice(&self.l1_b);
            for (t, slot) in idx[p].iter_mut().enumerate() {
                *slot = self.layout.tuple_index(t, states, persp);
                simd::add(self.isa, &mut vals[p], self.row(t, *slot));
            }
        }
    }

    /// The value of the position whose accumulator is `acc`, from `stm`'s view, in
    /// [−1, 1].
    pub fn value(&self, acc: &Accumulator, stm: Side) -> f32 {
        self.value_of(acc.lanes(stm))
    }

    /// The value of the side to move's accumulator lanes, in [−1, 1].
    pub fn value_of(&self, lanes: &[i16]) -> f32 {
        let (qa, qb) = (f32::from(self.cfg.qa), f32::from(self.cfg.qb));
        let sum = simd::screlu_dot(self.isa, lanes, &self.v_w, self.cfg.qa);
        // libm's tanh, not the platform's: the same bits on every target (the
        // WebAssembly player plays the native player's moves).
        libm::tanhf(sum as f32 / (qa * qa * qb) + self.v_b)
    }

    /// The value for alpha-beta: the net's output before tanh, times 400 (so ±400 is
    /// a value of ±0.76).
    pub fn value_cp(&self, acc: &Accumulator, stm: Side) -> i32 {
        self.value_cp_of(acc.lanes(stm))
    }

    /// [`QuantNet::value_cp`] of the side to move's lanes.
    pub fn value_cp_of(&self, lanes: &[i16]) -> i32 {
        let (qa, qb) = (i64::from(self.cfg.qa), i64::from(self.cfg.qb));
        let sum = simd::screlu_dot(self.isa, lanes, &self.v_w, self.cfg.qa);
        let bias = (f64::from(self.v_b) * (qa * qa * qb) as f64) as i64;
        ((sum + bias) * 400 / (qa * qa * qb)) as i32
    }

    /// The side to move's accumulator lanes of `s` alone, into `leaf.lanes` (what a
    /// search needs at a leaf it reached without following make/unmake: half the work
    /// of [`QuantNet::accumulator`]).
    pub fn side_lanes(&self, s: &State, leaf: &mut Leaf) {
        self.layout.cell_states_into(s, &mut leaf.states);
        self.layout
            .active(&leaf.states, s.side_to_move(), &mut leaf.feats);
        leaf.lanes.clear();
        leaf.lanes.extend_from_slice(&self.l1_b);
        simd::add_rows(self.isa, &mut leaf.lanes, &self.l1_w, &leaf.feats);
    }

    /// Policy probabilities over `moves` (softmax of the logits; the pass alone gets 1).
    pub fn policy(&self, acc: &Accumulator, stm: Side, moves: &[Move], out: &mut Vec<f32>) {
        self.policy_of(acc.lanes(stm), moves, out, &mut Scratch::default());
    }

    /// [`QuantNet::policy`] from the side to move's lanes, with reusable scratch.
    pub fn policy_of(&self, lanes: &[i16], moves: &[Move], out: &mut Vec<f32>, sc: &mut Scratch) {
        out.clear();
        let r = self.cfg.policy_rank;
        let d = self.cfg.policy_dim;
        let qa = f32::from(self.cfg.qa);
        sc.a.resize(lanes.len(), 0.0);
        for (a, &v) in sc.a.iter_mut().zip(lanes) {
            *a = f32::from(v.clamp(0, self.cfg.qa)) / qa;
        }
        sc.z.clear();
        sc.z.resize(r, 0.0);
        simd::matvec(self.isa, &self.p_proj, &sc.a, &mut sc.z);
        let cells = self.layout.cells();
        // Each subnet at most once: where its output is, stamped with this call's number.
        sc.call = sc.call.wrapping_add(1);
        if sc.call == 0 {
            sc.done.clear();
            sc.call = 1;
        }
        sc.done.resize(crate::net::subnets(cells), (0, 0));
        sc.outs.clear();
        let Scratch {
            z,
            done,
            outs,
            call,
            ..
        } = sc;
        let mut eval = |k: usize, outs: &mut Vec<f32>| -> usize {
            if done[k].0 == *call {
                return done[k].1 as usize;
            }
            let i = outs.len();
            outs.extend_from_slice(&self.p_b[k * d..(k + 1) * d]);
            simd::matvec(
                self.isa,
                &self.p_w[k * d * r..(k + 1) * d * r],
                z,
                &mut outs[i..i + d],
            );
            for o in &mut outs[i..i + d] {
                *o = o.max(0.0);
            }
            done[k] = (*call, i as u32);
            i
        };
        for &m in moves {
            out.push(match move_slots(m, cells) {
                None => 0.0,
                Some((f, t)) => {
                    let i = eval(f, outs);
                    let j = eval(t, outs);
                    (0..d).map(|k| outs[i + k] * outs[j + k]).sum()
                }
            });
        }
        softmax(out);
    }
}

/// Buffers a leaf evaluation reuses from call to call: the cells, the active features,
/// and the side to move's lanes ([`QuantNet::side_lanes`]).
#[derive(Clone, Debug)]
pub struct Leaf {
    states: Vec<CellState>,
    feats: Vec<u32>,
    /// The lanes of the last position given to [`QuantNet::side_lanes`].
    pub lanes: Vec<i16>,
}

impl Leaf {
    /// Buffers for positions of `net`'s game.
    pub fn new(net: &QuantNet) -> Leaf {
        Leaf {
            states: vec![0; net.layout.cells()],
            feats: Vec::with_capacity(net.layout.tuples()),
            lanes: Vec::with_capacity(net.cfg.hidden),
        }
    }
}

/// Buffers the policy reuses from call to call.
#[derive(Clone, Debug, Default)]
pub struct Scratch {
    a: Vec<f32>,
    z: Vec<f32>,
    done: Vec<(u32, u32)>,
    outs: Vec<f32>,
    call: u32,
}

impl Accumulator {
    /// The lanes of `persp`'s accumulator.
    pub fn lanes(&self, persp: Side) -> &[i16] {
        &self.vals[match persp {
            Side::X => 0,
            Side::O => 1,
        }]
    }

    /// Whether two accumulators hold the same lanes and indices.
    pub fn same(&self, other: &Accumulator) -> bool {
        self.vals == other.vals && self.idx == other.idx
    }
}

/// In-place softmax, with libm's `exp` (the same bits on every target).
pub fn softmax(x: &mut [f32]) {
    let m = x.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut s = 0.0;
    for v in x.iter_mut() {
        *v = libm::expf(*v - m);
        s += *v;
    }
    for v in x.iter_mut() {
        *v /= s;
    }
}
