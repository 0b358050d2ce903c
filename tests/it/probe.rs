//! What a fresh-eyes hostile probe of the issue-26 fixes found, each fixed with its test:
//! a trainer that resumes after new batches, a batch's lock against look-alike workers,
//! outputs checked before the work and never overwriting an input or the command's own
//! output, a match stopped before any game, corrupt records of a synchronous run,
//! counters set back, a lease taken over from a stalled holder.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::roles::{MICRO, finish, fresh, role, spawn, text, wait_for};

fn flipzero() -> Command {
    Command::new(env!("CARGO_BIN_EXE_flipzero"))
}

fn ok(c: &mut Command) -> Output {
    let out = c.output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    out
}

/// A micro synchronous run of `generations` generations in `run`.
fn sync_run(run: &Path, generations: u32) -> Output {
    flipzero()
        .args(["run", "--quiet", "--run"])
        .arg(run)
        .args(MICRO)
        .args(["--set", &format!("run.generations={generations}")])
        .args(["--set", "selfplay.games=4"])
        .output()
        .unwrap()
}

/// A trainer stopped mid-candidate resumes it on the window it started with, even after
/// more batches were published (it stalled on every restart, the checkpoint's window
/// no longer matching).
#[test]
fn a_stopped_trainer_resumes_its_candidate_after_new_batches() {
    let run = fresh("probe-resume");
    let long = [
        "--set",
        "train.steps=3000",
        "--set",
        "train.checkpoint_every=20",
    ];
    ok(role("selfplay", &run, MICRO)
        .args(long)
        .args(["--batches", "3"]));
    let trainer = spawn(role("train", &run, &[]));
    let ckpt = run.join("models/gen-0000.partial/checkpoints/latest");
    wait_for(Duration::from_secs(60), "a checkpoint", || ckpt.is_file());
    crate::roles::sigterm(&trainer);
    let out = finish(trainer, Duration::from_secs(20), "trainer after SIGTERM");
    assert!(out.status.success(), "{}", text(&out));
    ok(&mut role("selfplay", &run, &["--batches", "1"]));
    // The restart trains on the recorded window: it resumes, it is not refused.
    let mut trainer = spawn(role("train", &run, &[]));
    std::thread::sleep(Duration::from_secs(3));
    assert!(
        trainer.try_wait().unwrap().is_none(),
        "the trainer stopped: {}",
        text(&finish(trainer, Duration::from_secs(1), "trainer"))
    );
    trainer.kill().unwrap();
    let _ = trainer.wait();
    let record =
        std::fs::read_to_string(run.join("models/gen-0000.partial/candidate.json")).unwrap();
    assert!(record.contains("\"batches\""), "{record}");
}

/// Outputs are checked before the work: a directory, a path that is an input of the
/// command (`--pgn` naming `--openings`, `--dump-input` into the model), a read-only file
/// of another user are refused at once, nothing written, nothing played.
#[test]
fn outputs_are_checked_before_the_match_and_never_overwrite_inputs() {
    let dir = fresh("probe-outputs");
    std::fs::create_dir_all(&dir).unwrap();
    let openings = dir.join("openings.txt");
    std::fs::write(&openings, "x5o/7/7/7/7/7/o5x x 0 1\n").unwrap();
    let t = Instant::now();
    let out = flipzero()
        .args([
            "match",
            "--a",
            "ab:time=500",
            "--b",
            "ab:time=500",
            "--games",
            "20",
        ])
        .arg("--openings")
        .arg(&openings)
        .arg("--pgn")
        .arg(&openings)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(text(&out).contains("would overwrite"), "{}", text(&out));
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "the match was played first"
    );
    assert_eq!(
        std::fs::read_to_string(&openings).unwrap(),
        "x5o/7/7/7/7/7/o5x x 0 1\n"
    );
    let out = flipzero()
        .args([
            "match",
            "--a",
            "ab:time=500",
            "--b",
            "ab:time=500",
            "--games",
            "20",
            "--pgn",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(!out.status.success() && text(&out).contains("is a directory"));
    let model = dir.join("model");
    crate::uai::write_model(&model, "ataxx");
    let bpk = std::fs::read(model.join("model.bpk")).unwrap();
    let out = flipzero()
        .args(["infer", "--position", "startpos", "--model"])
        .arg(&model)
        .arg("--dump-input")
        .arg(model.join("model.bpk"))
        .output()
        .unwrap();
    assert!(
        !out.status.success() && text(&out).contains("would overwrite"),
        "{}",
        text(&out)
    );
    assert_eq!(std::fs::read(model.join("model.bpk")).unwrap(), bpk);
}

/// `--pgn /dev/stdout` with standard output redirected to a file: the summary and the
/// games both arrive whole (the summary overwrote the games' start).
#[test]
fn dev_stdout_redirected_to_a_file_keeps_everything() {
    let dir = fresh("probe-stdout");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("all.txt");
    let out = flipzero()
        .args([
            "match", "--a", "random", "--b", "random", "--games", "2", "--quiet",
        ])
        .args(["--pgn", "/dev/stdout"])
        .stdout(std::fs::File::create(&file).unwrap())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let all = std::fs::read_to_string(&file).unwrap();
    assert_eq!(all.matches("[Event ").count(), 2, "{all}");
    assert!(all.contains("A: random   B: random"), "{all}");
    assert!(
        all.trim_end().lines().last().unwrap().starts_with("score "),
        "{all}"
    );
}

/// Ctrl-C before any game finished leaves an existing PGN as it was.
#[test]
fn a_match_stopped_before_any_game_keeps_the_old_pgn() {
    let dir = fresh("probe-early-stop");
    std::fs::create_dir_all(&dir).unwrap();
    let pgn = dir.join("keep.pgn");
    std::fs::write(&pgn, "old games\n").unwrap();
    let child = flipzero()
        .args([
            "match",
            "--a",
            "ab:time=2000",
            "--b",
            "ab:time=2000",
            "--games",
            "2",
            "--quiet",
        ])
        .arg("--pgn")
        .arg(&pgn)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    assert!(
        Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap()
            .success()
    );
    let out = finish(child, Duration::from_secs(10), "match after SIGINT");
    assert_eq!(out.status.code(), Some(130), "{}", text(&out));
    assert_eq!(std::fs::read_to_string(&pgn).unwrap(), "old games\n");
    assert!(text(&out).contains("left as it was"), "{}", text(&out));
}

/// A synchronous run whose verdict, training record or self-play summary was cut short,
/// or whose best network has a flipped byte, moves it aside, redoes what it needs, and
/// finishes (it failed on every start).
#[test]
fn corrupt_records_of_a_synchronous_run_are_set_aside_and_redone() {
    let run = fresh("probe-corrupt-sync");
    let out = sync_run(&run, 2);
    assert!(out.status.success(), "{}", text(&out));
    let cut = |p: &Path| {
        let t = std::fs::read(p).unwrap();
        std::fs::write(p, &t[..t.len() / 3]).unwrap();
    };
    cut(&run.join("eval/gen-0001.json"));
    cut(&run.join("models/gen-0001/train.json"));
    cut(&run.join("selfplay/gen-0001/summary.json"));
    let out = sync_run(&run, 3);
    assert!(out.status.success(), "{}", text(&out));
    let log = std::fs::read_to_string(run.join("run.log")).unwrap();
    assert!(log.contains("eval/gen-0001.json is corrupt"), "{log}");
    assert!(run.join("eval/gen-0002.json").is_file());
    // A flipped byte in the best network: the best before it takes its place.
    let best = std::fs::read_to_string(run.join("models/best")).unwrap();
    let bpk = run.join("models").join(best.trim()).join("model.bpk");
    let mut b = std::fs::read(&bpk).unwrap();
    let i = b.len() - 40;
    b[i] ^= 0x10;
    std::fs::write(&bpk, b).unwrap();
    let out = sync_run(&run, 4);
    assert!(out.status.success(), "{}", text(&out));
    let log = std::fs::read_to_string(run.join("run.log")).unwrap();
    assert!(log.contains("does not load"), "{log}");
}

/// A game id counter set back below what the run used continues past it: no id twice.
#[test]
fn a_counter_set_back_never_hands_out_an_id_twice() {
    let run = fresh("probe-counter");
    ok(role("selfplay", &run, MICRO).args(["--batches", "1"]));
    std::fs::write(run.join("counters/next-game-id"), "0\n").unwrap();
    ok(&mut role("selfplay", &run, &["--batches", "1"]));
    let all = crate::roles::batches(&run);
    assert_eq!(all.len(), 2);
    // Each batch's ids lie in its own reserved range, and no id is in two batches.
    let games: u64 = all.iter().map(|(s, _)| s["games"].as_u64().unwrap()).sum();
    assert_eq!(crate::roles::check_game_ids(&all) as u64, games);
}
