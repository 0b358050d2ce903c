//! The operating characteristic of a gate: the probability that it promotes a candidate,
//! and the pairs it plays on average, as a function of the candidate's true strength.
//!
//! Computed exactly (up to floating-point rounding) by dynamic programming over the pair
//! totals the gate's decisions read ([`PairTotals`]: pairs, and the sum and sum of
//! squares of the pairs' half points), with the gate's own batch schedule
//! ([`GateConfig::next_batch`]) and decision ([`GateConfig::decide`]), so that what is
//! computed here is the procedure [`crate::gate`] runs, not an idealized SPRT.
//!
//! The pairs are independent and identically distributed with the probabilities of a
//! [`PairModel`]. The gate's real pairs share an opening, and each of its two games is
//! played with the colours swapped, so the two games of a pair are correlated; a
//! [`PairModel`] can carry any such pentanomial distribution, and
//! [`PairModel::independent_games`] is the plain model: two independent games.

use crate::gate::{GateConfig, GateConfigError, GateDecision};
use crate::stats::{PairTotals, SprtVerdict, score_from_elo};

/// The largest grid of pair totals the computation holds at once (64 MiB of `f64`).
const MAX_CELLS: usize = 1 << 23;

/// Why an operating characteristic cannot be computed.
#[derive(Debug, thiserror::Error)]
pub enum OperatingError {
    /// The `[gate]` settings are out of range.
    #[error(transparent)]
    Config(#[from] GateConfigError),
    /// Win, draw and loss probabilities cannot give this score with this draw rate.
    #[error(
        "a draw rate of {draw_rate} is impossible at {elo} Elo (expected score {score:.4}): \
         the draw rate must be between 0 and {max:.4}"
    )]
    DrawRate {
        /// The Elo difference asked for.
        elo: f64,
        /// The draw rate asked for.
        draw_rate: f64,
        /// The expected score of that Elo difference.
        score: f64,
        /// The largest possible draw rate at that score.
        max: f64,
    },
    /// Pair probabilities that are not a distribution.
    #[error("pair probabilities {0:?} are not a distribution (non-negative, summing to 1)")]
    Probabilities([f64; 5]),
    /// The gate plays too many pairs between two decisions to follow every total
    /// exactly.
    #[error(
        "following the gate to {pairs} pairs needs a grid of {cells} pair totals, more than \
         the {MAX_CELLS} this computation holds; lower max_pairs (fixed mode) or batch_pairs"
    )]
    TooLarge {
        /// Pairs played at the check the grid would reach.
        pairs: u64,
        /// Cells that grid would need.
        cells: usize,
    },
}

/// The distribution of one game pair from the candidate's view: the probabilities that
/// it scores 0, ½, 1, 1½ and 2 points over the pair.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairModel {
    p: [f64; 5],
}

impl PairModel {
    /// A model from the five pair probabilities (non-negative, summing to 1 within 1e-9).
    pub fn new(p: [f64; 5]) -> Result<PairModel, OperatingError> {
        let sum: f64 = p.iter().sum();
        if p.iter().all(|x| x.is_finite() && *x >= 0.0) && (sum - 1.0).abs() <= 1e-9 {
            Ok(PairModel { p })
        } else {
            Err(OperatingError::Probabilities(p))
        }
    }

    /// Two independent games, each a win, a draw or a loss for the candidate with
    /// probabilities `w`, `d`, `l`: `d` is `draw_rate`, and `w + d/2` is the expected
    /// score of an `elo` stronger player on the logistic Elo scale,
    /// `1 / (1 + 10^(−elo/400))`, so `w = s − d/2` and `l = 1 − s − d/2`. The pair
    /// scores 0 with probability `l²`, ½ with `2ld`, 1 with `d² + 2wl`, 1½ with `2wd` and
    /// 2 with `w²`. Independence ignores what the shared opening does to a pair (it
    /// makes a split pair more likely than this model says); it is the plain
    /// assumption behind a trinomial Elo.
    pub fn independent_games(elo: f64, draw_rate: f64) -> Result<PairModel, OperatingError> {
        let s = score_from_elo(elo);
        let max = 2.0 * s.min(1.0 - s);
        if !(elo.is_finite() && draw_rate >= 0.0 && draw_rate <= max) {
            return Err(OperatingError::DrawRate {
                elo,
                draw_rate,
                score: s,
                max,
            });
        }
        let d = draw_rate;
        let w = (s - d / 2.0).max(0.0);
        let l = (1.0 - s - d / 2.0).max(0.0);
        PairModel::new([l * l, 2.0 * l * d, d * d + 2.0 * w * l, 2.0 * w * d, w * w])
    }

    /// The five pair probabilities (0, ½, 1, 1½, 2 points).
    pub fn probabilities(&self) -> [f64; 5] {
        self.p
    }

    /// The candidate's expected score per game.
    pub fn expected_score(&self) -> f64 {
        self.p
            .iter()
            .enumerate()
            .map(|(i, p)| i as f64 / 4.0 * p)
            .sum()
    }
}

/// A gate's behaviour against one kind of candidate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OperatingPoint {
    /// The probability that the candidate is promoted.
    pub promote: f64,
    /// The expected number of pairs played.
    pub expected_pairs: f64,
    /// The probability that the gate plays `max_pairs` pairs and the cap rule decides
    /// (fixed mode: 1).
    pub cap_decides: f64,
}

/// The gate's states after some pairs: probabilities over a box of (sum of half points,
/// `q`) cells, `q` being half of (sum of squared half points − sum of half points), the
/// sum over pairs of 0, 0, 1, 3, 6 for a pair of 0…4 half points. Both are integers, and
/// together with the number of pairs they are the totals every decision reads.
struct Grid {
    s_lo: u64,
    q_lo: u64,
    /// Width of the box along `q` (a row is one sum).
    wq: usize,
    p: Vec<f64>,
}

/// What a pair of `i` half points adds to `q`.
const Q_STEP: [usize; 5] = [0, 0, 1, 3, 6];

impl Grid {
    fn rows(&self) -> usize {
        self.p.len() / self.wq
    }

    /// The states after one more pair.
    fn step(&self, m: &[f64; 5]) -> Grid {
        let (ws, wq) = (self.rows() + 4, self.wq + 6);
        let mut p = vec![0.0; ws * wq];
        for (r, row) in self.p.chunks_exact(self.wq).enumerate() {
            for (c, &x) in row.iter().enumerate() {
                if x == 0.0 {
                    continue;
                }
                for i in 0..5 {
                    p[(r + i) * wq + c + Q_STEP[i]] += x * m[i];
                }
            }
        }
        Grid {
            s_lo: self.s_lo,
            q_lo: self.q_lo,
            wq,
            p,
        }
    }

    /// The same states in the smallest box that holds every non-zero cell (`None`: no
    /// state left).
    fn shrink(self) -> Option<Grid> {
        let rows = self.rows();
        let (mut r0, mut r1, mut c0, mut c1) = (usize::MAX, 0, usize::MAX, 0);
        for r in 0..rows {
            for c in 0..self.wq {
                if self.p[r * self.wq + c] != 0.0 {
                    r0 = r0.min(r);
                    r1 = r1.max(r);
                    c0 = c0.min(c);
                    c1 = c1.max(c);
                }
            }
        }
        if r0 == usize::MAX {
            return None;
        }
        let wq = c1 - c0 + 1;
        let mut p = Vec::with_capacity((r1 - r0 + 1) * wq);
        for r in r0..=r1 {
            p.extend_from_slice(&self.p[r * self.wq + c0..=r * self.wq + c1]);
        }
        Some(Grid {
            s_lo: self.s_lo + r0 as u64,
            q_lo: self.q_lo + c0 as u64,
            wq,
            p,
        })
    }
}

/// The operating point of the gate `cfg` against candidates whose pairs follow `model`:
/// every pair total the gate can reach, with its probability, checked exactly where
/// [`crate::gate`] checks (after each batch of [`GateConfig::next_batch`] pairs) with the
/// same decision ([`GateConfig::decide`]: the SPRT's LLR and bounds, then the cap rule).
pub fn operating_point(
    cfg: &GateConfig,
    model: &PairModel,
) -> Result<OperatingPoint, OperatingError> {
    cfg.validate()?;
    let m = model.probabilities();
    let mut grid = Some(Grid {
        s_lo: 0,
        q_lo: 0,
        wq: 1,
        p: vec![1.0],
    });
    let (mut promote, mut pairs_sum, mut cap_decides) = (0.0, 0.0, 0.0);
    let mut done = 0u64;
    while let Some(mut g) = grid {
        let batch = cfg.next_batch(done);
        debug_assert!(batch > 0, "decide stops every state at max_pairs");
        // The box after the batch: 4 more sums and 6 more `q` per pair.
        let cells =
            (g.rows().saturating_add(4 * batch)).saturating_mul(g.wq.saturating_add(6 * batch));
        if cells > MAX_CELLS {
            return Err(OperatingError::TooLarge {
                pairs: done + batch as u64,
                cells,
            });
        }
        for _ in 0..batch {
            g = g.step(&m);
        }
        done += batch as u64;
        let wq = g.wq;
        for (r, row) in g.p.chunks_exact_mut(wq).enumerate() {
            let sum = g.s_lo + r as u64;
            for (c, x) in row.iter_mut().enumerate() {
                if *x == 0.0 {
                    continue;
                }
                let q = g.q_lo + c as u64;
                let totals = PairTotals::from_raw(done, sum, sum + 2 * q);
                if let GateDecision::Done { promote: yes, sprt } = cfg.decide(&totals) {
                    if yes {
                        promote += *x;
                    }
                    if sprt == SprtVerdict::Continue {
                        cap_decides += *x;
                    }
                    pairs_sum += *x * done as f64;
                    *x = 0.0;
                }
            }
        }
        grid = g.shrink();
    }
    Ok(OperatingPoint {
        promote,
        expected_pairs: pairs_sum,
        cap_decides,
    })
}

/// The operating characteristic of `cfg` at each Elo difference of `elos` (candidate
/// minus incumbent), the games independent with draw rate `draw_rate`
/// ([`PairModel::independent_games`]).
pub fn operating_characteristic(
    cfg: &GateConfig,
    draw_rate: f64,
    elos: &[f64],
) -> Result<Vec<(f64, OperatingPoint)>, OperatingError> {
    elos.iter()
        .map(|&elo| {
            let model = PairModel::independent_games(elo, draw_rate)?;
            Ok((elo, operating_point(cfg, &model)?))
        })
        .collect()
}

/// The Elo differences `flipzero gate --operating-characteristic` prints: −60 to +80 in
/// steps of 10.
pub fn standard_elos() -> Vec<f64> {
    (-6..=8).map(|k| f64::from(k) * 10.0).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::{CapRule, GateMode, gate_loop};

    fn small(mode: GateMode, cap_rule: CapRule) -> GateConfig {
        GateConfig {
            mode,
            elo0: 0.0,
            elo1: 150.0,
            alpha: 0.2,
            beta: 0.2,
            max_pairs: 5,
            batch_pairs: 2,
            cap_rule,
            min_score: 0.55,
            ..GateConfig::default()
        }
    }

    /// Every sequence of `max_pairs` pair results fed to the real [`gate_loop`], weighted
    /// by its probability: promotion probability and expected pairs, by brute force.
    fn brute_force(cfg: &GateConfig, m: &PairModel) -> (f64, f64) {
        let p = m.probabilities();
        let n = cfg.max_pairs;
        let (mut promote, mut pairs) = (0.0, 0.0);
        for code in 0..5usize.pow(n as u32) {
            let seq: Vec<usize> = (0..n).map(|k| code / 5usize.pow(k as u32) % 5).collect();
            let prob: f64 = seq.iter().map(|&i| p[i]).product();
            let out = gate_loop(cfg, |first, count| {
                let mut c = [0u32; 5];
                for &i in &seq[first..first + count] {
                    c[i] += 1;
                }
                Ok::<_, std::convert::Infallible>(c)
            })
            .unwrap_or_else(|e| match e {});
            if out.promote {
                promote += prob;
            }
            pairs += prob * out.totals.pairs() as f64;
        }
        (promote, pairs)
    }

    #[test]
    fn dynamic_programming_equals_the_gate_loop_enumerated() {
        let models = [
            PairModel::independent_games(0.0, 0.0).unwrap(),
            PairModel::independent_games(60.0, 0.25).unwrap(),
            PairModel::new([0.1, 0.15, 0.5, 0.2, 0.05]).unwrap(),
        ];
        let mut sprt_decided_somewhere = false;
        for (mode, rule) in [
            (GateMode::Sprt, CapRule::Score),
            (GateMode::Sprt, CapRule::Llr),
            (GateMode::Sprt, CapRule::Reject),
            (GateMode::Fixed, CapRule::Score),
        ] {
            let cfg = small(mode, rule);
            for m in &models {
                let oc = operating_point(&cfg, m).unwrap();
                let (promote, pairs) = brute_force(&cfg, m);
                assert!(
                    (oc.promote - promote).abs() < 1e-12,
                    "{mode:?} {rule:?}: {oc:?} vs {promote}"
                );
                assert!(
                    (oc.expected_pairs - pairs).abs() < 1e-11,
                    "{oc:?} vs {pairs}"
                );
                sprt_decided_somewhere |= oc.cap_decides < 0.99;
                if mode == GateMode::Fixed {
                    assert!((oc.expected_pairs - 5.0).abs() < 1e-12);
                    assert!((oc.cap_decides - 1.0).abs() < 1e-12);
                }
            }
        }
        // The SPRT really stops some gates early in this configuration, so the checks
        // after the batches of 2, 2 and 1 pairs are what the comparison covers.
        assert!(sprt_decided_somewhere);
    }

    #[test]
    fn promotion_rises_with_strength_from_zero_to_one() {
        let cfg = GateConfig {
            max_pairs: 60,
            batch_pairs: 6,
            ..GateConfig::default()
        };
        for rule in [CapRule::Score, CapRule::Llr, CapRule::Reject] {
            let cfg = GateConfig {
                cap_rule: rule,
                ..cfg.clone()
            };
            for draw in [0.0, 0.3] {
                let elos: Vec<f64> = (-30..=30).map(|k| f64::from(k) * 10.0).collect();
                let oc = operating_characteristic(&cfg, draw, &elos).unwrap();
                for w in oc.windows(2) {
                    assert!(w[1].1.promote > w[0].1.promote, "{rule:?} {draw}: {w:?}");
                }
                for (_, p) in &oc {
                    assert!(p.expected_pairs >= 6.0 && p.expected_pairs <= 60.0, "{p:?}");
                }
                assert!(oc[0].1.promote < 1e-6, "{rule:?}: {:?}", oc[0]);
                assert!(oc[60].1.promote > 1.0 - 1e-4, "{rule:?}: {:?}", oc[60]);
                // Far from the hypotheses the SPRT decides in few pairs.
                assert!(oc[0].1.expected_pairs < 10.0 && oc[60].1.expected_pairs < 12.0);
            }
        }
    }

    #[test]
    fn cap_rules_are_ordered_and_an_uncapped_sprt_keeps_its_error_rates() {
        // The cap rules differ only on undecided gates at the cap: "reject" promotes the
        // least; "score" with min_score 0.5 promotes more than "llr" (whose midpoint is
        // 20 Elo above an even score).
        let base = GateConfig {
            elo0: 0.0,
            elo1: 40.0,
            alpha: 0.1,
            beta: 0.2,
            max_pairs: 30,
            batch_pairs: 6,
            ..GateConfig::default()
        };
        let draw = 0.1;
        let at = |rule, elo: f64| {
            let cfg = GateConfig {
                cap_rule: rule,
                ..base.clone()
            };
            operating_point(&cfg, &PairModel::independent_games(elo, draw).unwrap()).unwrap()
        };
        for elo in [-30.0, 0.0, 40.0] {
            let (s, l, r) = (
                at(CapRule::Score, elo),
                at(CapRule::Llr, elo),
                at(CapRule::Reject, elo),
            );
            assert!(r.promote < l.promote && l.promote < s.promote, "{elo}");
            assert_eq!(s.expected_pairs, r.expected_pairs);
        }
        // This gate (the old default, its cap rule "score") promotes a net 30 Elo weaker
        // a quarter of the time and an equal one half of the time, as simulations of it
        // found (26% and 51%).
        assert!((at(CapRule::Score, -30.0).promote - 0.254).abs() < 0.001);
        assert!((at(CapRule::Score, 0.0).promote - 0.515).abs() < 0.001);
        // Without a binding cap, the SPRT is close to its design: at most about alpha at
        // elo0 and 1 − beta at elo1 (Wald's bounds are conservative; batches overshoot).
        let long = GateConfig {
            max_pairs: 600,
            cap_rule: CapRule::Reject,
            ..base.clone()
        };
        let p0 = operating_point(&long, &PairModel::independent_games(0.0, 0.1).unwrap()).unwrap();
        let p1 = operating_point(&long, &PairModel::independent_games(40.0, 0.1).unwrap()).unwrap();
        assert!(p0.cap_decides < 2e-3 && p1.cap_decides < 2e-3);
        assert!(p0.promote < 0.1 && p0.promote > 0.05, "{p0:?}");
        assert!(p1.promote > 0.8 && p1.promote < 0.9, "{p1:?}");
    }

    #[test]
    fn models_are_checked() {
        let m = PairModel::independent_games(0.0, 0.2).unwrap();
        // w = l = 0.4, d = 0.2.
        let p = m.probabilities();
        let want = [0.16, 0.16, 0.04 + 0.32, 0.16, 0.16];
        for (a, b) in p.iter().zip(want) {
            assert!((a - b).abs() < 1e-12, "{p:?}");
        }
        let m = PairModel::independent_games(-50.0, 0.3).unwrap();
        assert!((m.expected_score() - score_from_elo(-50.0)).abs() < 1e-12);
        assert!(matches!(
            PairModel::independent_games(-400.0, 0.5),
            Err(OperatingError::DrawRate { .. })
        ));
        assert!(PairModel::independent_games(0.0, -0.1).is_err());
        assert!(PairModel::independent_games(f64::NAN, 0.1).is_err());
        assert!(PairModel::new([0.5, 0.5, 0.5, 0.0, 0.0]).is_err());
        assert!(PairModel::new([1.5, -0.5, 0.0, 0.0, 0.0]).is_err());
        let bad = GateConfig {
            alpha: 0.7,
            ..GateConfig::default()
        };
        assert!(matches!(
            operating_point(&bad, &m),
            Err(OperatingError::Config(_))
        ));
        let huge = GateConfig {
            mode: GateMode::Fixed,
            max_pairs: 100_000,
            ..GateConfig::default()
        };
        assert!(matches!(
            operating_point(&huge, &m),
            Err(OperatingError::TooLarge { .. })
        ));
    }
}
