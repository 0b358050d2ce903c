//! Gating a candidate against the incumbent best (pentanomial SPRT, or a fixed number
//! of games with a "not worse than" rule), anchoring against the baseline ladder, and
//! atomic promotion.

use engine::Game;
use serde::{Deserialize, Serialize};

use crate::matches::{
    GameRecord, MatchClock, MatchConfig, MatchError, generate_openings, run_match,
};
use crate::players::spec::PlayerSpec;
use crate::stats::{MatchStats, PairTotals, SprtConfig, SprtVerdict};

/// How a candidate is judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GateMode {
    /// Sequential test: stop as soon as the LLR crosses a bound, or at `max_pairs`.
    Sprt,
    /// Always `max_pairs` pairs; promote when the score is at least `min_score`.
    Fixed,
}

/// What an SPRT gate does when it reaches `max_pairs` with the LLR still between its
/// bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CapRule {
    /// Promote when the candidate scored at least `min_score`.
    Score,
    /// Promote when the LLR is above 0: the pairs favour H1 over H0 (the candidate's
    /// score is above the midpoint of the two hypotheses' expected scores, the prior
    /// pair included).
    Llr,
    /// Reject: only an accepted H1 promotes.
    Reject,
}

/// Gating settings: the `[gate]` table of a flipzero config file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GateConfig {
    /// sprt or fixed.
    pub mode: GateMode,
    /// SPRT: Elo of H0 (candidate not better).
    pub elo0: f64,
    /// SPRT: Elo of H1 (candidate better).
    pub elo1: f64,
    /// SPRT: design rate of accepting H1 when H0 holds (the gate's real rates, with its
    /// cap and batches, are its operating characteristic: [`crate::operating_point`]).
    pub alpha: f64,
    /// SPRT: design rate of accepting H0 when H1 holds.
    pub beta: f64,
    /// Most game pairs (the SPRT cap, or the fixed match length).
    pub max_pairs: usize,
    /// Pairs played between two SPRT checks.
    pub batch_pairs: usize,
    /// An SPRT that reaches the cap undecided: what decides.
    pub cap_rule: CapRule,
    /// Fixed mode, and `cap_rule = "score"`: promote when the candidate scores at least
    /// this.
    pub min_score: f64,
    /// Simulations per move of both nets.
    pub simulations: u32,
    /// Random plies of the generated openings.
    pub opening_random_plies: u32,
    /// Generated openings on random blocker boards (Ataxx family): the gate and the
    /// anchors measure the game the run's self-play plays.
    pub opening_blockers: bool,
    /// Games played at once.
    pub threads: usize,
    /// A game reaching this many plies is a draw.
    pub max_plies: u32,
    /// The clock both players play on, in gating and anchoring (`time=MS` a move, or
    /// `tc=BASE+INC` in seconds): an equal-time comparison instead of equal simulations
    pub clock: Option<MatchClock>,
}

impl Default for GateConfig {
    /// The gate of configs/default.toml (its decision keys; simulations, threads and
    /// max_plies differ): an SPRT of −30 against +40 Elo, alpha 0.05, beta 0.2, checked
    /// every 6 pairs, at most 90 pairs, then the LLR's sign. Its operating
    /// characteristic: a net 30 Elo weaker promoted 8.2% of the time, one 40 Elo
    /// stronger 82% (independent games, draw rates 0 to 0.3).
    fn default() -> Self {
        GateConfig {
            mode: GateMode::Sprt,
            elo0: -30.0,
            elo1: 40.0,
            alpha: 0.05,
            beta: 0.2,
            max_pairs: 90,
            batch_pairs: 6,
            cap_rule: CapRule::Llr,
            min_score: 0.5,
            simulations: 64,
            opening_random_plies: 4,
            opening_blockers: false,
            threads: 2,
            max_plies: 600,
            clock: None,
        }
    }
}

/// A `[gate]` setting out of range, named (the config error of every table).
pub type GateConfigError = selfplay::ConfigError;

/// Why a gating match gave no verdict.
#[derive(Debug, thiserror::Error)]
pub enum GateError {
    /// The `[gate]` settings are invalid.
    #[error(transparent)]
    Config(#[from] GateConfigError),
    /// A player cannot play (a model that does not load, or of another game): no
    /// verdict, so a candidate is never promoted over an incumbent that failed.
    #[error(transparent)]
    Match(#[from] MatchError),
}

impl GateConfig {
    /// Checks every range.
    pub fn validate(&self) -> Result<(), GateConfigError> {
        let err = |key, value: String, allowed| {
            GateConfigError::check("gate", key, value, false, allowed)
        };
        if !(self.elo0.is_finite() && self.elo1.is_finite() && self.elo1 > self.elo0) {
            return err(
                "elo1",
                self.elo1.to_string(),
                "finite and greater than elo0",
            );
        }
        if !(self.alpha > 0.0 && self.alpha < 0.5) {
            return err("alpha", self.alpha.to_string(), "0 < alpha < 0.5");
        }
        if !(self.beta > 0.0 && self.beta < 0.5) {
            return err("beta", self.beta.to_string(), "0 < beta < 0.5");
        }
        if !(1..=100_000).contains(&self.max_pairs) {
            return err("max_pairs", self.max_pairs.to_string(), "1 to 100000");
        }
        if !(1..=10_000).contains(&self.batch_pairs) {
            return err("batch_pairs", self.batch_pairs.to_string(), "1 to 10000");
        }
        if !(0.0..=1.0).contains(&self.min_score) {
            return err("min_score", self.min_score.to_string(), "0 to 1");
        }
        if !(1..=1_000_000).contains(&self.simulations) {
            return err("simulations", self.simulations.to_string(), "1 to 1000000");
        }
        if self.opening_random_plies > 40 {
            return err(
                "opening_random_plies",
                self.opening_random_plies.to_string(),
                "0 to 40",
            );
        }
        if !(1..=1024).contains(&self.threads) {
            return err("threads", self.threads.to_string(), "1 to 1024");
        }
        if !(1..=100_000).contains(&self.max_plies) {
            return err("max_plies", self.max_plies.to_string(), "1 to 100000");
        }
        Ok(())
    }

    /// The SPRT hypotheses of this config.
    pub fn sprt(&self) -> SprtConfig {
        SprtConfig {
            elo0: self.elo0,
            elo1: self.elo1,
            alpha: self.alpha,
            beta: self.beta,
        }
    }

    /// Pairs of the next batch when `done` pairs are in: `batch_pairs` (fewer at the
    /// cap) for an SPRT, all the rest in fixed mode; 0 at `max_pairs`.
    pub fn next_batch(&self, done: u64) -> usize {
        let left = (self.max_pairs as u64).saturating_sub(done) as usize;
        match self.mode {
            GateMode::Sprt => self.batch_pairs.min(left),
            GateMode::Fixed => left,
        }
    }

    /// The gate's check after a batch, from the totals of every pair played: the SPRT
    /// verdict (SPRT mode), then, at `max_pairs`, the cap rule (fixed mode: the score
    /// rule). The gate and its operating characteristic both decide with this.
    pub fn decide(&self, t: &PairTotals) -> GateDecision {
        let sprt = self.sprt();
        if self.mode == GateMode::Sprt {
            match sprt.verdict_of(sprt.llr(t)) {
                SprtVerdict::H1 => {
                    return GateDecision::Done {
                        promote: true,
                        sprt: SprtVerdict::H1,
                    };
                }
                SprtVerdict::H0 => {
                    return GateDecision::Done {
                        promote: false,
                        sprt: SprtVerdict::H0,
                    };
                }
                SprtVerdict::Continue => {}
            }
        }
        if t.pairs() < self.max_pairs as u64 {
            return GateDecision::Continue;
        }
        GateDecision::Done {
            promote: self.promote_at_cap(t),
            sprt: SprtVerdict::Continue,
        }
    }

    /// The rule at `max_pairs` with the SPRT undecided (fixed mode: the only rule).
    pub fn promote_at_cap(&self, t: &PairTotals) -> bool {
        let score_rule = t.score() >= self.min_score;
        match (self.mode, self.cap_rule) {
            (GateMode::Fixed, _) | (GateMode::Sprt, CapRule::Score) => score_rule,
            (GateMode::Sprt, CapRule::Llr) => self.sprt().llr(t) > 0.0,
            (GateMode::Sprt, CapRule::Reject) => false,
        }
    }
}

/// Where a gate stands after a check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GateDecision {
    /// Play the next batch.
    Continue,
    /// Stop.
    Done {
        /// Whether the candidate is promoted.
        promote: bool,
        /// The SPRT verdict that stopped the gate; `Continue` when the cap rule (or, in
        /// fixed mode, the score rule) decided.
        sprt: SprtVerdict,
    },
}

/// How a gate's batches ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GateOutcome {
    /// The totals of every pair played.
    pub totals: PairTotals,
    /// Whether the candidate is promoted.
    pub promote: bool,
    /// The SPRT verdict that stopped the gate (`Continue`: the cap or score rule).
    pub sprt: SprtVerdict,
}

/// The gate's batches and checks, with the games left to `play`: `play(first, pairs)`
/// plays `pairs` pairs from pair index `first` on and returns their pentanomial counts
/// (pairs by the candidate's 0, ½, 1, 1½, 2 points), or an error that ends the gate
/// without a verdict. [`gate`] runs this with real games; tests feed it simulated pairs.
/// `cfg` must be valid ([`GateConfig::validate`]).
pub fn gate_loop<E>(
    cfg: &GateConfig,
    mut play: impl FnMut(usize, usize) -> Result<[u32; 5], E>,
) -> Result<GateOutcome, E> {
    let mut counts = [0u32; 5];
    let mut done = 0u64;
    loop {
        let pairs = cfg.next_batch(done);
        let totals = PairTotals::from_pentanomial(&counts);
        if pairs == 0 {
            // Only reached when `play` returned fewer pairs than asked for.
            return Ok(GateOutcome {
                totals,
                promote: cfg.promote_at_cap(&totals),
                sprt: SprtVerdict::Continue,
            });
        }
        let got = play(done as usize, pairs)?;
        debug_assert_eq!(got.iter().map(|&c| c as usize).sum::<usize>(), pairs);
        for (c, g) in counts.iter_mut().zip(got) {
            *c += g;
        }
        done += pairs as u64;
        let totals = PairTotals::from_pentanomial(&counts);
        if let GateDecision::Done { promote, sprt } = cfg.decide(&totals) {
            return Ok(GateOutcome {
                totals,
                promote,
                sprt,
            });
        }
    }
}

/// One game as the rating list needs it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameResult {
    /// Label of the first player (`x`).
    pub x: String,
    /// Label of the second player.
    pub o: String,
    /// `1-0` (x won), `0-1` or `1/2-1/2`.
    pub result: String,
    /// How it ended.
    pub reason: String,
}

impl GameResult {
    fn from_record(r: &GameRecord, a: &str, b: &str) -> GameResult {
        let (x, o) = if r.a_is_x { (a, b) } else { (b, a) };
        GameResult {
            x: x.to_string(),
            o: o.to_string(),
            result: match r.winner {
                Some(engine::Side::X) => "1-0",
                Some(engine::Side::O) => "0-1",
                None => "1/2-1/2",
            }
            .into(),
            reason: r.reason.clone(),
        }
    }

    /// Points of the first player.
    pub fn x_points(&self) -> Option<f64> {
        match self.result.as_str() {
            "1-0" => Some(1.0),
            "0-1" => Some(0.0),
            "1/2-1/2" => Some(0.5),
            _ => None,
        }
    }
}

/// A match summarized from the first player's view.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatchSummary {
    /// Label of player A.
    pub a: String,
    /// Label of player B.
    pub b: String,
    /// A's player name (how to rebuild it).
    pub a_player: String,
    /// B's player name.
    pub b_player: String,
    /// Games played.
    pub games: u32,
    /// A's wins, draws, losses.
    pub wdl: [u32; 3],
    /// Pairs by A's points: 0, ½, 1, 1½, 2.
    pub pentanomial: [u32; 5],
    /// A's score.
    pub score: f64,
    /// Elo A − B.
    pub elo: f64,
    /// 95% half-width (null when unbounded: a perfect score).
    pub elo_ci95: Option<f64>,
    /// Every game.
    pub results: Vec<GameResult>,
}

impl MatchSummary {
    fn new(
        a: &str,
        b: &str,
        a_spec: &PlayerSpec,
        b_spec: &PlayerSpec,
        stats: &MatchStats,
        records: &[GameRecord],
    ) -> MatchSummary {
        let e = stats.elo();
        MatchSummary {
            a: a.into(),
            b: b.into(),
            a_player: a_spec.to_string(),
            b_player: b_spec.to_string(),
            games: stats.games(),
            wdl: stats.wdl,
            pentanomial: stats.pentanomial,
            score: e.score,
            elo: e.elo,
            elo_ci95: e.ci95.is_finite().then_some(e.ci95),
            results: records
                .iter()
                .map(|r| GameResult::from_record(r, a, b))
                .collect(),
        }
    }
}

/// The verdict of a gating match, with everything needed to audit it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GateVerdict {
    /// Whether the candidate replaces the incumbent.
    pub promote: bool,
    /// Why, in words.
    pub reason: String,
    /// sprt or fixed.
    pub mode: GateMode,
    /// The SPRT verdict (`continue` when the cap was reached first, or in fixed mode).
    pub sprt: SprtVerdict,
    /// The final log-likelihood ratio.
    pub llr: f64,
    /// The LLR bounds: H0 below the first, H1 above the second.
    pub bounds: (f64, f64),
    /// The hypotheses and error rates.
    pub sprt_config: SprtConfig,
    /// The match, candidate as A.
    pub matched: MatchSummary,
}

/// The openings of a gating or anchoring match: distinct positions `cfg`'s random plies
/// from the start (on random blocker boards when `cfg` asks for them).
pub fn openings_for(game: Game, pairs: usize, cfg: &GateConfig, seed: u64) -> Vec<engine::State> {
    generate_openings(
        game,
        pairs,
        cfg.opening_random_plies,
        cfg.opening_blockers,
        seed,
    )
}

/// Plays `candidate` against `incumbent` until the SPRT decides or the cap is reached
/// (SPRT mode), or for `max_pairs` pairs (fixed mode). `on_game` sees every game.
pub fn gate(
    game: Game,
    candidate: (&str, &PlayerSpec),
    incumbent: (&str, &PlayerSpec),
    cfg: &GateConfig,
    seed: u64,
    on_game: &(dyn Fn(&GameRecord) + Sync),
) -> Result<GateVerdict, GateError> {
    cfg.validate()?;
    let sprt = cfg.sprt();
    let mut match_cfg = MatchConfig::new(game, 0, seed);
    match_cfg.openings = openings_for(game, cfg.max_pairs, cfg, seed);
    match_cfg.threads = cfg.threads;
    match_cfg.max_plies = cfg.max_plies;
    match_cfg.clock = cfg.clock;
    let mut stats = MatchStats::default();
    let mut records = Vec::new();
    let outcome = gate_loop(cfg, |first, pairs| {
        match_cfg.first_pair = first;
        match_cfg.pairs = pairs;
        let (recs, s) = run_match(candidate.1, incumbent.1, &match_cfg, on_game)?;
        for i in 0..3 {
            stats.wdl[i] += s.wdl[i];
        }
        for i in 0..5 {
            stats.pentanomial[i] += s.pentanomial[i];
        }
        records.extend(recs);
        Ok::<_, MatchError>(s.pentanomial)
    })?;
    let (promote, verdict) = (outcome.promote, outcome.sprt);
    let llr = sprt.llr(&outcome.totals);
    let score = outcome.totals.score();
    let reason = match (cfg.mode, verdict) {
        (GateMode::Sprt, SprtVerdict::H1) => format!(
            "SPRT accepted H1 (LLR {llr:.2} ≥ {:.2}): the pairs favour {:+} Elo over {:+} Elo",
            sprt.bounds().1,
            sprt.elo1,
            sprt.elo0
        ),
        (GateMode::Sprt, SprtVerdict::H0) => format!(
            "SPRT accepted H0 (LLR {llr:.2} ≤ {:.2}): the pairs favour {:+} Elo over {:+} Elo",
            sprt.bounds().0,
            sprt.elo0,
            sprt.elo1
        ),
        (GateMode::Sprt, SprtVerdict::Continue) => {
            let prefix = format!(
                "SPRT undecided after {} pairs (LLR {llr:.2}); ",
                cfg.max_pairs
            );
            let verb = if promote { "promote" } else { "reject" };
            match cfg.cap_rule {
                CapRule::Score if promote => {
                    format!("{prefix}score {score:.3} ≥ {}: promote", cfg.min_score)
                }
                CapRule::Score => format!("{prefix}score {score:.3} < {}: reject", cfg.min_score),
                CapRule::Llr => format!(
                    "{prefix}LLR {} 0 (cap rule \"llr\"): {verb}",
                    if promote { ">" } else { "≤" }
                ),
                CapRule::Reject => format!("{prefix}cap rule \"reject\": reject"),
            }
        }
        (GateMode::Fixed, _) if promote => {
            format!("score {score:.3} ≥ {} (not worse)", cfg.min_score)
        }
        (GateMode::Fixed, _) => format!("score {score:.3} < {}", cfg.min_score),
    };
    Ok(GateVerdict {
        promote,
        reason,
        mode: cfg.mode,
        sprt: verdict,
        llr,
        bounds: sprt.bounds(),
        sprt_config: sprt,
        matched: MatchSummary::new(
            candidate.0,
            incumbent.0,
            candidate.1,
            incumbent.1,
            &stats,
            &records,
        ),
    })
}

/// Plays `player` against each baseline of `ladder` for `pairs` pairs: its strength on a
/// scale that does not move between generations or runs.
pub fn anchor(
    game: Game,
    player: (&str, &PlayerSpec),
    ladder: &[PlayerSpec],
    pairs: usize,
    cfg: &GateConfig,
    seed: u64,
    on_game: &(dyn Fn(&GameRecord) + Sync),
) -> Result<Vec<MatchSummary>, MatchError> {
    let mut match_cfg = MatchConfig::new(game, pairs, seed);
    match_cfg.openings = openings_for(game, pairs, cfg, seed);
    match_cfg.threads = cfg.threads;
    match_cfg.max_plies = cfg.max_plies;
    match_cfg.clock = cfg.clock;
    ladder
        .iter()
        .map(|b| {
            let (recs, stats) = run_match(player.1, b, &match_cfg, on_game)?;
            Ok(MatchSummary::new(
                player.0,
                &b.to_string(),
                player.1,
                b,
                &stats,
                &recs,
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn totals(counts: [u32; 5]) -> PairTotals {
        PairTotals::from_pentanomial(&counts)
    }

    /// The gate's openings are on blocker boards exactly when it asks for them: every
    /// Ataxx board then has blocked cells (`-` in its FEN), and none without.
    #[test]
    fn gate_openings_follow_opening_blockers() {
        let game: Game = "ataxx".parse().unwrap();
        let blocked = |cfg: &GateConfig| {
            let openings = openings_for(game, 20, cfg, 7);
            assert_eq!(openings.len(), 20);
            openings
                .iter()
                .filter(|s| s.to_string().split(' ').next().unwrap().contains('-'))
                .count()
        };
        let plain = GateConfig::default();
        assert_eq!(blocked(&plain), 0);
        let with = GateConfig {
            opening_blockers: true,
            ..plain
        };
        assert_eq!(blocked(&with), 20);
    }

    #[test]
    fn batches_follow_the_mode() {
        let cfg = GateConfig {
            max_pairs: 20,
            batch_pairs: 6,
            ..GateConfig::default()
        };
        let sizes: Vec<usize> = [0, 6, 12, 18, 20].map(|d| cfg.next_batch(d)).into();
        assert_eq!(sizes, [6, 6, 6, 2, 0]);
        let fixed = GateConfig {
            mode: GateMode::Fixed,
            ..cfg
        };
        assert_eq!((fixed.next_batch(0), fixed.next_batch(20)), (20, 0));
    }

    #[test]
    fn decisions_before_and_at_the_cap() {
        let base = GateConfig {
            elo0: -30.0,
            elo1: 40.0,
            max_pairs: 10,
            ..GateConfig::default()
        };
        // Lopsided pairs decide before the cap; the SPRT says which way.
        let won = totals([0, 0, 1, 0, 5]);
        let lost = totals([5, 0, 1, 0, 0]);
        assert_eq!(
            base.decide(&won),
            GateDecision::Done {
                promote: true,
                sprt: SprtVerdict::H1
            }
        );
        assert_eq!(
            base.decide(&lost),
            GateDecision::Done {
                promote: false,
                sprt: SprtVerdict::H0
            }
        );
        // An even score after 6 pairs, all split: undecided, and under the cap.
        let even6 = totals([0, 0, 6, 0, 0]);
        let even10 = totals([1, 0, 8, 0, 1]);
        assert_eq!(base.decide(&even6), GateDecision::Continue);
        let sprt = base.sprt();
        assert_eq!(sprt.verdict_of(sprt.llr(&even10)), SprtVerdict::Continue);
        // At the cap with an even score: "score" (0.5) promotes, "llr" does not (the
        // midpoint of −30 and +40 is about +5 Elo), "reject" does not.
        for (rule, promote) in [
            (CapRule::Score, true),
            (CapRule::Llr, false),
            (CapRule::Reject, false),
        ] {
            let cfg = GateConfig {
                cap_rule: rule,
                ..base.clone()
            };
            assert_eq!(
                cfg.decide(&even10),
                GateDecision::Done {
                    promote,
                    sprt: SprtVerdict::Continue
                },
                "{rule:?}"
            );
        }
        // A score just above the midpoint: the LLR is positive and "llr" promotes.
        let above = totals([0, 0, 9, 1, 0]);
        assert!(sprt.llr(&above) > 0.0);
        let llr = GateConfig {
            cap_rule: CapRule::Llr,
            ..base.clone()
        };
        assert!(llr.promote_at_cap(&above));
        // Fixed mode never stops early, whatever the pairs, and then reads the score.
        let fixed = GateConfig {
            mode: GateMode::Fixed,
            min_score: 0.55,
            ..base.clone()
        };
        assert_eq!(fixed.decide(&won), GateDecision::Continue);
        let fixed_done = |c| match fixed.decide(&totals(c)) {
            GateDecision::Done { promote, sprt } => {
                assert_eq!(sprt, SprtVerdict::Continue);
                promote
            }
            GateDecision::Continue => panic!("fixed mode decides at the cap"),
        };
        assert!(fixed_done([0, 0, 9, 0, 1])); // score 0.55: at least min_score
        assert!(!fixed_done([0, 1, 8, 0, 1])); // score 0.5375
    }
}
