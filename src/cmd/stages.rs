//! The stages of the pipeline that `flipzero run` (one process, one generation after
//! another) and the separate roles of `flipzero worker` (processes that meet in the run
//! directory) share: training a generation's network, gating it, promoting and
//! anchoring it, and the run directory's set-up (its saved config and its best model).

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, bail};
use eval::report::{EvalRecord, TrainSummary, generation_name, read_record, write_record};
use eval::{BOOTSTRAP_BEST, NetSource, PlayerSpec};
use indicatif::{ProgressBar, ProgressStyle};

use super::config::RunConfig;

/// A crash hook for the resume tests: `FLIPZERO_CRASH_AT=<point>` aborts the process
/// (no unwinding, no cleanup: like `kill -9`) when the loop reaches that point.
pub(crate) fn crash_point(name: &str) {
    if std::env::var("FLIPZERO_CRASH_AT").is_ok_and(|v| v == name) {
        eprintln!("FLIPZERO_CRASH_AT={name}: aborting");
        std::process::abort();
    }
}

pub(crate) fn bar(quiet: bool, len: u64, template: &str) -> ProgressBar {
    let b = if quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(len)
    };
    b.set_style(
        ProgressStyle::with_template(template)
            .expect("valid template")
            .progress_chars("=> "),
    );
    b
}

pub(crate) fn remove_dir(path: &Path) -> anyhow::Result<()> {
    match std::fs::remove_dir_all(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e).with_context(|| format!("cannot remove {}", path.display())),
    }
}

/// Publishes a finished stage folder: rename, then sync the parent so the rename lasts.
pub(crate) fn publish(partial: &Path, done: &Path) -> anyhow::Result<()> {
    std::fs::rename(partial, done)
        .with_context(|| format!("cannot rename {} to {}", partial.display(), done.display()))?;
    if let Some(parent) = done.parent()
        && let Ok(d) = std::fs::File::open(parent)
    {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Appends `line` to run `dir`'s `run.log` with the Unix time (best effort: a log that
/// cannot be written stops nothing).
pub(crate) fn append_log(dir: &Path, line: &str) {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("run.log"))
    {
        use std::io::Write as _;
        let _ = writeln!(f, "{stamp} {line}");
    }
}

/// A line for a run's log from code that has no [`Pipeline`]: on stderr and in
/// `run.log`.
pub(crate) fn log_line(dir: &Path, line: &str) {
    eprintln!("{line}");
    append_log(dir, line);
}

/// A run directory and its config: what every stage works on.
pub(crate) struct Pipeline {
    pub(crate) cfg: RunConfig,
    pub(crate) dir: PathBuf,
    pub(crate) game: engine::Game,
    pub(crate) quiet: bool,
    pub(crate) start: Instant,
}

impl Pipeline {
    /// A stage line: on stderr (unless quiet) and appended to `run.log` with the time.
    pub(crate) fn log(&self, msg: &str) {
        let line = format!("[{:>6.0}s] {msg}", self.start.elapsed().as_secs_f64());
        if !self.quiet {
            eprintln!("{line}");
        }
        append_log(&self.dir, &line);
    }

    /// A warning: on stderr (always) and in `run.log`.
    pub(crate) fn warn(&self, msg: &str) {
        eprintln!("warning: {msg}");
        append_log(&self.dir, &format!("warning: {msg}"));
    }

    /// Starts every external engine of the anchor ladder once (and stops it), so that a
    /// ladder player that cannot play this game is refused before the run's work starts,
    /// not after its first network is trained.
    pub(crate) fn check_ladder(&self) -> anyhow::Result<()> {
        for p in &self.cfg.anchor.ladder {
            let spec: PlayerSpec = p.parse()?;
            spec.check(self.game, eval::Timeouts::default())
                .with_context(|| format!("anchor.ladder = {p}"))?;
        }
        Ok(())
    }

    pub(crate) fn best(&self) -> anyhow::Result<String> {
        Ok(eval::current_best(&self.dir)?.unwrap_or_else(|| BOOTSTRAP_BEST.to_string()))
    }

    pub(crate) fn best_spec(&self, best: &str, sims: u32) -> PlayerSpec {
        let net = if best == BOOTSTRAP_BEST {
            NetSource::Bootstrap
        } else {
            NetSource::Path(self.dir.join("models").join(best))
        };
        PlayerSpec::Mcts {
            net,
            sims,
            time: None,
            engine: self.cfg.selfplay.net_engine,
            basic: false,
        }
    }

    /// Trains generation `g`'s network into `models/gen-NNNN.partial` (resuming from
    /// its last checkpoint) on `data` (shard folders, oldest first) from `init` (the
    /// previous network, or random weights), with the window the run's `produced`
    /// positions give; exports it, writes its summary and the `extra` files (name,
    /// contents) beside it, and publishes it as `models/gen-NNNN` with one rename.
    pub(crate) fn train_model(
        &self,
        g: u32,
        data: Vec<PathBuf>,
        init: Option<(String, PathBuf)>,
        produced: u64,
        extra: &[(&str, String)],
    ) -> anyhow::Result<TrainSummary> {
        let name = generation_name(g);
        let models = self.dir.join("models");
        let done = models.join(&name);
        let partial = models.join(format!("{name}.partial"));
        let mut cfg = self.cfg.train.clone();
        cfg.seed = engine::splitmix64(self.cfg.train.seed ^ (u64::from(g) << 32)).1;
        // The window grows with the positions the run has produced (train.window_exponent).
        cfg.window = cfg.window_for(produced);
        self.log(&format!(
            "{name}: training {} steps of {} on the newest {} of {produced} positions, from {}",
            cfg.steps,
            cfg.batch_size,
            cfg.window,
            init.as_ref().map_or("random weights", |(n, _)| n.as_str())
        ));
        let b = bar(
            self.quiet,
            cfg.steps,
            "  train [{bar:30}] {pos}/{len} steps  {msg}  ETA {eta}",
        );
        let t = Instant::now();
        let on_step = |m: &train::StepMetrics| {
            b.set_position(m.step);
            b.set_message(format!(
                "loss {:.3} (policy {:.3}, value {:.3})  {:.0} samples/s",
                m.loss, m.policy_loss, m.value_loss, m.samples_per_s
            ));
            if m.step == cfg.checkpoint_every + 1 {
                crash_point("train");
            }
        };
        let opts = train::TrainOptions {
            data,
            out: partial.clone(),
            resume: true,
            init: init.as_ref().map(|(_, d)| d.clone()),
            stop_after: None,
            on_step: &on_step,
        };
        let report = train::train(&cfg, self.game, &opts)?;
        b.finish_and_clear();
        for s in &report.skipped {
            self.warn(&format!("{name}: skipped {s}"));
        }
        for w in &report.warnings {
            self.warn(&format!("{name}: {w}"));
        }
        if self.cfg.run.export {
            train::export(&partial, &partial)?;
        }
        let means = tail_means(&partial.join("metrics.csv"))?;
        let summary = TrainSummary {
            generation: g,
            steps: report.steps,
            window_rows: report.window_rows,
            init: init.map_or("random".into(), |(n, _)| n),
            loss: means[0],
            policy_loss: means[1],
            value_loss: means[2],
            score_loss: means[3],
            seconds: t.elapsed().as_secs_f64(),
        };
        for (file, text) in extra {
            eval::write_atomic(&partial.join(file), text.as_bytes())
                .with_context(|| format!("cannot write {}", partial.join(file).display()))?;
        }
        write_record(&partial.join("train.json"), &summary)?;
        crash_point("train-publish");
        remove_dir(&done)?;
        publish(&partial, &done)?;
        self.log(&format!(
            "{name}: trained on {} positions, loss {:.3} (policy {:.3}, value {:.3})",
            summary.window_rows, summary.loss, summary.policy_loss, summary.value_loss
        ));
        Ok(summary)
    }

    pub(crate) fn evaluate(&self, g: u32) -> anyhow::Result<()> {
        let name = generation_name(g);
        let path = self.dir.join("eval").join(format!("{name}.json"));
        let mut record: EvalRecord = match read_record(&path)? {
            Some(r) => r,
            None => self.gate(g)?,
        };
        if record.finished {
            return Ok(());
        }
        let t = Instant::now();
        if record.promoted {
            crash_point("promote");
            eval::promote(&self.dir, &name)
                .with_context(|| format!("cannot promote {name} in {}", self.dir.display()))?;
            self.log(&format!("{name}: promoted to best"));
            crash_point("promoted");
            record.anchor = self.anchor(g)?;
        }
        record.finished = true;
        record.seconds += t.elapsed().as_secs_f64();
        write_record(&path, &record)?;
        Ok(())
    }

    /// Plays the gating match and records its verdict (not yet acted upon).
    pub(crate) fn gate(&self, g: u32) -> anyhow::Result<EvalRecord> {
        let name = generation_name(g);
        let incumbent = self.best()?;
        let t = Instant::now();
        let candidate = self.best_spec(&name, self.cfg.gate.simulations);
        let (gate, promoted, reason) =
            if incumbent == BOOTSTRAP_BEST && !self.cfg.run.gate_first_network {
                (
                    None,
                    true,
                    "first network: no incumbent network yet (run.gate_first_network = false)"
                        .to_string(),
                )
            } else {
                let inc = self.best_spec(&incumbent, self.cfg.gate.simulations);
                self.log(&format!(
                    "{name}: gating against {incumbent} ({} mode, up to {} pairs)",
                    match self.cfg.gate.mode {
                        eval::GateMode::Sprt => "SPRT",
                        eval::GateMode::Fixed => "fixed",
                    },
                    self.cfg.gate.max_pairs
                ));
                let b = bar(
                    self.quiet,
                    2 * self.cfg.gate.max_pairs as u64,
                    "  gate [{bar:30}] {pos}/{len} games (at most)  {msg}",
                );
                let score = std::sync::Mutex::new((0.0f64, 0u32));
                let games = std::sync::Mutex::new(vec![]);
                let seed = engine::splitmix64(self.cfg.selfplay.seed ^ 0x6A7E ^ u64::from(g)).1;
                let v = eval::gate(
                    self.game,
                    (&name, &candidate),
                    (&incumbent, &inc),
                    &self.cfg.gate,
                    seed,
                    &|r| {
                        games
                            .lock()
                            .expect("games lock")
                            .push(labelled(r, &name, &incumbent));
                        let mut s = score.lock().expect("score lock");
                        s.0 += r.a_points();
                        s.1 += 1;
                        b.set_message(format!("candidate score {:.3}", s.0 / f64::from(s.1)));
                        b.inc(1);
                        if s.1 == 2 {
                            crash_point("gate");
                        }
                    },
                )?;
                b.finish_and_clear();
                self.write_pgn(g, "gate", games)?;
                self.log(&format!(
                    "{name}: {} games, score {:.3}, Elo {:+.0}, LLR {:.2} in [{:.2}, {:.2}]: {}",
                    v.matched.games,
                    v.matched.score,
                    v.matched.elo,
                    v.llr,
                    v.bounds.0,
                    v.bounds.1,
                    v.reason
                ));
                let (p, r) = (v.promote, v.reason.clone());
                (Some(v), p, r)
            };
        let record = EvalRecord {
            generation: g,
            candidate: name.clone(),
            incumbent: incumbent.clone(),
            gate,
            promoted,
            reason,
            best: if promoted { name } else { incumbent },
            anchor: vec![],
            finished: false,
            seconds: t.elapsed().as_secs_f64(),
        };
        let path = self
            .dir
            .join("eval")
            .join(format!("{}.json", record.candidate));
        write_record(&path, &record)?;
        Ok(record)
    }

    /// Writes the games of generation `generation`'s `gate` or `anchor` match as PGN
    /// beside the evaluation records (`eval::report::match_pgn`), in pair order, for the
    /// game viewer of `flipzero serve`.
    pub(crate) fn write_pgn(
        &self,
        generation: u32,
        source: &str,
        games: std::sync::Mutex<Vec<eval::GameRecord>>,
    ) -> anyhow::Result<()> {
        let mut games = games.into_inner().expect("games lock");
        games.sort_by_key(|r| (r.pair, !r.a_is_x));
        let path = eval::report::match_pgn(&self.dir, generation, source);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        eval::write_atomic(
            &path,
            eval::to_pgn(&games, self.game, self.cfg.gate.clock).as_bytes(),
        )
        .with_context(|| format!("cannot write {}", path.display()))
    }

    pub(crate) fn anchor(&self, generation: u32) -> anyhow::Result<Vec<eval::MatchSummary>> {
        let name = &generation_name(generation);
        let ladder: Vec<PlayerSpec> = self
            .cfg
            .anchor
            .ladder
            .iter()
            .map(|p| p.parse())
            .collect::<Result<_, _>>()?;
        if ladder.is_empty() {
            return Ok(vec![]);
        }
        let player = self.best_spec(name, self.cfg.gate.simulations);
        let b = bar(
            self.quiet,
            (2 * self.cfg.anchor.pairs * ladder.len()) as u64,
            "  anchor [{bar:30}] {pos}/{len} games  {msg}",
        );
        b.set_message(format!("{name} vs {}", self.cfg.anchor.ladder.join(", ")));
        let seed = engine::splitmix64(self.cfg.selfplay.seed ^ 0xA4C4).1;
        let games = std::sync::Mutex::new(vec![]);
        let results = eval::anchor(
            self.game,
            (name, &player),
            &ladder,
            self.cfg.anchor.pairs,
            &self.cfg.gate,
            seed,
            &|r| {
                // The baseline keeps its name (its player name is its label).
                let other = if r.a_is_x { &r.o_name } else { &r.x_name };
                games
                    .lock()
                    .expect("games lock")
                    .push(labelled(r, name, other));
                b.inc(1)
            },
        )?;
        b.finish_and_clear();
        self.write_pgn(generation, "anchor", games)?;
        for m in &results {
            self.log(&format!(
                "{name} vs {}: {} games, score {:.3}, Elo {:+.0} ± {}",
                m.b,
                m.games,
                m.score,
                m.elo,
                m.elo_ci95.map_or("inf".into(), |c| format!("{c:.0}"))
            ));
        }
        Ok(results)
    }

    pub(crate) fn elapsed_minutes(&self) -> anyhow::Result<f64> {
        let gens = eval::report::read_generations(&self.dir)?;
        Ok(gens.iter().map(eval::report::seconds).sum::<f64>() / 60.0)
    }
}

/// Mean of the loss columns over the last tenth of a training metrics file.
pub(crate) fn tail_means(path: &Path) -> anyhow::Result<[f32; 4]> {
    let text = rundir::read_regular_text(path, rundir::Limit::TEXT)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split(',').collect();
    let cols: Vec<usize> = ["loss", "policy_loss", "value_loss", "score_loss"]
        .iter()
        .map(|c| {
            header
                .iter()
                .position(|h| h == c)
                .with_context(|| format!("{}: no column {c}", path.display()))
        })
        .collect::<anyhow::Result<_>>()?;
    let rows: Vec<Vec<f32>> = lines
        .map(|l| {
            l.split(',')
                .map(|v| v.parse().unwrap_or(f32::NAN))
                .collect()
        })
        .collect();
    let tail = &rows[rows.len() - rows.len().div_ceil(10)..];
    let mut out = [0.0f32; 4];
    for (o, &c) in out.iter_mut().zip(&cols) {
        *o = tail.iter().map(|r| r[c]).sum::<f32>() / tail.len().max(1) as f32;
    }
    Ok(out)
}

/// A match game with the players named by their labels (`gen-0003`, `random`) rather than
/// their player names (which hold the run's path): A is `a`, B is `b`.
pub(crate) fn labelled(r: &eval::GameRecord, a: &str, b: &str) -> eval::GameRecord {
    let mut r = r.clone();
    let (x, o) = if r.a_is_x { (a, b) } else { (b, a) };
    r.x_name = x.to_string();
    r.o_name = o.to_string();
    r
}

/// The heading of a run's saved config.
const SAVED_HEADER: &str = "# The effective config of this run (written by flipzero run; every key is\n# documented in configs/default.toml).\n";

/// The config saved in run directory `dir` (`config.toml`); `None` when there is none.
pub(crate) fn saved_config(dir: &Path) -> anyhow::Result<Option<RunConfig>> {
    let path = dir.join("config.toml");
    match rundir::read_regular_text(&path, rundir::Limit::CONFIG) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
        Ok(text) => RunConfig::from_text(&text, &path.display().to_string(), &[]).map(Some),
    }
}

/// Saves `cfg` as run directory `dir`'s config, or checks it against the saved one: a
/// config that differs (beyond the keys that may change on resume) is refused, listing
/// the differing keys, unless `force` (then the new one replaces it), as is an
/// unreadable saved config.
pub(crate) fn save_config(dir: &Path, cfg: &RunConfig, force: bool) -> anyhow::Result<()> {
    let saved_path = dir.join("config.toml");
    let text = toml::to_string(cfg)?;
    let write = || {
        eval::write_atomic(&saved_path, format!("{SAVED_HEADER}{text}").as_bytes())
            .with_context(|| format!("cannot write {}", saved_path.display()))
    };
    let old = match saved_config(dir) {
        Ok(Some(old)) => old,
        Ok(None) => return write(),
        Err(e) if force => {
            eprintln!("replacing the unreadable saved config ({e:#})");
            return write();
        }
        Err(e) => return Err(e.context("pass --force to replace it with the given config")),
    };
    // Per-process settings (threads, devices) may change on resume; they are recorded.
    let diffs = old.differences(cfg, &super::config::LOCAL_KEYS);
    if !diffs.is_empty() && !force {
        bail!(
            "{} was started with a different config; these settings differ:\n  {}\nrun with the saved config (--config {}), or pass --force to continue with the new one",
            dir.display(),
            diffs.join("\n  "),
            saved_path.display()
        );
    }
    if old != *cfg {
        write()?;
    }
    Ok(())
}

/// Gives run directory `dir` a best model when it has none: bootstrap in a new run; in a
/// run with evaluated generations whose `models/best` went missing, the best that the
/// last finished verdict names (bootstrap would let the next network in without a gate).
pub(crate) fn ensure_best(dir: &Path) -> anyhow::Result<()> {
    if eval::current_best(dir)?.is_some() {
        return Ok(());
    }
    let generations = match eval::report::read_generations(dir) {
        Ok(g) => g,
        Err(eval::report::ReportError::NotARun(_)) => Vec::new(),
        Err(e) => return Err(e.into()),
    };
    let recorded = generations
        .into_iter()
        .filter_map(|g| g.eval.filter(|e| e.finished))
        .next_back()
        .map(|e| (e.best, e.candidate));
    match recorded {
        Some((best, generation)) => {
            eval::promote(dir, &best)?;
            eprintln!(
                "models/best was missing: restored to {best} (the best after {generation}, eval/{generation}.json)"
            );
        }
        None => eval::promote(dir, BOOTSTRAP_BEST)?,
    }
    Ok(())
}
