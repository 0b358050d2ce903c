//! Tuning by matches: SPSA (simultaneous perturbation stochastic approximation), as
//! fishtest and OpenBench tune engines' search parameters. Every iteration perturbs all
//! parameters at once by ±c_k, plays θ+ against θ− (or each of them against a fixed
//! opponent) on one opening pair, and moves θ along the perturbation by the result.
//!
//! Schedules (Spall; fishtest's parameterisation): c_k = c / k^γ, a_k = a / (A + k)^α,
//! with α = 0.602, γ = 0.101, A = N / 10; each parameter gives its perturbation at the
//! last iteration (`c_end`) and the step at the end as `r_end` = a_end / c_end².

use engine::Rng;
use serde::{Deserialize, Serialize};

use crate::{MatchConfig, MatchError, PlayerSpec};

/// Spall's exponents.
const ALPHA: f64 = 0.602;
const GAMMA: f64 = 0.101;

/// One tuned parameter.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TuneParam {
    /// Its name (a player setting: `cpuct`, `fpu`).
    pub name: String,
    /// The value it starts from.
    pub start: f64,
    /// Its range; values are kept inside.
    pub min: f64,
    /// See `min`.
    pub max: f64,
    /// The perturbation at the last iteration.
    pub c_end: f64,
    /// The learning rate at the last iteration, a_end / c_end².
    pub r_end: f64,
}

/// One iteration's record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TuneStep {
    /// The iteration, from 1.
    pub iteration: u32,
    /// θ+ and θ−.
    pub plus: Vec<f64>,
    /// See `plus`.
    pub minus: Vec<f64>,
    /// The result the objective returned (θ+'s points less θ−'s).
    pub result: f64,
    /// θ after the step.
    pub theta: Vec<f64>,
}

/// The tuning's outcome: the last θ, and each parameter's mean and standard deviation
/// over the last quarter of the iterations (how settled it is).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TuneResult {
    /// The parameters tuned.
    pub params: Vec<TuneParam>,
    /// Iterations run.
    pub iterations: u32,
    /// θ at the end.
    pub theta: Vec<f64>,
    /// Mean of θ over the last quarter.
    pub tail_mean: Vec<f64>,
    /// Standard deviation of θ over the last quarter.
    pub tail_sd: Vec<f64>,
}

/// Runs SPSA for `iterations` from the parameters' starts. `objective(plus, minus)` plays
/// the two perturbed settings and returns θ+'s points less θ−'s (any scale whose sign
/// says which is better); `on_step` hears every iteration.
pub fn spsa(
    params: &[TuneParam],
    iterations: u32,
    seed: u64,
    mut objective: impl FnMut(u32, &[f64], &[f64]) -> f64,
    mut on_step: impl FnMut(&TuneStep),
) -> TuneResult {
    let n = f64::from(iterations.max(1));
    let big_a = 0.1 * n;
    let mut rng = Rng::new(seed);
    let mut theta: Vec<f64> = params.iter().map(|p| p.start).collect();
    let mut history: Vec<Vec<f64>> = Vec::new();
    for k in 1..=iterations.max(1) {
        let kf = f64::from(k);
        let delta: Vec<f64> = params
            .iter()
            .map(|_| if rng.below(2) == 0 { -1.0 } else { 1.0 })
            .collect();
        let ck: Vec<f64> = params
            .iter()
            .map(|p| p.c_end * n.powf(GAMMA) / kf.powf(GAMMA))
            .collect();
        let ak: Vec<f64> = params
            .iter()
            .map(|p| {
                p.r_end * p.c_end * p.c_end * (big_a + n).powf(ALPHA) / (big_a + kf).powf(ALPHA)
            })
            .collect();
        let clamp = |i: usize, x: f64| x.clamp(params[i].min, params[i].max);
        let plus: Vec<f64> = (0..params.len())
            .map(|i| clamp(i, theta[i] + ck[i] * delta[i]))
            .collect();
        let minus: Vec<f64> = (0..params.len())
            .map(|i| clamp(i, theta[i] - ck[i] * delta[i]))
            .collect();
        let result = objective(k, &plus, &minus);
        for i in 0..params.len() {
            // a_k / c_k · result · Δ: the gradient estimate result / (2 c_k Δ) times 2 a_k.
            theta[i] = clamp(i, theta[i] + ak[i] / ck[i] * result * delta[i]);
        }
        history.push(theta.clone());
        on_step(&TuneStep {
            iteration: k,
            plus,
            minus,
            result,
            theta: theta.clone(),
        });
    }
    let tail = &history[history.len() - history.len().div_ceil(4)..];
    let m = tail.len() as f64;
    let tail_mean: Vec<f64> = (0..params.len())
        .map(|i| tail.iter().map(|t| t[i]).sum::<f64>() / m)
        .collect();
    let tail_sd: Vec<f64> = (0..params.len())
        .map(|i| {
            (tail
                .iter()
                .map(|t| (t[i] - tail_mean[i]).powi(2))
                .sum::<f64>()
                / m)
                .sqrt()
        })
        .collect();
    TuneResult {
        params: params.to_vec(),
        iterations: iterations.max(1),
        theta,
        tail_mean,
        tail_sd,
    }
}

/// Equal up to the last digits a decimal round trip may change.
fn same(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0))
}

/// A tuning as it is written after every iteration (`flipzero tune --out`): what was
/// tuned, how, and the steps so far; `result` once it is complete. A tuning that stopped
/// resumes from it when its settings are the same ([`TuneRecord::check_resumes`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TuneRecord {
    /// The format of this record.
    pub schema_version: u32,
    /// The tuned player, as named.
    pub player: String,
    /// Every search setting of the tuned player at its start, the untuned ones too (a
    /// default may change between builds).
    pub search: String,
    /// The model its network was resolved to at the start (a run directory names its
    /// current best, which may change), if it has one.
    pub net: Option<String>,
    /// What identifies that network's weights ([`net_digest`]): a folder whose weights
    /// were replaced under the same name is another network.
    #[serde(default)]
    pub net_digest: Option<String>,
    /// The fixed opponent, if any.
    pub opponent: Option<String>,
    /// The clock of every game, in its canonical form.
    pub clock: Option<String>,
    /// The game.
    pub game: String,
    /// The openings file, if any, as named (for the reader; the hash is compared).
    pub openings: Option<String>,
    /// See `openings`: FNV-1a over the positions' text, so a changed file is noticed.
    pub openings_hash: String,
    /// The seed of the perturbations, the openings and the players.
    pub seed: u64,
    /// The iterations asked.
    pub iterations: u32,
    /// The tuned parameters.
    pub params: Vec<TuneParam>,
    /// Every iteration played so far.
    pub steps: Vec<TuneStep>,
    /// The outcome, once every iteration is played.
    pub result: Option<TuneResult>,
    /// The player with the tuned values, once complete.
    pub tuned_player: Option<String>,
}

/// The current [`TuneRecord::schema_version`].
/// Version 2 added `net_digest`.
pub const TUNE_RECORD_VERSION: u32 = 2;

impl TuneRecord {
    /// Whether a tuning described by `self` may continue the one `old` recorded: the
    /// same settings in every key but `steps` and `result`, and `old` unfinished. `Err`
    /// names the first key that differs.
    pub fn check_resumes(&self, old: &TuneRecord) -> Result<(), TuneError> {
        let differs = |key: &str, was: String, now: String| {
            TuneError::Resume(format!(
                "it is another tuning: the recorded one has {key} {was}, this one {now} (name another --out to start a new tuning)"
            ))
        };
        macro_rules! key {
            ($f:ident) => {
                if self.$f != old.$f {
                    return Err(differs(
                        stringify!($f),
                        format!("{:?}", old.$f),
                        format!("{:?}", self.$f),
                    ));
                }
            };
        }
        key!(schema_version);
        key!(player);
        key!(search);
        key!(net);
        key!(net_digest);
        key!(opponent);
        key!(clock);
        key!(game);
        key!(openings_hash);
        key!(seed);
        key!(iterations);
        key!(params);
        if old.result.is_some() {
            return Err(TuneError::Resume(
                "the recorded tuning is complete (name another --out to start a new one)".into(),
            ));
        }
        Ok(())
    }
}

/// The SHA-256 (lowercase hex) of a model folder's network: its `model.json` and every
/// weights file (`*.bpk`, `*.safetensors`), each with its name, in the order of their
/// names. Two folders with the same digest play the same network.
pub fn net_digest(dir: &std::path::Path) -> Result<String, TuneError> {
    let cannot = |e: std::io::Error| TuneError::Setting(format!("{}: {e}", dir.display()));
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map_err(cannot)?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n == "model.json" || n.ends_with(".bpk") || n.ends_with(".safetensors"))
        .collect();
    names.sort();
    if names.is_empty() {
        return Err(TuneError::Setting(format!(
            "{}: no network in this folder (no model.json or weights)",
            dir.display()
        )));
    }
    let mut all = Vec::new();
    for n in &names {
        let bytes = rundir::read_regular(&dir.join(n), rundir::Limit::DATA)
            .map_err(|e| TuneError::Setting(format!("{}: {e}", dir.join(n).display())))?;
        all.extend_from_slice(n.as_bytes());
        all.push(0);
        all.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        all.extend_from_slice(&bytes);
    }
    Ok(train::store::sha256_hex(&all))
}

/// The hash [`TuneRecord::openings_hash`] holds: FNV-1a over the positions a line
/// each, in hex.
pub fn openings_hash<'a>(positions: impl IntoIterator<Item = &'a str>) -> String {
    let text: String = positions.into_iter().flat_map(|p| [p, "\n"]).collect();
    format!("{:016x}", engine::fnv1a(text.as_bytes()))
}

/// Why a tuning by matches cannot run.
#[derive(Debug, thiserror::Error)]
pub enum TuneError {
    /// The tuned player is not an MCTS player, or a parameter is no setting of it.
    #[error("{0}")]
    Setting(String),
    /// A match failed.
    #[error(transparent)]
    Match(#[from] MatchError),
    /// A recorded tuning cannot be continued with these settings.
    #[error("cannot resume: {0}")]
    Resume(String),
    /// The caller's step handler stopped the tuning.
    #[error("stopped")]
    Stopped,
}

impl TuneParam {
    /// Parses `NAME=START:MIN:MAX:C_END[:R_END]` (R_END 0.002 when left out, fishtest's).
    pub fn parse(text: &str) -> Result<TuneParam, TuneError> {
        let bad = || {
            TuneError::Setting(format!(
                "`{text}`: expected NAME=START:MIN:MAX:C_END[:R_END] with MIN <= START <= MAX and C_END > 0 (names: {})",
                crate::PARAM_KEYS
            ))
        };
        let (name, rest) = text.split_once('=').ok_or_else(bad)?;
        let v: Vec<f64> = rest
            .split(':')
            .map(|x| x.trim().parse::<f64>().ok().filter(|x| x.is_finite()))
            .collect::<Option<_>>()
            .ok_or_else(bad)?;
        let ordered = (4..=5).contains(&v.len()) && v[1] <= v[0] && v[0] <= v[2] && v[3] > 0.0;
        if !ordered {
            return Err(bad());
        }
        let p = TuneParam {
            name: name.trim().to_string(),
            start: v[0],
            min: v[1],
            max: v[2],
            c_end: v[3],
            r_end: v.get(4).copied().unwrap_or(0.002),
        };
        // The name must be a search setting (an MCTS player's or an alpha-beta player's),
        // and its range values it accepts.
        for x in [p.min, p.max] {
            let mcts = crate::SearchParams::default().set(&p.name, &x.to_string());
            match mcts {
                Ok(true) => continue,
                Err(e) => return Err(TuneError::Setting(e)),
                Ok(false) => {}
            }
            let mut ab = crate::AbSearch::TUNED;
            match ab.set(&p.name, &format!("{}", x.round())) {
                Ok(true) if p.name != "search" => {}
                Ok(_) => {
                    return Err(TuneError::Setting(format!(
                        "`{}` is no search setting (they are: {}; and an alpha-beta player's parameters, which `flipzero uai` lists as options)",
                        p.name,
                        crate::PARAM_KEYS
                    )));
                }
                Err(e) => return Err(TuneError::Setting(e)),
            }
        }
        Ok(p)
    }
}

/// `player` (an MCTS or alpha-beta player) with `values` of `params` set.
pub fn with_values(
    player: &PlayerSpec,
    params: &[TuneParam],
    values: &[f64],
) -> Result<PlayerSpec, TuneError> {
    let mut spec = player.clone();
    let not_its = |p: &TuneParam| {
        TuneError::Setting(format!(
            "{player}: `{}` is not a setting of this player",
            p.name
        ))
    };
    match &mut spec {
        PlayerSpec::Mcts { params: set, .. } => {
            for (p, v) in params.iter().zip(values) {
                // An integer setting (endgame) takes the nearest whole value.
                let text = if p.name == "endgame" {
                    format!("{}", v.round())
                } else {
                    format!("{v}")
                };
                if !set.set(&p.name, &text).map_err(TuneError::Setting)? {
                    return Err(not_its(p));
                }
            }
        }
        PlayerSpec::AlphaBeta { search, .. } | PlayerSpec::NetAlphaBeta { search, .. } => {
            // Alpha-beta parameters are integers: the nearest whole value.
            for (p, v) in params.iter().zip(values) {
                if p.name == "search"
                    || !search
                        .set(&p.name, &format!("{}", v.round()))
                        .map_err(TuneError::Setting)?
                {
                    return Err(not_its(p));
                }
            }
        }
        _ => {
            return Err(TuneError::Setting(format!(
                "{player}: only an MCTS player (mcts:…) or an alpha-beta player (ab:…, abnet:…) has search settings to tune"
            )));
        }
    }
    Ok(spec)
}

/// Tunes `params` of `player` by SPSA for `iterations`, each iteration one opening pair
/// (`cfg`'s openings and clock, pair number = iteration): θ+ against θ− when `opponent`
/// is `None`, else θ+ and θ− each against `opponent` on the same pair. `done` are the
/// steps an interrupted tuning of the same settings already played: their results are
/// taken instead of playing their games again (the perturbations repeat from the seed,
/// and each must be the recorded one). `on_step` hears every iteration, those of `done`
/// too; it returns `false` to stop the tuning ([`TuneError::Stopped`]). After an error
/// no game is played and no step is heard.
pub fn tune_by_matches(
    player: &PlayerSpec,
    opponent: Option<&PlayerSpec>,
    params: &[TuneParam],
    iterations: u32,
    cfg: &MatchConfig,
    done: &[TuneStep],
    mut on_step: impl FnMut(&TuneStep) -> bool,
) -> Result<TuneResult, TuneError> {
    if done.len() > iterations as usize {
        return Err(TuneError::Resume(format!(
            "{} iterations are recorded, more than the {iterations} asked",
            done.len()
        )));
    }
    with_values(
        player,
        params,
        &params.iter().map(|p| p.start).collect::<Vec<_>>(),
    )?;
    let failed: std::cell::RefCell<Option<TuneError>> = std::cell::RefCell::new(None);
    let points = |a: &PlayerSpec, b: &PlayerSpec, pair: u32| -> Result<f64, TuneError> {
        let mut c = cfg.clone();
        c.pairs = 1;
        c.first_pair = pair as usize;
        let (records, _) = crate::run_match(a, b, &c, &|_| {})?;
        Ok(records.iter().map(crate::GameRecord::a_points).sum())
    };
    let result = spsa(
        params,
        iterations,
        cfg.seed,
        |k, plus, minus| {
            if failed.borrow().is_some() {
                return 0.0;
            }
            if let Some(step) = done.get(k as usize - 1) {
                if same(&step.plus, plus) && same(&step.minus, minus) {
                    return step.result;
                }
                *failed.borrow_mut() = Some(TuneError::Resume(format!(
                    "iteration {k} was recorded with θ+ {:?}, θ− {:?}, but these settings give {plus:?}, {minus:?}",
                    step.plus, step.minus
                )));
                return 0.0;
            }
            let run = || -> Result<f64, TuneError> {
                let (p, m) = (
                    with_values(player, params, plus)?,
                    with_values(player, params, minus)?,
                );
                Ok(match opponent {
                    // θ+'s points less θ−'s over the pair.
                    None => 2.0 * points(&p, &m, k)? - 2.0,
                    Some(o) => points(&p, o, k)? - points(&m, o, k)?,
                })
            };
            run().unwrap_or_else(|e| {
                *failed.borrow_mut() = Some(e);
                0.0
            })
        },
        |s| {
            if failed.borrow().is_none() && !on_step(s) {
                *failed.borrow_mut() = Some(TuneError::Stopped);
            }
        },
    );
    match failed.into_inner() {
        Some(e) => Err(e),
        None => Ok(result),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_parse_with_their_ranges_and_name_a_setting() {
        let p = TuneParam::parse("cpuct=1.5:0.5:4:0.2").unwrap();
        assert_eq!(
            (p.start, p.min, p.max, p.c_end, p.r_end),
            (1.5, 0.5, 4.0, 0.2, 0.002)
        );
        for bad in [
            "cpuct=1.5:2:4:0.2",
            "cpuct=1.5:0.5:4",
            "sims=100:1:1000:10",
            "fpu=0.1:0:5:0.1",
        ] {
            assert!(TuneParam::parse(bad).is_err(), "{bad}");
        }
        let spec: PlayerSpec = "mcts:bootstrap:sims=8".parse().unwrap();
        let tuned = with_values(&spec, std::slice::from_ref(&p), &[2.25]).unwrap();
        assert_eq!(tuned.to_string(), "mcts:bootstrap:sims=8,cpuct=2.25");
        assert!(with_values(&"greedy".parse().unwrap(), &[], &[]).is_err());
        // Alpha-beta settings are integers: the nearest whole value, over the player's own.
        let margin = TuneParam::parse("rfp_margin=80:10:400:10").unwrap();
        let ab: PlayerSpec = "ab:nodes=5000".parse().unwrap();
        let tuned = with_values(&ab, std::slice::from_ref(&margin), &[123.6]).unwrap();
        assert_eq!(tuned.to_string(), "ab:nodes=5000,rfp_margin=124");
        assert!(with_values(&ab, &[p], &[1.0]).is_err(), "cpuct is MCTS's");
    }

    #[test]
    fn a_network_is_known_by_its_weights_not_its_folder() {
        let dir = std::env::temp_dir().join(format!("flipzero-digest-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        assert!(net_digest(&dir).is_err(), "an empty folder has no network");
        std::fs::write(dir.join("model.json"), "{}").unwrap();
        std::fs::write(dir.join("fastnet.safetensors"), [1u8, 2, 3]).unwrap();
        std::fs::write(dir.join("metrics.csv"), "step\n1\n").unwrap();
        let a = net_digest(&dir).unwrap();
        assert_eq!(a.len(), 64);
        // Files that are not the network do not count.
        std::fs::write(dir.join("metrics.csv"), "step\n1\n2\n").unwrap();
        assert_eq!(net_digest(&dir).unwrap(), a);
        // Another network under the same name does: one byte of its weights.
        std::fs::write(dir.join("fastnet.safetensors"), [1u8, 2, 4]).unwrap();
        let b = net_digest(&dir).unwrap();
        assert_ne!(a, b);
        // Bytes moved from one file to the other are another network too.
        std::fs::write(dir.join("model.json"), "{}\u{1}").unwrap();
        std::fs::write(dir.join("fastnet.safetensors"), [2u8, 4]).unwrap();
        assert_ne!(net_digest(&dir).unwrap(), b);
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn steps_of(
        player: &PlayerSpec,
        params: &[TuneParam],
        cfg: &MatchConfig,
        done: &[TuneStep],
    ) -> Result<(Vec<TuneStep>, TuneResult), TuneError> {
        let mut steps = Vec::new();
        let r = tune_by_matches(player, None, params, 4, cfg, done, |s| {
            steps.push(s.clone());
            true
        })?;
        Ok((steps, r))
    }

    #[test]
    fn a_tuning_resumes_from_its_recorded_steps_and_refuses_foreign_ones() {
        let player: PlayerSpec = "mcts:bootstrap:sims=8".parse().unwrap();
        // A large step, so that every decided pair moves θ.
        let params = vec![TuneParam::parse("cpuct=1.5:0.5:4:0.3:2").unwrap()];
        let cfg = MatchConfig::new("ataxx".parse().unwrap(), 1, 5);
        let (full, result) = steps_of(&player, &params, &cfg, &[]).unwrap();
        assert_eq!(full.len(), 4);
        // Resumed after two iterations: the same tuning, step for step.
        let (resumed, again) = steps_of(&player, &params, &cfg, &full[..2]).unwrap();
        assert_eq!(resumed, full);
        assert_eq!(again, result);
        // A recorded result is taken, not played again: a result no pair can give
        // (games give -2..=2) moves θ by itself.
        let mut forged = full[..2].to_vec();
        forged[1].result = 7.0;
        let (taken, _) = steps_of(&player, &params, &cfg, &forged).unwrap();
        assert_eq!(taken[1].result, 7.0);
        assert!(
            (taken[1].theta[0] - full[1].theta[0]).abs() > 0.01,
            "{taken:?}"
        );
        // Steps of another tuning (another perturbation) are refused, naming the step.
        let mut foreign = full[..2].to_vec();
        foreign[1].plus[0] += 0.05;
        let err = steps_of(&player, &params, &cfg, &foreign).unwrap_err();
        assert!(
            matches!(&err, TuneError::Resume(m) if m.contains("iteration 2")),
            "{err}"
        );
        // After the refusal no step is heard: the last heard is the one before it.
        let mut heard = Vec::new();
        let _ = tune_by_matches(&player, None, &params, 4, &cfg, &foreign, |s| {
            heard.push(s.iteration);
            true
        });
        assert_eq!(heard, [1]);
        // A caller that stops after the second step hears no third, and gets Stopped.
        let mut heard = Vec::new();
        let stopped = tune_by_matches(&player, None, &params, 4, &cfg, &[], |s| {
            heard.push(s.iteration);
            s.iteration < 2
        });
        assert!(matches!(stopped, Err(TuneError::Stopped)), "{stopped:?}");
        assert_eq!(heard, [1, 2]);
        // More steps than iterations asked.
        let five: Vec<TuneStep> = full.iter().chain(&full[..1]).cloned().collect();
        assert!(matches!(
            steps_of(&player, &params, &cfg, &five),
            Err(TuneError::Resume(_))
        ));
    }

    #[test]
    fn a_record_resumes_only_the_same_unfinished_tuning() {
        let record = TuneRecord {
            schema_version: TUNE_RECORD_VERSION,
            player: "mcts:run".into(),
            search: "cpuct=1.45,fpu=0.04,endgame=0".into(),
            net: Some("run/models/gen-0003".into()),
            net_digest: Some("ab12".into()),
            opponent: None,
            clock: Some("tc=1+0.01".into()),
            game: "ataxx".into(),
            openings: Some("openings.txt".into()),
            openings_hash: openings_hash(["x5o/7/7/7/7/7/o5x x 0 1"]),
            seed: 1,
            iterations: 600,
            params: vec![TuneParam::parse("cpuct=1.5:0.5:4:0.15").unwrap()],
            steps: Vec::new(),
            result: None,
            tuned_player: None,
        };
        let mut old = record.clone();
        old.steps = vec![TuneStep {
            iteration: 1,
            plus: vec![1.6],
            minus: vec![1.4],
            result: 2.0,
            theta: vec![1.51],
        }];
        assert!(record.check_resumes(&old).is_ok());
        let clock = TuneRecord {
            clock: Some("tc=10+0.1".into()),
            ..old.clone()
        };
        let err = record.check_resumes(&clock).unwrap_err().to_string();
        assert!(err.contains("clock") && err.contains("tc=10+0.1"), "{err}");
        // The same player name, but its run's best has moved on, or a default changed.
        let promoted = TuneRecord {
            net: Some("run/models/gen-0004".into()),
            ..old.clone()
        };
        let err = record.check_resumes(&promoted).unwrap_err().to_string();
        assert!(err.contains("net") && err.contains("gen-0004"), "{err}");
        // The same folder with other weights in it.
        let replaced = TuneRecord {
            net_digest: Some("cd34".into()),
            ..old.clone()
        };
        let err = record.check_resumes(&replaced).unwrap_err().to_string();
        assert!(err.contains("net_digest") && err.contains("cd34"), "{err}");
        let defaults = TuneRecord {
            search: "cpuct=1.45,fpu=0.2,endgame=0".into(),
            ..old.clone()
        };
        assert!(record.check_resumes(&defaults).is_err());
        // The openings file named another way, the same positions: the same tuning.
        let renamed = TuneRecord {
            openings: Some("./openings.txt".into()),
            ..old.clone()
        };
        assert!(record.check_resumes(&renamed).is_ok());
        // The same file name with other positions in it.
        let moved = TuneRecord {
            openings_hash: openings_hash(["x5o/7/7/7/7/7/o5x o 0 1"]),
            ..old.clone()
        };
        let err = record.check_resumes(&moved).unwrap_err().to_string();
        assert!(err.contains("openings_hash"), "{err}");
        let done = TuneRecord {
            result: Some(spsa(&old.params, 1, 1, |_, _, _| 0.0, |_| {})),
            ..old
        };
        let err = record.check_resumes(&done).unwrap_err().to_string();
        assert!(err.contains("complete"), "{err}");
    }

    /// A noisy match between two settings of a synthetic engine whose strength peaks at
    /// (1.2, 0.35): each side wins a game with a probability that falls with its
    /// squared distance from the peak.
    #[test]
    fn spsa_finds_the_optimum_of_a_noisy_synthetic_objective() {
        let optimum = [1.2, 0.35];
        let strength = |x: &[f64]| -> f64 {
            -(((x[0] - optimum[0]) / 0.5).powi(2) + ((x[1] - optimum[1]) / 0.2).powi(2))
        };
        let params = vec![
            TuneParam {
                name: "cpuct".into(),
                start: 2.5,
                min: 0.1,
                max: 5.0,
                c_end: 0.1,
                r_end: 0.05,
            },
            TuneParam {
                name: "fpu".into(),
                start: 0.0,
                min: 0.0,
                max: 1.0,
                c_end: 0.04,
                r_end: 0.05,
            },
        ];
        // Observed: (1.17, 0.347) from (2.5, 0), 1.28 from 0.2.
        let mut games = Rng::new(99);
        let result = spsa(
            &params,
            4000,
            7,
            |_, plus, minus| {
                // One game pair: the expected score from a logistic model of the gap.
                let p = 1.0 / (1.0 + (-(strength(plus) - strength(minus))).exp());
                (0..2)
                    .map(|_| {
                        if (games.below(1_000_000) as f64) < p * 1e6 {
                            1.0
                        } else {
                            -1.0
                        }
                    })
                    .sum::<f64>()
            },
            |_| {},
        );
        assert!((result.tail_mean[0] - optimum[0]).abs() < 0.1, "{result:?}");
        assert!(
            (result.tail_mean[1] - optimum[1]).abs() < 0.06,
            "{result:?}"
        );
        assert!(result.tail_sd.iter().all(|s| *s < 0.1), "{result:?}");
        // From the far side too, and within the range.
        let from_below = TuneParam {
            start: 0.2,
            ..params[0].clone()
        };
        let r = spsa(
            &[from_below, params[1].clone()],
            4000,
            8,
            |_, plus, minus| {
                let p = 1.0 / (1.0 + (-(strength(plus) - strength(minus))).exp());
                if (games.below(1_000_000) as f64) < p * 1e6 {
                    2.0
                } else {
                    -2.0
                }
            },
            |_| {},
        );
        assert!((r.tail_mean[0] - optimum[0]).abs() < 0.15, "{r:?}");
    }
}
