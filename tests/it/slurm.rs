//! `flipzero slurm` against a real Slurm (the one-node cluster of `.ci/slurm-up`, which
//! CI starts): a short asynchronous run submitted as a job array of two self-play
//! workers, a trainer and a gatekeeper. Without a reachable Slurm the cluster test says
//! so and passes, unless `FLIPZERO_REQUIRE_SLURM=1` (set by `.ci/run`), which makes a
//! missing cluster a failure. The refusals that need no cluster always run.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::roles::{MICRO, batches, check_game_ids, fresh, host, role, text, wait_for};

fn flipzero() -> Command {
    Command::new(env!("CARGO_BIN_EXE_flipzero"))
}

/// Whether a Slurm controller answers (`sinfo`); panics when one is required and not.
fn slurm_reachable() -> bool {
    let ok = Command::new("sinfo")
        .args(["--noheader", "--format=%T"])
        .output()
        .is_ok_and(|o| o.status.success() && !o.stdout.is_empty());
    if !ok {
        assert!(
            std::env::var_os("FLIPZERO_REQUIRE_SLURM").is_none(),
            "FLIPZERO_REQUIRE_SLURM is set but no Slurm answers sinfo (start one with .ci/slurm-up and export its SLURM_CONF)"
        );
        eprintln!("no Slurm answers sinfo: the cluster test is not run (see .ci/slurm-up)");
    }
    ok
}

/// The batch being played by a worker of this machine that has finished at least `n`
/// games: its `.games` folder, the worker's PID and its finished games.
fn batch_in_play(run: &Path, n: usize) -> Option<(PathBuf, u32, usize)> {
    let prefix = format!(".w-{}-", host());
    for e in std::fs::read_dir(run.join("selfplay")).ok()? {
        let p = e.ok()?.path();
        let name = p.file_name()?.to_string_lossy().to_string();
        let Some(rest) = name
            .strip_prefix(&prefix)
            .and_then(|r| r.strip_suffix(".games"))
        else {
            continue;
        };
        let pid: u32 = rest.split('-').next()?.parse().ok()?;
        let games = std::fs::read_dir(&p)
            .ok()?
            .filter_map(Result::ok)
            .filter(|f| {
                let f = f.file_name().to_string_lossy().to_string();
                f.ends_with(".parquet") && !f.starts_with('.')
            })
            .count();
        if games >= n {
            return Some((p, pid, games));
        }
    }
    None
}

/// The Slurm array task a process of this machine runs as (its environment).
fn array_task(pid: u32) -> String {
    let env = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
    let var = |key: &str| {
        env.split(|&b| b == 0)
            .filter_map(|kv| std::str::from_utf8(kv).ok())
            .find_map(|kv| kv.strip_prefix(key).map(str::to_string))
            .unwrap_or_else(|| panic!("process {pid} has no {key}"))
    };
    format!(
        "{}_{}",
        var("SLURM_ARRAY_JOB_ID="),
        var("SLURM_ARRAY_TASK_ID=")
    )
}

/// Cancels its jobs when dropped.
struct CancelOnDrop(Vec<String>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let _ = Command::new("scancel").args(&self.0).status();
    }
}

fn queue_is_empty(ids: &[String]) -> bool {
    let out = Command::new("squeue")
        .args(["--noheader", "--format=%i", "--jobs", &ids.join(",")])
        .output()
        .unwrap();
    out.status.success() && String::from_utf8_lossy(&out.stdout).trim().is_empty()
}

#[test]
fn a_run_submitted_to_slurm_gates_candidates_and_a_cancelled_task_loses_only_unfinished_games() {
    if !slurm_reachable() {
        return;
    }
    let run = fresh("slurm");
    // Batches of 40 games, one at a time (each a few seconds long): a cancel after the
    // second finished game lands mid-batch.
    let mut sets = MICRO.to_vec();
    sets.extend(["--set", "selfplay.games_per_worker_batch=40"]);
    sets.extend(["--set", "selfplay.games_per_thread=1"]);
    let out = flipzero()
        .args(["slurm", "submit", "--run"])
        .arg(&run)
        .args(["--workers", "2", "--time", "00:20:00"])
        .args(&sets)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let jobs: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("slurm/jobs.json")).unwrap())
            .unwrap();
    let roles: Vec<&str> = jobs["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["selfplay", "train", "gate"]);
    let ids: Vec<String> = jobs["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["id"].as_str().unwrap().to_string())
        .collect();
    // However the test ends, its jobs leave the queue (a panic must not leave them
    // running on the CI machine's 2 cores while the other tests run).
    let _cancel = CancelOnDrop(ids.clone());
    for role in ["selfplay", "train", "gate"] {
        let s = std::fs::read_to_string(run.join(format!("slurm/{role}.sbatch"))).unwrap();
        assert!(s.contains(&format!("worker {role} --run")), "{s}");
    }

    // A second trainer on the run refuses while the job's trainer holds the lease.
    wait_for(Duration::from_secs(120), "the trainer job's lease", || {
        run.join("leases/train").exists()
    });
    let out = role("train", &run, &[]).output().unwrap();
    assert!(!out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("lease"), "{}", text(&out));

    // Cancel one self-play task while its batch has finished games and unfinished ones.
    let mut found = None;
    wait_for(
        Duration::from_secs(240),
        "a batch with 2 finished games",
        || {
            found = batch_in_play(&run, 2);
            found.is_some()
        },
    );
    let (folder, pid, _) = found.unwrap();
    let task = array_task(pid);
    let ok = Command::new("scancel").arg(&task).status().unwrap();
    assert!(ok.success());
    wait_for(
        Duration::from_secs(60),
        "the cancelled worker to exit",
        || !Path::new(&format!("/proc/{pid}")).exists(),
    );
    // What it had finished when the cancel arrived (at least what was seen above; games
    // finished in the moment between are published too).
    assert!(
        !folder.exists(),
        "the played games were folded into a batch"
    );
    let out = flipzero()
        .args(["slurm", "status", "--run"])
        .arg(&run)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("candidates trained"), "{}", text(&out));

    // The run finishes on the remaining task; every job leaves the queue by itself.
    let finished = |g: usize| {
        std::fs::read_to_string(run.join(format!("eval/gen-{g:04}.json")))
            .is_ok_and(|t| t.contains("\"finished\": true"))
    };
    let limit = Duration::from_secs(600);
    let until = std::time::Instant::now() + limit;
    while !(finished(2) && queue_is_empty(&ids)) {
        if std::time::Instant::now() > until {
            panic!("the Slurm run did not finish in {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    let mut gated = 0;
    let mut promoted = 0;
    for g in 0..3 {
        let rec: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(run.join(format!("eval/gen-{g:04}.json"))).unwrap(),
        )
        .unwrap();
        gated += usize::from(!rec["gate"].is_null());
        promoted += usize::from(rec["promoted"] == true);
    }
    assert_eq!(gated, 2, "gen-0001 and gen-0002 are gated");
    assert!(promoted >= 1);
    // Every shard reads whole, every game is counted once, and the cancelled worker's
    // interrupted batch holds its finished games.
    let all = batches(&run);
    check_game_ids(&all);
    // Workers are named `HOST-PID-nK` (K counts the worker's starts under that PID).
    let worker = format!("{}-{pid}-n", host());
    let stopped: Vec<_> = all
        .iter()
        .filter(|(s, _)| {
            s["worker"].as_str().is_some_and(|w| w.starts_with(&worker))
                && s["stopped_early"] == true
        })
        .collect();
    assert_eq!(stopped.len(), 1, "the cancelled task's interrupted batch");
    let games = stopped[0].0["games"].as_u64().unwrap();
    assert!((2..40).contains(&games), "{games} games published");
    for e in std::fs::read_dir(run.join("selfplay")).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().to_string();
        assert!(name.starts_with("w-"), "left in selfplay/: {name}");
    }
    for name in [
        format!("selfplay-{}_0.out", ids[0]),
        format!("selfplay-{}_1.out", ids[0]),
        format!("train-{}.out", ids[1]),
        format!("gate-{}.out", ids[2]),
    ] {
        assert!(run.join("slurm/logs").join(&name).is_file(), "{name}");
    }
}

#[test]
fn slurm_submit_without_sbatch_names_the_missing_command() {
    let run = fresh("nosbatch");
    let empty = run.with_extension("path");
    std::fs::create_dir_all(&empty).unwrap();
    let out = flipzero()
        .args(["slurm", "submit", "--run"])
        .arg(&run)
        .args(MICRO)
        .env("PATH", &empty)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let msg = text(&out);
    assert!(msg.contains("`sbatch` was not found on PATH"), "{msg}");
    // Refused before anything is written: no config, lock or scripts are left behind.
    assert!(!run.exists(), "a refused submit created {}", run.display());
    // --write-only needs no Slurm.
    let out = flipzero()
        .args(["slurm", "submit", "--write-only", "--workers", "3", "--run"])
        .arg(&run)
        .args(MICRO)
        .env("PATH", &empty)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let s = std::fs::read_to_string(run.join("slurm/selfplay.sbatch")).unwrap();
    assert!(s.contains("#SBATCH --array=0-2"), "{s}");
    assert!(s.contains("#SBATCH --requeue"), "{s}");
    let _ = std::fs::remove_dir_all(&run);
    let _ = std::fs::remove_dir_all(&empty);
}

#[test]
fn slurm_submit_refuses_bad_requests_by_name() {
    let run = fresh("badsubmit");
    let cases: [(&[&str], &str); 4] = [
        (&["--gpu-trainer"], "train.device = \"cpu\""),
        (&["--time", "2h"], "--time `2h`"),
        (&["--partition", "a\n#SBATCH --x"], "--partition"),
        (&["--workers", "0"], "--workers 0"),
    ];
    for (args, expected) in cases {
        let out = flipzero()
            .args(["slurm", "submit", "--write-only", "--run"])
            .arg(&run)
            .args(args)
            .args(MICRO)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{args:?}");
        assert!(text(&out).contains(expected), "{args:?}: {}", text(&out));
    }
    let out = flipzero()
        .args(["slurm", "status", "--run"])
        .arg(&run)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        text(&out).contains("no Slurm jobs on record"),
        "{}",
        text(&out)
    );
}
