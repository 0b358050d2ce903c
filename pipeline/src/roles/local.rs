//! `flipzero run --async`: the roles as local child processes of this one (a gatekeeper,
//! a trainer and `--workers` self-play workers) on one run directory, until the
//! gatekeeper has evaluated the run's last candidate; then (or when this process is told
//! to stop, or a role fails) the others are stopped with SIGTERM. Each role is told this
//! process's PID (`--supervisor-pid`) and stops when it is gone, however it ends.

use std::path::Path;
use std::process::{Child, Command};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rundir::RunDir;

use crate::config::RunConfig;
use crate::error::{Context, bail};
use crate::observer::Observer;
use crate::stages::{ensure_best, save_config};
use crate::sync::RunSummary;

struct Role {
    name: String,
    child: Child,
}

/// Sends SIGTERM to a child (through `kill`, as std has no signal but SIGKILL).
fn terminate(child: &Child) {
    let _ = Command::new("kill")
        .arg("-TERM")
        .arg(child.id().to_string())
        .status();
}

/// Stops every role still running: SIGTERM, then SIGKILL after `grace`.
fn stop_all(roles: &mut [Role], grace: Duration) {
    for r in roles.iter() {
        terminate(&r.child);
    }
    let until = Instant::now() + grace;
    for r in roles.iter_mut() {
        loop {
            match r.child.try_wait() {
                Ok(Some(_)) | Err(_) => break,
                Ok(None) if Instant::now() >= until => {
                    eprintln!("{} did not stop in time: killed", r.name);
                    let _ = r.child.kill();
                    let _ = r.child.wait();
                    break;
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            }
        }
    }
}

/// How to start the roles of an asynchronous run.
#[derive(Clone, Debug)]
pub struct AsyncOptions<'a> {
    /// The flipzero program the roles run (`PROGRAM worker ROLE --run DIR …`).
    pub program: &'a Path,
    /// Self-play worker processes.
    pub workers: usize,
    /// Replace a saved config that differs.
    pub force: bool,
    /// Start the roles with `--quiet`.
    pub quiet: bool,
    /// Set to stop the run (its roles are stopped with SIGTERM).
    pub stop: &'a AtomicBool,
}

/// Runs the roles of run `dir` as local processes (see the module's documentation) and
/// returns the report's summary once the gatekeeper has evaluated the last candidate.
pub fn run_async(
    dir: &Path,
    cfg: &RunConfig,
    o: &AsyncOptions,
    observer: &dyn Observer,
) -> crate::Result<RunSummary> {
    let (workers, quiet, stop) = (o.workers, o.quiet, o.stop);
    if workers == 0 {
        bail!("--workers 0: an asynchronous run needs at least one self-play worker");
    }
    if let Some(why) = RunDir::new(dir).foreign() {
        return Err(crate::Error::Invalid(why));
    }
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create run directory {}", dir.display()))?;
    {
        // Set up under the run's lock, as the synchronous loop does: refused while any
        // process runs this directory.
        let _lock = rundir::RunLock::acquire(dir, "run --async")?;
        let run = RunDir::new(dir);
        save_config(&run, cfg, o.force, observer)?;
        ensure_best(&run, observer)?;
    }
    let spawn = |role: &str, name: String| -> crate::Result<Role> {
        let mut c = Command::new(o.program);
        c.args(["worker", role, "--run"]).arg(dir);
        // The roles stop when this process is gone, however it ends (kill -9 too).
        c.arg("--supervisor-pid")
            .arg(std::process::id().to_string());
        if quiet {
            c.arg("--quiet");
        }
        let child = c.spawn().with_context(|| format!("cannot start {name}"))?;
        Ok(Role { name, child })
    };
    let mut roles = vec![
        spawn("gate", "the gatekeeper".into())?,
        spawn("train", "the trainer".into())?,
    ];
    for k in 0..workers {
        roles.push(spawn("selfplay", format!("self-play worker {k}"))?);
    }
    let outcome = loop {
        if stop.load(Ordering::Relaxed) {
            break Err(crate::error::err!(
                "stopped by a signal; the roles were stopped"
            ));
        }
        let mut ended = None;
        for (i, r) in roles.iter_mut().enumerate() {
            if let Some(status) = r.child.try_wait().context("cannot watch a role")? {
                ended = Some((i, status));
                break;
            }
        }
        match ended {
            None => std::thread::sleep(Duration::from_millis(200)),
            Some((i, status)) => {
                let r = roles.remove(i);
                if !status.success() {
                    break Err(crate::error::err!("{} failed ({status})", r.name));
                }
                if r.name == "the gatekeeper" {
                    // The gatekeeper ends when the run's last candidate is evaluated.
                    break Ok(());
                }
            }
        }
    };
    stop_all(&mut roles, Duration::from_secs(60));
    outcome?;
    Ok(RunSummary {
        table: crate::report::write_report(dir, None)?,
        best: rundir::current_best(dir)?.unwrap_or_default(),
        report: RunDir::new(dir).report(),
    })
}
