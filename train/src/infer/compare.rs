//! Comparing engines: the positions every engine check runs on, and the largest
//! difference between two engines' outputs on them.

use engine::State;

use super::prediction::Prediction;

/// The positions every engine check runs on: the start and positions after random
/// legal moves of `game`, from a fixed seed.
pub fn check_positions(game: engine::Game) -> Vec<State> {
    let mut rng = engine::Rng::new(0x5EED);
    (0..8)
        .map(|k| {
            let mut s = game.startpos();
            for _ in 0..k * 3 {
                let moves = s.legal_moves();
                if moves.is_empty() {
                    break;
                }
                s.play(moves[rng.below(moves.len() as u64) as usize]);
            }
            s
        })
        .collect()
}

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
