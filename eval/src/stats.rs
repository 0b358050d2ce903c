//! Match statistics: Elo from a score, and its confidence interval from pentanomial
//! (game-pair) counts, the way fishtest and OpenBench report paired matches.

/// The Elo difference that gives an expected score of `score` (0 < score < 1).
///
/// ```
/// assert!((eval::elo_from_score(0.75) - 190.85).abs() < 0.01);
/// ```
pub fn elo_from_score(score: f64) -> f64 {
    // + 0.0 turns the −0 of an even score into 0, which prints without a sign.
    -400.0 * (1.0 / score - 1.0).log10() + 0.0
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
    /// interval is unbounded (`ci95` is infinite). So is the interval of pairs (games)
    /// that all scored the same, among them a single pair: their variance is 0 or
    /// undefined, which measures nothing, not a certain Elo.
    pub fn elo(&self) -> EloEstimate {
        let n = self.games() as f64;
        let pairs: u32 = self.pentanomial.iter().sum();
        let raw = self.score();
        let eps = if n > 0.0 { 0.5 / n } else { 0.5 };
        let score = raw.clamp(eps, 1.0 - eps);
        let spread = |counts: &[u32]| counts.iter().filter(|&&c| c > 0).count() >= 2;
        let varied = if pairs > 0 {
            spread(&self.pentanomial)
        } else {
            spread(&self.wdl)
        };
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
        let ci95 = if raw <= 0.0 || raw >= 1.0 || !varied {
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

/// Settings of a sequential probability ratio test on paired games (fishtest's
/// pentanomial GSPRT). H0: A is `elo0` stronger than B; H1: A is `elo1` stronger
/// (`elo1 > elo0`, logistic Elo). Accepting H1 promotes; accepting H0 rejects.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SprtConfig {
    /// Elo of the null hypothesis.
    pub elo0: f64,
    /// Elo of the alternative hypothesis.
    pub elo1: f64,
    /// Probability of accepting H1 when H0 holds (false promotion).
    pub alpha: f64,
    /// Probability of accepting H0 when H1 holds (missed improvement).
    pub beta: f64,
}

impl SprtConfig {
    /// The lower and upper log-likelihood-ratio bounds: below the first H0 is accepted,
    /// above the second H1.
    pub fn bounds(&self) -> (f64, f64) {
        (
            (self.beta / (1.0 - self.alpha)).ln(),
            ((1.0 - self.beta) / self.alpha).ln(),
        )
    }
}

/// Where an SPRT stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SprtVerdict {
    /// The LLR crossed the upper bound: A is at least `elo1`-ish stronger.
    H1,
    /// The LLR crossed the lower bound: A is not `elo1` stronger (likely ≤ `elo0`).
    H0,
    /// Neither bound crossed yet.
    Continue,
}

/// The sums over game pairs that the SPRT and the gate's decisions read: the number of
/// pairs, and the sum and the sum of squares of each pair's points counted in half
/// points (a pair scores 0, 1, 2, 3 or 4 half points). They are exact integers, so the
/// gate and its operating characteristic ([`crate::operating_point`]) see the same
/// numbers for the same pairs, whatever order the pairs came in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PairTotals {
    pairs: u64,
    sum: u64,
    sum_sq: u64,
}

impl PairTotals {
    /// The totals of pentanomial counts (pairs by the first player's 0, ½, 1, 1½ or 2
    /// points).
    pub fn from_pentanomial(counts: &[u32; 5]) -> PairTotals {
        let mut t = PairTotals::default();
        for (i, &c) in (0u64..).zip(counts) {
            t.pairs += u64::from(c);
            t.sum += i * u64::from(c);
            t.sum_sq += i * i * u64::from(c);
        }
        t
    }

    /// The totals of `pairs` pairs whose half points sum to `sum` and whose squared half
    /// points sum to `sum_sq`. Only the operating characteristic builds these, from
    /// states it reached by adding pairs, so they are always the totals of real counts.
    pub(crate) fn from_raw(pairs: u64, sum: u64, sum_sq: u64) -> PairTotals {
        debug_assert!(sum <= 4 * pairs && sum <= sum_sq && sum_sq <= 4 * sum);
        PairTotals { pairs, sum, sum_sq }
    }

    /// Pairs counted.
    pub fn pairs(&self) -> u64 {
        self.pairs
    }

    /// The first player's points over all games, in half points.
    pub fn half_points(&self) -> u64 {
        self.sum
    }

    /// The first player's score fraction over the games of the pairs (0.5 with none).
    pub fn score(&self) -> f64 {
        if self.pairs == 0 {
            return 0.5;
        }
        self.sum as f64 / (4 * self.pairs) as f64
    }
}

impl SprtConfig {
    /// The generalized log-likelihood ratio of H1 against H0 from the pair totals (Van
    /// den Bergh's normal approximation, as fishtest computes it): with `n` pairs of mean
    /// score `m` and variance `v` (a pair's score is its points over 2),
    /// `n (s1 − s0) (2m − s0 − s1) / (2v)`, `s0` and `s1` the expected scores of `elo0`
    /// and `elo1`. One prior pair, spread as an even match without draws would give it
    /// (¼, 0, ½, 0, ¼), keeps the variance honest while few pairs are in: without it, a
    /// first pair that is won twice would have zero variance and an enormous LLR. Its
    /// weight fades as pairs come in. No pairs: 0.
    ///
    /// This is the one LLR of the crate: the gate, [`MatchStats::llr`] and the
    /// operating characteristic all call it.
    pub fn llr(&self, t: &PairTotals) -> f64 {
        if t.pairs == 0 {
            return 0.0;
        }
        // The prior pair in half points: weight 1, sum ¼·0 + ½·2 + ¼·4 = 2, sum of
        // squares ½·4 + ¼·16 = 6.
        let n = u128::from(t.pairs) + 1;
        let a = u128::from(t.sum) + 2;
        let b = u128::from(t.sum_sq) + 6;
        // n·b − a² is n² times the variance in squared half points, exactly; it is
        // positive because the prior puts weight on three different values.
        let spread = n * b - a * a;
        let nf = n as f64;
        let mean = a as f64 / (4.0 * nf);
        let var = spread as f64 / (16.0 * nf * nf);
        let (s0, s1) = (score_from_elo(self.elo0), score_from_elo(self.elo1));
        nf * (s1 - s0) * (2.0 * mean - s0 - s1) / (2.0 * var)
    }

    /// The verdict of an LLR: H1 at or above the upper bound, H0 at or below the lower.
    pub fn verdict_of(&self, llr: f64) -> SprtVerdict {
        let (lo, hi) = self.bounds();
        if llr >= hi {
            SprtVerdict::H1
        } else if llr <= lo {
            SprtVerdict::H0
        } else {
            SprtVerdict::Continue
        }
    }
}

impl MatchStats {
    /// The SPRT's log-likelihood ratio of these pair counts ([`SprtConfig::llr`]).
    pub fn llr(&self, sprt: &SprtConfig) -> f64 {
        sprt.llr(&PairTotals::from_pentanomial(&self.pentanomial))
    }

    /// The SPRT verdict for these counts.
    pub fn sprt(&self, sprt: &SprtConfig) -> SprtVerdict {
        sprt.verdict_of(self.llr(sprt))
    }
}

/// One result between two rated players: `a` scored `points` (1, ½ or 0) against `b`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Outcome {
    /// Index of the first player.
    pub a: usize,
    /// Index of the second player.
    pub b: usize,
    /// The first player's points.
    pub points: f64,
}

/// A maximum-likelihood rating with its 95% interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rating {
    /// Elo, relative to the anchor.
    pub elo: f64,
    /// Half-width of the 95% interval (0 for the anchor; relative to it).
    pub ci95: f64,
    /// Games played.
    pub games: u32,
    /// Points scored.
    pub points: f64,
}

/// Why ratings could not be computed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RatingError {
    /// Some players have no chain of games to the anchor.
    #[error("no games connect {0} to the anchor")]
    Disconnected(String),
    /// The anchor is out of range.
    #[error("the anchor is not one of the players")]
    BadAnchor,
    /// The anchor's rating is NaN or infinite.
    #[error("the anchor's rating must be a finite number")]
    BadAnchorElo,
}

/// Maximum-likelihood Elo ratings (Bradley–Terry on the logistic Elo scale, a draw
/// counting half a win to each side, as Ordo does) of `names.len()` players from
/// `outcomes`, with the anchor fixed at `anchor_elo`. Each pair of players that met gets
/// one virtual draw, which keeps a perfect score finite (it moves ratings by a few Elo
/// over hundreds of games). Intervals come from the inverse Fisher information, so they
/// are relative to the anchor.
pub fn mle_ratings(
    names: &[String],
    outcomes: &[Outcome],
    anchor: usize,
    anchor_elo: f64,
) -> Result<Vec<Rating>, RatingError> {
    let n = names.len();
    if anchor >= n {
        return Err(RatingError::BadAnchor);
    }
    if !anchor_elo.is_finite() {
        return Err(RatingError::BadAnchorElo);
    }
    let mut games = vec![vec![0.0f64; n]; n];
    let mut points = vec![vec![0.0f64; n]; n];
    let mut summary: Vec<Rating> = (0..n)
        .map(|_| Rating {
            elo: 0.0,
            ci95: 0.0,
            games: 0,
            points: 0.0,
        })
        .collect();
    for o in outcomes.iter().filter(|o| o.a != o.b) {
        games[o.a][o.b] += 1.0;
        games[o.b][o.a] += 1.0;
        points[o.a][o.b] += o.points;
        points[o.b][o.a] += 1.0 - o.points;
        summary[o.a].games += 1;
        summary[o.b].games += 1;
        summary[o.a].points += o.points;
        summary[o.b].points += 1.0 - o.points;
    }
    for i in 0..n {
        for j in 0..n {
            if games[i][j] > 0.0 {
                games[i][j] += 1.0;
                points[i][j] += 0.5;
            }
        }
    }
    // Connectivity to the anchor.
    let mut seen = vec![false; n];
    let mut stack = vec![anchor];
    seen[anchor] = true;
    while let Some(i) = stack.pop() {
        for j in 0..n {
            if games[i][j] > 0.0 && !seen[j] {
                seen[j] = true;
                stack.push(j);
            }
        }
    }
    if let Some(i) = seen.iter().position(|s| !s) {
        return Err(RatingError::Disconnected(names[i].clone()));
    }
    let k = std::f64::consts::LN_10 / 400.0;
    let free: Vec<usize> = (0..n).filter(|&i| i != anchor).collect();
    let mut r = vec![anchor_elo; n];
    let mut cov = vec![vec![0.0; free.len()]; free.len()];
    for _ in 0..200 {
        let mut grad = vec![0.0; free.len()];
        let mut info = vec![vec![0.0; free.len()]; free.len()];
        let pos: Vec<Option<usize>> = (0..n).map(|i| free.iter().position(|&f| f == i)).collect();
        for i in 0..n {
            for j in 0..n {
                if i == j || games[i][j] == 0.0 {
                    continue;
                }
                let p = score_from_elo(r[i] - r[j]);
                if let Some(a) = pos[i] {
                    grad[a] += k * (points[i][j] - games[i][j] * p);
                    let w = k * k * games[i][j] * p * (1.0 - p);
                    info[a][a] += w;
                    if let Some(b) = pos[j] {
                        info[a][b] -= w;
                    }
                }
            }
        }
        cov = invert(&info);
        let mut step_max = 0.0f64;
        for a in 0..free.len() {
            let step: f64 = (0..free.len()).map(|b| cov[a][b] * grad[b]).sum();
            let step = step.clamp(-400.0, 400.0);
            r[free[a]] += step;
            step_max = step_max.max(step.abs());
        }
        if step_max < 1e-9 {
            break;
        }
    }
    for (a, &i) in free.iter().enumerate() {
        summary[i].ci95 = 1.959964 * cov[a][a].max(0.0).sqrt();
    }
    for (i, s) in summary.iter_mut().enumerate() {
        s.elo = r[i];
    }
    Ok(summary)
}

/// The inverse of a symmetric positive-definite matrix (Gauss–Jordan with pivoting).
fn invert(m: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let n = m.len();
    let mut a: Vec<Vec<f64>> = m
        .iter()
        .enumerate()
        .map(|(i, row)| {
            let mut r = row.clone();
            r.extend((0..n).map(|j| f64::from(u8::from(i == j))));
            r
        })
        .collect();
    for c in 0..n {
        let p = (c..n)
            .max_by(|&x, &y| a[x][c].abs().total_cmp(&a[y][c].abs()))
            .expect("rows left");
        a.swap(c, p);
        let d = a[c][c];
        if d.abs() < 1e-300 {
            continue;
        }
        for v in a[c].iter_mut() {
            *v /= d;
        }
        let pivot = a[c].clone();
        for (r, row) in a.iter_mut().enumerate() {
            let f = row[c];
            if r != c && f != 0.0 {
                for (v, p) in row.iter_mut().zip(&pivot) {
                    *v -= f * p;
                }
            }
        }
    }
    a.into_iter().map(|r| r[n..].to_vec()).collect()
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

    #[test]
    fn pairs_that_all_scored_the_same_give_no_interval() {
        // One pair, or two alike: the sample variance is 0 (or undefined), not a certain
        // Elo; "± 0" was printed after one drawn pair.
        for pentanomial in [
            [0, 0, 1, 0, 0],
            [0, 1, 0, 0, 0],
            [0, 0, 2, 0, 0],
            [0, 0, 0, 2, 0],
        ] {
            let games = 2 * pentanomial.iter().sum::<u32>();
            let s = MatchStats {
                wdl: [games / 2, 0, games / 2],
                pentanomial,
            };
            assert!(s.elo().ci95.is_infinite(), "{pentanomial:?}: {:?}", s.elo());
            assert!(s.elo().elo.is_finite());
        }
        // Games without pairs: one game, or only draws.
        for wdl in [[0, 1, 0], [0, 3, 0]] {
            let s = MatchStats {
                wdl,
                pentanomial: [0; 5],
            };
            assert!(s.elo().ci95.is_infinite(), "{wdl:?}: {:?}", s.elo());
        }
        assert!(MatchStats::default().elo().ci95.is_infinite());
        // An even score is Elo 0, not −0 (printed "-0.0").
        assert_eq!(format!("{:+.1}", elo_from_score(0.5)), "+0.0");
        // Two pairs that differ have an interval.
        let s = MatchStats {
            wdl: [2, 1, 1],
            pentanomial: [0, 0, 1, 1, 0],
        };
        assert!(
            s.elo().ci95.is_finite() && s.elo().ci95 > 100.0,
            "{:?}",
            s.elo()
        );
    }

    const SPRT: SprtConfig = SprtConfig {
        elo0: 0.0,
        elo1: 20.0,
        alpha: 0.05,
        beta: 0.05,
    };

    /// One simulated pair at true Elo `elo` with 20% draws per game.
    fn pair(rng: &mut engine::Rng, elo: f64) -> usize {
        let s = score_from_elo(elo);
        let (w, d) = (s - 0.1, 0.2);
        let mut game = || {
            let u = rng.below(1 << 30) as f64 / (1u64 << 30) as f64;
            if u < w {
                2
            } else if u < w + d {
                1
            } else {
                0
            }
        };
        game() + game()
    }

    fn run_sprt(rng: &mut engine::Rng, elo: f64) -> SprtVerdict {
        let mut s = MatchStats::default();
        loop {
            s.pentanomial[pair(rng, elo)] += 1;
            if s.pentanomial.iter().sum::<u32>() % 10 == 0 {
                match s.sprt(&SPRT) {
                    SprtVerdict::Continue => {}
                    v => return v,
                }
            }
        }
    }

    #[test]
    fn sprt_error_rates_match_alpha_and_beta() {
        let mut rng = engine::Rng::new(7);
        let runs = 300;
        let false_h1 = (0..runs)
            .filter(|_| run_sprt(&mut rng, SPRT.elo0) == SprtVerdict::H1)
            .count();
        let false_h0 = (0..runs)
            .filter(|_| run_sprt(&mut rng, SPRT.elo1) == SprtVerdict::H0)
            .count();
        // Rates ≤ alpha (beta) up to sampling error: 0.05 + 3·sqrt(0.05·0.95/300) ≈ 0.088.
        assert!((false_h1 as f64 / runs as f64) < 0.088, "{false_h1}");
        assert!((false_h0 as f64 / runs as f64) < 0.088, "{false_h0}");
        // Far from the bounds the test is nearly always right.
        assert_eq!(run_sprt(&mut rng, 100.0), SprtVerdict::H1);
        assert_eq!(run_sprt(&mut rng, -100.0), SprtVerdict::H0);
    }

    /// The LLR as fishtest writes it, from the pentanomial frequencies with the prior.
    fn llr_by_frequencies(counts: [u32; 5], sprt: &SprtConfig) -> f64 {
        let prior = [0.25, 0.0, 0.5, 0.0, 0.25];
        let c: Vec<f64> = counts
            .iter()
            .zip(prior)
            .map(|(&c, p)| c as f64 + p)
            .collect();
        let n: f64 = c.iter().sum();
        let v = [0.0, 0.25, 0.5, 0.75, 1.0];
        let mean = v.iter().zip(&c).map(|(v, c)| v * c).sum::<f64>() / n;
        let var = v
            .iter()
            .zip(&c)
            .map(|(v, c)| c * (v - mean).powi(2))
            .sum::<f64>()
            / n;
        let (s0, s1) = (score_from_elo(sprt.elo0), score_from_elo(sprt.elo1));
        n * (s1 - s0) * (2.0 * mean - s0 - s1) / (2.0 * var)
    }

    #[test]
    fn llr_from_totals_is_the_frequency_formula() {
        for counts in [
            [0, 0, 1, 0, 0],
            [0, 0, 0, 0, 3],
            [3, 7, 11, 5, 2],
            [1, 0, 0, 0, 9],
            [40, 2, 300, 9, 17],
        ] {
            let a = MatchStats {
                wdl: [0; 3],
                pentanomial: counts,
            }
            .llr(&SPRT);
            let b = llr_by_frequencies(counts, &SPRT);
            assert!(
                (a - b).abs() <= 1e-12 * b.abs().max(1.0),
                "{counts:?}: {a} vs {b}"
            );
        }
        // The order of the pairs does not matter: totals are sums.
        let t = PairTotals::from_pentanomial(&[3, 7, 11, 5, 2]);
        assert_eq!((t.pairs(), t.half_points()), (28, 7 + 22 + 15 + 8));
        assert!((t.score() - 52.0 / 112.0).abs() < 1e-15);
        assert_eq!(PairTotals::default().score(), 0.5);
        assert_eq!(SPRT.llr(&PairTotals::default()), 0.0);
    }

    #[test]
    fn one_pair_decides_nothing() {
        for cell in 0..5 {
            let mut s = MatchStats::default();
            s.pentanomial[cell] = 1;
            assert_eq!(s.sprt(&SPRT), SprtVerdict::Continue, "{cell}");
        }
    }

    #[test]
    fn sprt_direction_is_pinned() {
        // A wins most pairs: H1 (A is stronger); A loses most: H0.
        let strong = MatchStats {
            wdl: [0; 3],
            pentanomial: [5, 10, 40, 60, 85],
        };
        assert!(strong.llr(&SPRT) > 0.0);
        assert_eq!(strong.sprt(&SPRT), SprtVerdict::H1);
        let weak = MatchStats {
            wdl: [0; 3],
            pentanomial: [85, 60, 40, 10, 5],
        };
        assert_eq!(weak.sprt(&SPRT), SprtVerdict::H0);
        let (lo, hi) = SPRT.bounds();
        assert!((lo + 2.944).abs() < 1e-3 && (hi - 2.944).abs() < 1e-3);
    }

    #[test]
    fn mle_recovers_known_ratings() {
        let truth = [0.0, 150.0, -100.0, 300.0];
        let names: Vec<String> = (0..4).map(|i| format!("p{i}")).collect();
        let mut rng = engine::Rng::new(5);
        let mut outcomes = vec![];
        for _ in 0..800 {
            for a in 0..4 {
                for b in a + 1..4 {
                    let p = score_from_elo(truth[a] - truth[b]);
                    let u = rng.below(1 << 30) as f64 / (1u64 << 30) as f64;
                    outcomes.push(Outcome {
                        a,
                        b,
                        points: if u < p { 1.0 } else { 0.0 },
                    });
                }
            }
        }
        let r = mle_ratings(&names, &outcomes, 0, 0.0).unwrap();
        assert_eq!(r[0].elo, 0.0);
        for i in 1..4 {
            assert!(
                (r[i].elo - truth[i]).abs() < r[i].ci95.max(5.0),
                "{i}: {:?} vs {}",
                r[i],
                truth[i]
            );
            assert!(r[i].ci95 > 5.0 && r[i].ci95 < 40.0, "{:?}", r[i]);
        }
        // Two players: the MLE is the match Elo, 75% → +190.8 (the virtual draw pulls
        // 300/400 to 300.5/401).
        let two = vec![
            Outcome {
                a: 0,
                b: 1,
                points: 1.0
            };
            300
        ]
        .into_iter()
        .chain(vec![
            Outcome {
                a: 0,
                b: 1,
                points: 0.0
            };
            100
        ])
        .collect::<Vec<_>>();
        let r = mle_ratings(&names[..2], &two, 1, 0.0).unwrap();
        assert!(
            (r[0].elo - elo_from_score(300.5 / 401.0)).abs() < 1e-6,
            "{:?}",
            r[0]
        );
        assert_eq!(
            mle_ratings(&names[..3], &two, 0, 0.0),
            Err(RatingError::Disconnected("p2".into()))
        );
    }

    #[test]
    fn a_non_finite_anchor_rating_is_refused() {
        let names: Vec<String> = vec!["a".into(), "b".into()];
        let games = [Outcome {
            a: 0,
            b: 1,
            points: 1.0,
        }];
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert_eq!(
                mle_ratings(&names, &games, 0, bad),
                Err(RatingError::BadAnchorElo)
            );
        }
        let r = mle_ratings(&names, &games, 0, 1e6).unwrap();
        assert_eq!(r[0].elo, 1e6);
        assert!(r[1].elo < 1e6 && r[1].elo.is_finite());
    }
}
