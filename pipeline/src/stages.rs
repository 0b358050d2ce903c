//! The stages of the pipeline that the synchronous loop (one generation after another)
//! and the separate roles (processes that meet in the run directory) share: training a
//! generation's network, gating it, promoting and anchoring it, and the run directory's
//! set-up (its saved config and its best model).

use std::path::{Path, PathBuf};
use std::time::Instant;

use eval::{BOOTSTRAP_BEST, NetSource, PlayerSpec};
use rundir::RunDir;

use crate::config::{NetFamily, RunConfig};
use crate::error::{Context, bail};
use crate::observer::{Observer, Task};
use crate::report::{
    EvalRecord, SelfplaySummary, TrainSummary, generation_name, read_record, write_record,
};

/// Moves a corrupt file or folder aside, beside itself (`NAME.corrupt-UNIXTIME`, never
/// read again, kept for inspection); returns where it went.
pub fn set_aside(path: &Path) -> crate::Result<PathBuf> {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let mut to = path.with_file_name(format!("{name}.corrupt-{stamp}"));
    let mut k = 1;
    while to.exists() {
        to = path.with_file_name(format!("{name}.corrupt-{stamp}-{k}"));
        k += 1;
    }
    std::fs::rename(path, &to).with_context(|| format!("cannot move {} aside", path.display()))?;
    Ok(to)
}

/// Removes folder `path` and what it holds (none there is fine).
pub(crate) fn remove_dir(path: &Path) -> crate::Result<()> {
    rundir::remove_dir_if_exists(path).with_context(|| format!("cannot remove {}", path.display()))
}

/// Publishes a finished stage folder with one rename (the parent synced, so it lasts).
pub(crate) fn publish(partial: &Path, done: &Path) -> crate::Result<()> {
    rundir::publish_dir(partial, done)
        .with_context(|| format!("cannot rename {} to {}", partial.display(), done.display()))
}

/// A run directory and its config, and who watches: what every stage works on.
pub struct Pipeline<'o> {
    /// The run's config.
    pub cfg: RunConfig,
    /// The run directory.
    pub run: RunDir,
    /// The run's game.
    pub game: engine::Game,
    /// Where lines, warnings and progress go.
    pub observer: &'o dyn Observer,
    /// When this process started on the run (the time stamp of its lines).
    pub start: Instant,
    /// The self-play shards this process's fast-net trainings decoded, kept for the next.
    pub shard_cache: fastnet::data::ShardCache,
}

impl<'o> Pipeline<'o> {
    /// The pipeline of run `run` with config `cfg` (its game checked), watched by
    /// `observer`. Nothing is read or written.
    pub fn new(
        run: RunDir,
        cfg: RunConfig,
        observer: &'o dyn Observer,
    ) -> crate::Result<Pipeline<'o>> {
        let game: engine::Game = cfg.selfplay.game.parse()?;
        cfg.check_run()?;
        Ok(Pipeline {
            cfg,
            run,
            game,
            observer,
            start: Instant::now(),
            shard_cache: Default::default(),
        })
    }

    /// The run directory's path.
    pub fn dir(&self) -> &Path {
        self.run.path()
    }

    /// A stage line: to the observer and to `run.log`, with the seconds since start.
    pub fn log(&self, msg: &str) {
        let line = format!("[{:>6.0}s] {msg}", self.start.elapsed().as_secs_f64());
        self.observer.line(&line);
        self.run.append_log(&line);
    }

    /// A warning: to the observer and to `run.log`.
    pub fn warn(&self, msg: &str) {
        self.observer.warning(msg);
        self.run.append_log(&format!("warning: {msg}"));
    }

    /// Starts every external engine of the anchor ladder once (and stops it), so that a
    /// ladder player that cannot play this game is refused before the run's work starts,
    /// not after its first network is trained.
    pub fn check_ladder(&self) -> crate::Result<()> {
        for p in &self.cfg.anchor.ladder {
            let spec: PlayerSpec = p.parse()?;
            spec.check(self.game, eval::Timeouts::default())
                .with_context(|| format!("anchor.ladder = {p}"))?;
        }
        Ok(())
    }

    /// The record at `path` (a stage's summary or verdict); one that cannot be read as
    /// a record (cut short, edited) is moved aside (`NAME.corrupt-TIME`, kept) with a
    /// warning and counts as absent, so that its stage is done again: one corrupt file
    /// never stalls the run.
    pub fn record_or_redo<T: for<'de> serde::Deserialize<'de>>(
        &self,
        path: &Path,
    ) -> crate::Result<Option<T>> {
        match read_record(path) {
            Err(crate::report::ReportError::Corrupt { message, .. }) => {
                let moved = set_aside(path)?;
                self.warn(&format!(
                    "{} is corrupt ({message}); moved to {} and its stage is done again",
                    path.display(),
                    moved.display()
                ));
                Ok(None)
            }
            other => Ok(other?),
        }
    }

    /// The run's best model, checked to load: a best network that does not load (a
    /// flipped byte in its weights, a missing file) is moved aside with a warning and the
    /// best before it takes its place (the newest promoted generation of the records
    /// whose network loads, else `bootstrap`), so that self-play and gating go on.
    pub fn loadable_best(&self) -> crate::Result<String> {
        let best = self.best()?;
        if best == BOOTSTRAP_BEST {
            return Ok(best);
        }
        let Err(e) = eval::check_loads(&NetSource::Path(self.run.model(&best)), self.game) else {
            return Ok(best);
        };
        // A folder the retention emptied holds records the report reads: it stays.
        let folder = self.run.model(&best);
        let what = if rundir::network_removed(&folder) {
            format!("models/best names {best}, whose network the retention removed;")
        } else {
            let moved = set_aside(&folder)?;
            format!(
                "the best network {best} does not load ({e}); moved to {} and",
                moved.display()
            )
        };
        let gens = crate::report::read_generations(self.dir())?;
        let fallback = gens
            .iter()
            .rev()
            .filter_map(|g| g.eval.as_ref())
            .filter(|e| e.promoted && e.candidate != best)
            .map(|e| e.candidate.clone())
            .find(|name| {
                eval::check_loads(&NetSource::Path(self.run.model(name)), self.game).is_ok()
            })
            .unwrap_or_else(|| BOOTSTRAP_BEST.to_string());
        rundir::promote(self.dir(), &fallback)
            .with_context(|| format!("cannot promote {fallback} in {}", self.dir().display()))?;
        self.warn(&format!("{what} the best is {fallback} again"));
        Ok(fallback)
    }

    /// The run's best model (`bootstrap` before any).
    pub fn best(&self) -> crate::Result<String> {
        Ok(rundir::current_best(self.dir())?.unwrap_or_else(|| BOOTSTRAP_BEST.to_string()))
    }

    /// The player of model `best` of this run in gating and anchoring: the MCTS player
    /// at `sims` simulations a move, or for alpha-beta self-play
    /// (`selfplay.search = "alphabeta"`) the alpha-beta searcher with the net's value
    /// (the hand-written evaluation for the bootstrap) at self-play's node limits, or on
    /// the gate's clock when it has one.
    pub fn best_spec(&self, best: &str, sims: u32) -> PlayerSpec {
        let sp = &self.cfg.selfplay;
        if sp.search == selfplay::SearchKind::AlphaBeta {
            let limits = match self.cfg.gate.clock {
                Some(_) => engine::search::Limits::default(),
                None => engine::search::Limits {
                    soft_nodes: Some(sp.ab_soft_nodes),
                    nodes: Some(sp.ab_hard_nodes),
                    ..Default::default()
                },
            };
            let search = eval::AbSearch::TUNED;
            return if best == BOOTSTRAP_BEST {
                PlayerSpec::AlphaBeta { limits, search }
            } else {
                PlayerSpec::NetAlphaBeta {
                    net: self.run.model(best),
                    limits,
                    search,
                }
            };
        }
        let net = if best == BOOTSTRAP_BEST {
            NetSource::Bootstrap
        } else {
            NetSource::Path(self.run.model(best))
        };
        PlayerSpec::Mcts {
            net,
            sims,
            time: None,
            engine: self.cfg.selfplay.net_engine,
            basic: false,
            params: eval::SearchParams::self_play(),
        }
    }

    /// The network generation `g`'s training starts from: the newest one before `g`
    /// (trained even when it was not promoted, as KataGo's trainer runs independently
    /// of gating) that is not a final net (`run.final_net_hidden`, whose width is not
    /// the run's); `None` before any.
    pub fn init_for(&self, g: u32) -> Option<(String, PathBuf)> {
        (0..g)
            .rev()
            .find(|&k| self.trained(k).is_some_and(|t| !t.final_net))
            .map(|k| (generation_name(k), self.run.generation_model(k)))
    }

    /// Generation `g`'s training record; `None` when absent or unreadable.
    pub fn trained(&self, g: u32) -> Option<TrainSummary> {
        read_record(&self.run.train_record(g)).ok().flatten()
    }

    /// The fast-net training settings of generation `g`: `[fastnet]` with the
    /// generation's own seed.
    fn fast_config(&self, g: u32) -> fastnet::train::TrainConfig {
        let mut cfg = self.cfg.fastnet.clone();
        cfg.seed = engine::splitmix64(cfg.seed ^ (u64::from(g) << 32)).1;
        cfg
    }

    /// Trains generation `g`'s network into `models/gen-NNNN.partial` (resuming from
    /// its last checkpoint) on `data` (shard folders, oldest first) from `init` (the
    /// previous network, or random weights), with the window the run's `produced`
    /// positions give; exports it, writes its summary and the `extra` files (name,
    /// contents) beside it, and publishes it as `models/gen-NNNN` with one rename.
    pub fn train_model(
        &self,
        g: u32,
        data: Vec<PathBuf>,
        init: Option<(String, PathBuf)>,
        produced: u64,
        extra: &[(&str, String)],
    ) -> crate::Result<TrainSummary> {
        if self.cfg.train_role.family == NetFamily::Fast {
            return self.train_fast(g, data, init, produced, extra);
        }
        let name = generation_name(g);
        let partial = self.run.model_partial(g);
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
        let b = self.observer.task(Task::Train, cfg.steps);
        let t = Instant::now();
        // The first row after the first checkpoint (rows come every
        // `train.metrics_interval()` steps) says so.
        let every = cfg.metrics_interval();
        let on_step = |m: &train::StepMetrics| {
            b.set(m.step);
            b.message(format!(
                "loss {:.3} (policy {:.3}, value {:.3})  {:.0} samples/s",
                m.loss, m.policy_loss, m.value_loss, m.samples_per_s
            ));
            if m.step > cfg.checkpoint_every && m.step <= cfg.checkpoint_every + every {
                self.observer.checkpoint("train");
            }
        };
        let opts = train::TrainOptions {
            data,
            out: partial.clone(),
            resume: true,
            init: init.as_ref().map(|(_, d)| d.clone()),
            stop_after: None,
            on_step: &on_step,
            on_warning: &|w| self.warn(&format!("{name}: {w}")),
        };
        let report = train::train(&cfg, self.game, &opts)?;
        b.finish();
        for s in &report.skipped {
            self.warn(&format!("{name}: skipped {s}"));
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
            final_net: false,
        };
        self.publish_model(&summary, extra)?;
        Ok(summary)
    }

    /// Writes `summary` and the `extra` files into generation `summary.generation`'s
    /// partial folder and publishes it with one rename.
    fn publish_model(&self, summary: &TrainSummary, extra: &[(&str, String)]) -> crate::Result<()> {
        let g = summary.generation;
        let (partial, done) = (self.run.model_partial(g), self.run.generation_model(g));
        for (file, text) in extra {
            rundir::write_atomic(&partial.join(file), text.as_bytes())
                .with_context(|| format!("cannot write {}", partial.join(file).display()))?;
        }
        write_record(&partial.join(rundir::TRAIN_RECORD), summary)?;
        self.observer.checkpoint("train-publish");
        remove_dir(&done)?;
        publish(&partial, &done)?;
        self.log(&format!(
            "{}: trained on {} positions, loss {:.3} (policy {:.3}, value {:.3})",
            generation_name(g),
            summary.window_rows,
            summary.loss,
            summary.policy_loss,
            summary.value_loss
        ));
        Ok(())
    }

    /// [`Pipeline::train_model`] for a fast net: `fastnet.epochs` passes over the newest
    /// window of positions, from `init` when it is a fast net (a run switched from the
    /// CNN starts afresh). A killed training starts over: it takes seconds to minutes.
    fn train_fast(
        &self,
        g: u32,
        data: Vec<PathBuf>,
        init: Option<(String, PathBuf)>,
        produced: u64,
        extra: &[(&str, String)],
    ) -> crate::Result<TrainSummary> {
        let cfg = self.fast_config(g);
        let window = self.cfg.train.window_for(produced);
        let init = init.filter(|(_, dir)| fastnet::io::is_fastnet(dir));
        // `replay` scales the positions this generation's self-play added.
        let new_positions = read_record::<SelfplaySummary>(&self.run.selfplay_summary(g))
            .ok()
            .flatten()
            .map(|s| usize::try_from(s.positions).unwrap_or(usize::MAX));
        self.log(&format!(
            "{}: training a fast net, {} epochs of {} in batches of {} on the newest {window} of {produced} positions, from {}",
            generation_name(g),
            cfg.epochs,
            match (cfg.replay > 0.0, new_positions) {
                (true, Some(n)) => format!("{} × {n} new positions", cfg.replay),
                _ => "the window".to_string(),
            },
            cfg.batch_size,
            init.as_ref().map_or("fresh weights", |(n, _)| n.as_str())
        ));
        let job = fastnet::train::Job {
            data: &data,
            game: self.game,
            out: &self.run.model_partial(g),
            window: Some(window),
            init: init.as_ref().map(|(_, d)| d.as_path()),
            new_positions,
            cache: Some(&self.shard_cache),
            quantised: self.cfg.run.export,
        };
        let from = init.as_ref().map_or("random".into(), |(n, _)| n.clone());
        let summary = self.fit_fast(g, &job, &cfg, from)?;
        self.publish_model(&summary, extra)?;
        Ok(summary)
    }

    /// Trains generation `g` as the run's final net (`run.final_net_hidden`): a fresh
    /// fast net of that width, `run.final_net_epochs` passes over every position of
    /// `data` (the run's self-play, oldest first; `produced` positions), published as
    /// any generation's network. A killed training starts over.
    pub fn train_final_net(
        &self,
        g: u32,
        data: Vec<PathBuf>,
        produced: u64,
    ) -> crate::Result<TrainSummary> {
        let mut cfg = self.fast_config(g);
        cfg.hidden = self.cfg.run.final_net_hidden as usize;
        cfg.epochs = self.cfg.run.final_net_epochs;
        // Every position, each epoch: replay bounds the reuse of a loop's new positions.
        cfg.replay = 0.0;
        // The positions are counted after the shards are read: a corrupt one is skipped
        // (and warned of), and a count taken before would include it.
        self.log(&format!(
            "{}: the run's final net: a fresh fast net of {} hidden, {} epochs over every position of {} generations' self-play ({produced} positions produced) in batches of {}",
            generation_name(g),
            cfg.hidden,
            cfg.epochs,
            data.len(),
            cfg.batch_size
        ));
        let job = fastnet::train::Job {
            data: &data,
            game: self.game,
            out: &self.run.model_partial(g),
            window: None,
            init: None,
            new_positions: None,
            cache: Some(&self.shard_cache),
            quantised: self.cfg.run.export,
        };
        let mut summary = self.fit_fast(g, &job, &cfg, "random".into())?;
        self.log(&format!(
            "{}: the final net read {} positions{}",
            generation_name(g),
            summary.window_rows,
            match produced.checked_sub(summary.window_rows as u64) {
                Some(0) => String::new(),
                Some(n) => format!(" ({n} of those produced were in shards left out)"),
                None => String::new(),
            }
        ));
        summary.final_net = true;
        self.publish_model(&summary, &[])?;
        Ok(summary)
    }

    /// Runs fast-net training `job` for generation `g` with `cfg` (started from `from`,
    /// a generation name or `random`) and returns its summary; the network is left in
    /// its partial folder, to be published.
    fn fit_fast(
        &self,
        g: u32,
        job: &fastnet::train::Job,
        cfg: &fastnet::train::TrainConfig,
        from: String,
    ) -> crate::Result<TrainSummary> {
        let name = generation_name(g);
        let b = self.observer.task(Task::Train, u64::from(cfg.epochs));
        let t = Instant::now();
        let mut epochs = 0;
        let m = fastnet::train::train_to_dir(job, cfg, |line| {
            if line.contains(": skipped: ") {
                self.warn(&format!("{name}: {line}"));
            } else if line.starts_with("epoch ") {
                epochs += 1;
                b.set(epochs);
                b.message(line.to_string());
                if epochs == 1 {
                    self.observer.checkpoint("train");
                }
            }
        })?;
        b.finish();
        Ok(TrainSummary {
            generation: g,
            steps: u64::from(cfg.epochs)
                * (m.trained as u64).div_ceil(cfg.batch_size.max(1) as u64),
            window_rows: m.positions,
            init: from,
            loss: m.train.total(cfg.policy_weight) as f32,
            policy_loss: m.train.policy as f32,
            value_loss: m.train.value as f32,
            score_loss: 0.0,
            seconds: t.elapsed().as_secs_f64(),
            final_net: false,
        })
    }

    /// Evaluates generation `g`: gates it (unless its verdict is recorded), promotes it
    /// when it passed and anchors the new best; resumable at every step.
    pub fn evaluate(&self, g: u32) -> crate::Result<()> {
        let name = generation_name(g);
        let path = self.run.eval_record(g);
        let mut record: EvalRecord = match self.record_or_redo(&path)? {
            Some(r) => r,
            None => self.gate(g)?,
        };
        if record.finished {
            return Ok(());
        }
        let t = Instant::now();
        if record.promoted {
            self.observer.checkpoint("promote");
            rundir::promote(self.dir(), &name)
                .with_context(|| format!("cannot promote {name} in {}", self.dir().display()))?;
            self.log(&format!("{name}: promoted to best"));
            self.observer.checkpoint("promoted");
            record.anchor = self.anchor(g)?;
        }
        record.finished = true;
        record.seconds += t.elapsed().as_secs_f64();
        write_record(&path, &record)?;
        self.apply_retention()
    }

    /// Plays generation `g`'s gating match and records its verdict (not yet acted on).
    pub fn gate(&self, g: u32) -> crate::Result<EvalRecord> {
        let name = generation_name(g);
        let incumbent = self.loadable_best()?;
        let t = Instant::now();
        let candidate = self.best_spec(&name, self.cfg.gate.simulations);
        let (gate, promoted, reason) = if incumbent == name {
            // Promoted before its verdict was lost (moved aside as corrupt): it stays.
            (
                None,
                true,
                "already the best (models/best names it): its earlier verdict could not be read"
                    .to_string(),
            )
        } else if !self.cfg.run.gating {
            (
                None,
                true,
                "promoted without a match (run.gating = false)".to_string(),
            )
        } else if incumbent == BOOTSTRAP_BEST && !self.cfg.run.gate_first_network {
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
            let b = self
                .observer
                .task(Task::Gate, 2 * self.cfg.gate.max_pairs as u64);
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
                    b.message(format!("candidate score {:.3}", s.0 / f64::from(s.1)));
                    b.advance(1);
                    if s.1 == 2 {
                        self.observer.checkpoint("gate");
                    }
                },
            )?;
            b.finish();
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
        write_record(&self.run.eval_record(g), &record)?;
        Ok(record)
    }

    /// Writes the games of generation `generation`'s `gate` or `anchor` match as PGN
    /// beside the evaluation records (`crate::report::match_pgn`), in pair order, for the
    /// game viewer of `flipzero serve`.
    pub fn write_pgn(
        &self,
        generation: u32,
        source: &str,
        games: std::sync::Mutex<Vec<eval::GameRecord>>,
    ) -> crate::Result<()> {
        let mut games = games.into_inner().expect("games lock");
        games.sort_by_key(|r| (r.pair, !r.a_is_x));
        let path = self.run.match_pgn(generation, source);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        rundir::write_atomic(
            &path,
            eval::to_pgn(&games, self.game, self.cfg.gate.clock).as_bytes(),
        )
        .with_context(|| format!("cannot write {}", path.display()))
    }

    /// Plays generation `generation`'s network against the anchor ladder.
    pub fn anchor(&self, generation: u32) -> crate::Result<Vec<eval::MatchSummary>> {
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
        let b = self.observer.task(
            Task::Anchor,
            (2 * self.cfg.anchor.pairs * ladder.len()) as u64,
        );
        b.message(format!("{name} vs {}", self.cfg.anchor.ladder.join(", ")));
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
                b.advance(1)
            },
        )?;
        b.finish();
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

    /// Minutes the run's finished stages took, all generations together.
    pub fn elapsed_minutes(&self) -> crate::Result<f64> {
        let gens = crate::report::read_generations(self.dir())?;
        Ok(gens.iter().map(crate::report::seconds).sum::<f64>() / 60.0)
    }
}

/// Mean of the loss columns over the last tenth of a training metrics file.
pub fn tail_means(path: &Path) -> crate::Result<[f32; 4]> {
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
        .collect::<crate::Result<_>>()?;
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
pub fn labelled(r: &eval::GameRecord, a: &str, b: &str) -> eval::GameRecord {
    let mut r = r.clone();
    let (x, o) = if r.a_is_x { (a, b) } else { (b, a) };
    r.x_name = x.to_string();
    r.o_name = o.to_string();
    r
}

/// The heading of a run's saved config.
const SAVED_HEADER: &str = "# The effective config of this run (written by flipzero run; every key is\n# documented in configs/default.toml).\n";

/// The config saved in run directory `run` (`config.toml`); `None` when there is none.
pub fn saved_config(run: &RunDir) -> crate::Result<Option<RunConfig>> {
    let path = run.config();
    match rundir::read_regular_text(&path, rundir::Limit::CONFIG) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
        Ok(text) => RunConfig::from_text(&text, &path.display().to_string(), &[]).map(Some),
    }
}

/// Saves `cfg` as run directory `run`'s config, or checks it against the saved one: a
/// config that differs (beyond the keys that may change on resume) is refused, listing
/// the differing keys, unless `force` (then the new one replaces it, with a warning to
/// `observer` when the saved one could not be read), as is an unreadable saved config.
pub fn save_config(
    run: &RunDir,
    cfg: &RunConfig,
    force: bool,
    observer: &dyn Observer,
) -> crate::Result<()> {
    let saved_path = run.config();
    let text = toml::to_string(cfg)?;
    let write = || {
        rundir::write_atomic(&saved_path, format!("{SAVED_HEADER}{text}").as_bytes())
            .with_context(|| format!("cannot write {}", saved_path.display()))
    };
    let old = match saved_config(run) {
        Ok(Some(old)) => old,
        Ok(None) => return write(),
        Err(e) if force => {
            observer.warning(&format!(
                "replacing the unreadable saved config ({})",
                e.chain()
            ));
            return write();
        }
        Err(e) => return Err(e.context("pass --force to replace it with the given config")),
    };
    // Per-process settings (threads, devices) may change on resume; they are recorded.
    let diffs = old.differences(cfg, &crate::config::LOCAL_KEYS);
    if !diffs.is_empty() && !force {
        bail!(
            "{} was started with a different config; these settings differ:\n  {}\nrun with the saved config (--config {}), or pass --force to continue with the new one",
            run.path().display(),
            diffs.join("\n  "),
            saved_path.display()
        );
    }
    if old != *cfg {
        write()?;
    }
    Ok(())
}

/// Gives run directory `run` a best model when it has none: bootstrap in a new run; in a
/// run with evaluated generations whose `models/best` went missing, the best that the
/// last finished verdict names (bootstrap would let the next network in without a gate),
/// with a warning to `observer`.
pub fn ensure_best(run: &RunDir, observer: &dyn Observer) -> crate::Result<()> {
    let dir = run.path();
    if rundir::current_best(dir)?.is_some() {
        return Ok(());
    }
    let generations = match crate::report::read_generations(dir) {
        Ok(g) => g,
        Err(crate::report::ReportError::NotARun(_)) => Vec::new(),
        Err(e) => return Err(e.into()),
    };
    let recorded = generations
        .into_iter()
        .filter_map(|g| g.eval.filter(|e| e.finished))
        .next_back()
        .map(|e| (e.best, e.candidate));
    match recorded {
        Some((best, generation)) => {
            rundir::promote(dir, &best)?;
            observer.warning(&format!(
                "models/best was missing: restored to {best} (the best after {generation}, eval/{generation}.json)"
            ));
        }
        None => rundir::promote(dir, BOOTSTRAP_BEST)?,
    }
    Ok(())
}
