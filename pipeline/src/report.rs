//! What each pipeline stage leaves in a run directory, and what is built from it: the
//! per-generation metrics table, `report.md` with SVG plots, and the rating list.
//!
//! ```text
//! <run>/selfplay/gen-NNNN/summary.json   SelfplaySummary
//! <run>/models/gen-NNNN/train.json       TrainSummary (beside model.json, weights, metrics.csv)
//! <run>/eval/gen-NNNN.json               EvalRecord (gating verdict, promotion, anchoring)
//! ```

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use plotters::prelude::*;
use serde::{Deserialize, Serialize};

use eval::{GateVerdict, MatchSummary, Outcome, Rating, RatingError, mle_ratings};
pub use rundir::generation_name;
use rundir::{RunDir, write_atomic};

/// What a self-play stage did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SelfplaySummary {
    /// Generation.
    pub generation: u32,
    /// The player that generated the games (`bootstrap` or a generation name).
    pub model: String,
    /// Games played.
    pub games: u64,
    /// Positions written.
    pub positions: u64,
    /// Wins of the first player, of the second, draws.
    pub results: [u64; 3],
    /// Wall-clock seconds.
    pub seconds: f64,
    /// The run-wide id of its first game: its games have the ids `first_game_id ..
    /// first_game_id + games` (absent in runs of older versions, whose ids restart at 0
    /// every generation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_game_id: Option<u64>,
}

/// What a training stage did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrainSummary {
    /// Generation.
    pub generation: u32,
    /// Steps trained.
    pub steps: u64,
    /// Positions in the training window.
    pub window_rows: usize,
    /// The weights it started from (a generation name, or `random`).
    pub init: String,
    /// Mean over the last tenth of the steps: total loss, policy, value, score.
    pub loss: f32,
    /// Policy loss (see `loss`).
    pub policy_loss: f32,
    /// Value loss (see `loss`).
    pub value_loss: f32,
    /// Score loss (see `loss`).
    pub score_loss: f32,
    /// Wall-clock seconds (training and export).
    pub seconds: f64,
    /// Whether this is the run's final net (`run.final_net_hidden`): a fresh net
    /// trained on all of the run's positions when the loop ended, without self-play of
    /// its generation. Absent (false) in the records of earlier builds.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub final_net: bool,
}

/// What gating, promotion and anchoring decided for a generation's candidate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EvalRecord {
    /// Generation of the candidate.
    pub generation: u32,
    /// The candidate's label (its generation name).
    pub candidate: String,
    /// The incumbent it was judged against.
    pub incumbent: String,
    /// The gating match and its verdict (absent when no match was needed).
    pub gate: Option<GateVerdict>,
    /// Whether the candidate became the best.
    pub promoted: bool,
    /// Why.
    pub reason: String,
    /// The best model after this generation.
    pub best: String,
    /// The best model's matches against the baseline ladder (when it changed).
    pub anchor: Vec<MatchSummary>,
    /// Whether every step of this stage is done (promotion and anchoring included).
    pub finished: bool,
    /// Wall-clock seconds of gating and anchoring.
    pub seconds: f64,
}

/// Everything recorded about one generation.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Generation {
    /// Its number.
    pub generation: u32,
    /// Self-play, when finished.
    pub selfplay: Option<SelfplaySummary>,
    /// Training, when finished.
    pub train: Option<TrainSummary>,
    /// Evaluation, when written.
    pub eval: Option<EvalRecord>,
}

/// Errors reading a run directory.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A record is not valid JSON of the expected shape.
    #[error("{path}: corrupt record: {message}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A plot could not be drawn.
    #[error("plot {path}: {message}")]
    Plot {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// The ratings could not be computed.
    #[error(transparent)]
    Rating(#[from] RatingError),
    /// Not a run directory.
    #[error("{0} is not a run directory (no selfplay/, models/ or eval/ inside)")]
    NotARun(PathBuf),
}

/// Reads a JSON record, `None` when the file does not exist.
pub fn read_record<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<Option<T>, ReportError> {
    match rundir::read_regular_text(path, rundir::Limit::RECORD) {
        Ok(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| ReportError::Corrupt {
                path: path.to_path_buf(),
                message: e.to_string(),
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(ReportError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Writes a JSON record atomically.
pub fn write_record<T: Serialize>(path: &Path, record: &T) -> Result<(), ReportError> {
    let text = serde_json::to_string_pretty(record).expect("records serialize");
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|source| ReportError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    write_atomic(path, text.as_bytes()).map_err(|source| ReportError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// A record of a run that could not be read.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RecordProblem {
    /// The generation it belongs to.
    pub generation: u32,
    /// The file, relative to the run directory (`eval/gen-0003.json`).
    pub file: String,
    /// What is wrong with it (without the run's path).
    pub problem: String,
}

/// The records of every generation of a run, in order, up to the first that has none; a
/// record that cannot be read is left out of its generation (the generation is still
/// listed) and named among the problems, so that one corrupt file never hides the run.
pub fn read_generations_checked(
    run: &Path,
) -> Result<(Vec<Generation>, Vec<RecordProblem>), ReportError> {
    check_run(run)?;
    let layout = RunDir::new(run);
    let mut out = vec![];
    let mut problems = vec![];
    for g in 0.. {
        let mut found = false;
        let record = Generation {
            generation: g,
            selfplay: lenient(
                &layout.selfplay_summary(g),
                run,
                g,
                &mut found,
                &mut problems,
            ),
            train: lenient(&layout.train_record(g), run, g, &mut found, &mut problems),
            eval: lenient(&layout.eval_record(g), run, g, &mut found, &mut problems),
        };
        if !found {
            break;
        }
        out.push(record);
    }
    Ok((out, problems))
}

/// The record at `path`, `None` when absent or unreadable (then named in `problems`).
fn lenient<T: for<'de> Deserialize<'de>>(
    path: &Path,
    run: &Path,
    generation: u32,
    found: &mut bool,
    problems: &mut Vec<RecordProblem>,
) -> Option<T> {
    match read_record(path) {
        Ok(r) => {
            *found |= r.is_some();
            r
        }
        Err(e) => {
            *found = true;
            problems.push(RecordProblem {
                generation,
                file: path.strip_prefix(run).unwrap_or(path).display().to_string(),
                problem: match e {
                    ReportError::Corrupt { message, .. } => format!("corrupt record: {message}"),
                    ReportError::Io { source, .. } => format!("cannot be read: {source}"),
                    other => other.to_string(),
                },
            });
            None
        }
    }
}

/// [`read_generations_checked`] without the problems.
pub fn read_generations(run: &Path) -> Result<Vec<Generation>, ReportError> {
    Ok(read_generations_checked(run)?.0)
}

/// What a report shows for a generation without self-play: `final` for the run's final
/// net (`run.final_net_hidden`), trained on the positions of every generation before.
fn no_selfplay(g: &Generation) -> &'static str {
    if g.train.as_ref().is_some_and(|t| t.final_net) {
        "final"
    } else {
        "-"
    }
}

/// The latest anchoring result against each baseline, up to and including `upto`.
fn ladder_elo(gens: &[Generation], upto: usize) -> BTreeMap<String, (f64, Option<f64>, f64)> {
    let mut m = BTreeMap::new();
    for g in &gens[..=upto] {
        if let Some(e) = &g.eval {
            for a in &e.anchor {
                m.insert(a.b.clone(), (a.elo, a.elo_ci95, a.score));
            }
        }
    }
    m
}

/// The anchor a rating list of `run` uses unless told otherwise: the last baseline of
/// its ladder (the strongest, as ladders are listed), whose games against the networks
/// are the least one-sided, so ratings relative to it are the most precise.
pub fn default_anchor(run: &Path) -> Result<Option<String>, ReportError> {
    Ok(ladder_names(&read_generations(run)?).last().cloned())
}

/// Whether `run` looks like a run directory (it holds `selfplay/`, `models/` or `eval/`).
pub fn check_run(run: &Path) -> Result<(), ReportError> {
    let layout = RunDir::new(run);
    if [layout.selfplay(), layout.models(), layout.eval()]
        .iter()
        .any(|d| d.is_dir())
    {
        Ok(())
    } else {
        Err(ReportError::NotARun(run.to_path_buf()))
    }
}

/// The PGN file of a generation's gating (`source` = `gate`) or anchoring (`anchor`)
/// games: `eval/gen-NNNN-<source>.pgn`.
pub fn match_pgn(run: &Path, generation: u32, source: &str) -> PathBuf {
    RunDir::new(run).match_pgn(generation, source)
}

/// The baselines any generation was anchored against, in first-seen order.
pub fn ladder_names(gens: &[Generation]) -> Vec<String> {
    let mut names: Vec<String> = vec![];
    for g in gens {
        for a in g.eval.iter().flat_map(|e| &e.anchor) {
            if !names.contains(&a.b) {
                names.push(a.b.clone());
            }
        }
    }
    names
}

/// Wall-clock seconds a generation's finished stages took.
pub fn seconds(g: &Generation) -> f64 {
    g.selfplay.as_ref().map_or(0.0, |s| s.seconds)
        + g.train.as_ref().map_or(0.0, |t| t.seconds)
        + g.eval.as_ref().map_or(0.0, |e| e.seconds)
}

fn fmt_elo(elo: f64, ci: Option<f64>) -> String {
    match ci {
        Some(c) => format!("{elo:+.0} ± {c:.0}"),
        None => format!("{elo:+.0} ± inf"),
    }
}

/// The per-generation metrics as CSV (games, positions, losses, gating, Elo, times).
pub fn metrics_csv(gens: &[Generation]) -> String {
    let ladder = ladder_names(gens);
    let mut header: Vec<String> = [
        "generation",
        "selfplay_model",
        "games",
        "positions",
        "positions_per_s",
        "train_steps",
        "loss",
        "policy_loss",
        "value_loss",
        "score_loss",
        "gate_games",
        "gate_score",
        "gate_elo",
        "gate_llr",
        "promoted",
        "best",
    ]
    .map(String::from)
    .to_vec();
    for l in &ladder {
        header.push(format!("score_vs_{l}"));
        header.push(format!("elo_vs_{l}"));
    }
    header.extend(["seconds".to_string(), "elapsed_s".to_string()]);
    // Fields that hold a comma, a quote or a line break (a UAI player's name and
    // options) are quoted, as every CSV reader expects.
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut write = |row: &[String]| {
        w.write_record(row).expect("CSV into memory");
    };
    write(&header);
    let mut elapsed = 0.0;
    for (i, g) in gens.iter().enumerate() {
        elapsed += seconds(g);
        let sp = g.selfplay.as_ref();
        let t = g.train.as_ref();
        let e = g.eval.as_ref();
        let gate = e.and_then(|e| e.gate.as_ref());
        let opt = |v: Option<String>| v.unwrap_or_default();
        let mut row = vec![
            g.generation.to_string(),
            opt(sp.map(|s| s.model.clone())),
            opt(sp.map(|s| s.games.to_string())),
            opt(sp.map(|s| s.positions.to_string())),
            opt(sp.map(|s| format!("{:.1}", s.positions as f64 / s.seconds.max(1e-9)))),
            opt(t.map(|t| t.steps.to_string())),
            opt(t.map(|t| format!("{:.4}", t.loss))),
            opt(t.map(|t| format!("{:.4}", t.policy_loss))),
            opt(t.map(|t| format!("{:.4}", t.value_loss))),
            opt(t.map(|t| format!("{:.4}", t.score_loss))),
            opt(gate.map(|v| v.matched.games.to_string())),
            opt(gate.map(|v| format!("{:.3}", v.matched.score))),
            opt(gate.map(|v| format!("{:.1}", v.matched.elo))),
            opt(gate.map(|v| format!("{:.2}", v.llr))),
            opt(e.map(|e| e.promoted.to_string())),
            opt(e.map(|e| e.best.clone())),
        ];
        let anchors = ladder_elo(gens, i);
        for l in &ladder {
            match anchors.get(l) {
                Some((elo, _, score)) => {
                    row.push(format!("{score:.3}"));
                    row.push(format!("{elo:.1}"));
                }
                None => row.extend([String::new(), String::new()]),
            }
        }
        row.push(format!("{:.1}", seconds(g)));
        row.push(format!("{elapsed:.1}"));
        write(&row);
    }
    String::from_utf8(w.into_inner().expect("CSV into memory")).expect("UTF-8 fields")
}

/// A short table for the terminal: one line per generation.
pub fn summary_table(gens: &[Generation]) -> String {
    let ladder = ladder_names(gens);
    let mut s = format!(
        "{:>4} {:>6} {:>9} {:>7} {:>8} {:>26} {:>10}",
        "gen", "games", "pos/s", "loss", "promoted", "gate (score, Elo ± 95%)", "best"
    );
    for l in &ladder {
        let _ = write!(s, " {:>14}", format!("vs {l}"));
    }
    let _ = writeln!(s, " {:>9}", "elapsed");
    let mut elapsed = 0.0;
    for (i, g) in gens.iter().enumerate() {
        elapsed += seconds(g);
        let sp = g.selfplay.as_ref();
        let e = g.eval.as_ref();
        let gate = e
            .and_then(|e| e.gate.as_ref())
            .map_or("-".to_string(), |v| {
                format!(
                    "{:.3}, {}",
                    v.matched.score,
                    fmt_elo(v.matched.elo, v.matched.elo_ci95)
                )
            });
        let _ = write!(
            s,
            "{:>4} {:>6} {:>9} {:>7} {:>8} {:>26} {:>10}",
            g.generation,
            sp.map_or(no_selfplay(g).into(), |s| s.games.to_string()),
            sp.map_or("-".into(), |s| format!(
                "{:.0}",
                s.positions as f64 / s.seconds.max(1e-9)
            )),
            g.train
                .as_ref()
                .map_or("-".into(), |t| format!("{:.3}", t.loss)),
            e.map_or("-".into(), |e| if e.promoted { "yes" } else { "no" }
                .to_string()),
            gate,
            e.map_or("-".into(), |e| e.best.clone()),
        );
        let anchors = ladder_elo(gens, i);
        for l in &ladder {
            let cell = anchors.get(l).map_or("-".into(), |(elo, _, score)| {
                format!("{:.0}% {elo:+.0}", score * 100.0)
            });
            let _ = write!(s, " {cell:>14}");
        }
        let _ = writeln!(s, " {:>8.0}s", elapsed);
    }
    s
}

/// Every recorded game of the given runs, labels prefixed with the run's folder name
/// when there are several runs (baselines keep their names: they are the same players).
pub fn collect_games(runs: &[PathBuf]) -> Result<Vec<(String, String, f64)>, ReportError> {
    let mut out = vec![];
    for run in runs {
        let prefix = if runs.len() > 1 {
            format!(
                "{}/",
                run.file_name()
                    .map_or("run".into(), |n| n.to_string_lossy())
            )
        } else {
            String::new()
        };
        let label = |l: &str| {
            if l.starts_with("gen-") || l == eval::BOOTSTRAP_BEST {
                format!("{prefix}{l}")
            } else {
                l.to_string()
            }
        };
        for g in read_generations(run)? {
            let Some(e) = g.eval else { continue };
            let matches = e.gate.iter().map(|v| &v.matched).chain(&e.anchor);
            for m in matches {
                for r in &m.results {
                    if let Some(p) = r.x_points() {
                        out.push((label(&r.x), label(&r.o), p));
                    }
                }
            }
        }
    }
    Ok(out)
}

/// Maximum-likelihood ratings of every player in `games`, anchored: `anchor` gets
/// `anchor_elo`. Sorted strongest first.
pub fn ratings(
    games: &[(String, String, f64)],
    anchor: &str,
    anchor_elo: f64,
) -> Result<Vec<(String, Rating)>, ReportError> {
    // Players are numbered in order of appearance, through a hash map: a search of the
    // names for every game would be quadratic in a tournament's size.
    let mut names: Vec<String> = vec![];
    let mut numbers: std::collections::HashMap<&str, usize> = Default::default();
    let mut outcomes = Vec::with_capacity(games.len());
    for (x, o, points) in games {
        let [a, b] = [x, o].map(|name| {
            let next = numbers.len();
            let number = *numbers.entry(name.as_str()).or_insert(next);
            if number == next {
                names.push(name.clone());
            }
            number
        });
        outcomes.push(Outcome {
            a,
            b,
            points: *points,
        });
    }
    let a = *numbers.get(anchor).ok_or(RatingError::BadAnchor)?;
    let r = mle_ratings(&names, &outcomes, a, anchor_elo)?;
    let mut list: Vec<(String, Rating)> = names.into_iter().zip(r).collect();
    list.sort_by(|x, y| y.1.elo.total_cmp(&x.1.elo));
    Ok(list)
}

/// The rating list as a text table.
pub fn rating_table(list: &[(String, Rating)], anchor: &str) -> String {
    let mut s = format!(
        "{:>4} {:<28} {:>7} {:>7} {:>6} {:>7}\n",
        "rank", "player", "Elo", "± 95%", "games", "score"
    );
    for (i, (name, r)) in list.iter().enumerate() {
        let ci = if name == anchor {
            "anchor".to_string()
        } else {
            format!("{:.0}", r.ci95)
        };
        let _ = writeln!(
            s,
            "{:>4} {:<28} {:>7.0} {:>7} {:>6} {:>6.1}%",
            i + 1,
            name,
            r.elo,
            ci,
            r.games,
            100.0 * r.points / f64::from(r.games.max(1))
        );
    }
    if list.len() > eval::EXACT_INTERVALS_UP_TO {
        let _ = writeln!(
            s,
            "± of a list over {} players is estimated, not exact: from {} random projections \
             of the information matrix (about 3% of each half-width, 1 sd; see the README)",
            eval::EXACT_INTERVALS_UP_TO,
            eval::INTERVAL_PROJECTIONS
        );
    }
    s
}

fn line_plot(
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[(String, Vec<(f64, f64)>)],
    markers: bool,
) -> Result<(), ReportError> {
    let err = |e: &dyn std::fmt::Display| ReportError::Plot {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let points = series.iter().flat_map(|(_, p)| p.iter());
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in points {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    if x0 > x1 {
        (x0, x1, y0, y1) = (0.0, 1.0, 0.0, 1.0);
    }
    if x1 - x0 < 1e-9 {
        x1 = x0 + 1.0;
    }
    let pad = ((y1 - y0) * 0.08).max(1e-3);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (720, 420)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(x0..x1, (y0 - pad)..(y1 + pad))
            .map_err(|e| err(&e))?;
        chart
            .configure_mesh()
            .x_desc(x_label)
            .y_desc(y_label)
            .draw()
            .map_err(|e| err(&e))?;
        for (i, (name, pts)) in series.iter().enumerate() {
            let color = Palette99::pick(i).to_rgba();
            chart
                .draw_series(LineSeries::new(pts.iter().copied(), color.stroke_width(2)))
                .map_err(|e| err(&e))?
                .label(name.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color));
            if markers {
                chart
                    .draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))
                    .map_err(|e| err(&e))?;
            }
        }
        if series.len() > 1 || series.iter().any(|(n, _)| !n.is_empty()) {
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .draw()
                .map_err(|e| err(&e))?;
        }
        root.present().map_err(|e| err(&e))?;
    }
    write_atomic(path, svg.as_bytes()).map_err(|source| ReportError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Per-step training losses of every generation, on one axis of cumulative steps.
pub fn loss_curve(run: &Path, gens: &[Generation]) -> Vec<(String, Vec<(f64, f64)>)> {
    let names = ["loss", "policy_loss", "value_loss"];
    let mut series: Vec<(String, Vec<(f64, f64)>)> =
        names.iter().map(|n| (n.to_string(), vec![])).collect();
    let mut offset = 0.0;
    for g in gens {
        let Some(t) = &g.train else { continue };
        let path = RunDir::new(run)
            .generation_model(g.generation)
            .join("metrics.csv");
        let Ok(text) = rundir::read_regular_text(&path, rundir::Limit::TEXT) else {
            continue;
        };
        let mut lines = text.lines();
        let header: Vec<&str> = lines.next().unwrap_or("").split(',').collect();
        let cols: Vec<Option<usize>> = names
            .iter()
            .map(|n| header.iter().position(|h| h == n))
            .collect();
        let rows: Vec<Vec<f64>> = lines
            .map(|l| {
                l.split(',')
                    .map(|v| v.parse().unwrap_or(f64::NAN))
                    .collect()
            })
            .collect();
        // At most ~200 points per generation: means over equal slices of steps.
        let chunk = rows.len().div_ceil(200).max(1);
        for part in rows.chunks(chunk) {
            let step = part.last().map_or(0.0, |r| r[0]);
            for (k, c) in cols.iter().enumerate() {
                let Some(c) = *c else { continue };
                let vals: Vec<f64> = part
                    .iter()
                    .filter_map(|r| r.get(c).copied())
                    .filter(|v| v.is_finite())
                    .collect();
                if !vals.is_empty() {
                    series[k]
                        .1
                        .push((offset + step, vals.iter().sum::<f64>() / vals.len() as f64));
                }
            }
        }
        offset += t.steps as f64;
    }
    series
}

/// Writes `report.md`, `metrics.csv`, `elo.svg`, `elo_time.svg` and `loss.svg` into the
/// run directory, and returns the terminal summary table.
pub fn write_report(run: &Path, anchor: Option<&str>) -> Result<String, ReportError> {
    let (gens, problems) = read_generations_checked(run)?;
    let layout = RunDir::new(run);
    write_atomic(&layout.metrics(), metrics_csv(&gens).as_bytes()).map_err(|source| {
        ReportError::Io {
            path: layout.metrics(),
            source,
        }
    })?;
    // Elo of the best model against each baseline, after each generation.
    let ladder = ladder_names(&gens);
    let mut by_gen: Vec<(String, Vec<(f64, f64)>)> = vec![];
    let mut by_time: Vec<(String, Vec<(f64, f64)>)> = vec![];
    for l in &ladder {
        let (mut pg, mut pt) = (vec![], vec![]);
        let mut elapsed = 0.0;
        for (i, g) in gens.iter().enumerate() {
            elapsed += seconds(g);
            if let Some(&(elo, _, _)) = ladder_elo(&gens, i).get(l) {
                pg.push((g.generation as f64, elo));
                pt.push((elapsed / 60.0, elo));
            }
        }
        by_gen.push((format!("best vs {l}"), pg));
        by_time.push((format!("best vs {l}"), pt));
    }
    line_plot(
        &layout.plot("elo.svg"),
        "Elo of the best model against the baselines",
        "generation",
        "Elo difference",
        &by_gen,
        true,
    )?;
    line_plot(
        &layout.plot("elo_time.svg"),
        "Elo of the best model over wall-clock time",
        "minutes",
        "Elo difference",
        &by_time,
        true,
    )?;
    line_plot(
        &layout.plot("loss.svg"),
        "Training losses",
        "step (all generations)",
        "loss",
        &loss_curve(run, &gens),
        false,
    )?;
    let table = summary_table(&gens);
    let mut md = format!(
        "# flipzero run report: {}\n\n![Elo by generation](elo.svg)\n![Elo over time](elo_time.svg)\n![Losses](loss.svg)\n\n## Generations\n\n",
        run.display()
    );
    let _ = writeln!(
        md,
        "| gen | self-play by | games | positions | train loss (policy / value) | gating | promoted | best | vs ladder | time |"
    );
    let _ = writeln!(md, "|---|---|---|---|---|---|---|---|---|---|");
    for (i, g) in gens.iter().enumerate() {
        let sp = g.selfplay.as_ref();
        let e = g.eval.as_ref();
        let gate = e.and_then(|e| e.gate.as_ref()).map_or_else(
            || e.map_or("-".into(), |e| e.reason.clone()),
            |v| {
                format!(
                    "{} games, score {:.3}, Elo {}, LLR {:.2} in [{:.2}, {:.2}]: {}",
                    v.matched.games,
                    v.matched.score,
                    fmt_elo(v.matched.elo, v.matched.elo_ci95),
                    v.llr,
                    v.bounds.0,
                    v.bounds.1,
                    v.reason
                )
            },
        );
        let ladder_cell = ladder_elo(&gens, i)
            .iter()
            .map(|(l, (elo, ci, score))| {
                format!("{l}: {:.1}% ({})", score * 100.0, fmt_elo(*elo, *ci))
            })
            .collect::<Vec<_>>()
            .join("<br>");
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.0} s |",
            g.generation,
            sp.map_or(no_selfplay(g).into(), |s| s.model.clone()),
            sp.map_or("-".into(), |s| s.games.to_string()),
            sp.map_or("-".into(), |s| s.positions.to_string()),
            g.train.as_ref().map_or("-".into(), |t| format!(
                "{:.3} ({:.3} / {:.3})",
                t.loss, t.policy_loss, t.value_loss
            )),
            gate,
            e.map_or("-".into(), |e| if e.promoted { "yes" } else { "no" }
                .to_string()),
            e.map_or("-".into(), |e| e.best.clone()),
            ladder_cell,
            seconds(g)
        );
    }
    let games = collect_games(&[run.to_path_buf()])?;
    if !games.is_empty() {
        let anchor = anchor
            .map(str::to_string)
            .or_else(|| ladder.last().cloned());
        if let Some(anchor) = anchor {
            match ratings(&games, &anchor, 0.0) {
                Ok(list) => {
                    let _ = writeln!(
                        md,
                        "\n## Rating list\n\nMaximum-likelihood Elo over all {} recorded games, anchored at {anchor} = 0 (± is the 95% interval relative to the anchor).\n\n```\n{}```",
                        games.len(),
                        rating_table(&list, &anchor)
                    );
                }
                Err(e) => {
                    let _ = writeln!(md, "\n## Rating list\n\nnot available: {e}");
                }
            }
        }
    }
    let _ = writeln!(md, "\n## Summary\n\n```\n{table}```");
    if !problems.is_empty() {
        let _ = writeln!(md, "\n## Records that could not be read\n");
        for p in &problems {
            let _ = writeln!(
                md,
                "- generation {}: `{}`: {}",
                p.generation, p.file, p.problem
            );
        }
    }
    write_atomic(&layout.report(), md.as_bytes()).map_err(|source| ReportError::Io {
        path: layout.report(),
        source,
    })?;
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_csv_quotes_player_names_with_commas() {
        let anchor = |b: &str| MatchSummary {
            a: "gen-0000".into(),
            b: b.into(),
            a_player: "mcts".into(),
            b_player: b.into(),
            games: 2,
            wdl: [1, 0, 1],
            pentanomial: [0, 0, 1, 0, 0],
            score: 0.5,
            elo: 0.0,
            elo_ci95: None,
            results: vec![],
        };
        let gens = vec![Generation {
            generation: 0,
            selfplay: None,
            train: None,
            eval: Some(EvalRecord {
                generation: 0,
                candidate: "gen-0000".into(),
                incumbent: "bootstrap".into(),
                gate: None,
                promoted: true,
                reason: "first".into(),
                best: "gen-0000".into(),
                anchor: vec![anchor("uai:/e:Hash=16,Threads=1"), anchor("ab3")],
                finished: true,
                seconds: 1.0,
            }),
        }];
        let text = metrics_csv(&gens);
        let mut r = csv::Reader::from_reader(text.as_bytes());
        let header = r.headers().unwrap().clone();
        assert_eq!(header.len(), 16 + 2 * 2 + 2, "{text}");
        assert_eq!(&header[16], "score_vs_uai:/e:Hash=16,Threads=1");
        let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].len(), header.len());
        assert_eq!(&rows[0][16], "0.500");
    }
}
