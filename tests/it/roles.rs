//! The pipeline's roles as separate processes (`flipzero worker selfplay|train|gate`)
//! on one run directory: a whole run, a worker stopped mid-batch, leases held, refused
//! and taken over, a config of another game refused (a worker's own threads are its
//! own), a full disk, a candidate half-written by a killed trainer.

use std::collections::HashMap;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A micro run: three candidates of a few training steps each, trained whenever 300 new
/// positions (a few batches of 4 games) arrive; the first is promoted without a match,
/// the next two are gated against it.
pub(crate) const MICRO: &[&str] = &[
    "--set",
    "run.generations=3",
    "--set",
    "run.gate_first_network=false",
    "--set",
    "selfplay.games_per_worker_batch=4",
    "--set",
    "selfplay.threads=1",
    "--set",
    "selfplay.games_per_thread=4",
    "--set",
    "selfplay.simulations=16",
    "--set",
    "selfplay.fast_simulations=8",
    "--set",
    "selfplay.rows_per_shard=100",
    "--set",
    "train.rows_per_candidate=300",
    "--set",
    "train.steps=20",
    "--set",
    "train.batch_size=32",
    "--set",
    "train.checkpoint_every=10",
    "--set",
    "train.warmup_steps=5",
    "--set",
    "gate.max_pairs=2",
    "--set",
    "gate.batch_pairs=1",
    "--set",
    "gate.simulations=8",
    "--set",
    "anchor.pairs=1",
    "--set",
    "anchor.ladder=[\"random\"]",
];

pub(crate) fn fresh(name: &str) -> rundir::Scratch {
    rundir::Scratch::temp("roles", name)
}

pub(crate) fn role(role: &str, run: &Path, extra: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_flipzero"));
    c.args(["worker", role, "--quiet", "--run"])
        .arg(run)
        .args(extra);
    c
}

pub(crate) fn spawn(mut c: Command) -> Child {
    c.stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

pub(crate) fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Waits for `child` (killing it after `limit`) and returns its output.
pub(crate) fn finish(mut child: Child, limit: Duration, what: &str) -> Output {
    let until = Instant::now() + limit;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > until {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!("{what} ran past {limit:?}: {}", text(&out));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

pub(crate) fn wait_for(limit: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let until = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < until, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

pub(crate) fn sigterm(child: &Child) {
    let ok = Command::new("kill")
        .arg("-TERM")
        .arg(child.id().to_string())
        .status()
        .unwrap();
    assert!(ok.success());
}

pub(crate) fn host() -> String {
    let raw = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    raw.trim()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// Every published batch of `run`: its summary, and the game ids of its rows read from
/// every shard (each of which must read whole). Checks that nothing hidden (a batch
/// being written) is left in `selfplay/`.
pub(crate) fn batches(run: &Path) -> Vec<(serde_json::Value, Vec<u64>)> {
    published_batches(run, false)
}

/// [`batches`], skipping hidden folders (batches being written) when `hidden_ok`.
pub(crate) fn published_batches(run: &Path, hidden_ok: bool) -> Vec<(serde_json::Value, Vec<u64>)> {
    let mut out = vec![];
    for e in std::fs::read_dir(run.join("selfplay")).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if hidden_ok && !name.starts_with("w-") {
            continue;
        }
        assert!(name.starts_with("w-"), "left in selfplay/: {name}");
        let summary: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(p.join("summary.json")).unwrap())
                .unwrap();
        let mut ids = vec![];
        for f in selfplay::shard_files(&p).unwrap() {
            let (rows, _) = selfplay::read_shard(&f).unwrap();
            ids.extend(rows.iter().map(|r| r.game_id));
        }
        assert_eq!(ids.len() as u64, summary["positions"].as_u64().unwrap());
        out.push((summary, ids));
    }
    out
}

/// Checks that each game id belongs to one batch only, within the ids the batch
/// reserved, and that each batch holds as many games as its summary says.
pub(crate) fn check_game_ids(all: &[(serde_json::Value, Vec<u64>)]) -> usize {
    let mut owner: HashMap<u64, usize> = HashMap::new();
    for (i, (summary, ids)) in all.iter().enumerate() {
        let first = summary["first_game_id"].as_u64().unwrap();
        let reserved = summary["games_reserved"].as_u64().unwrap();
        let mut distinct = ids.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len() as u64, summary["games"].as_u64().unwrap());
        for &id in &distinct {
            assert!((first..first + reserved).contains(&id), "{id} in {summary}");
            let prev = owner.insert(id, i);
            assert!(prev.is_none(), "game id {id} in two batches");
        }
    }
    owner.len()
}

#[test]
fn two_workers_a_trainer_and_a_gatekeeper_finish_a_run() {
    let run = fresh("whole");
    let gate = spawn(role("gate", &run, MICRO));
    let train = spawn(role("train", &run, MICRO));
    let workers = [
        spawn(role("selfplay", &run, MICRO)),
        spawn(role("selfplay", &run, MICRO)),
    ];
    let out = finish(gate, Duration::from_secs(300), "the gatekeeper");
    assert!(out.status.success(), "{}", text(&out));
    let out = finish(train, Duration::from_secs(30), "the trainer");
    assert!(out.status.success(), "{}", text(&out));
    for w in workers {
        // Each worker sees the run finished after its current batch.
        let out = finish(w, Duration::from_secs(60), "a worker");
        assert!(out.status.success(), "{}", text(&out));
    }
    let mut gated = 0;
    let mut promoted = 0;
    for g in 0..3 {
        let rec: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(run.join(format!("eval/gen-{g:04}.json"))).unwrap(),
        )
        .unwrap();
        assert_eq!(rec["finished"], true);
        gated += usize::from(!rec["gate"].is_null());
        promoted += usize::from(rec["promoted"] == true);
        // Each candidate saw at least rows_per_candidate more positions than the last.
        let cand: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(run.join(format!("models/gen-{g:04}/candidate.json")))
                .unwrap(),
        )
        .unwrap();
        assert!(cand["rows_seen"].as_u64().unwrap() >= 300 * (g + 1));
    }
    assert_eq!(gated, 2, "gen-0001 and gen-0002 play a gating match");
    assert!(promoted >= 1);
    assert!(run.join("report.md").is_file());
    let all = batches(&run);
    let workers: std::collections::HashSet<&str> = all
        .iter()
        .map(|(s, _)| s["worker"].as_str().unwrap())
        .collect();
    assert_eq!(workers.len(), 2, "both workers published");
    assert!(check_game_ids(&all) >= 12);
    // The leases were given back; nothing partial is left anywhere.
    assert!(!run.join("leases/train").exists() && !run.join("leases/gate").exists());
    for sub in ["models", "selfplay", "eval", ""] {
        for e in std::fs::read_dir(run.join(sub)).unwrap() {
            let name = e.unwrap().file_name().to_string_lossy().to_string();
            assert!(
                !name.contains(".partial") && !name.ends_with(".tmp"),
                "{sub}/{name}"
            );
        }
    }
}

#[test]
fn a_worker_stopped_mid_batch_publishes_only_its_finished_games() {
    let run = fresh("sigterm");
    // Batches of 24 games, two at a time: a batch lasts long enough to be interrupted.
    let mut sets = MICRO.to_vec();
    sets.extend(["--set", "selfplay.games_per_worker_batch=24"]);
    sets.extend(["--set", "selfplay.games_per_thread=2"]);
    let mut first = role("selfplay", &run, &sets);
    first.args(["--batches", "1"]);
    let out = first.output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(batches(&run).len(), 1);
    let worker = spawn(role("selfplay", &run, &sets));
    let raw = |n: usize| {
        std::fs::read_dir(run.join("selfplay")).unwrap().any(|e| {
            let p = e.unwrap().path();
            p.file_name().unwrap().to_string_lossy().ends_with(".games")
                && std::fs::read_dir(&p).map_or(0, |d| {
                    d.filter(|f| {
                        let f = f
                            .as_ref()
                            .unwrap()
                            .file_name()
                            .to_string_lossy()
                            .to_string();
                        f.ends_with(".parquet") && !f.starts_with('.')
                    })
                    .count()
                }) >= n
        })
    };
    wait_for(Duration::from_secs(60), "three finished games", || raw(3));
    sigterm(&worker);
    let out = finish(worker, Duration::from_secs(30), "the stopped worker");
    assert!(out.status.success(), "{}", text(&out));
    let all = batches(&run);
    assert_eq!(all.len(), 2, "the earlier batch and the interrupted one");
    let stopped: Vec<_> = all
        .iter()
        .filter(|(s, _)| s["stopped_early"] == true)
        .collect();
    assert_eq!(stopped.len(), 1);
    let games = stopped[0].0["games"].as_u64().unwrap();
    assert!((3..24).contains(&games), "{games} games published");
    check_game_ids(&all);
}

#[test]
fn leases_refuse_a_live_holder_and_are_taken_over_when_stale() {
    let run = fresh("lease");
    // Start the run (no batch: --batches 0), then hold the trainer's lease as a live
    // process of this machine (this test).
    let out = role("selfplay", &run, MICRO)
        .args(["--batches", "0"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let lease = run.join("leases/train");
    let me = format!(
        "host={} pid={} renewed={}\n",
        host(),
        std::process::id(),
        now()
    );
    std::fs::write(&lease, &me).unwrap();
    let out = role("train", &run, &[]).output().unwrap();
    assert!(!out.status.success());
    let msg = text(&out);
    assert!(
        msg.contains(&format!("PID {} on host {}", std::process::id(), host())),
        "{msg}"
    );
    assert_eq!(
        std::fs::read_to_string(&lease).unwrap(),
        me,
        "left as it was"
    );

    // A lease of another machine last renewed long ago, and one of a process of this
    // machine that is gone: each is taken over.
    let mut gone = Command::new("true").spawn().unwrap();
    gone.wait().unwrap();
    for stale in [
        format!("host=elsewhere pid=999999 renewed={}\n", now() - 1000),
        format!("host={} pid={} renewed={}\n", host(), gone.id(), now()),
    ] {
        std::fs::write(&lease, &stale).unwrap();
        let trainer = spawn(role("train", &run, &[]));
        let pid = trainer.id();
        wait_for(Duration::from_secs(30), "the take-over", || {
            std::fs::read_to_string(&lease).is_ok_and(|t| t.contains(&format!("pid={pid} ")))
        });
        // While a role runs, the synchronous loop is refused on the directory.
        let sync = Command::new(env!("CARGO_BIN_EXE_flipzero"))
            .args(["run", "--quiet", "--run"])
            .arg(&run)
            .args(MICRO)
            .output()
            .unwrap();
        assert!(!sync.status.success());
        assert!(text(&sync).contains("run.lock"), "{}", text(&sync));
        sigterm(&trainer);
        let out = finish(trainer, Duration::from_secs(30), "the trainer");
        assert!(out.status.success(), "{}", text(&out));
        assert!(!lease.exists(), "the lease is given back on SIGTERM");
        let log = std::fs::read_to_string(run.join("run.log")).unwrap();
        assert!(log.contains("took over the lease"), "{log}");
    }
}

/// The roles have no end of the run to train its final net at (the synchronous loop's
/// end does): a trainer of a run that asks for one says so, in its output and the run's
/// log, naming the command that trains it from the run's data; without one, it says
/// nothing of it.
#[test]
fn a_trainer_warns_that_the_roles_do_not_train_the_final_net() {
    for hidden in [64, 0] {
        let run = fresh(&format!("final-net-{hidden}"));
        let mut args = MICRO.to_vec();
        let final_net = format!("run.final_net_hidden={hidden}");
        args.extend(["--set", "train.family=\"fast\"", "--set", &final_net]);
        let out = role("selfplay", &run, &args)
            .args(["--batches", "0"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
        let trainer = spawn(role("train", &run, &[]));
        // The warning comes before the trainer's wait for its first positions.
        wait_for(Duration::from_secs(60), "the trainer to wait", || {
            std::fs::read_to_string(run.join("run.log"))
                .is_ok_and(|l| l.contains("gen-0000: waiting for 300 new positions"))
        });
        sigterm(&trainer);
        let out = finish(trainer, Duration::from_secs(30), "the trainer");
        let msg = text(&out);
        let log = std::fs::read_to_string(run.join("run.log")).unwrap();
        let command = format!(
            "flipzero train --net fast --game ataxx --data {}/selfplay --out OUT --set hidden=64 --set epochs=2",
            run.display()
        );
        if hidden > 0 {
            assert!(
                msg.contains("warning: run.final_net_hidden = 64: the roles")
                    && msg.contains("do not train the run's final net")
                    && msg.contains(&command),
                "{msg}"
            );
            assert!(log.contains(&command), "{log}");
        } else {
            assert!(
                !msg.contains("final net") && !log.contains("final net"),
                "{msg}\n{log}"
            );
        }
        let _ = std::fs::remove_dir_all(&run);
    }
}

#[test]
fn a_worker_with_another_game_is_refused_naming_the_key_and_its_own_threads_are_its_own() {
    let run = fresh("game");
    let out = role("selfplay", &run, MICRO)
        .args(["--batches", "0"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let mut other = MICRO.to_vec();
    other.extend(["--set", "selfplay.game=othello"]);
    let log = || std::fs::read_to_string(run.join("run.log")).unwrap_or_default();
    let before = log();
    for r in ["selfplay", "train", "gate"] {
        let out = role(r, &run, &other).output().unwrap();
        assert!(!out.status.success());
        let msg = text(&out);
        assert!(
            msg.contains("selfplay.game") && msg.contains("othello"),
            "{msg}"
        );
    }
    // Refused at the door, a role writes nothing into the run's log: not for another
    // game, nor for a run that another process holds (as `flipzero run` does).
    {
        let _held = rundir::RunLock::acquire(&run, "test").unwrap();
        for r in ["selfplay", "train", "gate"] {
            let out = role(r, &run, &[]).output().unwrap();
            assert!(!out.status.success());
            assert!(text(&out).contains("run.lock"), "{}", text(&out));
        }
    }
    assert_eq!(log(), before);
    // A worker's own per-process settings are its own: accepted, and the run's config
    // stays as it was; a setting of the run given alone with --set is still refused.
    let saved = std::fs::read_to_string(run.join("config.toml")).unwrap();
    let out = role(
        "selfplay",
        &run,
        &[
            "--set",
            "selfplay.threads=2",
            "--set",
            "selfplay.games_per_thread=3",
        ],
    )
    .args(["--batches", "1"])
    .output()
    .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        std::fs::read_to_string(run.join("config.toml")).unwrap(),
        saved
    );
    let out = role("selfplay", &run, &["--set", "selfplay.simulations=99"])
        .args(["--batches", "1"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        text(&out).contains("selfplay.simulations: 16 (saved) vs 99 (now)"),
        "{}",
        text(&out)
    );
    // Without any config, a folder that is no run is refused.
    let empty = fresh("empty");
    let out = role("selfplay", &empty, &[]).output().unwrap();
    assert!(!out.status.success());
    assert!(text(&out).contains("--config"), "{}", text(&out));
}

#[test]
fn run_async_starts_the_roles_and_stops_them_when_the_run_is_done() {
    let run = fresh("async");
    let child = Command::new(env!("CARGO_BIN_EXE_flipzero"))
        .args(["run", "--async", "--workers", "2", "--quiet", "--run"])
        .arg(&run)
        .args(MICRO)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = finish(child, Duration::from_secs(300), "run --async");
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("best: gen-"), "{}", text(&out));
    for g in 0..3 {
        let rec: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(run.join(format!("eval/gen-{g:04}.json"))).unwrap(),
        )
        .unwrap();
        assert_eq!(rec["finished"], true);
    }
    check_game_ids(&batches(&run));
    // Every role has ended: no lease is held and the run is free for the next command.
    assert!(!run.join("leases/train").exists() && !run.join("leases/gate").exists());
    let again = Command::new(env!("CARGO_BIN_EXE_flipzero"))
        .args(["run", "--async", "--quiet", "--run"])
        .arg(&run)
        .args(MICRO)
        .output()
        .unwrap();
    assert!(
        again.status.success(),
        "a finished run resumes as a no-op: {}",
        text(&again)
    );
}

#[test]
fn a_worker_on_a_full_disk_stops_naming_the_error_and_published_batches_stay_whole() {
    // The run directory on a 320 KiB file system (tmpfs, mounted as root as in CI): a
    // few batches fit, then a write fails. Where mounting is not allowed, the test says
    // so and stops.
    let run = fresh("fulldisk");
    std::fs::create_dir_all(&run).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=320k", "tmpfs"])
        .arg(&run)
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("cannot mount a tmpfs here (not root?): full-disk test not run");
        return;
    }
    let out = finish(
        spawn(role("selfplay", &run, MICRO)),
        Duration::from_secs(300),
        "the worker on a full disk",
    );
    let msg = text(&out);
    // Check the published batches before the file system goes away (a hidden batch
    // being written when the disk filled is skipped).
    let published = published_batches(&run, true);
    let _ = Command::new("umount").arg(&run).status();
    assert!(!out.status.success(), "{msg}");
    assert!(msg.contains("No space left on device"), "{msg}");
    assert!(
        msg.contains(&run.display().to_string()),
        "names the path: {msg}"
    );
    assert!(
        !published.is_empty(),
        "some batches fit before the disk filled"
    );
    check_game_ids(&published);
}

#[test]
fn a_candidate_half_written_by_a_killed_trainer_is_never_gated() {
    let run = fresh("halfcandidate");
    let out = role("selfplay", &run, MICRO)
        .args(["--batches", "2"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    // The trainer dies (abort, as kill -9) after its first checkpoint of gen-0000.
    let out = role("train", &run, &["--crash-at", "train"])
        .output()
        .unwrap();
    assert!(!out.status.success(), "{}", text(&out));
    assert!(run.join("models/gen-0000.partial/checkpoints").is_dir());
    assert!(!run.join("models/gen-0000").exists());
    // The gatekeeper waits for a whole candidate; it never gates the partial one.
    let gate = spawn(role("gate", &run, &[]));
    std::thread::sleep(Duration::from_secs(2));
    assert!(!run.join("eval/gen-0000.json").exists());
    sigterm(&gate);
    finish(gate, Duration::from_secs(30), "the waiting gatekeeper");
    let log = std::fs::read_to_string(run.join("run.log")).unwrap();
    assert!(log.contains("gen-0000: waiting for the trainer"), "{log}");
    // A new trainer resumes the candidate from its checkpoint and publishes it whole,
    // and then the gatekeeper takes it.
    let train = spawn(role("train", &run, &[]));
    wait_for(Duration::from_secs(120), "gen-0000 published", || {
        run.join("models/gen-0000/train.json").is_file()
    });
    sigterm(&train);
    finish(train, Duration::from_secs(30), "the trainer");
    assert!(!run.join("models/gen-0000.partial").exists());
    let steps = std::fs::read_to_string(run.join("models/gen-0000/metrics.csv"))
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap().parse::<u64>().unwrap())
        .collect::<Vec<_>>();
    assert_eq!(
        steps,
        (1..=20).collect::<Vec<_>>(),
        "one run of 20 steps, resumed"
    );
    let gate = spawn(role("gate", &run, &[]));
    wait_for(Duration::from_secs(120), "gen-0000 evaluated", || {
        std::fs::read_to_string(run.join("eval/gen-0000.json"))
            .is_ok_and(|t| t.contains("\"finished\": true"))
    });
    sigterm(&gate);
    finish(gate, Duration::from_secs(30), "the gatekeeper");
}
