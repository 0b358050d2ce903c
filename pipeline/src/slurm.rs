//! `flipzero slurm`: the roles of `flipzero worker` as Slurm jobs on one run directory
//! (a filesystem every node mounts). `submit` writes three plain batch scripts into
//! `RUN/slurm/` (a job array of self-play workers, the trainer, the gatekeeper), submits
//! them with `sbatch` and records the job ids in `RUN/slurm/jobs.json`; `status` shows
//! the jobs (`squeue`) and the run's progress; `stop` cancels them (`scancel`).
//!
//! The jobs are requeued on preemption (`--requeue`). Slurm's SIGTERM (scancel,
//! preemption, the time limit) makes a self-play worker publish its finished games and
//! exit, and makes the trainer and the gatekeeper give their lease back; their work
//! resumes from its partial state when the job runs again.

use std::path::{Path, PathBuf};
use std::process::Command;

use rundir::RunDir;
use serde::{Deserialize, Serialize};

use crate::config::LOCAL_KEYS;
use crate::error::{Context, bail};
use crate::observer::Observer;

/// What `flipzero slurm submit` is asked.
#[derive(Clone, Debug, Default)]
pub struct SubmitOptions {
    /// The run directory, on a filesystem every node of the cluster mounts.
    pub run: PathBuf,
    /// The run's config: it starts the run when the folder has none yet, and must
    /// otherwise agree with the run's saved config. Without it the saved config is used.
    pub config: Option<PathBuf>,
    /// `table.key=value` overrides of the config.
    pub sets: Vec<String>,
    /// Self-play workers: the tasks of the job array.
    pub workers: usize,
    /// The partition of every job (default: the cluster's default partition).
    pub partition: Option<String>,
    /// Ask for one GPU for the trainer (`--gres=gpu:1`); the config's `train.device`
    /// must then be `cuda`, `cuda:N` or `wgpu`.
    pub gpu_trainer: bool,
    /// Wall-clock limit of every job (Slurm's formats).
    pub time: Option<String>,
    /// The flipzero binary the jobs run; every node must reach it.
    pub binary: PathBuf,
    /// Write the scripts and list the sbatch commands, but submit nothing.
    pub write_only: bool,
}

/// The jobs of one submission (`RUN/slurm/jobs.json`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct JobsRecord {
    /// Version of this file's layout.
    pub schema: u32,
    /// The jobs, in the order they were submitted.
    pub jobs: Vec<Job>,
}

/// One submitted job.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Job {
    /// `selfplay`, `train` or `gate`.
    pub role: String,
    /// Slurm's job id (of the whole array, for the self-play workers).
    pub id: String,
    /// The batch script, relative to the run directory.
    pub script: String,
}

const JOBS_SCHEMA: u32 = 1;
const ROLES: [&str; 3] = ["selfplay", "train", "gate"];

/// Runs `flipzero slurm`.
/// What the scripts are made of, checked.
struct ScriptSpec {
    run: PathBuf,
    binary: PathBuf,
    workers: usize,
    partition: Option<String>,
    time: Option<String>,
    gpu_trainer: bool,
    selfplay_cpus: usize,
    gate_cpus: usize,
    /// The per-process `--set`s given to submit (LOCAL_KEYS), passed on to every job.
    local_sets: Vec<String>,
}

/// Submits the run's jobs. A refused submit of a run that has not started (no
/// `config.toml` yet) leaves its folder as it found it: whatever this call created there
/// (the config, the lock, the scripts, the folder itself) is removed again.
pub fn submit(a: &SubmitOptions, observer: &dyn Observer) -> crate::Result<String> {
    let had_config = RunDir::new(&a.run).config().exists();
    // What the folder held; a link (even to nothing yet) is never removed, only what
    // this call created behind it.
    let is_link = std::fs::symlink_metadata(&a.run).is_ok_and(|m| m.file_type().is_symlink());
    let before: Option<std::collections::HashSet<std::ffi::OsString>> =
        match std::fs::read_dir(&a.run) {
            Ok(d) => Some(d.flatten().map(|e| e.file_name()).collect()),
            Err(_) if is_link => Some(Default::default()),
            Err(_) => None,
        };
    let outcome = submit_checked(a, observer);
    if outcome.is_err() && !had_config {
        match &before {
            None => {
                let _ = std::fs::remove_dir_all(&a.run);
            }
            Some(before) => {
                for e in std::fs::read_dir(&a.run).into_iter().flatten().flatten() {
                    if !before.contains(&e.file_name()) {
                        let p = e.path();
                        let _ = if p.is_dir() && !p.is_symlink() {
                            std::fs::remove_dir_all(&p)
                        } else {
                            std::fs::remove_file(&p)
                        };
                    }
                }
            }
        }
    }
    outcome
}

fn submit_checked(a: &SubmitOptions, observer: &dyn Observer) -> crate::Result<String> {
    if a.workers == 0 {
        bail!("--workers 0: a run needs at least one self-play worker");
    }
    if let Some(p) = &a.partition {
        check_word("--partition", p)?;
    }
    if let Some(t) = &a.time {
        check_time(t)?;
    }
    let given = crate::roles::given_config(&RunDir::new(&a.run), a.config.as_deref(), &a.sets)?;
    let device = given.as_ref().map(|c| c.train.device.clone());
    let gpu_device = |d: &str| d.starts_with("cuda") || d == "wgpu";
    if let Some(d) = &device
        && a.gpu_trainer
        && !gpu_device(d)
    {
        bail!(
            "--gpu-trainer asks a GPU for the trainer, but train.device = \"{d}\": add --set train.device=cuda (or wgpu; a build with that feature), or leave --gpu-trainer out"
        );
    }
    let binary = a.binary.clone();
    let binary = std::path::absolute(&binary)
        .with_context(|| format!("bad --binary {}", binary.display()))?;
    if !binary.is_file() {
        bail!("--binary {}: no such file", binary.display());
    }
    if !a.write_only {
        // Before anything is written: a machine without Slurm is told so at once.
        Command::new("sbatch")
            .arg("--version")
            .output()
            .map_err(|e| missing_tool("sbatch", e))?;
    }
    if let Some(why) = RunDir::new(&a.run).foreign() {
        return Err(crate::Error::Invalid(why));
    }
    std::fs::create_dir_all(&a.run)
        .with_context(|| format!("cannot create run directory {}", a.run.display()))?;
    let run = std::path::absolute(&a.run)
        .with_context(|| format!("bad run directory {}", a.run.display()))?;
    let cfg = crate::roles::prepare_run(&RunDir::new(&run), given, "slurm submit", observer)?;
    if a.gpu_trainer && !gpu_device(&cfg.train.device) {
        bail!(
            "--gpu-trainer asks a GPU for the trainer, but the run's train.device = \"{}\": add --set train.device=cuda (or wgpu; a build with that feature), or leave --gpu-trainer out",
            cfg.train.device
        );
    }
    let spec = ScriptSpec {
        run: run.clone(),
        binary,
        workers: a.workers,
        partition: a.partition.clone(),
        time: a.time.clone(),
        gpu_trainer: a.gpu_trainer,
        selfplay_cpus: cfg.selfplay.threads.max(1),
        gate_cpus: cfg.gate.threads.max(1),
        // The run's config does not keep per-process settings: the jobs are told them.
        local_sets: crate::Override::parse_all(&a.sets, None)?
            .iter()
            .filter(|o| LOCAL_KEYS.contains(&o.name().as_str()))
            .map(|o| o.text().to_string())
            .collect(),
    };
    let layout = RunDir::new(&run);
    std::fs::create_dir_all(layout.slurm_logs())
        .with_context(|| format!("cannot create {}", layout.slurm_logs().display()))?;
    let mut scripts = vec![];
    for role in ROLES {
        let path = layout.slurm_script(role);
        rundir::write_atomic(&path, script(&spec, role)?.as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))?;
        scripts.push((role, path));
    }
    if a.write_only {
        let lines: Vec<String> = scripts
            .iter()
            .map(|(_, path)| format!("sbatch --parsable {}", path.display()))
            .collect();
        return Ok(lines.join("\n"));
    }
    if let Some(old) = read_jobs(&run)? {
        let live = queued(&old)?;
        if !live.is_empty() {
            bail!(
                "{} already has jobs in the queue ({}): stop them first with `flipzero slurm stop --run {}`",
                run.display(),
                live.join(", "),
                run.display()
            );
        }
    }
    let mut jobs = vec![];
    for (role, path) in &scripts {
        match sbatch(path) {
            Ok(id) => jobs.push(Job {
                role: role.to_string(),
                id,
                script: format!("slurm/{role}.sbatch"),
            }),
            Err(e) => {
                // Leave no half-submitted run behind: cancel what went in.
                if !jobs.is_empty() {
                    let ids: Vec<&str> = jobs.iter().map(|j| j.id.as_str()).collect();
                    return Err(match scancel(&jobs) {
                        Ok(()) => e.context(format!(
                            "the jobs already submitted ({}) were cancelled",
                            ids.join(", ")
                        )),
                        Err(c) => e.context(format!(
                            "the jobs already submitted ({}) could not be cancelled ({}): cancel them by hand",
                            ids.join(", "),
                            c.chain()
                        )),
                    });
                }
                return Err(e);
            }
        }
    }
    let record = JobsRecord {
        schema: JOBS_SCHEMA,
        jobs,
    };
    let text = serde_json::to_string_pretty(&record).context("jobs record")?;
    rundir::write_atomic(&layout.slurm_jobs(), text.as_bytes())
        .with_context(|| format!("cannot write {}", layout.slurm_jobs().display()))?;
    let mut out: Vec<String> = record
        .jobs
        .iter()
        .map(|j| format!("{:<8} job {}   ({})", j.role, j.id, j.script))
        .collect();
    out.push(format!(
        "logs: {}   status: flipzero slurm status --run {}",
        layout.slurm_logs().display(),
        run.display()
    ));
    Ok(out.join("\n"))
}

/// A Slurm name (partition): letters, digits and `_.,-` only, so that it cannot break
/// out of its `#SBATCH` line.
fn check_word(flag: &str, s: &str) -> crate::Result<()> {
    if s.is_empty()
        || !s
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.,-".contains(c))
    {
        bail!("{flag} `{s}`: expected a Slurm name (letters, digits, `_`, `.`, `,`, `-`)");
    }
    Ok(())
}

/// Slurm's time formats: MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS.
fn check_time(t: &str) -> crate::Result<()> {
    let (days, rest) = match t.split_once('-') {
        Some((d, r)) => (Some(d), r),
        None => (None, t),
    };
    let digits = |s: &str| !s.is_empty() && s.len() <= 4 && s.chars().all(|c| c.is_ascii_digit());
    let parts: Vec<&str> = rest.split(':').collect();
    let ok = days.is_none_or(digits) && parts.len() <= 3 && parts.iter().all(|p| digits(p));
    if !ok {
        bail!(
            "--time `{t}`: expected a Slurm time limit (MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS)"
        );
    }
    Ok(())
}

/// A path quoted for a POSIX shell, refusing what a script line cannot carry.
fn shell_quote(p: &Path) -> crate::Result<String> {
    let s = p
        .to_str()
        .with_context(|| format!("{}: not valid UTF-8", p.display()))?;
    if s.contains('\n') || s.contains('\r') {
        bail!("{s:?}: a path with a line break cannot go into a batch script");
    }
    Ok(format!("'{}'", s.replace('\'', r"'\''")))
}

/// The batch script of one role.
fn script(s: &ScriptSpec, role: &str) -> crate::Result<String> {
    let run = shell_quote(&s.run)?;
    let bin = shell_quote(&s.binary)?;
    let mut sets = String::new();
    for set in &s.local_sets {
        sets.push_str(" --set ");
        sets.push_str(&shell_quote(Path::new(set))?);
    }
    let logs = RunDir::new(&s.run).slurm_logs();
    let logs = logs
        .to_str()
        .context("the run directory's path is not valid UTF-8")?;
    if logs.contains(|c: char| c.is_whitespace() || "%\"\\".contains(c)) {
        // #SBATCH lines are not shell: they cannot quote a path with spaces, and Slurm
        // expands `%` in --output (%j, %A, …).
        bail!(
            "{logs}: Slurm's #SBATCH --output cannot hold a path with white space, `%`, `\"` or `\\`; choose a run directory without"
        );
    }
    let (what, cpus, log, extra) = match role {
        "selfplay" => (
            format!(
                "{} self-play workers, one per task of a job array; each publishes its games in batches",
                s.workers
            ),
            s.selfplay_cpus,
            format!("{logs}/selfplay-%A_%a.out"),
            vec![format!("#SBATCH --array=0-{}", s.workers - 1)],
        ),
        "train" => (
            "the trainer: trains each next candidate as enough new positions arrive".to_string(),
            2,
            format!("{logs}/train-%j.out"),
            if s.gpu_trainer {
                vec!["#SBATCH --gres=gpu:1".to_string()]
            } else {
                vec![]
            },
        ),
        _ => (
            "the gatekeeper: gates each candidate, promotes, anchors, writes the report"
                .to_string(),
            s.gate_cpus,
            format!("{logs}/gate-%j.out"),
            vec![],
        ),
    };
    let mut lines = vec![
        "#!/bin/bash".to_string(),
        format!("# flipzero run {}: {what}.", s.run.display()),
        "# Written by `flipzero slurm submit`; adapt it freely (the run directory and the".into(),
        "# flipzero binary must be reachable from every node).".into(),
        format!("#SBATCH --job-name=flipzero-{role}"),
        format!("#SBATCH --cpus-per-task={cpus}"),
        format!("#SBATCH --output={log}"),
        "#SBATCH --open-mode=append".into(),
        "# Preempted jobs go back to the queue and resume from the run directory.".into(),
        "#SBATCH --requeue".into(),
    ];
    lines.extend(extra);
    if let Some(p) = &s.partition {
        lines.push(format!("#SBATCH --partition={p}"));
    }
    if let Some(t) = &s.time {
        lines.push(format!("#SBATCH --time={t}"));
    }
    lines.extend([
        String::new(),
        "# Slurm's SIGTERM (scancel, preemption, the time limit) reaches the worker itself".into(),
        "# (exec): a self-play worker publishes its finished games and exits, the trainer and"
            .into(),
        "# the gatekeeper give their lease back. SIGKILL follows KillWait seconds later.".into(),
        "set -eu".into(),
        format!("exec {bin} worker {role} --run {run}{sets}"),
        String::new(),
    ]);
    Ok(lines.join("\n"))
}

/// Submits a script; returns its job id.
fn sbatch(script: &Path) -> crate::Result<String> {
    let out = Command::new("sbatch")
        .arg("--parsable")
        .arg(script)
        .output()
        .map_err(|e| missing_tool("sbatch", e))?;
    if !out.status.success() {
        bail!(
            "sbatch {} failed ({}): {}",
            script.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    // --parsable prints "ID" or "ID;CLUSTER".
    let text = String::from_utf8_lossy(&out.stdout);
    let id = text.trim().split(';').next().unwrap_or("").to_string();
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_digit()) {
        bail!(
            "sbatch {} printed no job id: {:?}",
            script.display(),
            text.trim()
        );
    }
    Ok(id)
}

/// The error of a Slurm command that cannot be started.
fn missing_tool(tool: &str, e: std::io::Error) -> crate::Error {
    if e.kind() == std::io::ErrorKind::NotFound {
        crate::error::err!(
            "`{tool}` was not found on PATH: `flipzero slurm` drives Slurm through its client commands (sbatch, squeue, scancel); run it on a machine of the cluster (Debian: apt install slurm-client), or write the scripts only with `flipzero slurm submit --write-only`"
        )
    } else {
        crate::error::err!("cannot run `{tool}`: {e}")
    }
}

/// The recorded jobs of a run, if any.
fn read_jobs(run: &Path) -> crate::Result<Option<JobsRecord>> {
    let path = RunDir::new(run).slurm_jobs();
    let text = match rundir::read_regular_text(&path, rundir::Limit::RECORD) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        r => r.with_context(|| format!("cannot read {}", path.display()))?,
    };
    let rec: JobsRecord = serde_json::from_str(&text)
        .with_context(|| format!("{}: not a jobs record", path.display()))?;
    if rec.schema != JOBS_SCHEMA {
        bail!(
            "{}: jobs record schema {} (this flipzero reads {JOBS_SCHEMA})",
            path.display(),
            rec.schema
        );
    }
    Ok(Some(rec))
}

/// `squeue` lines (`ID STATE TIME REASON`) of the recorded jobs still in the queue.
fn queued(rec: &JobsRecord) -> crate::Result<Vec<String>> {
    if rec.jobs.is_empty() {
        return Ok(vec![]);
    }
    let ids: Vec<&str> = rec.jobs.iter().map(|j| j.id.as_str()).collect();
    let out = Command::new("squeue")
        .args(["--noheader", "--format=%i %j %T %M %R", "--jobs"])
        .arg(ids.join(","))
        .output()
        .map_err(|e| missing_tool("squeue", e))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        // squeue fails on ids the controller has already forgotten: none is queued.
        if err.contains("Invalid job id") {
            return Ok(vec![]);
        }
        bail!("squeue failed ({}): {}", out.status, err.trim());
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .collect())
}

fn scancel(jobs: &[Job]) -> crate::Result<()> {
    let out = Command::new("scancel")
        .args(jobs.iter().map(|j| j.id.as_str()))
        .output()
        .map_err(|e| missing_tool("scancel", e))?;
    let err = String::from_utf8_lossy(&out.stderr);
    // Jobs the controller has already forgotten (long finished) are cancelled enough.
    let forgotten = err
        .lines()
        .filter(|l| !l.trim().is_empty())
        .all(|l| l.contains("Invalid job id"));
    if !out.status.success() && !forgotten {
        bail!(
            "scancel failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

fn recorded(run: &Path) -> crate::Result<JobsRecord> {
    read_jobs(run)?.with_context(|| {
        format!(
            "{} has no Slurm jobs on record (slurm/jobs.json): submit them with `flipzero slurm submit --run {}`",
            run.display(),
            run.display()
        )
    })
}

/// The run's progress, its recorded jobs and those of them in the queue (`squeue`).
pub fn status(run: &Path) -> crate::Result<String> {
    let rec = recorded(run)?;
    // The run's progress first: it needs no Slurm command.
    let mut out = vec![crate::roles::progress(&RunDir::new(run))?];
    for j in &rec.jobs {
        out.push(format!("{:<8} job {}", j.role, j.id));
    }
    let lines = queued(&rec)?;
    if lines.is_empty() {
        out.push("no job of this run is in the queue".into());
    } else {
        out.push("in the queue (id name state time reason):".into());
        for l in &lines {
            out.push(format!("  {l}"));
        }
    }
    Ok(out.join("\n"))
}

/// Cancels the run's jobs (`scancel`); published work stays.
pub fn stop(run: &Path) -> crate::Result<String> {
    let rec = recorded(run)?;
    scancel(&rec.jobs)?;
    let ids: Vec<&str> = rec.jobs.iter().map(|j| j.id.as_str()).collect();
    Ok(format!(
        "cancelled jobs {} (SIGTERM: the workers publish their finished games); published work stays in {}",
        ids.join(", "),
        run.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_limits_are_slurm_formats_only() {
        for ok in ["30", "30:00", "02:00:00", "1-12", "1-12:30", "1-12:30:00"] {
            assert!(check_time(ok).is_ok(), "{ok}");
        }
        for bad in ["", "2h", "1:2:3:4", "-5", "1-", "02:00\n#SBATCH --x", "1 2"] {
            assert!(check_time(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn partitions_cannot_break_out_of_their_line() {
        assert!(check_word("--partition", "gpu-a100,cpu").is_ok());
        for bad in ["", "a b", "a\n#SBATCH --x", "a;b", "$(x)"] {
            assert!(check_word("--partition", bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn scripts_quote_paths_and_exec_the_worker() {
        let spec = ScriptSpec {
            run: PathBuf::from("/shared/runs/it's"),
            binary: PathBuf::from("/opt/flipzero"),
            workers: 3,
            partition: Some("cpu".into()),
            time: Some("02:00:00".into()),
            gpu_trainer: true,
            selfplay_cpus: 4,
            gate_cpus: 2,
            local_sets: vec!["selfplay.device=\"cuda\"".into()],
        };
        let s = script(&spec, "selfplay").unwrap();
        assert!(s.contains("#SBATCH --array=0-2\n"), "{s}");
        assert!(s.contains("#SBATCH --cpus-per-task=4\n"), "{s}");
        assert!(s.contains("#SBATCH --partition=cpu\n"), "{s}");
        assert!(s.contains("#SBATCH --time=02:00:00\n"), "{s}");
        assert!(
            s.contains(
                r#"exec '/opt/flipzero' worker selfplay --run '/shared/runs/it'\''s' --set 'selfplay.device="cuda"'"#
            ),
            "{s}"
        );
        assert!(!s.contains("--gres"), "{s}");
        let t = script(&spec, "train").unwrap();
        assert!(t.contains("#SBATCH --gres=gpu:1\n"), "{t}");
        assert!(!t.contains("--array"), "{t}");
        let spaced = ScriptSpec {
            run: PathBuf::from("/shared/my runs/a"),
            ..spec
        };
        assert!(script(&spaced, "gate").is_err());
    }
}
