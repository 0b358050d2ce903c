//! `flipzero run`: the self-play → train → gate → promote → anchor → report loop, one
//! generation at a time, resumable after a crash at any point.
//!
//! Each stage writes into a `.partial` folder (or a temporary file) and publishes its
//! result with one rename, so that on restart a stage is either finished (its folder or
//! record exists under its final name) or redone from its partial state: self-play
//! restarts the generation's games, training resumes from its last checkpoint.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use anyhow::Context;
use clap::Args;
use eval::NetSource;
use eval::report::{EvalRecord, SelfplaySummary, generation_name, read_record, write_record};

use super::config::load_config;
use super::stages::{Pipeline, bar, crash_point, ensure_best, publish, remove_dir, save_config};

/// Arguments of `flipzero run`.
#[derive(Args)]
pub struct RunArgs {
    /// Config file (TOML). Without it, the built-in configs/default.toml.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Run directory. Default: data/runs/<config file name without .toml>.
    #[arg(long)]
    run: Option<PathBuf>,
    /// Override a setting, e.g. `--set selfplay.games=200` (repeatable).
    #[arg(long = "set", value_name = "TABLE.KEY=VALUE")]
    set: Vec<String>,
    /// Resume even though the config differs from the one saved in the run directory
    /// (the new config replaces it).
    #[arg(long)]
    force: bool,
    /// No progress bars.
    #[arg(long)]
    quiet: bool,
    /// Validate the config, print the effective config and the run directory, and exit.
    #[arg(long)]
    dry_run: bool,
    /// Run the roles as separate local processes (`flipzero worker gate`, `train` and
    /// `--workers` × `selfplay`) that meet in the run directory, instead of one
    /// generation after another in this process.
    #[arg(long = "async")]
    asynchronous: bool,
    /// Self-play worker processes of `--async`.
    #[arg(long, default_value_t = 2, requires = "asynchronous")]
    workers: usize,
}

impl Pipeline {
    fn selfplay(&self, g: u32) -> anyhow::Result<()> {
        let name = generation_name(g);
        let done = self.dir.join("selfplay").join(&name);
        if done.join("summary.json").is_file() {
            return Ok(());
        }
        let partial = self.dir.join("selfplay").join(format!("{name}.partial"));
        remove_dir(&partial)?;
        let best = self.best()?;
        let mut cfg = self.cfg.selfplay.clone();
        cfg.seed = engine::splitmix64(self.cfg.selfplay.seed ^ (u64::from(g) << 32)).1;
        self.log(&format!(
            "{name}: self-play, {} games with {best} ({} simulations)",
            cfg.games, cfg.simulations
        ));
        let nets = match eval::load_network(&NetSource::Path(self.dir.clone()), self.game)? {
            Some((_, m)) => Some(train::infer::evaluators(
                &m,
                &best,
                cfg.net_engine,
                &cfg.device,
            )?),
            None => None,
        };
        let make = || -> Box<dyn selfplay::Evaluator> {
            match &nets {
                Some(make) => make(),
                None => Box::new(selfplay::Bootstrap::new(2)),
            }
        };
        let (openings, mut metadata) = super::selfplay_inputs(&cfg, self.game)?;
        metadata.insert("flipzero.generation".to_string(), name.clone());
        let b = bar(
            self.quiet,
            cfg.games,
            "  self-play [{bar:30}] {pos}/{len} games  {msg}  ETA {eta}",
        );
        // Game ids unique in the whole run (docs/data.md), from the run's counter that
        // the separate self-play workers draw from too.
        let first = super::worker::reserve_game_ids(&self.dir, cfg.games)?;
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
                b.set_message(format!(
                    "{:.0} positions/s",
                    p as f64 / t.elapsed().as_secs_f64()
                ));
                b.inc(1);
                if s.game_id == first + 1 {
                    crash_point("selfplay");
                }
            },
        )?;
        b.finish_and_clear();
        let summary = SelfplaySummary {
            generation: g,
            model: best,
            games: report.games,
            positions: report.positions,
            results: report.results,
            seconds: t.elapsed().as_secs_f64(),
            first_game_id: Some(first),
        };
        write_record(&partial.join("summary.json"), &summary)?;
        crash_point("selfplay-publish");
        publish(&partial, &done)?;
        self.log(&format!(
            "{name}: {} games, {} positions, {:.0} positions/s",
            summary.games,
            summary.positions,
            summary.positions as f64 / summary.seconds.max(1e-9)
        ));
        Ok(())
    }

    fn train(&self, g: u32) -> anyhow::Result<()> {
        let name = generation_name(g);
        let models = self.dir.join("models");
        let done = models.join(&name);
        if done.join("train.json").is_file() {
            return Ok(());
        }
        let data: Vec<PathBuf> = (0..=g)
            .map(|k| self.dir.join("selfplay").join(generation_name(k)))
            .filter(|d| d.is_dir())
            .collect();
        // Training continues from the previous generation's network (trained even when
        // it was not promoted), as KataGo's trainer runs independently of gating.
        let init = (0..g)
            .rev()
            .map(|k| (generation_name(k), models.join(generation_name(k))))
            .find(|(_, d)| d.join("train.json").is_file());
        let mut produced = 0u64;
        for k in 0..=g {
            let path = self
                .dir
                .join("selfplay")
                .join(generation_name(k))
                .join("summary.json");
            if let Some(s) = eval::report::read_record::<eval::report::SelfplaySummary>(&path)? {
                produced = produced.saturating_add(s.positions);
            }
        }
        self.train_model(g, data, init, produced, &[])?;
        Ok(())
    }
}

/// Runs (or resumes) the pipeline. An error that stops it is also written to the run's
/// `run.log`.
pub fn run(a: RunArgs) -> anyhow::Result<()> {
    let cfg = load_config(a.config.as_ref(), &a.set)?;
    let dir = a.run.clone().unwrap_or_else(|| {
        let stem = a
            .config
            .as_ref()
            .and_then(|p| p.file_stem())
            .map_or("default".into(), |s| s.to_string_lossy().to_string());
        PathBuf::from("data").join("runs").join(stem)
    });
    if a.dry_run {
        println!(
            "# run directory: {}\n{}",
            dir.display(),
            toml::to_string(&cfg)?
        );
        return Ok(());
    }
    if a.asynchronous {
        return super::worker::local::run_async(&dir, &cfg, a.force, a.workers, a.quiet);
    }
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("cannot create run directory {}", dir.display()))?;
    // One process at a time writes a run; the lock goes with this process, however it ends.
    let _lock = eval::RunLock::acquire(&dir, "run")?;
    for sub in ["", "models", "eval", "selfplay"] {
        for p in eval::rundir::remove_stale_temps(&dir.join(sub)) {
            eprintln!("removed {}, left by a killed write", p.display());
        }
    }
    save_config(&dir, &cfg, a.force)?;
    let game: engine::Game = cfg.selfplay.game.parse()?;
    ensure_best(&dir)?;
    let p = Pipeline {
        cfg,
        dir,
        game,
        quiet: a.quiet,
        start: Instant::now(),
    };
    let outcome = generations(&p);
    if let Err(e) = &outcome {
        super::stages::append_log(&p.dir, &format!("error: the run stopped: {e:#}"));
    }
    outcome
}

/// The loop over the generations of an open run, then its summary.
fn generations(p: &Pipeline) -> anyhow::Result<()> {
    p.check_ladder()?;
    p.log(&format!(
        "run {}: {} generations of {} (best so far: {})",
        p.dir.display(),
        p.cfg.run.generations,
        p.game,
        p.best()?
    ));
    for g in 0..p.cfg.run.generations {
        let finished = read_record::<EvalRecord>(
            &p.dir
                .join("eval")
                .join(format!("{}.json", generation_name(g))),
        )?
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
        let table = eval::report::write_report(&p.dir, None)?;
        if !p.quiet {
            eprintln!("{table}");
        }
    }
    let table = eval::report::write_report(&p.dir, None)?;
    println!("{table}");
    println!(
        "best: {}   report: {}",
        p.best()?,
        p.dir.join("report.md").display()
    );
    Ok(())
}
