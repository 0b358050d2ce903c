//! Match statistics: Elo from a score, and its confidence interval from pentanomial
//! (game-pair) counts, the way fishtest and OpenBench report paired matches.

/// The Elo difference that gives an expected score of `score` (0 < score < 1).
///
/// ```
/// assert!((eval::elo_from_score(0.75) - 190.85).abs() < 0.01);
/// ```
pub fn elo_from_score(score: f64) -> f64 {
    -400.0 * (1.0 / score - 1.0).log10()
}

/// The expected score of a player `elo` points stronger.
pub fn score_from_elo(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// Results of a paired match from player A's view.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MatchStats {
    /// A's wins, draws and losses.
    pub wdl: [u32; 3],
    /// Game pairs by A's total over the pair: 0, ½, 1, 1½, 2 points.
    pub pentanomial: [u32; 5],
}

/// An Elo estimate with its 95% confidence half-width.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EloEstimate {
    /// A's score fraction over all games.
    pub score: f64,
    /// Elo difference A − B.
    pub elo: f64,
    /// Half-width of the 95% confidence interval of `elo`.
    pub ci95: f64,
}

impl MatchStats {
    /// Games played.
    pub fn games(&self) -> u32 {
        self.wdl.iter().sum()
    }

    /// A's score fraction.
    pub fn score(&self) -> f64 {
        let n = self.games();
        if n == 0 {
            return 0.5;
        }
        (self.wdl[0] as f64 + 0.5 * self.wdl[1] as f64) / n as f64
    }

    /// Elo difference and 95% interval. The interval uses the variance of the pair
    /// scores (pentanomial), which accounts for the correlation of the two games of an
    /// opening; without pairs it falls back to the per-game (trinomial) variance. A score
    /// of 0 or 1 is pulled in by half a game so that the estimate stays finite, and its
    /// interval is unbounded (`ci95` is infinite).
    pub fn elo(&self) -> EloEstimate {
        let n = self.games() as f64;
        let pairs: u32 = self.pentanomial.iter().sum();
        let raw = self.score();
        let eps = if n > 0.0 { 0.5 / n } else { 0.5 };
        let score = raw.clamp(eps, 1.0 - eps);
        let se = if pairs > 0 {
            let p = pairs as f64;
            let values = [0.0, 0.25, 0.5, 0.75, 1.0];
            let mean: f64 = values
                .iter()
                .zip(self.pentanomial)
                .map(|(v, c)| v * c as f64)
                .sum::<f64>()
                / p;
            let var: f64 = values
                .iter()
                .zip(self.pentanomial)
                .map(|(v, c)| c as f64 * (v - mean).powi(2))
                .sum::<f64>()
                / p;
            (var / p).sqrt()
        } else if n > 0.0 {
            let values = [1.0, 0.5, 0.0];
            let var: f64 = values
                .iter()
                .zip(self.wdl)
                .map(|(v, c)| c as f64 * (v - raw).powi(2))
                .sum::<f64>()
                / n;
            (var / n).sqrt()
        } else {
            0.0
        };
        let lo = (score - 1.959964 * se).clamp(eps, 1.0 - eps);
        let hi = (score + 1.959964 * se).clamp(eps, 1.0 - eps);
        let ci95 = if raw <= 0.0 || raw >= 1.0 {
            f64::INFINITY
        } else {
            (elo_from_score(hi) - elo_from_score(lo)) / 2.0
        };
        EloEstimate {
            score: raw,
            elo: elo_from_score(score),
            ci95,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        assert!((elo_from_score(0.5)).abs() < 1e-9);
        assert!((score_from_elo(elo_from_score(0.64)) - 0.64).abs() < 1e-12);
        // 60 W, 20 D, 20 L over 100 games (trinomial): score 0.7, Elo 147.2.
        let s = MatchStats {
            wdl: [60, 20, 20],
            pentanomial: [0; 5],
        };
        let e = s.elo();
        assert!((e.score - 0.7).abs() < 1e-12);
        assert!((e.elo - 147.19).abs() < 0.01, "{e:?}");
        // Per-game sd = sqrt(0.6*0.09 + 0.2*0.04 + 0.2*0.49) = 0.4; se = 0.04;
        // interval 0.7 ± 0.0784 → Elo 86.2 … 218.3, half-width 66.0.
        assert!((e.ci95 - 66.01).abs() < 0.01, "{e:?}");
    }

    #[test]
    fn pentanomial_interval_is_narrower_for_consistent_pairs() {
        // The same 100 games (score 0.6) as 50 pairs: mostly split pairs (steady) against
        // pairs that are all won or all lost (swingy): the swingy match is less certain.
        let steady = MatchStats {
            wdl: [60, 0, 40],
            pentanomial: [0, 0, 40, 0, 10],
        };
        let swingy = MatchStats {
            wdl: [60, 0, 40],
            pentanomial: [20, 0, 0, 0, 30],
        };
        assert!(steady.elo().ci95 < swingy.elo().ci95);
        assert!((steady.elo().elo - swingy.elo().elo).abs() < 1e-9);
    }

    #[test]
    fn perfect_scores_stay_finite() {
        let s = MatchStats {
            wdl: [10, 0, 0],
            pentanomial: [0, 0, 0, 0, 5],
        };
        assert!(s.elo().elo.is_finite() && s.elo().elo > 300.0);
        assert!(s.elo().ci95.is_infinite());
    }
}
