//! `flipzero run --async`: the roles as local child processes of this one (a gatekeeper,
//! a trainer and `--workers` self-play workers) on one run directory, until the
//! gatekeeper has evaluated the run's last candidate; then (or when this process is told
//! to stop, or a role fails) the others are stopped with SIGTERM.

use std::path::Path;
use std::process::{Child, Command};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use super::stop_flag;
use crate::cmd::config::RunConfig;
use crate::cmd::stages::{ensure_best, save_config};

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

/// Runs the roles of run `dir` as local processes (see the module's documentation).
pub fn run_async(
    dir: &Path,
    cfg: &RunConfig,
    force: bool,
    workers: usize,
    quiet: bool,
) -> anyhow::Result<()> {
    if workers == 0 {
        bail!("--workers 0: an asynchronous run needs at least one self-play worker");
    }
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create run directory {}", dir.display()))?;
    {
        // Set up under the run's lock, as the synchronous loop does: refused while any
        // process runs this directory.
        let _lock = eval::RunLock::acquire(dir, "run --async")?;
        save_config(dir, cfg, force)?;
        ensure_best(dir)?;
    }
    let stop = stop_flag()?;
    let exe = std::env::current_exe().context("cannot find this program's path")?;
    let spawn = |role: &str, name: String| -> anyhow::Result<Role> {
        let mut c = Command::new(&exe);
        c.args(["worker", role, "--run"]).arg(dir);
        // The roles stop when this process is gone, however it ends (kill -9 too).
        c.env(super::SUPERVISOR_ENV, std::process::id().to_string());
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
            break Err(anyhow::anyhow!(
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
                    break Err(anyhow::anyhow!("{} failed ({status})", r.name));
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
    let table = eval::report::write_report(dir, None)?;
    println!("{table}");
    println!(
        "best: {}   report: {}",
        eval::current_best(dir)?.unwrap_or_default(),
        dir.join("report.md").display()
    );
    Ok(())
}
