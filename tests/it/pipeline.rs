//! `flipzero run` end to end on a micro config: every artifact of the run directory,
//! crash-and-resume at each stage (an abort hook and a real SIGKILL), config errors.

use std::collections::HashSet;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// Two generations of a few games and a few training steps.
pub(crate) const MICRO: &[&str] = &[
    "--set",
    "run.generations=2",
    "--set",
    "selfplay.games=8",
    "--set",
    "selfplay.simulations=16",
    "--set",
    "selfplay.fast_simulations=8",
    "--set",
    "train.steps=30",
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
    "anchor.pairs=2",
    "--set",
    "anchor.ladder=[\"random\", \"greedy\"]",
];

fn flipzero(run: &Path, extra: &[&str]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_flipzero"));
    c.arg("run")
        .arg("--run")
        .arg(run)
        .arg("--quiet")
        .args(MICRO);
    c.args(extra);
    c.output().unwrap()
}

/// `flipzero run` of the micro config (plus `extra`) on `run`, in the background.
fn spawn_run(run: &Path, extra: &[&str]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_flipzero"))
        .arg("run")
        .arg("--run")
        .arg(run)
        .arg("--quiet")
        .args(MICRO)
        .args(extra)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

fn fresh(name: &str) -> rundir::Scratch {
    rundir::Scratch::temp("pipeline", name)
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Checks a finished micro run: every stage's files under their final names, nothing
/// partial or temporary left, each generation's shards holding exactly its games.
fn check_run(run: &Path) {
    let mut leftovers = vec![];
    let mut stack = vec![run.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            if name.contains(".partial") || name.ends_with(".tmp") {
                leftovers.push(p.clone());
            }
            if p.is_dir() {
                stack.push(p);
            }
        }
    }
    assert!(leftovers.is_empty(), "left behind: {leftovers:?}");
    for f in [
        "config.toml",
        "run.log",
        "report.md",
        "metrics.csv",
        "elo.svg",
        "elo_time.svg",
        "loss.svg",
    ] {
        assert!(run.join(f).is_file(), "missing {f}");
    }
    let metrics = std::fs::read_to_string(run.join("metrics.csv")).unwrap();
    assert_eq!(metrics.lines().count(), 3, "{metrics}");
    assert!(
        std::fs::read_to_string(run.join("elo.svg"))
            .unwrap()
            .contains("<svg")
    );
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(report.contains("## Rating list"), "{report}");
    for g in 0..2 {
        let name = format!("gen-{g:04}");
        let shards = run.join("selfplay").join(&name);
        let mut games = HashSet::new();
        let mut rows = 0;
        for f in selfplay::shard_files(&shards).unwrap() {
            let (samples, _) = selfplay::read_shard(&f).unwrap();
            rows += samples.len();
            games.extend(samples.iter().map(|s| s.game_id));
        }
        assert_eq!(games.len(), 8, "{name}: games in the shards");
        let summary: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(shards.join("summary.json")).unwrap())
                .unwrap();
        assert_eq!(summary["positions"].as_u64(), Some(rows as u64), "{name}");
        let model = run.join("models").join(&name);
        for f in [
            "model.bpk",
            "model.json",
            "model.onnx",
            "model.safetensors",
            "model.pytorch.safetensors",
            "metrics.csv",
            "train.json",
        ] {
            assert!(model.join(f).is_file(), "{name}: missing {f}");
        }
        let train: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(model.join("train.json")).unwrap())
                .unwrap();
        assert_eq!(train["steps"].as_u64(), Some(30));
        let eval: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(run.join("eval").join(format!("{name}.json"))).unwrap(),
        )
        .unwrap();
        assert_eq!(eval["finished"].as_bool(), Some(true), "{name}");
        let gate = &eval["gate"];
        if g == 0 {
            // The first network has no incumbent network to beat.
            assert!(gate.is_null(), "{eval}");
            assert_eq!(eval["promoted"].as_bool(), Some(true));
        } else {
            let games = gate["matched"]["games"].as_u64().unwrap();
            assert!(games == 2 || games == 4, "{name}: {eval}");
            assert!(gate["llr"].is_number() && gate["bounds"].is_array());
            assert_eq!(eval["incumbent"].as_str(), Some("gen-0000"));
        }
        if eval["promoted"].as_bool() == Some(true) {
            assert_eq!(eval["anchor"].as_array().unwrap().len(), 2, "{name}");
        }
    }
    let best = std::fs::read_to_string(run.join("models").join("best")).unwrap();
    let best = best.trim();
    assert!(
        best == "bootstrap" || run.join("models").join(best).join("model.json").is_file(),
        "best = {best}"
    );
    let last: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(run.join("eval").join("gen-0001.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(last["best"].as_str(), Some(best));
}

#[test]
fn micro_run_writes_every_artifact_and_resumes_as_a_no_op() {
    let run = fresh("e2e");
    let out = flipzero(&run, &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("best:"), "{}", text(&out));
    check_run(&run);
    // The same command again finds every generation finished, and removes what killed
    // writes left behind (check_run finds no .tmp file).
    let before = std::fs::read_to_string(run.join("eval").join("gen-0001.json")).unwrap();
    let host = selfplay::data::host_name();
    for stale in [
        format!(".metrics.csv.{host}.999999.tmp"),
        format!("models/.best.{host}.999998.tmp"),
        format!("eval/.gen-0001.json.{host}.999997.tmp"),
    ] {
        std::fs::write(run.join(stale), "partial").unwrap();
    }
    // A temporary file of a live writer (here: this test process, standing in for a
    // `flipzero report` running beside the run), or of another machine sharing the
    // directory, is left alone.
    let live = run.join(format!(".report.md.{host}.{}.tmp", std::process::id()));
    std::fs::write(&live, "in progress").unwrap();
    let other = run.join(".report.md.some-other-host.999996.tmp");
    std::fs::write(&other, "in progress elsewhere").unwrap();
    // A lost models/best is restored from the last verdict, not reset to bootstrap.
    let best_before = std::fs::read_to_string(run.join("models/best")).unwrap();
    std::fs::remove_file(run.join("models/best")).unwrap();
    let out = flipzero(&run, &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("models/best was missing"),
        "{}",
        text(&out)
    );
    assert_eq!(
        std::fs::read_to_string(run.join("models/best")).unwrap(),
        best_before
    );
    assert!(live.exists(), "a live writer's temporary file was removed");
    assert!(
        other.exists(),
        "another machine's temporary file was removed"
    );
    std::fs::remove_file(&live).unwrap();
    std::fs::remove_file(&other).unwrap();
    check_run(&run);
    assert_eq!(
        before,
        std::fs::read_to_string(run.join("eval").join("gen-0001.json")).unwrap()
    );
    // The rating list and the report work on the finished run.
    let r = Command::new(env!("CARGO_BIN_EXE_flipzero"))
        .args(["ratings", "--run"])
        .arg(&run)
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", text(&r));
    assert!(
        text(&r).contains("gen-0001") && text(&r).contains("anchor"),
        "{}",
        text(&r)
    );
    let r = Command::new(env!("CARGO_BIN_EXE_flipzero"))
        .args(["report", "--run"])
        .arg(&run)
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", text(&r));
    uai_plays_the_runs_best(&run);
    play_against_the_runs_best(&run);
    models_of_another_game_are_refused(&run);
}

/// An Ataxx network named in a Hexxagon match, gate, game or inference is an error that
/// names the model and both games, before any game is played (not forfeits).
fn models_of_another_game_are_refused(run: &Path) {
    let model = run.join("models").join("gen-0000");
    let spec = format!("mcts:{}", model.display());
    let pgn = run.with_extension("pgn");
    let (model_dir, pgn_arg) = (model.display().to_string(), pgn.display().to_string());
    let cases: [&[&str]; 4] = [
        &[
            "match", "--game", "hexxagon", "--games", "2", "--quiet", "--b", "random", "--a",
            &spec, "--pgn", &pgn_arg,
        ],
        &[
            "gate",
            "--game",
            "hexxagon",
            "--incumbent",
            "random",
            "--candidate",
            &spec,
        ],
        &["play", "--game", "hexxagon", "--opponent", &spec],
        &[
            "infer",
            "--game",
            "hexxagon",
            "--position",
            "startpos",
            "--model",
            &model_dir,
        ],
    ];
    for args in cases {
        let out = Command::new(env!("CARGO_BIN_EXE_flipzero"))
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let t = text(&out);
        assert!(!out.status.success(), "{args:?}: {t}");
        assert!(
            t.contains(&model_dir) && t.contains("for game ataxx, not hexxagon"),
            "{args:?}: {t}"
        );
    }
    assert!(!pgn.exists(), "games were played");
    // A run directory stands for its best network in infer and selfplay too.
    let out = Command::new(env!("CARGO_BIN_EXE_flipzero"))
        .args(["infer", "--position", "startpos", "--model"])
        .arg(run)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("\"wdl\""), "{}", text(&out));
    let shards = run.with_extension("shards");
    let out = Command::new(env!("CARGO_BIN_EXE_flipzero"))
        .args([
            "selfplay",
            "--games",
            "2",
            "--threads",
            "1",
            "--quiet",
            "--model",
        ])
        .arg(run)
        .arg("--out")
        .arg(&shards)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("game ataxx") && text(&out).contains("games 2"),
        "{}",
        text(&out)
    );
    let _ = std::fs::remove_dir_all(&shards);
    // A missing model, likewise: an error, not a verdict over forfeited games.
    let out = Command::new(env!("CARGO_BIN_EXE_flipzero"))
        .args([
            "gate",
            "--candidate",
            "random",
            "--incumbent",
            "mcts:/nonexistent",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("/nonexistent"), "{}", text(&out));
}

#[test]
fn a_second_run_on_one_directory_is_refused_until_the_first_dies() {
    let run = fresh("lock");
    // A run long enough to be caught holding the directory.
    let mut first = spawn_run(&run, &["--set", "selfplay.games=100000"]);
    // A run.lock that is a link is refused, and what it points to is untouched.
    let linked = fresh("lock-link");
    std::fs::create_dir_all(&linked).unwrap();
    let precious = linked.with_extension("precious");
    std::fs::write(&precious, "keep me").unwrap();
    std::os::unix::fs::symlink(&precious, linked.join("run.lock")).unwrap();
    let out = flipzero(&linked, &[]);
    assert!(!out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("not a regular file"), "{}", text(&out));
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "keep me");
    let _ = std::fs::remove_dir_all(&linked);
    let _ = std::fs::remove_file(&precious);

    let lock = run.join("run.lock");
    let t = Instant::now();
    while !std::fs::read_to_string(&lock).is_ok_and(|s| s.contains("PID")) {
        assert!(t.elapsed() < Duration::from_secs(30), "no lock written");
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = flipzero(&run, &[]);
    assert!(!out.status.success(), "{}", text(&out));
    let t = text(&out);
    assert!(
        t.contains(&format!("PID {}", first.id())) && t.contains("host") && t.contains("run.lock"),
        "{t}"
    );
    assert!(
        first.try_wait().unwrap().is_none(),
        "the holder must be untouched"
    );
    // Once the holder is dead (SIGKILL: no clean-up of its own), the lock is taken over.
    first.kill().unwrap();
    first.wait().unwrap();
    let out = flipzero(&run, &["--force"]);
    assert!(out.status.success(), "{}", text(&out));
    check_run(&run);
}

/// The run's best network behind `flipzero uai` (option Model), as cuteataxx would use it.
fn uai_plays_the_runs_best(run: &Path) {
    let script = format!(
        "uai\nsetoption name Model value /nonexistent/model\nsetoption name Model value {}\nsetoption name Simulations value 16\nisready\nposition startpos moves g2\ngo wtime 1000 btime 1000\nposition startpos\ngo nodes 8\nquit\n",
        run.display()
    );
    let out = crate::with_input(&["uai"], script.as_bytes());
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(text.contains("option name Model"), "{text}");
    assert!(
        text.contains("info string error") && text.contains("/nonexistent/model"),
        "{text}"
    );
    let moves: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("bestmove "))
        .collect();
    assert_eq!(moves.len(), 2, "{text}");
    let game: engine::Game = "ataxx".parse().unwrap();
    let mut after_g2 = game.startpos();
    after_g2.play(after_g2.parse_move("g2").unwrap());
    assert!(after_g2.parse_move(moves[0]).is_ok(), "{text}");
    assert!(game.startpos().parse_move(moves[1]).is_ok(), "{text}");
}

/// `flipzero play` against the run's best: bad input is explained, the game goes on.
fn play_against_the_runs_best(run: &Path) {
    let opponent = format!("mcts:{}:sims=8", run.display());
    let out = crate::with_input(
        &["play", "--opponent", &opponent],
        b"moves\nz9\na7a8\ng2\nquit\n",
    );
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{text}");
    assert!(text.contains("16 legal moves"), "{text}");
    assert!(text.contains("`z9` is not a legal move here"), "{text}");
    assert!(text.contains("`a7a8` is not a legal move here"), "{text}");
    assert!(text.contains(" plays "), "the opponent answered g2: {text}");
}

#[test]
fn aborts_at_every_stage_resume_to_a_consistent_run() {
    for point in [
        "selfplay",
        "selfplay-publish",
        "train",
        "train-publish",
        "gate",
        "promote",
        "promoted",
    ] {
        let run = fresh(point);
        let out = flipzero(&run, &["--crash-at", point]);
        assert!(
            !out.status.success(),
            "{point}: the crash hook did not fire"
        );
        if point == "promote" {
            // Killed just before the first promotion: the previous best is intact.
            let best = std::fs::read_to_string(run.join("models").join("best")).unwrap();
            assert_eq!(best.trim(), "bootstrap", "{point}");
            assert!(run.join("eval").join("gen-0000.json").is_file());
        }
        let out = flipzero(&run, &[]);
        assert!(out.status.success(), "{point}: {}", text(&out));
        check_run(&run);
        let _ = std::fs::remove_dir_all(&run);
    }
}

#[test]
fn sigkill_at_random_moments_then_resume() {
    // Real SIGKILLs at a spread of moments; each resume continues where it stopped.
    let run = fresh("sigkill");
    for delay_ms in [300u64, 1200, 2500, 4000] {
        let mut child = spawn_run(&run, &[]);
        let t = Instant::now();
        while t.elapsed() < Duration::from_millis(delay_ms) {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
    let out = flipzero(&run, &[]);
    assert!(out.status.success(), "{}", text(&out));
    check_run(&run);
}

#[test]
fn a_different_config_is_refused_unless_forced() {
    let run = fresh("config");
    std::fs::create_dir_all(&run).unwrap();
    let out = flipzero(&run, &["--set", "run.generations=1"]);
    assert!(out.status.success(), "{}", text(&out));
    let out = flipzero(
        &run,
        &[
            "--set",
            "run.generations=1",
            "--set",
            "train.learning_rate=0.01",
        ],
    );
    assert!(!out.status.success());
    assert!(text(&out).contains("train.learning_rate"), "{}", text(&out));
    // Extending the run is allowed.
    let out = flipzero(&run, &[]);
    assert!(out.status.success(), "{}", text(&out));
    let out = flipzero(&run, &["--set", "train.learning_rate=0.01", "--force"]);
    assert!(out.status.success(), "{}", text(&out));
    let saved = std::fs::read_to_string(run.join("config.toml")).unwrap();
    assert!(saved.contains("learning_rate = 0.01"), "{saved}");
    // A saved config that cannot be read is never overwritten silently; --force replaces it.
    for garbage in [&b"\xff\xfe not text"[..], b"[run\ngenerations = "] {
        std::fs::write(run.join("config.toml"), garbage).unwrap();
        let out = flipzero(&run, &["--set", "train.learning_rate=0.01"]);
        assert!(!out.status.success(), "{}", text(&out));
        assert!(
            text(&out).contains("config.toml") && text(&out).contains("--force"),
            "{}",
            text(&out)
        );
        assert_eq!(std::fs::read(run.join("config.toml")).unwrap(), garbage);
        let out = flipzero(&run, &["--set", "train.learning_rate=0.01", "--force"]);
        assert!(out.status.success(), "{}", text(&out));
    }
}

#[test]
fn config_errors_name_the_key() {
    let run = fresh("errors");
    for (set, expect) in [
        ("selfplay.gamez=3", "gamez"),
        ("gate.alpha=0.7", "gate.alpha"),
        ("train.batch_size=0", "train.batch_size"),
        ("anchor.pairs=0", "anchor.pairs"),
        ("run.generations=0", "run.generations"),
        ("bogus.key=1", "bogus"),
        ("anchor.ladder=[\"nobody\"]", "nobody"),
    ] {
        let out = flipzero(&run, &["--set", set]);
        assert!(!out.status.success(), "{set}");
        assert!(text(&out).contains(expect), "{set}: {}", text(&out));
        // The override is blamed, not the built-in config file.
        assert!(
            text(&out).contains(&format!("--set {set}")) && !text(&out).contains("built in"),
            "{set}: {}",
            text(&out)
        );
    }
    let bad = run.with_extension("toml");
    std::fs::write(&bad, "[selfplay]\ngames = 10\nsimulatons = 5\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_flipzero"))
        .args(["run", "--quiet", "--config"])
        .arg(&bad)
        .arg("--run")
        .arg(&run)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        text(&out).contains("simulatons") && text(&out).contains("[selfplay]"),
        "{}",
        text(&out)
    );
    let _ = std::fs::remove_file(&bad);
}

#[test]
fn every_shipped_config_is_valid() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "toml") {
            let out = Command::new(env!("CARGO_BIN_EXE_flipzero"))
                .args(["run", "--dry-run", "--config"])
                .arg(&p)
                .output()
                .unwrap();
            assert!(out.status.success(), "{}: {}", p.display(), text(&out));
            n += 1;
        }
    }
    assert!(n >= 5);
}
