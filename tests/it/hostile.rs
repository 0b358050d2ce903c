//! The second hostile round (issue 26): output paths that are links, FIFOs and devices;
//! special files where regular files belong; restarted and look-alike workers; game ids;
//! corrupt artifacts that must not stall a run; orphaned roles; output errors; a long
//! `perft` in the UAI loop; a refused Slurm submit; Ctrl-C during a match. Each test
//! names the item of the issue it covers.

use std::io::{Read, Write};
use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::roles::{MICRO, finish, fresh, host, text, wait_for};

fn flipzero() -> Command {
    Command::new(env!("CARGO_BIN_EXE_flipzero"))
}

fn run_ok(c: &mut Command) -> Output {
    let out = c.output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    out
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .map(|s| {
            s.lines()
                .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false)
}

fn mkfifo(path: &Path) {
    assert!(Command::new("mkfifo").arg(path).status().unwrap().success());
}

/// Runs `c` and fails the test if it has not ended within `limit` (a hang).
fn within(mut c: Command, limit: Duration, what: &str) -> Output {
    let child = c
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    finish(child, limit, what)
}

const MATCH: &[&str] = &[
    "match", "--a", "random", "--b", "random", "--games", "2", "--quiet",
];

/// Item 1: `match --pgn`, `gate --json` and `infer --dump-input` write into a FIFO and a
/// character device as streams, replace the file behind a link and keep the link.
#[test]
fn output_paths_are_written_not_replaced() {
    let dir = fresh("outputs");
    std::fs::create_dir_all(&dir).unwrap();
    // A FIFO: read by another thread while the match writes it.
    let fifo = dir.join("games.fifo");
    mkfifo(&fifo);
    let (tx, rx) = std::sync::mpsc::channel();
    {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = std::fs::File::open(fifo).and_then(|mut f| f.read_to_string(&mut s));
            let _ = tx.send(s);
        });
    }
    run_ok(flipzero().args(MATCH).arg("--pgn").arg(&fifo));
    let streamed = rx
        .recv_timeout(Duration::from_secs(10))
        .unwrap_or_else(|_| {
            // Nothing was written into the FIFO: let the reader go, and fail.
            drop(std::fs::OpenOptions::new().write(true).open(&fifo));
            String::new()
        });
    assert_eq!(streamed.matches("[Event ").count(), 2, "{streamed}");
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );
    // A link to a regular file: the file is replaced, the link stays a link.
    let target = dir.join("target.pgn");
    std::fs::write(&target, "old").unwrap();
    let link = dir.join("link.pgn");
    std::os::unix::fs::symlink("target.pgn", &link).unwrap();
    run_ok(flipzero().args(MATCH).arg("--pgn").arg(&link));
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        std::fs::read_to_string(&target)
            .unwrap()
            .matches("[Event ")
            .count(),
        2
    );
    // A link to /dev/null, and /dev/null itself: written, never replaced.
    let sink = dir.join("sink");
    std::os::unix::fs::symlink("/dev/null", &sink).unwrap();
    for p in [sink.as_path(), Path::new("/dev/null")] {
        run_ok(flipzero().args(MATCH).arg("--pgn").arg(p));
        run_ok(
            flipzero()
                .args(["gate", "--candidate", "random", "--incumbent", "random"])
                .args([
                    "--set",
                    "max_pairs=1",
                    "--set",
                    "batch_pairs=1",
                    "--set",
                    "mode=\"fixed\"",
                ])
                .arg("--json")
                .arg(p),
        );
    }
    assert!(
        std::fs::symlink_metadata(&sink)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(
        std::fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device()
    );
    // A device node of our own (root only): it stays a device.
    if is_root() {
        let fake = dir.join("fakenull");
        let made = Command::new("mknod")
            .args(["-m", "666"])
            .arg(&fake)
            .args(["c", "1", "3"])
            .status()
            .unwrap();
        assert!(made.success());
        run_ok(flipzero().args(MATCH).arg("--pgn").arg(&fake));
        let model = dir.join("model");
        crate::uai::write_model(&model, "ataxx");
        run_ok(
            flipzero()
                .args(["infer", "--position", "startpos", "--model"])
                .arg(&model)
                .arg("--dump-input")
                .arg(&fake),
        );
        assert!(
            std::fs::symlink_metadata(&fake)
                .unwrap()
                .file_type()
                .is_char_device()
        );
    } else {
        eprintln!("skipped the device-node part: it needs root (mknod)");
    }
    // A directory is refused, naming it.
    let out = flipzero()
        .args(MATCH)
        .arg("--pgn")
        .arg(&dir)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(text(&out).contains("is a directory"), "{}", text(&out));
}

/// The game ids of every row under `dir` (recursively), with their plies.
fn rows(dir: &Path) -> Vec<(u64, u16)> {
    let mut out = vec![];
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(rows(&p));
        } else if p.extension().is_some_and(|x| x == "parquet") {
            let (r, _) = selfplay::read_shard(&p).unwrap();
            out.extend(r.iter().map(|s| (s.game_id, s.ply)));
        }
    }
    out
}

/// Item 4: the game ids of a synchronous run are unique across its generations, and
/// `(game_id, ply)` is a key of its rows.
#[test]
fn game_ids_are_unique_across_a_synchronous_run() {
    let run = fresh("game-ids");
    let out = flipzero()
        .args(["run", "--quiet", "--run"])
        .arg(&run)
        .args(MICRO)
        .args(["--set", "run.generations=2", "--set", "selfplay.games=6"])
        .args([
            "--set",
            "selfplay.threads=2",
            "--set",
            "selfplay.games_per_thread=2",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let mut keys = rows(&run.join("selfplay"));
    let n = keys.len();
    keys.sort_unstable();
    keys.dedup();
    assert_eq!(keys.len(), n, "(game_id, ply) repeats");
    let mut ids: Vec<u64> = keys.iter().map(|k| k.0).collect();
    ids.dedup();
    assert_eq!(
        ids,
        (0..12).collect::<Vec<_>>(),
        "two generations of 6 games"
    );
    let counter = std::fs::read_to_string(run.join("counters/next-game-id")).unwrap();
    assert_eq!(counter.trim(), "12");
}

/// Items 2 and 3: a worker restarted with the same host and PID (PID 1 of a fresh PID
/// namespace, as a restarted container) publishes under a new name; a partial batch of
/// a host whose name is this host's plus `-99999` is not this host's to remove, one of a
/// dead local worker is.
#[test]
fn restarted_and_look_alike_workers_keep_their_batches() {
    let run = fresh("pid-one");
    std::fs::create_dir_all(run.join("selfplay")).unwrap();
    let other_host = run
        .join("selfplay")
        .join(format!(".w-{}-99999-1-n0-000000.partial", host()));
    std::fs::create_dir_all(&other_host).unwrap();
    let dead_local = run
        .join("selfplay")
        .join(format!(".w-{}-4194304-n7-000003.partial", host()));
    std::fs::create_dir_all(&dead_local).unwrap();
    let config = run.with_extension("toml");
    std::fs::write(&config, "").unwrap();
    let worker = |pid_one: bool| -> Output {
        let mut c = if pid_one {
            let mut c = Command::new("unshare");
            c.args(["--pid", "--fork", "--mount-proc"])
                .arg(env!("CARGO_BIN_EXE_flipzero"));
            c
        } else {
            flipzero()
        };
        c.args(["worker", "selfplay", "--quiet", "--batches", "1", "--run"])
            .arg(&run)
            .arg("--config")
            .arg(&config)
            .args(MICRO);
        c.output().unwrap()
    };
    let pid_one = is_root()
        && Command::new("unshare")
            .args(["--pid", "--fork", "--mount-proc", "true"])
            .status()
            .is_ok_and(|s| s.success());
    if !pid_one {
        eprintln!("skipped the PID-namespace part: it needs root and unshare");
    }
    for _ in 0..2 {
        let out = worker(pid_one);
        assert!(out.status.success(), "{}", text(&out));
    }
    let published: Vec<String> = std::fs::read_dir(run.join("selfplay"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n.starts_with("w-"))
        .collect();
    assert_eq!(published.len(), 2, "{published:?}");
    if pid_one {
        assert!(
            published.iter().all(|n| n.contains("-1-n")),
            "{published:?}"
        );
    }
    assert!(other_host.is_dir(), "another host's batch was removed");
    assert!(!dead_local.exists(), "a dead local worker's batch was kept");
    let _ = std::fs::remove_dir_all(&run);
    let _ = std::fs::remove_file(&config);
}

/// Item 8: special files where a config, a run's `config.toml` or `models/best` belongs
/// are refused at once, never read until memory runs out or waited on.
#[test]
fn special_files_are_refused_at_once() {
    let dir = fresh("special");
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("config.fifo");
    mkfifo(&fifo);
    let limit = Duration::from_secs(10);
    for (config, kind) in [
        (Path::new("/dev/zero"), "character device"),
        (fifo.as_path(), "FIFO"),
    ] {
        let mut c = flipzero();
        c.args(["run", "--dry-run", "--config"]).arg(config);
        let out = within(c, limit, "run --config");
        assert!(!out.status.success());
        assert!(text(&out).contains(kind), "{}", text(&out));
    }
    // A run whose models/best is a FIFO, then /dev/zero.
    let run = dir.join("run");
    std::fs::create_dir_all(run.join("models")).unwrap();
    mkfifo(&run.join("models/best"));
    let infer = |run: &Path| {
        let mut c = flipzero();
        c.args(["infer", "--position", "startpos", "--model"])
            .arg(run);
        within(c, limit, "infer")
    };
    let out = infer(&run);
    assert!(
        !out.status.success() && text(&out).contains("FIFO"),
        "{}",
        text(&out)
    );
    std::fs::remove_file(run.join("models/best")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", run.join("models/best")).unwrap();
    let out = infer(&run);
    assert!(
        !out.status.success() && text(&out).contains("character device"),
        "{}",
        text(&out)
    );
    // The UAI loop stays responsive after a Model option naming that run.
    std::fs::remove_file(run.join("models/best")).unwrap();
    mkfifo(&run.join("models/best"));
    let mut s = crate::uai::Session::start();
    let answer = crate::uai::answer(
        &mut s,
        &format!("setoption name Model value {}", run.display()),
    );
    assert!(answer.iter().any(|l| l.contains("FIFO")), "{answer:?}");
    s.quit();
    // A run config.toml that is a FIFO.
    let run2 = dir.join("run2");
    std::fs::create_dir_all(&run2).unwrap();
    mkfifo(&run2.join("config.toml"));
    let mut c = flipzero();
    c.args(["worker", "train", "--quiet", "--run"]).arg(&run2);
    let out = within(c, limit, "worker train");
    assert!(
        !out.status.success() && text(&out).contains("FIFO"),
        "{}",
        text(&out)
    );
}

/// Item 9: `models/best` cannot reach outside the run through a linked folder.
#[test]
fn best_cannot_name_a_linked_folder() {
    let dir = fresh("best-link");
    let elsewhere = dir.join("elsewhere");
    crate::uai::write_model(&elsewhere, "ataxx");
    let run = dir.join("run");
    std::fs::create_dir_all(run.join("models")).unwrap();
    std::fs::write(run.join("models/best"), "evil\n").unwrap();
    std::os::unix::fs::symlink(&elsewhere, run.join("models/evil")).unwrap();
    let out = flipzero()
        .args(["infer", "--position", "startpos", "--model"])
        .arg(&run)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(text(&out).contains("symbolic link"), "{}", text(&out));
}

/// Item 11: a full standard output is an error with exit status 1, not a panic.
#[test]
fn a_full_standard_output_is_an_error_not_a_panic() {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let dir = fresh("dev-full");
    std::fs::create_dir_all(&dir).unwrap();
    let pgn = dir.join("m.pgn");
    run_ok(
        flipzero()
            .args([
                "match", "--a", "greedy", "--b", "random", "--games", "4", "--quiet", "--pgn",
            ])
            .arg(&pgn),
    );
    let pgn = pgn.to_string_lossy().to_string();
    for args in [
        &["perft", "--depth", "2"][..],
        &["ratings", "--pgn", &pgn, "--anchor", "random"][..],
    ] {
        let out = flipzero()
            .args(args)
            .stdout(full.try_clone().unwrap())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !err.contains("panicked") && !err.contains("backtrace"),
            "{err}"
        );
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
    }
    let out = flipzero()
        .arg("perft")
        .args(["--depth", "2"])
        .stdout(full.try_clone().unwrap())
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("cannot write to standard output"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut c = flipzero();
    c.arg("uai")
        .stdin(Stdio::piped())
        .stdout(full)
        .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"uai\nisready\n")
        .unwrap();
    let out = finish(child, Duration::from_secs(10), "uai > /dev/full");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(!text(&out).contains("panicked"), "{}", text(&out));
}

/// Item 12 and part of 16: a deep `perft` runs off the command loop (`isready` is
/// answered, `stop` ends it), and a 2 MB line is skipped, not echoed.
#[test]
fn uai_perft_never_blocks_the_loop_and_long_lines_are_not_echoed() {
    let mut s = crate::uai::Session::start();
    s.send("position fen x1o1x1o/1x1o1x1/o1x1o1x/7/x1o1x1o/1x1o1x1/o1x1o1x x 0 1");
    s.send("perft 9");
    let t = Instant::now();
    s.send("isready");
    s.within("readyok", Duration::from_secs(1));
    s.send("stop");
    let lines = s.within("info string perft 9 stopped", Duration::from_secs(2));
    assert!(t.elapsed() < Duration::from_secs(3), "{lines:?}");
    // Shallow counts still answer at once and in order.
    s.send("perft 4");
    let lines = s.until("nodes");
    assert!(lines.last().unwrap().starts_with("nodes "), "{lines:?}");
    let long = format!("{}\n", "x".repeat(2 << 20));
    s.send(long.trim_end());
    let reply = crate::uai::answer(&mut s, "uainewgame");
    let bytes: usize = reply.iter().map(String::len).sum();
    assert!(bytes < 300, "{reply:?}");
    assert!(reply.iter().any(|l| l.contains("ignored")), "{reply:?}");
    let junk = format!("{} tail", "y".repeat(5000));
    let reply = crate::uai::answer(&mut s, &junk);
    assert!(
        reply.iter().map(String::len).sum::<usize>() < 300,
        "{reply:?}"
    );
    s.quit();
}

/// Item 16: a refused `slurm submit` leaves no config or lock behind, and a ladder
/// player that cannot be started is refused by the config check.
#[test]
fn refused_submits_and_bad_ladders_leave_nothing_behind() {
    let dir = fresh("refused");
    let run = dir.join("run");
    let out = flipzero()
        .args(["slurm", "submit", "--run"])
        .arg(&run)
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(text(&out).contains("sbatch"), "{}", text(&out));
    assert!(!run.exists(), "a refused submit created {}", run.display());
    // An existing folder keeps only what it had.
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(run.join("notes.txt"), "mine").unwrap();
    let out = flipzero()
        .args(["slurm", "submit", "--run"])
        .arg(&run)
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let left: Vec<_> = std::fs::read_dir(&run)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(left, ["notes.txt"]);
    let out = flipzero()
        .args([
            "run",
            "--dry-run",
            "--set",
            "anchor.ladder=[\"uai:/nonexistent/engine\"]",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(text(&out).contains("/nonexistent/engine"), "{}", text(&out));
}

/// Item 16: Ctrl-C during a match keeps the finished games: written to the PGN and
/// reported, exit status 130.
#[test]
fn ctrl_c_during_a_match_keeps_the_finished_games() {
    let dir = fresh("ctrl-c");
    std::fs::create_dir_all(&dir).unwrap();
    let pgn = dir.join("m.pgn");
    let child = flipzero()
        .args([
            "match",
            "--a",
            "ab:time=20",
            "--b",
            "ab:time=20",
            "--games",
            "200",
            "--quiet",
        ])
        .arg("--pgn")
        .arg(&pgn)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(6));
    assert!(
        Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap()
            .success()
    );
    let out = finish(child, Duration::from_secs(10), "match after SIGINT");
    assert_eq!(out.status.code(), Some(130), "{}", text(&out));
    let games = std::fs::read_to_string(&pgn)
        .unwrap()
        .matches("[Event ")
        .count();
    assert!((1..200).contains(&games), "{games} games");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(&format!("games: {games}")), "{stdout}");
}

/// Item 7: the roles of `run --async` die with it (`kill -9`), and a run held by roles
/// names them when a synchronous run is refused.
#[test]
fn roles_die_with_their_async_run_and_refusals_name_holders() {
    let run = fresh("orphans");
    let mut parent = flipzero()
        .args(["run", "--async", "--workers", "1", "--quiet", "--run"])
        .arg(&run)
        .args(MICRO)
        .args(["--set", "run.generations=50"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let children = || -> Vec<u32> {
        std::fs::read_to_string(format!(
            "/proc/{}/task/{}/children",
            parent.id(),
            parent.id()
        ))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
    };
    let mut kids = vec![];
    wait_for(Duration::from_secs(30), "three roles", || {
        kids = children();
        // Each role's registration, published (its temporary file, `.NAME…tmp`, is
        // not one yet).
        let registered: Vec<String> = run
            .join("leases/roles")
            .read_dir()
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| !n.starts_with('.'))
                    .collect()
            })
            .unwrap_or_default();
        kids.len() == 3
            && kids
                .iter()
                .all(|k| registered.iter().any(|n| n.ends_with(&format!("-{k}"))))
    });
    // Refused while the roles run, naming them.
    let out = flipzero()
        .args(["run", "--quiet", "--run"])
        .arg(&run)
        .args(MICRO)
        .output()
        .unwrap();
    assert!(!out.status.success());
    for k in &kids {
        assert!(
            text(&out).contains(&format!("PID {k} ")),
            "{k}: {}",
            text(&out)
        );
    }
    parent.kill().unwrap();
    parent.wait().unwrap();
    let alive = |pid: u32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            s.rsplit(')')
                .next()
                .is_some_and(|r| !r.trim_start().starts_with('Z'))
        })
    };
    wait_for(Duration::from_secs(20), "the roles to stop", || {
        kids.iter().all(|&k| !alive(k))
    });
}

/// Item 5: a corrupt newest checkpoint and a truncated batch summary do not stall the
/// trainer: it falls back, moves the checkpoint aside, and says so in `run.log`.
#[test]
fn corrupt_artifacts_do_not_stall_the_trainer() {
    let run = fresh("corrupt-ckpt");
    // A run crashed in training after its first checkpoint.
    let out = flipzero()
        .args(["run", "--quiet", "--run"])
        .arg(&run)
        .args(MICRO)
        .args(["--set", "run.generations=1", "--set", "selfplay.games=4"])
        .args(["--crash-at", "train"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let ckpt = run.join("models/gen-0000.partial/checkpoints/step-00000010");
    let optim = ckpt.join("optim.bin");
    let mut bytes = std::fs::read(&optim).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x40;
    std::fs::write(&optim, bytes).unwrap();
    let out = flipzero()
        .args(["run", "--quiet", "--run"])
        .arg(&run)
        .args(MICRO)
        .args(["--set", "run.generations=1", "--set", "selfplay.games=4"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let log = std::fs::read_to_string(run.join("run.log")).unwrap();
    assert!(
        log.contains("is unusable") && log.contains("corrupt-step-00000010"),
        "{log}"
    );
    assert!(
        run.join("models/gen-0000/checkpoints/corrupt-step-00000010")
            .is_dir()
    );
}
