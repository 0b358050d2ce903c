//! `flipzero worker`: the pipeline's roles as separate processes that meet only in one
//! run directory (a local path, or a shared filesystem where a rename within a folder is
//! atomic), as KataGo's self-play, training and gatekeeping processes do.
//!
//! - `worker selfplay` (any number, on any machines) plays games with the current best
//!   network in batches and publishes each batch as one shard folder
//!   `selfplay/w-HOST-PID-nK-SEQ/` (written as a hidden `.partial` folder, then renamed).
//! - `worker train` (one per run, under the lease `leases/train`) trains the next
//!   candidate `models/gen-NNNN` whenever `train.rows_per_candidate` new positions have
//!   arrived since the previous candidate's.
//! - `worker gate` (one per run, under the lease `leases/gate`) gates each new candidate
//!   against the best, promotes, anchors and rewrites the report.
//!
//! Every role takes the run's lock shared (`run.lock`), so a synchronous `flipzero run`
//! on the same folder is refused while any role runs, and the other way round.

mod gatekeeper;
pub mod local;
mod selfplay;
mod shards;

pub(crate) use shards::reserve_game_ids;
mod trainer;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::{Args, Subcommand};

use super::config::{LOCAL_KEYS, RunConfig, load_config};
use super::stages::{Pipeline, ensure_best, save_config, saved_config};

/// Arguments of `flipzero worker`.
#[derive(Args)]
pub struct WorkerArgs {
    #[command(subcommand)]
    role: Role,
}

#[derive(Subcommand)]
enum Role {
    /// Play self-play games with the run's best network and publish them in batches
    /// (any number of these, on any machines sharing the run directory).
    Selfplay(SelfplayArgs),
    /// Train the next candidate whenever enough new positions have arrived (one per run).
    Train(RoleArgs),
    /// Gate each new candidate, promote, anchor, rewrite the report (one per run).
    Gate(RoleArgs),
}

/// What every role is told.
#[derive(Args, Clone)]
pub struct RoleArgs {
    /// The run directory shared by the roles.
    #[arg(long)]
    run: PathBuf,
    /// A config file: it starts the run when the folder has no config yet, and must
    /// otherwise agree with the run's saved config (the differing keys are listed).
    /// Without it (and without --set) the run's saved config is used.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Override a setting of the config (of the run's saved config when no --config is
    /// given). The per-process settings (selfplay.threads, selfplay.games_per_thread,
    /// selfplay.net_engine, selfplay.device, gate.threads, train.device) apply to this
    /// role alone, e.g. `--set selfplay.device=cuda --set selfplay.net_engine=burn` for a
    /// GPU worker; any other must agree with the run's.
    #[arg(long = "set", value_name = "TABLE.KEY=VALUE")]
    set: Vec<String>,
    /// No progress bars.
    #[arg(long)]
    quiet: bool,
}

/// Arguments of `flipzero worker selfplay`.
#[derive(Args)]
struct SelfplayArgs {
    #[command(flatten)]
    common: RoleArgs,
    /// Stop after publishing this many batches (default: until the run is finished or
    /// the process is told to stop).
    #[arg(long)]
    batches: Option<u64>,
}

/// The environment variable through which `flipzero run --async` tells its roles its
/// PID: a role whose parent is no longer that process stops as on SIGTERM, so that the
/// roles never outlive the run that started them (however it ended, `kill -9` too).
pub(crate) const SUPERVISOR_ENV: &str = "FLIPZERO_SUPERVISOR_PID";

/// Watches the supervisor named by [`SUPERVISOR_ENV`], if any: once this process's
/// parent is another (the supervisor died and the process was re-parented), SIGTERM is
/// raised here (the role stops as when told to: a worker publishes its finished games,
/// a lease holder gives its lease back); a role still running a minute later exits.
fn watch_supervisor() {
    let Some(supervisor) = std::env::var(SUPERVISOR_ENV)
        .ok()
        .and_then(|v| v.parse::<u32>().ok())
    else {
        return;
    };
    std::thread::spawn(move || {
        while std::os::unix::process::parent_id() == supervisor {
            std::thread::sleep(Duration::from_millis(200));
        }
        eprintln!("the supervising `flipzero run --async` (PID {supervisor}) is gone: stopping");
        let _ = signal_hook::low_level::raise(signal_hook::consts::SIGTERM);
        std::thread::sleep(Duration::from_secs(60));
        std::process::exit(1);
    });
}

/// Runs a role.
pub fn run(a: WorkerArgs) -> anyhow::Result<()> {
    watch_supervisor();
    let (name, dir) = match &a.role {
        Role::Selfplay(s) => ("self-play worker", s.common.run.clone()),
        Role::Train(r) => ("trainer", r.run.clone()),
        Role::Gate(r) => ("gatekeeper", r.run.clone()),
    };
    let outcome = match a.role {
        Role::Selfplay(s) => selfplay::run(&s.common, s.batches),
        Role::Train(r) => trainer::run(&r),
        Role::Gate(r) => gatekeeper::run(&r),
    };
    // What stopped a role is in the run's log too, where an operator looks first.
    if let Err(e) = &outcome
        && dir.join("config.toml").is_file()
    {
        super::stages::append_log(
            &dir,
            &format!("error: {name} (PID {}) stopped: {e:#}", std::process::id()),
        );
    }
    outcome
}

/// A role's open run directory: its config, its shared lock, its stage code.
struct OpenRun {
    pipeline: Pipeline,
    _lock: eval::RunLock,
}

/// Runs `f` holding an exclusive lock on file `path` (created if missing): what makes a
/// read-and-write of the run directory's shared state (its config, a counter) whole
/// against other processes, on this machine and on a filesystem that supports locks.
fn with_file_lock<T>(path: &Path, f: impl FnOnce() -> anyhow::Result<T>) -> anyhow::Result<T> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    file.lock()
        .with_context(|| format!("cannot lock {}", path.display()))?;
    let out = f();
    let _ = file.unlock();
    out
}

/// Opens the run directory for a role: starts the run with the given config when it has
/// none yet, refuses a given config that differs from the run's (naming the keys), gives
/// the run a best model, and takes the run's lock shared.
fn open_run(a: &RoleArgs, role: &str) -> anyhow::Result<OpenRun> {
    let dir = a.run.clone();
    let given = given_config(&dir, a.config.as_ref(), &a.set)?;
    // (Anything there, a FIFO too, is read as the config: refused by the read, by name.)
    if given.is_none() && !dir.join("config.toml").exists() {
        bail!(
            "{} holds no config.toml: start the run by giving this role its config (--config FILE), or start it with `flipzero run --async`",
            dir.display()
        );
    }
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("cannot create run directory {}", dir.display()))?;
    let lock = eval::RunLock::acquire_shared(&dir, &format!("worker: {role}"))?;
    let cfg = setup(&dir, given, role)?;
    let game: engine::Game = cfg.selfplay.game.parse()?;
    Ok(OpenRun {
        pipeline: Pipeline {
            cfg,
            dir,
            game,
            quiet: a.quiet,
            start: Instant::now(),
        },
        _lock: lock,
    })
}

/// Sets run `dir` up under its setup lock: saves the given config when the run has none
/// yet, refuses a given config that differs from the run's (naming the keys), gives the
/// run a best model; returns the run's config. `who` names the caller in the refusal.
fn setup(dir: &Path, given: Option<RunConfig>, who: &str) -> anyhow::Result<RunConfig> {
    with_file_lock(&dir.join("leases").join("setup.lock"), || {
        let mut local = None;
        match (saved_config(dir)?, given) {
            (None, Some(cfg)) => save_config(dir, &cfg, false)?,
            (Some(saved), Some(cfg)) => {
                let diffs = saved.differences(&cfg, &LOCAL_KEYS);
                if !diffs.is_empty() {
                    bail!(
                        "{} runs a different config than the one given to this {who}; these settings differ:\n  {}\nstart it without --config and --set to use the run's config ({})",
                        dir.display(),
                        diffs.join("\n  "),
                        dir.join("config.toml").display()
                    );
                }
                // Extending or shortening the run (run.generations,
                // run.time_budget_minutes) is the run's, as on a resumed `flipzero run`.
                let mut extended = saved.clone();
                extended.run.generations = cfg.run.generations;
                extended.run.time_budget_minutes = cfg.run.time_budget_minutes;
                if extended != saved {
                    save_config(dir, &extended, false)?;
                }
                local = Some(cfg);
            }
            (None, None) => bail!(
                "{} holds no config.toml: give the run its config (--config FILE)",
                dir.display()
            ),
            (Some(_), None) => {}
        }
        ensure_best(dir)?;
        let saved = saved_config(dir)?
            .with_context(|| format!("{}: config.toml vanished", dir.display()))?;
        // A role's own per-process settings (LOCAL_KEYS) apply to it alone.
        Ok(match local {
            Some(l) => saved.with_local_settings(&l),
            None => saved,
        })
    })
}

/// The config a role is given: `--config FILE` with its `--set`s; `--set`s alone apply
/// to the run's saved config when it has one (so `--set selfplay.threads=8` changes
/// only that) and to the built-in default otherwise; nothing given: `None`.
pub(crate) fn given_config(
    dir: &Path,
    config: Option<&PathBuf>,
    sets: &[String],
) -> anyhow::Result<Option<RunConfig>> {
    let saved = dir.join("config.toml");
    Ok(match (config, sets.is_empty()) {
        (None, true) => None,
        (Some(c), _) => Some(load_config(Some(c), sets)?),
        (None, false) if saved.is_file() => {
            let text = rundir::read_regular_text(&saved, rundir::Limit::CONFIG)
                .with_context(|| format!("cannot read {}", saved.display()))?;
            Some(RunConfig::from_text(
                &text,
                &saved.display().to_string(),
                sets,
            )?)
        }
        (None, false) => Some(load_config(None, sets)?),
    })
}

/// Sets run `dir` up for roles started elsewhere (`flipzero slurm submit`): as a role's
/// own start does, under the run's shared lock, so a synchronous `flipzero run` on the
/// folder is refused.
pub(crate) fn prepare_run(
    dir: &Path,
    given: Option<RunConfig>,
    who: &str,
) -> anyhow::Result<RunConfig> {
    let _lock = eval::RunLock::acquire_shared(dir, who)?;
    setup(dir, given, who)
}

/// A few lines on a run's progress: the published self-play batches, the candidates
/// trained, the generations evaluated and the best.
pub(crate) fn progress(dir: &Path) -> anyhow::Result<String> {
    let batches = shards::BatchIndex::default().refresh(dir)?;
    let positions = batches
        .iter()
        .fold(0u64, |t, b| t.saturating_add(b.summary.positions));
    let games = batches
        .iter()
        .fold(0u64, |t, b| t.saturating_add(b.summary.games));
    let generations = saved_config(dir)?.map_or(0, |c| c.run.generations);
    let models = dir.join("models");
    let trained = (0..)
        .take_while(|&k| {
            models
                .join(eval::report::generation_name(k))
                .join("train.json")
                .is_file()
        })
        .count();
    let evaluated = (0..generations)
        .filter(|&k| {
            let path = dir
                .join("eval")
                .join(format!("{}.json", eval::report::generation_name(k)));
            matches!(
                eval::report::read_record::<eval::report::EvalRecord>(&path),
                Ok(Some(r)) if r.finished
            )
        })
        .count();
    Ok(format!(
        "self-play: {} batches, {games} games, {positions} positions\ncandidates trained: {trained} of {generations}; evaluated: {evaluated}\nbest: {}",
        batches.len(),
        eval::current_best(dir)?.unwrap_or_else(|| "none yet".into())
    ))
}

/// A flag set by SIGTERM or SIGINT.
fn stop_flag() -> anyhow::Result<Arc<AtomicBool>> {
    let flag = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        signal_hook::flag::register(sig, flag.clone())
            .context("cannot install the signal handler")?;
    }
    Ok(flag)
}

/// Whether the run is finished: its last generation's verdict is recorded and acted on.
fn run_finished(cfg: &RunConfig, dir: &Path) -> anyhow::Result<bool> {
    let last = cfg.run.generations.saturating_sub(1);
    let path = dir
        .join("eval")
        .join(format!("{}.json", eval::report::generation_name(last)));
    Ok(eval::report::read_record::<eval::report::EvalRecord>(&path)?.is_some_and(|r| r.finished))
}

/// Takes the lease of `role` (`train`, `gate`), logging a take-over, and makes SIGTERM
/// and SIGINT end the process at once, giving the lease back: the role's work resumes
/// from its partial state, as after a crash (every stage publishes with one rename).
fn hold_lease(p: &Pipeline, role: &str) -> anyhow::Result<HeldLease> {
    let timeout = Duration::from_secs(p.cfg.run.lease_timeout_seconds);
    let (lease, taken) = eval::Lease::acquire(&p.dir, role, timeout)?;
    match taken {
        eval::Taken::Free => {}
        eval::Taken::Stale { previous, age } => p.log(&format!(
            "{role}: took over the lease {} of {}, not renewed for {age} s (run.lease_timeout_seconds = {})",
            lease.path().display(),
            previous.map_or("an unreadable holder".into(), |h| h.to_string()),
            timeout.as_secs()
        )),
        eval::Taken::Future { previous, ahead } => p.warn(&format!(
            "{role}: took over the lease {} of {previous}, renewed {ahead} s in the future by this machine's clock (more than run.lease_timeout_seconds = {} ahead: a corrupt file or a clock far off)",
            lease.path().display(),
            timeout.as_secs()
        )),
        eval::Taken::Dead { previous } => p.log(&format!(
            "{role}: took over the lease {} of {previous}, a process of this machine that is gone",
            lease.path().display(),
        )),
    }
    let lease = Arc::new(lease);
    let stop = stop_flag()?;
    let held = lease.clone();
    let log_dir = p.dir.clone();
    let role = role.to_string();
    std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(100));
        }
        held.release();
        eprintln!(
            "{role} ({}): stopped by a signal; its work resumes from its partial state",
            log_dir.display()
        );
        std::process::exit(0);
    });
    Ok(HeldLease(lease))
}

/// A role's lease, given back when the role ends (the signal watcher holds it too).
struct HeldLease(Arc<eval::Lease>);

impl HeldLease {
    /// `Ok` while the lease is this process's.
    fn check(&self) -> Result<(), eval::LeaseError> {
        self.0.check()
    }
}

impl Drop for HeldLease {
    fn drop(&mut self) {
        self.0.release();
    }
}
