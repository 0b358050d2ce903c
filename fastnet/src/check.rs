//! The check every fast net passes when it is read ([`crate::io::parse`]): its outputs,
//! not only its weights. Finite weights can still make outputs that are not (a policy
//! weight of 3e38 overflows the first sum it enters), and a searcher fed NaN priors plays
//! garbage without a word; so a net is refused unless
//!
//! - no position can overflow its policy: a bound on every intermediate sum, over every
//!   input (the activations lie in [0, 1]), is computed from the weights in f64 and must
//!   stay below [`OVERFLOW_BOUND`], far under `f32::MAX`;
//! - on the game's check positions ([`engine::Game::check_positions`]) the value is
//!   finite and in [−1, 1], and every legal move's logit finite and within
//!   ±[`LOGIT_LIMIT`] (trained nets stay within a few tens; a logit of 10⁴ already makes
//!   the softmax one-hot).

use crate::features::Layout;
use crate::net::{FloatNet, PolicyKind, board_features};

/// The largest policy logit (in absolute value) a check position may have.
pub const LOGIT_LIMIT: f32 = 1e4;

/// The largest bound on an intermediate policy sum a net may have: below it, f32 sums of
/// at most a few thousand terms cannot reach infinity.
pub const OVERFLOW_BOUND: f64 = 1e30;

/// Why `net`'s outputs make it unusable, or `Ok` (see the module docs).
pub fn check_outputs(net: &FloatNet) -> Result<(), String> {
    let bound = policy_bound(net);
    if bound.is_nan() || bound >= OVERFLOW_BOUND {
        return Err(format!(
            "its policy weights can make sums of up to {bound:.3e} (more than {OVERFLOW_BOUND:e}): \
             logits that are not finite"
        ));
    }
    let game = net.cfg.check().map_err(|e| e.to_string())?;
    let layout = Layout::new(game);
    let (mut active, mut acc, mut board) = (Vec::new(), vec![0f32; net.cfg.hidden], Vec::new());
    for (i, s) in game.check_positions().iter().enumerate() {
        let stm = s.side_to_move();
        let states = layout.cell_states(s);
        layout.active(&states, stm, &mut active);
        net.accumulate(&active, &mut acc);
        let v = net.value(&acc);
        if !(v.is_finite() && (-1.0..=1.0).contains(&v)) {
            return Err(format!(
                "its value is {v} on check position {i} ({})",
                s.text()
            ));
        }
        let moves = s.legal_moves();
        board_features(&layout, &active, &mut board);
        let logits = net.logits(&acc, &board, &moves, layout.cells());
        if let Some((m, x)) = moves
            .iter()
            .zip(&logits)
            .find(|(_, x)| !(x.is_finite() && x.abs() <= LOGIT_LIMIT))
        {
            return Err(format!(
                "the policy logit of {} on check position {i} ({}) is {x} (outside ±{LOGIT_LIMIT:e})",
                s.move_to_string(*m),
                s.text()
            ));
        }
    }
    Ok(())
}

/// A bound, over every input, on the absolute value of every sum the policy head makes:
/// the projection `z`, each subnet's output, and each logit (Cauchy–Schwarz over a pair
/// of subnets). Infinite where a weight is.
pub fn policy_bound(net: &FloatNet) -> f64 {
    let (h, r, d) = (net.cfg.hidden, net.cfg.policy_rank, net.cfg.policy_dim);
    let abs_sum = |w: &[f32]| w.iter().map(|x| f64::from(x.abs())).sum::<f64>();
    if net.cfg.policy == PolicyKind::Board {
        // Every board feature active at once bounds any position's sums.
        let n = net.p_b.len();
        let mut outs: Vec<f64> = net.p_b.iter().map(|b| f64::from(b.abs())).collect();
        for row in net.p_w.chunks_exact(n.max(1)) {
            for (o, w) in outs.iter_mut().zip(row) {
                *o += f64::from(w.abs());
            }
        }
        return outs.chunks(d.max(1)).fold(0.0, |worst, slot| {
            let squares: f64 = slot.iter().map(|o| o * o).sum();
            slot.iter().copied().fold(worst.max(squares), f64::max)
        });
    }
    let z: Vec<f64> = (0..r)
        .map(|k| abs_sum(&net.p_proj[k * h..(k + 1) * h]))
        .collect();
    let mut worst = z.iter().copied().fold(0.0, f64::max);
    let k_max = net.p_b.len() / d.max(1);
    for k in 0..k_max {
        let mut squares = 0.0;
        for j in 0..d {
            let row = &net.p_w[(k * d + j) * r..(k * d + j + 1) * r];
            let o = f64::from(net.p_b[k * d + j].abs())
                + row
                    .iter()
                    .zip(&z)
                    .map(|(w, z)| f64::from(w.abs()) * z)
                    .sum::<f64>();
            worst = worst.max(o);
            squares += o * o;
        }
        worst = worst.max(squares);
    }
    worst
}
