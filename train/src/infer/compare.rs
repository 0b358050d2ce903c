//! Comparing engines: the largest difference between two engines' outputs on the same
//! positions ([`engine::Game::check_positions`]).

use super::prediction::Prediction;

/// The largest difference between two engines' outputs on the same positions (every
/// policy logit, the WDL probabilities and the score), each divided by `scale(reference
/// value)`; NaN counts as infinitely far.
pub fn max_difference(got: &[Prediction], want: &[Prediction], scale: impl Fn(f32) -> f32) -> f32 {
    got.iter()
        .zip(want)
        .flat_map(|(a, b)| {
            a.policy_logits
                .iter()
                .zip(&b.policy_logits)
                .chain(a.wdl.iter().zip(&b.wdl))
                .chain([(&a.score, &b.score)])
                .map(|(x, y)| (x - y).abs() / scale(*y))
        })
        .fold(
            0.0f32,
            |m, d| if d.is_nan() { f32::INFINITY } else { m.max(d) },
        )
}
