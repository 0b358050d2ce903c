//! What the roles share: their options, opening a run directory for a role (its config
//! checked or saved, its lock shared), the lease of the trainer and the gatekeeper, and
//! the role wrapper that watches the supervisor and logs the error that stops a role.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rundir::RunDir;

use crate::config::{LOCAL_KEYS, RunConfig, load_with};
use crate::error::{Context, bail};
use crate::observer::Observer;
use crate::overrides::Override;
use crate::stages::{Pipeline, ensure_best, save_config, saved_config};

/// What every role is told.
#[derive(Clone, Debug)]
pub struct RoleOptions {
    /// The run directory shared by the roles.
    pub run: PathBuf,
    /// A config file: it starts the run when the folder has no config yet, and must
    /// otherwise agree with the run's saved config (the differing keys are listed).
    /// Without it (and without `sets`) the run's saved config is used.
    pub config: Option<PathBuf>,
    /// `table.key=value` overrides of the config (of the run's saved config when no
    /// `config` is given). The per-process settings ([`LOCAL_KEYS`]) apply to this role
    /// alone; any other must agree with the run's.
    pub sets: Vec<String>,
    /// Set (by a signal handler, a supervisor, a caller) to make the role stop as it
    /// can: a worker publishes its finished games, a lease holder gives its lease back
    /// and ends the process (its work resumes from its partial state).
    pub stop: Arc<AtomicBool>,
    /// The PID of the process that started this one (`run --async`): when this process's
    /// parent is no longer it, the role stops, so that roles never outlive their run.
    pub supervisor: Option<u32>,
}

impl RoleOptions {
    /// A role on run directory `run` with its saved config and a stop flag of its own.
    pub fn new(run: impl Into<PathBuf>) -> RoleOptions {
        RoleOptions {
            run: run.into(),
            config: None,
            sets: Vec::new(),
            stop: Arc::new(AtomicBool::new(false)),
            supervisor: None,
        }
    }
}

/// Watches the supervisor of `o`, if any: once this process's parent is another (the
/// supervisor died and the process was re-parented) the stop flag is set; a role still
/// running a minute later ends the process.
fn watch_supervisor(o: &RoleOptions) {
    let Some(supervisor) = o.supervisor else {
        return;
    };
    let stop = o.stop.clone();
    std::thread::spawn(move || {
        while std::os::unix::process::parent_id() == supervisor {
            std::thread::sleep(Duration::from_millis(200));
        }
        eprintln!("the supervising `flipzero run --async` (PID {supervisor}) is gone: stopping");
        stop.store(true, Ordering::Relaxed);
        std::thread::sleep(Duration::from_secs(60));
        std::process::exit(1);
    });
}

thread_local! {
    /// Whether this thread's role has joined its run ([`open_run`] succeeded).
    static JOINED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs role `name` (`f`) on `o`'s run, with its supervisor watched; what stops it with
/// an error after it joined the run is written to the run's log too, where an operator
/// looks first. A role refused at the door (the run locked by another process, a config
/// that differs) says so on stderr only: it never was part of that run.
pub(super) fn role<T>(
    o: &RoleOptions,
    name: &str,
    f: impl FnOnce() -> crate::Result<T>,
) -> crate::Result<T> {
    watch_supervisor(o);
    JOINED.with(|j| j.set(false));
    let outcome = f();
    let joined = JOINED.with(|j| j.replace(false));
    let run = RunDir::new(&o.run);
    if let Err(e) = &outcome
        && joined
        && run.config().is_file()
    {
        run.append_log(&format!(
            "error: {name} (PID {}) stopped: {}",
            std::process::id(),
            e.chain()
        ));
    }
    outcome
}

/// A role's open run directory: its config, its shared lock, its stage code.
pub(super) struct OpenRun<'o> {
    pub(super) pipeline: Pipeline<'o>,
    _lock: rundir::RunLock,
}

/// Opens the run directory for a role: starts the run with the given config when it has
/// none yet, refuses a given config that differs from the run's (naming the keys), gives
/// the run a best model, and takes the run's lock shared.
pub(super) fn open_run<'o>(
    a: &RoleOptions,
    role: &str,
    observer: &'o dyn Observer,
) -> crate::Result<OpenRun<'o>> {
    let dir = a.run.clone();
    let run = RunDir::new(&dir);
    let given = given_config(&run, a.config.as_deref(), &a.sets)?;
    // (Anything there, a FIFO too, is read as the config: refused by the read, by name.)
    if given.is_none() && !run.config().exists() {
        bail!(
            "{} holds no config.toml: start the run by giving this role its config (--config FILE), or start it with `flipzero run --async`",
            dir.display()
        );
    }
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("cannot create run directory {}", dir.display()))?;
    let lock = rundir::RunLock::acquire_shared(&dir, &format!("worker: {role}"))?;
    let cfg = setup(&run, given, role, observer)?;
    let pipeline = Pipeline::new(run, cfg, observer)?;
    JOINED.with(|j| j.set(true));
    Ok(OpenRun {
        pipeline,
        _lock: lock,
    })
}

/// Sets run `dir` up under its setup lock: saves the given config when the run has none
/// yet, refuses a given config that differs from the run's (naming the keys), gives the
/// run a best model; returns the run's config. `who` names the caller in the refusal.
fn setup(
    run: &RunDir,
    given: Option<RunConfig>,
    who: &str,
    observer: &dyn Observer,
) -> crate::Result<RunConfig> {
    let dir = run.path();
    let lock = run.setup_lock();
    let _held = rundir::lock_file(&lock).map_err(|e| crate::Error::io(&lock, e))?;
    {
        let mut local = None;
        match (saved_config(run)?, given) {
            (None, Some(cfg)) => save_config(run, &cfg, false, observer)?,
            (Some(saved), Some(cfg)) => {
                let diffs = saved.differences(&cfg, &LOCAL_KEYS);
                if !diffs.is_empty() {
                    bail!(
                        "{} runs a different config than the one given to this {who}; these settings differ:\n  {}\nstart it without --config and --set to use the run's config ({})",
                        dir.display(),
                        diffs.join("\n  "),
                        run.config().display()
                    );
                }
                // Extending or shortening the run (run.generations,
                // run.time_budget_minutes) is the run's, as on a resumed `flipzero run`.
                let mut extended = saved.clone();
                extended.run.generations = cfg.run.generations;
                extended.run.time_budget_minutes = cfg.run.time_budget_minutes;
                if extended != saved {
                    save_config(run, &extended, false, observer)?;
                }
                local = Some(cfg);
            }
            (None, None) => bail!(
                "{} holds no config.toml: give the run its config (--config FILE)",
                dir.display()
            ),
            (Some(_), None) => {}
        }
        ensure_best(run, observer)?;
        let saved = saved_config(run)?
            .with_context(|| format!("{}: config.toml vanished", dir.display()))?;
        // A role's own per-process settings (LOCAL_KEYS) apply to it alone.
        Ok(match local {
            Some(l) => saved.with_local_settings(&l),
            None => saved,
        })
    }
}

/// The config a role is given: `--config FILE` with its `--set`s; `--set`s alone apply
/// to the run's saved config when it has one (so `--set selfplay.threads=8` changes
/// only that) and to the built-in default otherwise; nothing given: `None`.
pub fn given_config(
    run: &RunDir,
    config: Option<&Path>,
    sets: &[String],
) -> crate::Result<Option<RunConfig>> {
    let saved = run.config();
    let sets = Override::parse_all(sets, None)?;
    Ok(match (config, sets.is_empty()) {
        (None, true) => None,
        (Some(c), _) => Some(load_with(Some(c), &sets)?),
        (None, false) if saved.is_file() => {
            let text = rundir::read_regular_text(&saved, rundir::Limit::CONFIG)
                .with_context(|| format!("cannot read {}", saved.display()))?;
            Some(RunConfig::from_text(
                &text,
                &saved.display().to_string(),
                &sets,
            )?)
        }
        (None, false) => Some(load_with(None, &sets)?),
    })
}

/// Sets run `run` up for roles started elsewhere (`flipzero slurm submit`): as a role's
/// own start does, under the run's shared lock, so a synchronous `flipzero run` on the
/// folder is refused.
pub fn prepare_run(
    run: &RunDir,
    given: Option<RunConfig>,
    who: &str,
    observer: &dyn Observer,
) -> crate::Result<RunConfig> {
    let _lock = rundir::RunLock::acquire_shared(run.path(), who)?;
    setup(run, given, who, observer)
}

/// A few lines on a run's progress: the published self-play batches, the candidates
/// trained, the generations evaluated and the best.
pub fn progress(run: &RunDir) -> crate::Result<String> {
    let dir = run.path();
    let mut index = super::shards::BatchIndex::default();
    let batches = index.refresh(run)?;
    let left_out = index.take_warnings();
    let positions = batches
        .iter()
        .fold(0u64, |t, b| t.saturating_add(b.summary.positions));
    let games = batches
        .iter()
        .fold(0u64, |t, b| t.saturating_add(b.summary.games));
    let generations = saved_config(run)?.map_or(0, |c| c.run.generations);
    let trained = (0..).take_while(|&k| run.train_record(k).is_file()).count();
    let evaluated = (0..generations)
        .filter(|&k| {
            matches!(
                crate::report::read_record::<crate::report::EvalRecord>(&run.eval_record(k)),
                Ok(Some(r)) if r.finished
            )
        })
        .count();
    let mut text = format!(
        "self-play: {} batches, {games} games, {positions} positions\ncandidates trained: {trained} of {generations}; evaluated: {evaluated}\nbest: {}",
        batches.len(),
        rundir::current_best(dir)?.unwrap_or_else(|| "none yet".into())
    );
    for w in left_out {
        text.push_str(&format!("\nwarning: {w}"));
    }
    Ok(text)
}

/// Whether the run is finished: its last generation's verdict is recorded and acted on.
pub(super) fn run_finished(cfg: &RunConfig, run: &RunDir) -> crate::Result<bool> {
    let last = cfg.run.generations.saturating_sub(1);
    let path = run.eval_record(last);
    Ok(crate::report::read_record::<crate::report::EvalRecord>(&path)?.is_some_and(|r| r.finished))
}

/// Takes the lease of `role` (`train`, `gate`), logging a take-over, and makes the stop
/// flag end the process at once, giving the lease back: the role's work resumes from its
/// partial state, as after a crash (every stage publishes with one rename).
pub(super) fn hold_lease(
    p: &Pipeline,
    role: &str,
    stop: &Arc<AtomicBool>,
) -> crate::Result<HeldLease> {
    let timeout = Duration::from_secs(p.cfg.run.lease_timeout_seconds);
    let (lease, taken) = rundir::Lease::acquire(p.dir(), role, timeout)?;
    match taken {
        rundir::Taken::Free => {}
        rundir::Taken::Stale {
            previous: Some(previous),
            age,
        } => p.log(&format!(
            "{role}: took over the lease {} of {previous}, not renewed for {age} s (run.lease_timeout_seconds = {})",
            lease.path().display(),
            timeout.as_secs()
        )),
        rundir::Taken::Stale { previous: None, .. } => p.warn(&format!(
            "{role}: took over the lease {}, which was not a lease (an edited or corrupt file)",
            lease.path().display(),
        )),
        rundir::Taken::Future { previous, ahead } => p.warn(&format!(
            "{role}: took over the lease {} of {previous}, renewed {ahead} s in the future by this machine's clock (more than run.lease_timeout_seconds = {} ahead: a corrupt file or a clock far off)",
            lease.path().display(),
            timeout.as_secs()
        )),
        rundir::Taken::Dead { previous } => p.log(&format!(
            "{role}: took over the lease {} of {previous}, a process of this machine that is gone",
            lease.path().display(),
        )),
    }
    let lease = Arc::new(lease);
    let stop = stop.clone();
    let held = lease.clone();
    let run = p.run.clone();
    let role = role.to_string();
    std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            // A lease taken over by another process (this one stalled past the timeout)
            // ends this one at once: its partial work is the new holder's now.
            if let Err(e) = held.verify() {
                let line = format!("error: {role} (PID {}): {e}", std::process::id());
                eprintln!("{line}");
                run.append_log(&line);
                std::process::exit(1);
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        held.release();
        eprintln!(
            "{role} ({}): stopped by a signal; its work resumes from its partial state",
            run.path().display()
        );
        std::process::exit(0);
    });
    Ok(HeldLease(lease))
}

/// A role's lease, given back when the role ends (the signal watcher holds it too).
pub(super) struct HeldLease(Arc<rundir::Lease>);

impl HeldLease {
    /// `Ok` while the lease is this process's.
    pub(super) fn check(&self) -> Result<(), rundir::LeaseError> {
        self.0.check()
    }
}

impl Drop for HeldLease {
    fn drop(&mut self) {
        self.0.release();
    }
}
