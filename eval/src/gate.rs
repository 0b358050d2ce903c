//! Gating a candidate against the incumbent best (pentanomial SPRT, or a fixed number
//! of games with a "not worse than" rule), anchoring against the baseline ladder, and
//! atomic promotion.

use engine::Game;
use serde::{Deserialize, Serialize};

use crate::matches::{GameRecord, MatchConfig, MatchError, generate_openings, run_match};
use crate::player::PlayerSpec;
use crate::stats::{MatchStats, SprtConfig, SprtVerdict};

/// How a candidate is judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GateMode {
    /// Sequential test: stop as soon as the LLR crosses a bound, or at `max_pairs`.
    Sprt,
    /// Always `max_pairs` pairs; promote when the score is at least `min_score`.
    Fixed,
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
    /// SPRT: false-promotion rate.
    pub alpha: f64,
    /// SPRT: missed-improvement rate.
    pub beta: f64,
    /// Most game pairs (the SPRT cap, or the fixed match length).
    pub max_pairs: usize,
    /// Pairs played between two SPRT checks.
    pub batch_pairs: usize,
    /// Fixed mode, and an SPRT that reaches the cap undecided: promote when the
    /// candidate scores at least this.
    pub min_score: f64,
    /// Simulations per move of both nets.
    pub simulations: u32,
    /// Random plies of the generated openings.
    pub opening_random_plies: u32,
    /// Games played at once.
    pub threads: usize,
    /// A game reaching this many plies is a draw.
    pub max_plies: u32,
}

impl Default for GateConfig {
    fn default() -> Self {
        GateConfig {
            mode: GateMode::Sprt,
            elo0: 0.0,
            elo1: 30.0,
            alpha: 0.05,
            beta: 0.1,
            max_pairs: 200,
            batch_pairs: 10,
            min_score: 0.5,
            simulations: 64,
            opening_random_plies: 4,
            threads: 2,
            max_plies: 600,
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

/// The openings of a gating or anchoring match: distinct positions a few random plies
/// from the start.
pub fn openings_for(game: Game, pairs: usize, random_plies: u32, seed: u64) -> Vec<engine::State> {
    generate_openings(game, pairs, random_plies, false, seed)
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
    match_cfg.openings = openings_for(game, cfg.max_pairs, cfg.opening_random_plies, seed);
    match_cfg.threads = cfg.threads;
    match_cfg.max_plies = cfg.max_plies;
    let mut stats = MatchStats::default();
    let mut records = Vec::new();
    let mut verdict = SprtVerdict::Continue;
    while records.len() / 2 < cfg.max_pairs {
        let done = records.len() / 2;
        match_cfg.first_pair = done;
        match_cfg.pairs = match cfg.mode {
            GateMode::Sprt => cfg.batch_pairs.min(cfg.max_pairs - done),
            GateMode::Fixed => cfg.max_pairs - done,
        };
        let (recs, s) = run_match(candidate.1, incumbent.1, &match_cfg, on_game)?;
        for i in 0..3 {
            stats.wdl[i] += s.wdl[i];
        }
        for i in 0..5 {
            stats.pentanomial[i] += s.pentanomial[i];
        }
        records.extend(recs);
        if cfg.mode == GateMode::Sprt {
            verdict = stats.sprt(&sprt);
            if verdict != SprtVerdict::Continue {
                break;
            }
        }
    }
    let llr = stats.llr(&sprt);
    let score = stats.score();
    let (promote, reason) = match (cfg.mode, verdict) {
        (GateMode::Sprt, SprtVerdict::H1) => (
            true,
            format!(
                "SPRT accepted H1 (LLR {llr:.2} ≥ {:.2}): stronger by more than {} Elo is likely",
                sprt.bounds().1,
                sprt.elo0
            ),
        ),
        (GateMode::Sprt, SprtVerdict::H0) => (
            false,
            format!(
                "SPRT accepted H0 (LLR {llr:.2} ≤ {:.2}): not {} Elo stronger",
                sprt.bounds().0,
                sprt.elo1
            ),
        ),
        _ => {
            let prefix = if cfg.mode == GateMode::Sprt {
                format!(
                    "SPRT undecided after {} pairs (LLR {llr:.2}); ",
                    cfg.max_pairs
                )
            } else {
                String::new()
            };
            if score >= cfg.min_score {
                (
                    true,
                    format!("{prefix}score {score:.3} ≥ {} (not worse)", cfg.min_score),
                )
            } else {
                (
                    false,
                    format!("{prefix}score {score:.3} < {}", cfg.min_score),
                )
            }
        }
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
    match_cfg.openings = openings_for(game, pairs, cfg.opening_random_plies, seed);
    match_cfg.threads = cfg.threads;
    match_cfg.max_plies = cfg.max_plies;
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
