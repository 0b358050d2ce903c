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
        // Refused before the folder is made: a refused run leaves nothing behind.
        cfg.check_run()?;
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
            "{name}: self-play, {} games with {best} ({})",
            cfg.games,
            cfg.effort()
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
        let init = self.init_for(g);
        self.train_model(g, data, init, self.produced(g), &[])?;
        Ok(())
    }

    /// The positions the self-play of generations 0 to `g` made.
    fn produced(&self, g: u32) -> u64 {
        (0..=g)
            .filter_map(|k| read_record::<SelfplaySummary>(&self.run.selfplay_summary(k)).ok())
            .flatten()
            .fold(0u64, |n, s| n.saturating_add(s.positions))
    }

    /// Seconds the run's final net (`run.final_net_hidden`) would take to train on the
    /// positions of generations before `g`, estimated from the newest network's
    /// training speed (samples a second, scaled by the widths, a cost about linear
    /// in the width); 0 when there is no final net to train or nothing to estimate from.
    fn final_net_seconds(&self, g: u32) -> f64 {
        let hidden = self.cfg.run.final_net_hidden;
        if hidden == 0 || g == 0 {
            return 0.0;
        }
        let Some(last) = (0..g).rev().find_map(|k| {
            self.trained(k)
                .filter(|t| !t.final_net && t.seconds > 0.0 && t.steps > 0)
        }) else {
            return 0.0;
        };
        let per_s = last.steps as f64 * self.cfg.fastnet.batch_size as f64 / last.seconds;
        let width = f64::from(hidden) / self.cfg.fastnet.hidden.max(1) as f64;
        let samples = self.produced(g - 1) as f64 * f64::from(self.cfg.run.final_net_epochs);
        samples / per_s * width.max(1.0)
    }

    /// Trains, then gates or promotes, the run's final net (`run.final_net_hidden`,
    /// set) as generation `g` (after the loop's last), on every position of the run;
    /// resumable (a final net already trained is evaluated if it is not yet). Nothing
    /// when the run has no positions.
    fn final_net(&self, g: u32) -> crate::Result<()> {
        let gens = crate::report::read_generations(self.dir())?;
        let newest = gens.iter().rev().find_map(|r| r.train.as_ref());
        let newest_selfplay = gens
            .iter()
            .rev()
            .find_map(|r| r.selfplay.as_ref().map(|_| r.generation));
        // Done, unless self-play was played after it (a run extended, then stopped).
        if let Some(t) = newest.filter(|t| t.final_net)
            && newest_selfplay.is_none_or(|s| s < t.generation)
        {
            return self.evaluate(t.generation);
        }
        // A slot of its own: after every network and every self-play (a killed
        // generation may have left either without the other).
        let g = g
            .max(newest.map_or(0, |t| t.generation + 1))
            .max(newest_selfplay.map_or(0, |s| s + 1));
        let data: Vec<PathBuf> = (0..g)
            .map(|k| self.run.selfplay_generation(k))
            .filter(|d| d.is_dir())
            .collect();
        let produced = self.produced(g);
        if produced == 0 {
            self.log("no self-play positions: no final net");
            return Ok(());
        }
        self.train_final_net(g, data, produced)?;
        self.evaluate(g)
    }
}

/// The loop over the generations of an open run, then its summary.
fn generations(p: &Pipeline) -> crate::Result<RunSummary> {
    p.check_ladder()?;
    // A best that does not load is repaired before anything trusts the pointer; then a
    // run resumed with fewer networks to keep (or of a build before retention) lets go.
    let best = p.loadable_best()?;
    p.apply_retention()?;
    p.log(&format!(
        "run {}: {} generations of {} (best so far: {best})",
        p.dir().display(),
        p.cfg.run.generations,
        p.game,
    ));
    // `next`: the slot after the last one looked at; `counted`: the loop's generations
    // so far (a final net takes a slot but is not one of `run.generations`).
    let (mut next, mut counted) = (0, 0);
    while counted < p.cfg.run.generations {
        let g = next;
        next = g + 1;
        if p.trained(g).is_some_and(|t| t.final_net) {
            // An earlier end of the run: its verdict first, if a kill cut it short.
            p.evaluate(g)?;
            continue;
        }
        counted += 1;
        let finished = p
            .record_or_redo::<EvalRecord>(&p.run.eval_record(g))?
            .is_some_and(|r| r.finished);
        if finished {
            continue;
        }
        let budget = p.cfg.run.time_budget_minutes;
        // Room for the final net: a generation starts only while the budget holds it too.
        let reserve = p.final_net_seconds(g) / 60.0;
        if budget > 0.0 && p.elapsed_minutes()? + reserve >= budget {
            next = g;
            p.log(&if reserve > 0.0 {
                format!(
                    "time budget of {budget} minutes used, {:.0} s of it kept for the final net: stopping",
                    reserve * 60.0
                )
            } else {
                format!("time budget of {budget} minutes used: stopping")
            });
            break;
        }
        p.selfplay(g)?;
        p.train(g)?;
        p.evaluate(g)?;
        let table = crate::report::write_report(p.dir(), None)?;
        p.observer.line(&table);
    }
    if p.cfg.run.final_net_hidden > 0 {
        p.final_net(next)?;
        let table = crate::report::write_report(p.dir(), None)?;
        p.observer.line(&table);
    }
    Ok(RunSummary {
        table: crate::report::write_report(p.dir(), None)?,
        best: p.best()?,
        report: p.run.report(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observer::Silent;
    use crate::report::TrainSummary;

    /// The final net's room in a time budget: the positions so far × its epochs, at the
    /// newest (non-final) network's samples a second, scaled by the widths; none
    /// before a network is trained, and none without a final net.
    #[test]
    fn the_final_net_is_given_the_time_the_last_training_speed_says() {
        let dir = std::env::temp_dir().join(format!("pipeline-reserve-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let sets = |hidden: u32| {
            [
                "train.family=\"fast\"".to_string(),
                "fastnet.hidden=128".into(),
                "fastnet.batch_size=100".into(),
                format!("run.final_net_hidden={hidden}"),
                "run.final_net_epochs=3".into(),
            ]
        };
        let run = RunDir::new(&dir);
        let pipeline = |hidden| {
            Pipeline::new(
                run.clone(),
                RunConfig::builtin(&sets(hidden)).unwrap(),
                &Silent,
            )
            .unwrap()
        };
        let p = pipeline(512);
        assert_eq!(p.final_net_seconds(0), 0.0);
        for (g, positions) in [(0u32, 4_000u64), (1, 6_000)] {
            let sp = SelfplaySummary {
                generation: g,
                model: "bootstrap".into(),
                games: 10,
                positions,
                results: [5, 5, 0],
                seconds: 1.0,
                first_game_id: Some(0),
            };
            write_record(&run.selfplay_summary(g), &sp).unwrap();
        }
        assert_eq!(p.final_net_seconds(2), 0.0, "no training to measure yet");
        let train = |g: u32, steps: u64, seconds: f64, final_net: bool| TrainSummary {
            generation: g,
            steps,
            window_rows: 0,
            init: "random".into(),
            loss: 0.0,
            policy_loss: 0.0,
            value_loss: 0.0,
            score_loss: 0.0,
            seconds,
            final_net,
        };
        // 50 steps of 100 in 2 s: 2,500 samples/s at 128 wide; 10,000 positions × 3
        // epochs at 512 wide (4×): 48 s.
        write_record(&run.train_record(0), &train(0, 50, 2.0, false)).unwrap();
        assert!(
            (p.final_net_seconds(2) - 48.0).abs() < 1e-9,
            "{}",
            p.final_net_seconds(2)
        );
        // Of generation 1 only the positions of generation 0 count.
        assert!(
            (p.final_net_seconds(1) - 19.2).abs() < 1e-9,
            "{}",
            p.final_net_seconds(1)
        );
        // A final net's own training is not the loop's speed.
        write_record(&run.train_record(1), &train(1, 1, 100.0, true)).unwrap();
        assert!(
            (p.final_net_seconds(2) - 48.0).abs() < 1e-9,
            "{}",
            p.final_net_seconds(2)
        );
        // A narrower final net is not estimated faster than the loop's own.
        assert!((pipeline(64).final_net_seconds(2) - 12.0).abs() < 1e-9);
        assert_eq!(pipeline(0).final_net_seconds(2), 0.0);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
