//! The check every network passes when it is loaded ([`crate::load_model`],
//! [`crate::load_init`]) or imported: its outputs, not only its weights. Finite weights
//! (a stem of 3e38) can still make outputs that are not, and a player fed NaN priors or
//! a NaN value plays garbage or prints `null` without a word; so a network is refused
//! unless, on the game's check positions ([`engine::Game::check_positions`]), every
//! output is finite, every legal move's policy logit and every WDL logit lies within
//! ±[`LOGIT_LIMIT`], and the score within [−1, 1].

use burn::prelude::*;
use engine::Game;

use crate::net::Net;

/// The largest logit (in absolute value) a check position may have. Trained networks
/// stay within a few tens; 10⁴ already makes a softmax one-hot.
pub const LOGIT_LIMIT: f32 = 1e4;

/// Why `net`'s outputs on `game`'s check positions make it unusable, or `Ok` (see the
/// module docs). `device` is where the network lives.
pub fn check_outputs(net: &Net, game: Game, device: &Device) -> Result<(), String> {
    let states = game.check_positions();
    let out = net.forward_states(&states, device);
    let read = |t: Tensor<2>| t.into_data().try_to_vec::<f32>().expect("f32");
    let (policy, wdl, score) = (read(out.policy), read(out.wdl), read(out.score));
    let size = game.policy_size();
    for (i, s) in states.iter().enumerate() {
        let at = || format!("check position {i} ({})", s.text());
        let logits = &policy[i * size..(i + 1) * size];
        if let Some(k) = logits.iter().position(|x| !x.is_finite()) {
            return Err(format!("its policy logit {k} is {} on {}", logits[k], at()));
        }
        for m in s.legal_moves() {
            let x = logits[s.policy_index(m)];
            if x.abs() > LOGIT_LIMIT {
                return Err(format!(
                    "the policy logit of {} is {x} on {} (outside ±{LOGIT_LIMIT:e})",
                    s.move_to_string(m),
                    at()
                ));
            }
        }
        let w = &wdl[i * 3..i * 3 + 3];
        if let Some(x) = w
            .iter()
            .find(|x| !(x.is_finite() && x.abs() <= LOGIT_LIMIT))
        {
            return Err(format!(
                "its win/draw/loss logit is {x} on {} (outside ±{LOGIT_LIMIT:e})",
                at()
            ));
        }
        let v = score[i];
        if !(v.is_finite() && (-1.0..=1.0).contains(&v)) {
            return Err(format!("its score is {v} on {}", at()));
        }
    }
    Ok(())
}
