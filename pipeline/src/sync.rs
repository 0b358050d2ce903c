//! The synchronous loop: one generation after another in this process — self-play,
//! train, gate, promote, anchor, report — resumable after a crash at any point.
//!
//! Each stage writes into a `.partial` folder (or a temporary file) and publishes its
//! result with one rename, so that on restart a stage is either finished (its folder or
//! record exists under its final name) or redone from its partial state: self-play
//! restarts the generation's games, training resumes from its last checkpoint.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use rundir::{RunDir, RunLock};

use crate::config::RunConfig;
use crate::error::Context;
use crate::observer::{Observer, Task};
use crate::report::{EvalRecord, SelfplaySummary, generation_name, read_record, write_record};
use crate::stages::{Pipeline, ensure_best, publish, remove_dir, save_config};

/// A run directory opened for the synchronous loop: its lock held (one process at a
/// time writes a run; the lock goes with this value or the process, however it ends),
/// its config saved, a best model named.
pub struct SyncRun<'o> {
    /// The run and its config.
    pub pipeline: Pipeline<'o>,
    _lock: RunLock,
}

/// What a finished (or budget-stopped) synchronous run reports.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSummary {
    /// The report's table (one line per generation).
    pub table: String,
    /// The best model now.
    pub best: String,
    /// The report written.
    pub report: PathBuf,
}

impl<'o> SyncRun<'o> {
    /// Opens (or creates) run directory `dir` with config `cfg`: takes its lock, removes
    /// what killed writes left, saves the config or checks it against the saved one
    /// (a different config is refused, naming the keys, unless `force`), and gives the
    /// run a best model.
    pub fn open(
        dir: &Path,
        cfg: RunConfig,
        force: bool,
        observer: &'o dyn Observer,
    ) -> crate::Result<SyncRun<'o>> {
        let run = RunDir::new(dir);
        if let Some(why) = run.foreign() {
            return Err(crate::Error::Invalid(why));
        }
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create run directory {}", dir.display()))?;
        let lock = RunLock::acquire(dir, "run")?;
        for sub in [
            run.path().to_path_buf(),
            run.models(),
            run.eval(),
            run.selfplay(),
            run.counters(),
            run.leases(),
            run.roles(),
        ] {
            for p in rundir::remove_stale_temps(&sub) {
                observer.line(&format!("removed {}, left by a killed write", p.display()));
            }
        }
        save_config(&run, &cfg, force, observer)?;
        ensure_best(&run, observer)?;
        Ok(SyncRun {
            pipeline: Pipeline::new(run, cfg, observer)?,
            _lock: lock,
        })
    }

    /// Runs the generations that are not finished yet (until the time budget is used),
    /// rewriting the report after each, and returns the report's summary. An error that
    /// stops it is also written to the run's `run.log`.
    pub fn run(&self) -> crate::Result<RunSummary> {
        let p = &self.pipeline;
        let outcome = generations(p);
        if let Err(e) = &outcome {
            p.run
                .append_log(&format!("error: the run stopped: {}", e.chain()));
        }
        outcome
    }
}

impl Pipeline<'_> {
    /// Plays generation `g`'s self-play games (unless published already).
    pub fn selfplay(&self, g: u32) -> crate::Result<()> {
        let name = generation_name(g);
        let done = self.run.selfplay_generation(g);
        match read_record::<SelfplaySummary>(&self.run.selfplay_summary(g)) {
            Ok(Some(_)) => return Ok(()),
            Ok(None) => {}
            // A published generation whose summary cannot be read: its games are set
            // aside (kept) and played again.
            Err(e) => {
                let moved = crate::stages::set_aside(&done)?;
                self.warn(&format!(
                    "{}: {e}; the generation's self-play was moved to {} and is played again",
                    done.display(),
                    moved.display()
                ));
            }
        }
        let partial = self.run.selfplay_partial(g);
        remove_dir(&partial)?;
        let best = self.loadable_best()?;
        let mut cfg = self.cfg.selfplay_for(&best);
        cfg.seed = engine::splitmix64(self.cfg.selfplay.seed ^ (u64::from(g) << 32)).1;
        self.log(&format!(
            "{name}: self-play, {} games with {best} ({} simulations)",
            cfg.games, cfg.simulations
        ));
        let make = crate::inputs::selfplay_evaluators(
            Some(self.dir()),
            self.game,
            &cfg,
            selfplay::BuiltinEvaluator::Bootstrap,
        )?;
        let (openings, mut metadata) = crate::inputs::selfplay_inputs(&cfg, self.game)?;
        metadata.insert("flipzero.generation".to_string(), name.clone());
        let b = self.observer.task(Task::Selfplay, cfg.games);
        // Game ids unique in the whole run (docs/data.md), from the run's counter that
        // the separate self-play workers draw from too.
        let first = crate::roles::reserve_game_ids(self, cfg.games)?;
        let positions = AtomicU64::new(0);
        let t = Instant::now();
        let report = selfplay::run_selfplay_numbered(
            &cfg,
            first,
            &openings,
            &make,
            &partial,
            &metadata,
            &|s| {
                let p =
                    positions.fetch_add(s.positions as u64, Ordering::Relaxed) + s.positions as u64;
                b.message(format!(
                    "{:.0} positions/s",
                    p as f64 / t.elapsed().as_secs_f64()
                ));
                b.advance(1);
                if s.game_id == first + 1 {
                    self.observer.checkpoint("selfplay");
                }
            },
        )?;
        b.finish();
        let summary = SelfplaySummary {
            generation: g,
            model: best,
            games: report.games,
            positions: report.positions,
            results: report.results,
            seconds: t.elapsed().as_secs_f64(),
            first_game_id: Some(first),
        };
        write_record(&partial.join(rundir::SUMMARY), &summary)?;
        self.observer.checkpoint("selfplay-publish");
        publish(&partial, &done)?;
        self.log(&format!(
            "{name}: {} games, {} positions, {:.0} positions/s",
            summary.games,
            summary.positions,
            summary.positions as f64 / summary.seconds.max(1e-9)
        ));
        Ok(())
    }

    /// Trains generation `g`'s network on the window (unless trained already).
    pub fn train(&self, g: u32) -> crate::Result<()> {
        match read_record::<crate::report::TrainSummary>(&self.run.train_record(g)) {
            Ok(Some(_)) => return Ok(()),
            Ok(None) => {}
            // A published network whose record cannot be read is trained again (the
            // folder is set aside, kept): it is not the best yet, its verdict is to come.
            Err(e) => {
                let folder = self.run.generation_model(g);
                let moved = crate::stages::set_aside(&folder)?;
                self.warn(&format!(
                    "{}: {e}; the network was moved to {} and is trained again",
                    folder.display(),
                    moved.display()
                ));
            }
        }
        let data: Vec<PathBuf> = (0..=g)
            .map(|k| self.run.selfplay_generation(k))
            .filter(|d| d.is_dir())
            .collect();
        // Training continues from the previous generation's network (trained even when
        // it was not promoted), as KataGo's trainer runs independently of gating.
        let init = (0..g)
            .rev()
            .find(|&k| self.run.train_record(k).is_file())
            .map(|k| (generation_name(k), self.run.generation_model(k)));
        let mut produced = 0u64;
        for k in 0..=g {
            let path = self.run.selfplay_summary(k);
            if let Ok(Some(s)) = read_record::<SelfplaySummary>(&path) {
                produced = produced.saturating_add(s.positions);
            }
        }
        self.train_model(g, data, init, produced, &[])?;
        Ok(())
    }
}

/// The loop over the generations of an open run, then its summary.
fn generations(p: &Pipeline) -> crate::Result<RunSummary> {
    p.check_ladder()?;
    p.log(&format!(
        "run {}: {} generations of {} (best so far: {})",
        p.dir().display(),
        p.cfg.run.generations,
        p.game,
        p.best()?
    ));
    for g in 0..p.cfg.run.generations {
        let finished = p
            .record_or_redo::<EvalRecord>(&p.run.eval_record(g))?
            .is_some_and(|r| r.finished);
        if finished {
            continue;
        }
        let budget = p.cfg.run.time_budget_minutes;
        if budget > 0.0 && p.elapsed_minutes()? >= budget {
            p.log(&format!("time budget of {budget} minutes used: stopping"));
            break;
        }
        p.selfplay(g)?;
        p.train(g)?;
        p.evaluate(g)?;
        let table = crate::report::write_report(p.dir(), None)?;
        p.observer.line(&table);
    }
    Ok(RunSummary {
        table: crate::report::write_report(p.dir(), None)?,
        best: p.best()?,
        report: p.run.report(),
    })
}
