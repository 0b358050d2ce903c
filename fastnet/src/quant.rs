//! The quantised net the searchers run: W₁ and b₁ as i16 scaled by `qa` (W₁ read a byte a
//! weight, [`crate::rows`]), w₂ as i16 scaled by `qb`, the policy in f32 on the
//! dequantised activations. The accumulator of each perspective follows make/unmake: a
//! move changes a handful of cells, so only the tuples holding them are taken out and put
//! back ([`Accumulator::apply`]).
//!
//! Against the float net (the same weights) the value differs by the rounding of the
//! weights only: |Δh| ≤ (tuples + 1) / (2 qa) per accumulator lane, bounded in the tests.

use engine::{Change, Isa, Move, Side, State};

use crate::features::{CellState, Layout, PER_TUPLE};
use crate::net::{
    FastNetConfig, FloatNet, PolicyKind, board_features, board_features_of, move_slots,
};
use crate::prune::{Pruned, prune};
use crate::rows::Rows;
use crate::{simd, slots};

/// The quantised weights and the layout of their game.
#[derive(Clone, Debug)]
pub struct QuantNet {
    /// The description.
    pub cfg: FastNetConfig,
    /// The tuples.
    pub layout: Layout,
    isa: Isa,
    l1_w: Rows,
    l1_b: Vec<i16>,
    v_w: Vec<i16>,
    /// The units the value never reads, left out of W₁, b₁ and w₂ above (a `board`
    /// policy's net; [`crate::prune`]).
    pruned: Option<Pruned>,
    v_b: f32,
    /// The policy's projection B (`rank × hidden`), stored input major (`hidden × rank`):
    /// [`QuantNet::policy_of`] adds one column per active lane.
    p_proj_t: Vec<f32>,
    /// Every subnet's weights (`subnets·dim × rank`), stored by slot
    /// ([`slots::by_slot`]).
    p_w_slots: Vec<f32>,
    /// A `board` policy's rows, one per board feature (`subnets·dim` each).
    p_cells: Vec<f32>,
    p_b: Vec<f32>,
}

/// `m` (`rows × cols`, row major) stored column major, each column padded with zeros
/// to [`padded`] rows (what [`simd::columns`] works on).
fn transpose(m: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    let stride = padded(rows);
    let mut t = vec![0.0; stride * cols];
    for r in 0..rows {
        for c in 0..cols {
            t[c * stride + r] = m[r * cols + c];
        }
    }
    t
}

/// `n` rounded up to whole blocks of [`simd::columns`].
fn padded(n: usize) -> usize {
    n.div_ceil(simd::BLOCK) * simd::BLOCK
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
    /// Quantises a float net; refused where [`QuantNet::check_sums`] refuses it.
    pub fn new(net: &FloatNet) -> Result<QuantNet, crate::Error> {
        let game = QuantNet::check_sums(net)?;
        let cfg = net.cfg.clone();
        let board = cfg.policy == PolicyKind::Board;
        let (l1_w, l1_b, v_w) = (
            quantise(&net.l1_w, f32::from(cfg.qa)),
            quantise(&net.l1_b, f32::from(cfg.qa)),
            quantise(&net.v_w, f32::from(cfg.qb)),
        );
        // An `accumulator` policy reads every lane: only a `board` one's are pruned.
        let (l1_w, l1_b, v_w, pruned) = match board.then(|| prune(&l1_w, &l1_b, &v_w)).flatten() {
            Some(((w, b, v), pruned)) => (w, b, v, Some(pruned)),
            None => (l1_w, l1_b, v_w, None),
        };
        Ok(QuantNet {
            layout: Layout::new(game),
            isa: Isa::current(),
            l1_w: Rows::new(&l1_w, l1_b.len()),
            l1_b,
            v_w,
            pruned,
            v_b: net.v_b,
            p_proj_t: if board {
                Vec::new()
            } else {
                transpose(&net.p_proj, cfg.policy_rank, cfg.hidden)
            },
            p_w_slots: if board {
                Vec::new()
            } else {
                slots::by_slot(
                    &net.p_w,
                    net.p_b.len() / cfg.policy_dim,
                    cfg.policy_dim,
                    cfg.policy_rank,
                )
            },
            p_cells: if board { net.p_w.clone() } else { Vec::new() },
            p_b: net.p_b.clone(),
            cfg,
        })
    }

    /// Why `net` cannot be quantised, naming the tensor, or its game: where a quantised
    /// sum could overflow its integers. The accumulator adds the bias and one
    /// `l1.weight` row per tuple in i16, so (tuples + 1) × the largest |round(w · qa)|
    /// must fit; the value multiplies an activation of at most qa by round(w₂ · qb) in
    /// i16, so qa × the largest |round(w₂ · qb)| must fit too. Training's clip keeps both
    /// well inside. What a load checks without quantising.
    pub fn check_sums(net: &FloatNet) -> Result<engine::Game, crate::Error> {
        let game = net.cfg.check()?;
        let cfg = &net.cfg;
        let tuples = Layout::new(game).tuples() as f64;
        let largest = |w: &[f32], scale: i16| {
            w.iter()
                .map(|x| (f64::from(*x) * f64::from(scale)).round().abs())
                .fold(
                    0.0,
                    |m: f64, x| if x.is_nan() { f64::INFINITY } else { m.max(x) },
                )
        };
        let l1 = largest(&net.l1_w, cfg.qa).max(largest(&net.l1_b, cfg.qa));
        if (tuples + 1.0) * l1 > 32_767.0 {
            return Err(crate::Error::Format(format!(
                "`l1.weight`/`l1.bias` reach {l1} quantised (× {qa}): {} of them summed overflow the i16 accumulator (at most {} each; training clips them to ±{})",
                tuples + 1.0,
                (32_767.0 / (tuples + 1.0)).floor(),
                cfg.clip,
                qa = cfg.qa
            )));
        }
        let v = largest(&net.v_w, cfg.qb);
        if v * f64::from(cfg.qa) > 32_767.0 {
            return Err(crate::Error::Format(format!(
                "`value.weight` reaches {v} quantised (× {}): times an activation of {} it overflows i16",
                cfg.qb, cfg.qa
            )));
        }
        Ok(game)
    }

    /// The same net with another kernel build (the tests compare them).
    pub fn with_isa(mut self, isa: Isa) -> QuantNet {
        assert!(isa.is_supported());
        self.isa = isa;
        self
    }

    /// The i16 tensors: W₁, b₁, w₂, whole (the units pruned put back).
    pub fn quantised(&self) -> (Vec<i16>, Vec<i16>, Vec<i16>) {
        let w = self.l1_w.to_i16();
        match &self.pruned {
            Some(p) => p.restore(&w, &self.l1_b, &self.v_w),
            None => (w, self.l1_b.clone(), self.v_w.clone()),
        }
    }

    /// The accumulator lanes the searchers compute: `hidden`, or fewer where units the
    /// value never reads were pruned.
    pub fn lanes(&self) -> usize {
        self.l1_b.len()
    }

    /// The feature (W₁'s row) of tuple `t` at index `idx`.
    fn feature(t: usize, idx: u16) -> usize {
        t * PER_TUPLE + usize::from(idx)
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
                    self.l1_w
                        .sub(self.isa, &mut acc.vals[p], QuantNet::feature(t, old));
                    self.l1_w
                        .add(self.isa, &mut acc.vals[p], QuantNet::feature(t, new));
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
                self.l1_w
                    .add(self.isa, &mut vals[p], QuantNet::feature(t, *slot));
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

    /// The value for alpha-beta: the net's output before tanh, times
    /// `engine::search::VALUE_SCALE` (400: ±400 is a value of ±0.76).
    pub fn value_cp(&self, acc: &Accumulator, stm: Side) -> i32 {
        self.value_cp_of(acc.lanes(stm))
    }

    /// [`QuantNet::value_cp`] of the side to move's lanes.
    pub fn value_cp_of(&self, lanes: &[i16]) -> i32 {
        let (qa, qb) = (i64::from(self.cfg.qa), i64::from(self.cfg.qb));
        let sum = simd::screlu_dot(self.isa, lanes, &self.v_w, self.cfg.qa);
        let bias = (f64::from(self.v_b) * (qa * qa * qb) as f64) as i64;
        ((sum + bias) * i64::from(engine::search::VALUE_SCALE) / (qa * qa * qb)) as i32
    }

    /// The side to move's accumulator lanes of `s` alone, into `leaf.lanes` (what a
    /// search needs at a leaf it reached without following make/unmake: half the work
    /// of [`QuantNet::accumulator`]).
    pub fn side_lanes(&self, s: &State, leaf: &mut Leaf) {
        self.layout
            .active_of(s, s.side_to_move(), &mut leaf.states, &mut leaf.feats);
        leaf.lanes.clear();
        leaf.lanes.extend_from_slice(&self.l1_b);
        self.l1_w.add_rows(self.isa, &mut leaf.lanes, &leaf.feats);
    }

    /// Whether the policy reads the board (its features), not the accumulator's lanes.
    pub fn policy_reads_board(&self) -> bool {
        self.cfg.policy == PolicyKind::Board
    }

    /// Policy probabilities over `moves` (softmax of the logits; the pass alone gets 1).
    pub fn policy(&self, acc: &Accumulator, stm: Side, moves: &[Move], out: &mut Vec<f32>) {
        let mut sc = Scratch::default();
        if self.policy_reads_board() {
            let mut feats = Vec::new();
            self.layout.active(&acc.states, stm, &mut feats);
            self.board_policy(&feats, moves, out, &mut sc);
        } else {
            self.policy_of(acc.lanes(stm), moves, out, &mut sc);
        }
    }

    /// A `board` policy over `moves` of the position whose active tuple features (side to
    /// move's view) are `feats`: each subnet's output is its bias plus the rows of the
    /// board features, every subnet at once (a row is `subnets × dim` floats, added in
    /// long vectorised loops, the features in cell order as the float net adds them: the
    /// same bits on every target).
    pub fn board_policy(
        &self,
        feats: &[u32],
        moves: &[Move],
        out: &mut Vec<f32>,
        sc: &mut Scratch,
    ) {
        board_features(&self.layout, feats, &mut sc.board);
        self.board_rows(moves, out, sc);
    }

    /// [`QuantNet::board_policy`] of position `s`, its board features read straight from
    /// its cells ([`board_features_of`]: the same features, no tuples).
    pub fn board_policy_of(&self, s: &State, moves: &[Move], out: &mut Vec<f32>, sc: &mut Scratch) {
        board_features_of(&self.layout, s, &mut sc.states, &mut sc.board);
        self.board_rows(moves, out, sc);
    }

    /// The board policy of the features in `sc.board`.
    fn board_rows(&self, moves: &[Move], out: &mut Vec<f32>, sc: &mut Scratch) {
        out.clear();
        sc.outs.clear();
        sc.outs.extend_from_slice(&self.p_b);
        simd::add_rows_f32(self.isa, &mut sc.outs, &self.p_cells, &sc.board);
        for o in sc.outs.iter_mut() {
            *o = o.max(0.0);
        }
        self.logits_into(moves, out, &sc.outs);
        softmax(out);
    }

    /// The logits of `moves` from every used subnet's outputs (after their ReLU).
    fn logits_into(&self, moves: &[Move], out: &mut Vec<f32>, outs: &[f32]) {
        let cells = self.layout.cells();
        // The shipped widths with the width known at compile time, so that the products
        // are unrolled (the same products summed in the same order: the same bits).
        match self.cfg.policy_dim {
            4 => logits(moves, cells, out, |f, t| subnet_dot::<4>(outs, f, t)),
            8 => logits(moves, cells, out, |f, t| subnet_dot::<8>(outs, f, t)),
            d => logits(moves, cells, out, |f, t| {
                (0..d).map(|k| outs[f * d + k] * outs[t * d + k]).sum()
            }),
        }
    }

    /// [`QuantNet::policy`] from the side to move's lanes, with reusable scratch.
    ///
    /// The projection `z = B a` adds B's column of each lane whose activation is not 0
    /// (a clamped lane is 0 about half the time), in long, vectorised loops
    /// ([`simd::columns`]); then each subnet's outputs `relu(p_b + W z)` for the slots
    /// `moves` use, and for those alone ([`slots::outputs`]); the same bits in every
    /// build.
    pub fn policy_of(&self, lanes: &[i16], moves: &[Move], out: &mut Vec<f32>, sc: &mut Scratch) {
        out.clear();
        let r = self.cfg.policy_rank;
        let d = self.cfg.policy_dim;
        let qa = self.cfg.qa;
        sc.a.resize(lanes.len(), 0.0);
        simd::activations(self.isa, lanes, qa, &mut sc.a, &mut sc.list);
        // The padding's rows of B are 0: so are their outputs.
        sc.z.clear();
        sc.z.resize(padded(r), 0.0);
        simd::columns(self.isa, &sc.a, &sc.list, &self.p_proj_t, &mut sc.z);
        let cells = self.layout.cells();
        let subnets = self.p_b.len() / d;
        sc.used.clear();
        sc.used.resize(subnets, false);
        sc.slots.clear();
        for &m in moves {
            if let Some((f, t)) = move_slots(m, cells) {
                for s in [f, t] {
                    if !sc.used[s] {
                        sc.used[s] = true;
                        sc.slots.push(s as u16);
                    }
                }
            }
        }
        sc.outs.resize(self.p_b.len(), 0.0);
        slots::outputs(
            self.isa,
            &sc.z[..slots::padded_rank(r)],
            &self.p_w_slots,
            &self.p_b,
            d,
            &sc.slots,
            &mut sc.outs,
        );
        self.logits_into(moves, out, &sc.outs);
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
            lanes: Vec::with_capacity(net.lanes()),
        }
    }
}

/// Buffers the policy reuses from call to call.
#[derive(Clone, Debug, Default)]
pub struct Scratch {
    a: Vec<f32>,
    list: Vec<u16>,
    z: Vec<f32>,
    outs: Vec<f32>,
    /// The slots the moves use: a mark per slot, and the list.
    used: Vec<bool>,
    slots: Vec<u16>,
    /// A `board` policy's features, and the cells they are read from.
    board: Vec<u16>,
    states: Vec<CellState>,
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

/// The logits of `moves` into `out`: `dot` of each move's two subnets (0 for a pass).
#[inline(always)]
fn logits(moves: &[Move], cells: usize, out: &mut Vec<f32>, dot: impl Fn(usize, usize) -> f32) {
    out.extend(
        moves
            .iter()
            .map(|&m| move_slots(m, cells).map_or(0.0, |(f, t)| dot(f, t))),
    );
}

/// The dot product of subnets `f` and `t`'s `D` outputs (a move's logit).
#[inline(always)]
fn subnet_dot<const D: usize>(outs: &[f32], f: usize, t: usize) -> f32 {
    let (a, b) = (&outs[f * D..f * D + D], &outs[t * D..t * D + D]);
    (0..D).map(|k| a[k] * b[k]).sum()
}

/// In-place softmax, with [`exp_nonpositive`] (the same bits on every target).
pub fn softmax(x: &mut [f32]) {
    let m = x.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    // Apart from the sum, whose order is fixed, so that this loop vectorises.
    for v in x.iter_mut() {
        *v = exp_nonpositive(*v - m);
    }
    let s: f32 = x.iter().fold(0.0, |s, &v| s + v);
    for v in x.iter_mut() {
        *v /= s;
    }
}

/// `e^x` for `x ≤ 0` (a softmax's shifted logits), within 1 ulp for `x ≥ −87` (0.97 measured) and
/// `e^−87` (1.6e−38) below it. Plain IEEE operations in a fixed order (no fused ones, no
/// call), so every target gives the same bits, and a loop of it vectorises: it replaced
/// libm's `expf` (the same bits too, but a call a value), 7% of the fast-net MCTS
/// player's time.
#[inline]
fn exp_nonpositive(x: f32) -> f32 {
    // Cody–Waite reduction x = n·ln 2 + r, |r| ≤ ln 2 / 2, and Cephes' `expf` polynomial.
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    // Adding and taking away 1.5 · 2^23 rounds to the nearest integer.
    const ROUND: f32 = 12_582_912.0;
    let x = x.clamp(-87.0, 0.0);
    let n = (x * LOG2E + ROUND) - ROUND;
    let r = (x - n * LN2_HI) - n * LN2_LO;
    let p = ((((1.987_569_2e-4 * r + 1.398_199_9e-3) * r + 8.333_452e-3) * r + 4.166_579_6e-2) * r
        + 1.666_666_5e-1)
        * r
        + 0.5;
    let y = (p * (r * r) + r) + 1.0;
    // n is in −126..=0: 2^n is a normal number.
    y * f32::from_bits(((n as i32 + 127) as u32) << 23)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `board` net whose value leaves units unread is pruned ([`crate::prune`]) and
    /// values positions as its whole tensors do, bit for bit: through a leaf's lanes and
    /// through the accumulator that follows moves (the alpha-beta searcher's), in every
    /// kernel build. An `accumulator` net, whose policy reads every lane, is not pruned.
    #[test]
    fn a_pruned_net_values_as_its_whole_tensors() {
        let game: engine::Game = "ataxx".parse().unwrap();
        let mut cfg = FastNetConfig::for_game(game, 256);
        let accumulator_net = FloatNet::init(cfg.clone(), 7).unwrap();
        cfg.policy = PolicyKind::Board;
        let mut net = FloatNet::init(cfg.clone(), 7).unwrap();
        for (u, w) in net.v_w.iter_mut().enumerate() {
            if u % 3 == 0 {
                *w = 0.0;
            }
        }
        // The tensors as quantised, whole; what the pruned net gives back.
        let (w, b, v) = (
            quantise(&net.l1_w, f32::from(cfg.qa)),
            quantise(&net.l1_b, f32::from(cfg.qa)),
            quantise(&net.v_w, f32::from(cfg.qb)),
        );
        assert!(QuantNet::new(&net).unwrap().quantised() == (w.clone(), b.clone(), v.clone()));
        let read = v.iter().filter(|&&x| x != 0).count();
        assert!(read < 171, "{read} units read");
        // The value from the whole tensors, as the module docs define it.
        let (qa, qb) = (i64::from(cfg.qa), f32::from(cfg.qb));
        let layout = Layout::new(game);
        let whole = |s: &State| {
            let (mut states, mut feats) = (Vec::new(), Vec::new());
            layout.active_of(s, s.side_to_move(), &mut states, &mut feats);
            let sum: i64 = (0..256)
                .map(|h| {
                    let lane = i64::from(b[h])
                        + feats
                            .iter()
                            .map(|&f| i64::from(w[f as usize * 256 + h]))
                            .sum::<i64>();
                    lane.clamp(0, qa).pow(2) * i64::from(v[h])
                })
                .sum();
            libm::tanhf(sum as f32 / (qa as f32 * qa as f32 * qb) + net.v_b)
        };
        let mut checked = 0;
        for isa in Isa::available() {
            let q = QuantNet::new(&net).unwrap().with_isa(isa);
            assert_eq!(q.lanes(), read.div_ceil(32) * 32, "{isa:?}");
            let mut leaf = Leaf::new(&q);
            let mut rng = engine::Rng::new(11);
            for _ in 0..4 {
                let mut s = game.startpos();
                let mut acc = q.accumulator(&s);
                while !s.is_game_over() {
                    let stm = s.side_to_move();
                    q.side_lanes(&s, &mut leaf);
                    let expected = whole(&s);
                    assert_eq!(q.value_of(&leaf.lanes).to_bits(), expected.to_bits());
                    assert_eq!(q.value(&acc, stm).to_bits(), expected.to_bits());
                    checked += 1;
                    let moves = s.legal_moves();
                    let mv = moves[rng.next_u64() as usize % moves.len()];
                    let undo = s.make(mv);
                    q.apply(&mut acc, &undo.change());
                }
            }
        }
        assert!(checked > 200, "{checked} positions");
        let q = QuantNet::new(&accumulator_net).unwrap();
        assert_eq!(q.lanes(), 256);
    }

    /// The distance from `y` to `e^x` (computed in f64) in units of f32's last place at
    /// `e^x`.
    fn ulps(y: f32, x: f32) -> f64 {
        let exact = f64::from(x).exp();
        let e = exact as f32;
        let ulp = f64::from(f32::from_bits(e.to_bits() + 1) - e);
        (f64::from(y) - exact).abs() / ulp
    }

    #[test]
    fn exp_nonpositive_is_within_one_ulp_of_exp() {
        let mut worst = (0.0, 0.0f32);
        // Every 2^-14 from −87 to 0, and the edges of each reduction interval.
        let mut x = -87.0f32;
        while x <= 0.0 {
            let u = ulps(exp_nonpositive(x), x);
            if u > worst.0 {
                worst = (u, x);
            }
            x += 1.0 / 16384.0;
        }
        for n in 0..=125 {
            let mid = -(n as f32 + 0.5) * std::f32::consts::LN_2;
            for x in [
                mid,
                f32::from_bits(mid.to_bits() + 1),
                f32::from_bits(mid.to_bits() - 1),
            ] {
                let u = ulps(exp_nonpositive(x), x);
                if u > worst.0 {
                    worst = (u, x);
                }
            }
        }
        assert!(worst.0 <= 1.0, "{} ulp at x = {}", worst.0, worst.1);
        assert_eq!(exp_nonpositive(0.0), 1.0);
        assert_eq!(exp_nonpositive(-1000.0), exp_nonpositive(-87.0));
        assert!(exp_nonpositive(-87.0) > 0.0 && exp_nonpositive(-87.0).is_normal());
    }

    #[test]
    fn softmax_matches_a_double_precision_softmax() {
        let logits: Vec<f32> = (0..97)
            .map(|i| ((i * 37 % 101) as f32 - 50.0) / 7.0)
            .collect();
        let mut p = logits.clone();
        softmax(&mut p);
        let m = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let z: f64 = logits.iter().map(|&l| f64::from(l - m).exp()).sum();
        for (&q, &l) in p.iter().zip(&logits) {
            let exact = f64::from(l - m).exp() / z;
            assert!(
                (f64::from(q) - exact).abs() <= 4e-7 * exact + 1e-12,
                "{q} vs {exact}"
            );
        }
        let mut one = [3.0f32];
        softmax(&mut one);
        assert_eq!(one, [1.0]);
    }
}
