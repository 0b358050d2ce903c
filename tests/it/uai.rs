//! `flipzero uai` over pipes, and `flipzero match` against external UAI engines,
//! including engines that hang or crash.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

pub(crate) struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: std::thread::JoinHandle<String>,
}

/// How long a command that must not wait on a search may take to be answered: ten times
/// the 100 ms the engine promises, for a loaded machine; a blocked loop never answers.
const PROMPT: Duration = Duration::from_secs(1);

impl Session {
    pub(crate) fn start() -> Session {
        Session::spawn(&["uai"])
    }

    /// `flipzero ARGS` with its input, output and errors piped.
    fn spawn(args: &[&str]) -> Session {
        let mut child = Command::new(env!("CARGO_BIN_EXE_flipzero"))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let out = child.stdout.take().unwrap();
        let mut err = child.stderr.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for l in BufReader::new(out).lines() {
                if tx.send(l.unwrap()).is_err() {
                    break;
                }
            }
        });
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = err.read_to_string(&mut text);
            text
        });
        Session {
            child,
            stdin: Some(stdin),
            lines,
            stderr,
        }
    }

    pub(crate) fn send(&mut self, line: &str) {
        self.send_raw(format!("{line}\n").as_bytes());
    }

    fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("input still open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    /// Lines up to and including the first that starts with `prefix`.
    pub(crate) fn until(&mut self, prefix: &str) -> Vec<String> {
        self.within(prefix, Duration::from_secs(20))
    }

    /// Lines up to and including the first that starts with `prefix`, which must come
    /// within `bound`.
    pub(crate) fn within(&mut self, prefix: &str, bound: Duration) -> Vec<String> {
        let deadline = Instant::now() + bound;
        let mut seen = vec![];
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let l = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no `{prefix}` within {bound:?} after {seen:?}"));
            let done = l.starts_with(prefix);
            seen.push(l);
            if done {
                return seen;
            }
        }
    }

    pub(crate) fn bestmove(&mut self) -> String {
        let lines = self.until("bestmove");
        move_of(&lines)
    }

    /// Closes standard input.
    fn close_input(&mut self) {
        self.stdin.take();
    }

    /// Waits at most `bound` for the process to exit; checks that nothing panicked.
    fn exit_within(mut self, bound: Duration) -> ExitStatus {
        let deadline = Instant::now() + bound;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                self.child.kill().unwrap();
                panic!("still running {bound:?} later");
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let stderr = self.stderr.join().unwrap();
        assert!(!stderr.contains("panicked"), "{stderr}");
        status
    }

    /// `quit`, then checks for a prompt, clean exit.
    pub(crate) fn quit(mut self) {
        self.send("quit");
        let status = self.exit_within(PROMPT);
        assert!(status.success(), "{status}");
    }
}

/// The move of the last line, a `bestmove` line.
pub(crate) fn move_of(lines: &[String]) -> String {
    let last = lines.last().unwrap();
    assert!(last.starts_with("bestmove "), "{lines:?}");
    last.split_whitespace().nth(1).unwrap().to_string()
}

/// Whether `mv` is legal in the start position of `game`.
pub(crate) fn legal_at_start(game: &str, mv: &str) -> bool {
    let game: engine::Game = game.parse().unwrap();
    game.startpos().parse_move(mv).is_ok()
}

#[test]
fn scripted_uai_session() {
    let mut s = Session::start();
    s.send("uai");
    let hello = s.until("uaiok");
    assert!(hello.iter().any(|l| l.starts_with("id name flipzero")));
    assert!(hello.iter().any(|l| l.starts_with("option name Hash")));
    s.send("isready");
    s.until("readyok");
    s.send("setoption name Hash value 8");
    s.send("uainewgame");
    s.send("position startpos moves g2 a1b1");
    s.send("go depth 3");
    let lines = s.until("bestmove");
    assert!(
        lines.iter().any(|l| l.starts_with("info depth 3 score cp")),
        "{lines:?}"
    );
    let mv = lines
        .last()
        .unwrap()
        .split_whitespace()
        .nth(1)
        .unwrap()
        .to_string();
    let game: engine::Game = "ataxx".parse().unwrap();
    let mut pos = game.startpos();
    for m in ["g2", "a1b1"] {
        pos.play(pos.parse_move(m).unwrap());
    }
    assert!(pos.parse_move(&mv).is_ok(), "{mv}");

    // A forced pass.
    s.send("position fen 7/7/7/7/ooooooo/ooooooo/xxxxxxx x 0 1");
    s.send("go btime 1000 wtime 1000 binc 10 winc 10");
    assert_eq!(s.bestmove(), "0000");

    // Malformed input is reported and the last valid position is kept.
    s.send("position startpos");
    s.send("position fen x5o/7/7/7/7/7/o5q x 0 1");
    let err = s.until("info string error");
    assert!(
        err.last().unwrap().contains("unexpected character `q`"),
        "{err:?}"
    );
    s.send("position startpos moves g2 g2g3");
    s.until("info string error");
    s.send("flibbertigibbet");
    s.until("info string error: unknown command");
    s.send("setoption name Hash value lots");
    s.until("info string error");
    s.send("go nodes 500");
    let mv = s.bestmove();
    assert!(
        game.startpos().parse_move(&mv).is_ok(),
        "the start position was kept: {mv}"
    );

    // `stop` ends `go infinite` at once.
    s.send("position startpos");
    s.send("go infinite");
    std::thread::sleep(Duration::from_millis(200));
    s.send("isready");
    s.until("readyok");
    let t = std::time::Instant::now();
    s.send("stop");
    let mv = s.bestmove();
    assert!(t.elapsed() < Duration::from_secs(2));
    assert!(game.startpos().parse_move(&mv).is_ok());

    // A ladder player through the Player option.
    s.send("setoption name Player value greedy");
    s.send("go movetime 100");
    s.bestmove();
    s.send("perft 3");
    s.until("nodes 6460");
    s.send("quit");
    let status = s.child.wait().unwrap();
    assert!(status.success());
}

#[test]
fn time_control_is_respected_with_small_increments() {
    let mut s = Session::start();
    s.send("uai");
    s.until("uaiok");
    s.send("position startpos");
    // 200 ms on the clock, 10 ms increment: answer well inside the remaining time.
    let t = std::time::Instant::now();
    s.send("go btime 200 wtime 200 binc 10 winc 10");
    s.bestmove();
    assert!(
        t.elapsed() < Duration::from_millis(150),
        "{:?}",
        t.elapsed()
    );
    s.send("quit");
}

/// An executable shell script in a fresh temporary folder, removed when dropped.
pub(crate) struct Script {
    path: std::path::PathBuf,
    _dir: rundir::Scratch,
}

impl std::ops::Deref for Script {
    type Target = std::path::PathBuf;
    fn deref(&self) -> &std::path::PathBuf {
        &self.path
    }
}

/// Writes an executable shell script into a fresh temporary folder.
pub(crate) fn script(name: &str, body: &str) -> Script {
    let dir = rundir::Scratch::temp("test", name);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    Script { path, _dir: dir }
}

pub(crate) fn run_match(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_flipzero"))
        .arg("match")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

/// A 2-game match (`args` name the players and the rest) in which one side forfeits
/// both games: the match still ends well and scores A `score` (1.000: B forfeited).
fn forfeited_match(args: &[&str], score: &str) {
    let (ok, out) = run_match(&[args, &["--games", "2", "--quiet"]].concat());
    assert!(ok, "{args:?}: {out}");
    let by = if score == "1.000" {
        "(A 0, B 2"
    } else {
        "(A 2, B 0"
    };
    assert!(
        out.contains(&format!("forfeits: 2 {by}")),
        "{args:?}: {out}"
    );
    let last = out.lines().last().unwrap();
    assert!(
        last.starts_with(&format!("score {score}")),
        "{args:?}: {out}"
    );
}

#[test]
fn matches_against_external_engines_forfeit_broken_ones() {
    let dir = rundir::Scratch::temp("match", "");
    std::fs::create_dir_all(&dir).unwrap();
    let pgn = dir.join("games.pgn");
    let pgn = pgn.to_str().unwrap();
    // Our own engine as an external UAI engine.
    let own = script(
        "own",
        &format!("exec {} uai", env!("CARGO_BIN_EXE_flipzero")),
    );
    let spec = format!("uai:{}:depth=2", own.display());
    let (ok, out) = run_match(&[
        "--a", &spec, "--b", "random", "--games", "4", "--pgn", pgn, "--quiet",
    ]);
    assert!(ok, "{out}");
    let last = out.lines().last().unwrap();
    assert!(
        last.starts_with("score ") && last.ends_with("games 4"),
        "{last}"
    );
    let games = std::fs::read_to_string(pgn).unwrap();
    assert_eq!(games.matches("[Event ").count(), 4);

    // Never answers `go`: forfeits on the move timeout; the match goes on.
    let hang = script(
        "hang",
        "while read l; do case \"$l\" in uai) echo uaiok;; isready) echo readyok;; quit) exit 0;; esac; done",
    );
    let spec = format!("uai:{}", hang.display());
    let timeout = ["--move-timeout-ms", "300", "--pgn", pgn];
    forfeited_match(
        &[&["--a", "greedy", "--b", &spec], &timeout[..]].concat(),
        "1.000",
    );

    // Dies at the first `go`: it forfeits every game, the match goes on.
    let crash = script(
        "crash",
        "while read l; do case \"$l\" in uai) echo uaiok;; isready) echo readyok;; go*) exit 3;; esac; done",
    );
    let spec = format!("uai:{}", crash.display());
    forfeited_match(&["--a", &spec, "--b", "greedy", "--pgn", pgn], "0.000");

    // An engine that cannot play at all is refused before the first game, in a match
    // and in a gate (no verdict over forfeits): a program that does not exist or exits at
    // once, one without a Game option in a Hexxagon match, one that answers its options
    // with an error.
    let no_game = script(
        "nogame",
        "while read l; do case \"$l\" in uai) echo uaiok;; isready) echo readyok;; quit) exit 0;; esac; done",
    );
    let refuses = script(
        "refuses",
        "while read l; do case \"$l\" in uai) echo uaiok;; setoption*) echo 'info string error: no such option';; isready) echo readyok;; quit) exit 0;; esac; done",
    );
    for (spec, game, expect) in [
        (
            "uai:/nonexistent/engine".to_string(),
            "ataxx",
            "/nonexistent/engine",
        ),
        ("uai:/bin/false".to_string(), "ataxx", "/bin/false"),
        (
            format!("uai:{}", no_game.display()),
            "hexxagon",
            "no Game option",
        ),
        (
            format!("uai:{}:Hash=8", refuses.display()),
            "ataxx",
            "no such option",
        ),
        (
            format!("uai:{}:Game=ataxx", own.display()),
            "ataxx/assimilation",
            "Game=ataxx",
        ),
    ] {
        let (ok, out) = run_match(&[
            "--a", &spec, "--b", "greedy", "--games", "2", "--game", game, "--pgn", pgn, "--quiet",
        ]);
        assert!(!ok && out.contains(expect), "{spec}: {out}");
        let out = Command::new(env!("CARGO_BIN_EXE_flipzero"))
            .args([
                "gate",
                "--game",
                game,
                "--candidate",
                "random",
                "--incumbent",
                &spec,
            ])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && text.contains(expect),
            "{spec}: {text}"
        );
    }
    // Our own engine plays Hexxagon once the match sets its Game option.
    let spec = format!("uai:{}:depth=1", own.display());
    let (ok, out) = run_match(&[
        "--a", &spec, "--b", "random", "--games", "2", "--game", "hexxagon", "--pgn", pgn,
        "--quiet",
    ]);
    assert!(ok, "{out}");
    assert!(!out.contains("forfeit"), "{out}");
}

#[test]
fn bad_match_arguments_get_clear_errors() {
    let (ok, _) = run_match(&["--a", "ab0", "--b", "random"]);
    assert!(!ok);
    let out = Command::new(env!("CARGO_BIN_EXE_flipzero"))
        .args(["match", "--a", "wizard", "--b", "random"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown player `wizard`"), "{err}");
    let out = Command::new(env!("CARGO_BIN_EXE_flipzero"))
        .args(["match", "--a", "greedy", "--b", "random", "--games", "3"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("even"));
    let out = Command::new(env!("CARGO_BIN_EXE_flipzero"))
        .args([
            "match", "--a", "greedy", "--b", "random", "--game", "othello",
        ])
        .args(["--blockers", "--games", "2"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("--blockers") && err.contains("othello"),
        "{err}"
    );
}

/// The tester's probe: a new `go` while a bare (unbounded) `go` runs stops it first; then
/// `stop`, `isready` and `quit` are answered at once.
#[test]
fn a_new_go_stops_the_running_search() {
    let mut s = Session::start();
    s.send("position startpos");
    s.send("go");
    std::thread::sleep(Duration::from_millis(300));
    s.send("go depth 2");
    let first = s.within("bestmove", PROMPT);
    assert!(legal_at_start("ataxx", &move_of(&first)));
    let second = s.until("bestmove");
    assert!(
        second.iter().any(|l| l.starts_with("info depth 2 ")),
        "{second:?}"
    );
    assert!(legal_at_start("ataxx", &move_of(&second)));
    s.send("stop");
    s.send("isready");
    let lines = s.within("readyok", PROMPT);
    assert_eq!(
        lines,
        ["readyok"],
        "`stop` after a finished search answers nothing"
    );
    s.quit();
}

/// `isready` is answered during every kind of search that does not end by itself, and
/// the command that changes the engine's state gets the search's `bestmove` first.
#[test]
fn searches_never_block_the_input_loop() {
    let mut s = Session::start();
    // A bare `go`; a long move time; a deep fixed depth.
    let searches = [
        ("go", "position startpos"),
        ("go movetime 100000", "setoption name Hash value 8"),
        ("go depth 60", "uainewgame"),
        ("go nodes 1000000000", "go depth 1"),
    ];
    for (go, change) in searches {
        s.send("position startpos");
        s.send(go);
        std::thread::sleep(Duration::from_millis(200));
        let t = Instant::now();
        s.send("isready");
        let lines = s.within("readyok", PROMPT);
        assert!(
            !lines.iter().any(|l| l.starts_with("bestmove")),
            "{go}: the search was still running: {lines:?}"
        );
        s.send(change);
        s.send("isready");
        let lines = s.within("readyok", PROMPT);
        // The stopped search's `bestmove`, and after it nothing of that search (only the
        // depth-1 iteration of a new `go depth 1`).
        let best = lines.iter().position(|l| l.starts_with("bestmove"));
        let new_search_only =
            |l: &String| !l.starts_with("info depth") || l.starts_with("info depth 1 ");
        assert!(
            best.is_some_and(|b| lines[b + 1..].iter().all(new_search_only)),
            "{go}, then {change}: {lines:?}"
        );
        assert!(t.elapsed() < 2 * PROMPT, "{go}: {:?}", t.elapsed());
        if change.starts_with("go") {
            s.bestmove();
        }
    }
    // `stop` and `quit` while an unbounded search runs.
    s.send("go");
    std::thread::sleep(Duration::from_millis(200));
    s.send("stop");
    let lines = s.within("bestmove", PROMPT);
    assert!(legal_at_start("ataxx", &move_of(&lines)));
    s.send("go");
    std::thread::sleep(Duration::from_millis(200));
    s.send("quit");
    let lines = s.within("bestmove", PROMPT);
    assert!(legal_at_start("ataxx", &move_of(&lines)));
    let status = s.exit_within(PROMPT);
    assert!(status.success(), "{status}");
}

/// End of input during an unbounded search, with a command queued behind it: the
/// search's `bestmove`, then a clean exit.
#[test]
fn end_of_input_stops_the_search_and_exits() {
    let mut s = Session::start();
    s.send("position startpos moves g2");
    s.send("go");
    std::thread::sleep(Duration::from_millis(200));
    s.send("position startpos");
    s.close_input();
    let lines = s.within("bestmove", PROMPT);
    let mut pos = "ataxx".parse::<engine::Game>().unwrap().startpos();
    pos.play(pos.parse_move("g2").unwrap());
    assert!(pos.parse_move(&move_of(&lines)).is_ok(), "{lines:?}");
    let status = s.exit_within(PROMPT);
    assert!(status.success(), "{status}");
}

/// A line that is not UTF-8 is reported and skipped; the commands after it still run.
#[test]
fn a_line_that_is_not_utf8_is_reported_and_skipped() {
    let mut s = Session::start();
    s.send_raw(b"isready\n\xff\xfe x\nisready\n");
    let lines = s.until("readyok");
    assert_eq!(lines, ["readyok"]);
    let lines = s.until("readyok");
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines[0].starts_with("info string error: ") && lines[0].contains("not valid UTF-8"),
        "{lines:?}"
    );
    // Half a UTF-8 sequence at the end of a line, then a command.
    s.send_raw(b"go depth 1 \xe2\x82\ngo depth 1\n");
    let lines = s.until("bestmove");
    assert!(lines[0].contains("not valid UTF-8"), "{lines:?}");
    assert!(legal_at_start("ataxx", &move_of(&lines)));
    s.quit();
}

/// A fresh folder for a test's files.
pub(crate) fn temp(name: &str) -> rundir::Scratch {
    let d = rundir::Scratch::temp("uai", name);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// An untrained one-block network for `game`, written as a model directory `dir`.
pub(crate) fn write_model(dir: &Path, game: &str) {
    let game: engine::Game = game.parse().unwrap();
    let cfg = train::NetConfig {
        blocks: 1,
        channels: 8,
        gpool_every: 0,
        head_channels: 8,
        value_hidden: 8,
        in_planes: train::net::PLANES,
        policy_planes: game.policy_planes(),
        aux_heads: Vec::new(),
    };
    std::fs::create_dir_all(dir).unwrap();
    let net = cfg.init(&burn::prelude::Device::flex());
    let digest = train::store::save_net(&net, &dir.join("model.bpk")).unwrap();
    train::store::write_metadata(dir, game, &cfg, 0, 0, &digest).unwrap();
}

/// Sends `cmd` and returns what it answered (up to a following `readyok`).
pub(crate) fn answer(s: &mut Session, cmd: &str) -> Vec<String> {
    s.send(cmd);
    s.send("isready");
    let mut lines = s.until("readyok");
    lines.pop();
    lines
}

/// The game the engine is at, by the move count of its start position.
fn perft1(s: &mut Session) -> String {
    s.send("position startpos");
    answer(s, "perft 1").join("|")
}

#[test]
fn a_model_and_the_game_must_match_whichever_changes() {
    let dir = temp("models");
    let ataxx = dir.join("ataxx-net");
    let hex = dir.join("hexxagon-net");
    write_model(&ataxx, "ataxx");
    write_model(&hex, "hexxagon");
    // A run directory whose best model is the Ataxx one (the tester's probe).
    let run = dir.join("run");
    write_model(&run.join("models").join("gen-0001"), "ataxx");
    std::fs::write(run.join("models").join("best"), "gen-0001\n").unwrap();
    let (a, h, r) = (
        ataxx.display().to_string(),
        hex.display().to_string(),
        run.display().to_string(),
    );

    // Model first, then Game: refused, also for another Ataxx variant; nothing changed.
    let mut s = Session::start();
    for (model, shown) in [(&a, &a), (&r, &r)] {
        assert_eq!(
            answer(&mut s, &format!("setoption name Model value {model}")),
            [] as [&str; 0]
        );
        for game in ["hexxagon", "ataxx/assimilation"] {
            let out = answer(&mut s, &format!("setoption name Game value {game}"));
            let want = format!("info string error: model {shown} is for game ataxx, not {game}");
            assert!(out.len() == 1 && out[0].starts_with(&want), "{out:?}");
            assert_eq!(perft1(&mut s), "nodes 16", "the game stays ataxx");
            s.send("go movetime 200");
            let lines = s.until("bestmove");
            assert!(legal_at_start("ataxx", &move_of(&lines)), "{lines:?}");
            // The model played: MCTS reports its simulations and evaluations, no
            // alpha-beta iteration (whose lines carry a score).
            assert!(lines.iter().all(|l| !l.contains(" score ")), "{lines:?}");
            assert!(
                lines.iter().any(|l| l.contains(" evaluations in ")),
                "{lines:?}"
            );
        }
    }
    // The same check for an MCTS player chosen through the Player option.
    assert_eq!(
        answer(&mut s, "setoption name Model value <empty>"),
        [] as [&str; 0]
    );
    assert_eq!(
        answer(&mut s, &format!("setoption name Player value mcts:{a}")),
        [] as [&str; 0]
    );
    let out = answer(&mut s, "setoption name Game value hexxagon");
    assert!(
        out[0].contains(&format!("model {a} is for game ataxx, not hexxagon")),
        "{out:?}"
    );
    assert_eq!(perft1(&mut s), "nodes 16");
    s.quit();

    // Game first, then Model (and Player): refused; the matching model is taken.
    let mut s = Session::start();
    assert_eq!(
        answer(&mut s, "setoption name Game value hexxagon"),
        [] as [&str; 0]
    );
    for cmd in [
        format!("setoption name Model value {a}"),
        format!("setoption name Player value mcts:{a}"),
    ] {
        let out = answer(&mut s, &cmd);
        let want = format!("info string error: model {a} is for game ataxx, not hexxagon");
        assert!(
            out.len() == 1 && out[0].starts_with(&want),
            "{cmd}: {out:?}"
        );
        // Still the alpha-beta player, on Hexxagon.
        assert_eq!(perft1(&mut s), "nodes 24");
        s.send("go movetime 200");
        let lines = s.until("bestmove");
        assert!(
            lines.iter().any(|l| l.starts_with("info depth")),
            "{lines:?}"
        );
        assert!(legal_at_start("hexxagon", &move_of(&lines)), "{lines:?}");
    }
    assert_eq!(
        answer(&mut s, &format!("setoption name Model value {h}")),
        [] as [&str; 0]
    );
    s.send("go nodes 20");
    let lines = s.until("bestmove");
    assert!(lines.iter().all(|l| !l.contains(" score ")), "{lines:?}");
    assert!(
        lines
            .iter()
            .any(|l| l.contains(" nodes 20 ") && l.contains(" evaluations in ")),
        "{lines:?}"
    );
    assert!(legal_at_start("hexxagon", &move_of(&lines)), "{lines:?}");
    s.quit();
}

/// A run's best model that changes to another game after it was set: `go` reports it and
/// the alpha-beta search plays; nothing panics.
#[test]
fn go_with_a_model_that_no_longer_matches_does_not_panic() {
    let dir = temp("changed-run");
    write_model(&dir.join("models").join("gen-0001"), "ataxx");
    write_model(&dir.join("models").join("gen-0002"), "hexxagon");
    let best = dir.join("models").join("best");
    std::fs::write(&best, "gen-0001\n").unwrap();
    let mut s = Session::start();
    let run = dir.display().to_string();
    assert_eq!(
        answer(&mut s, &format!("setoption name Model value {run}")),
        [] as [&str; 0]
    );
    std::fs::write(&best, "gen-0002\n").unwrap();
    s.send("position startpos");
    s.send("go movetime 200");
    let lines = s.until("bestmove");
    let want = format!("info string error: model {run} is for game hexxagon, not ataxx");
    assert!(lines[0].starts_with(&want), "{lines:?}");
    assert!(legal_at_start("ataxx", &move_of(&lines)), "{lines:?}");
    s.quit();
}

/// `setoption name Model value` with nothing after `value` clears the model: the default
/// player plays again, and the game can change.
#[test]
fn an_empty_model_value_means_no_model() {
    let dir = temp("empty-model");
    let ataxx = dir.join("net");
    write_model(&ataxx, "ataxx");
    for clear in ["setoption name Model value ", "setoption name Model value"] {
        let mut s = Session::start();
        let set = format!("setoption name Model value {}", ataxx.display());
        assert_eq!(answer(&mut s, &set), [] as [&str; 0]);
        assert_eq!(answer(&mut s, clear), [] as [&str; 0], "{clear:?}");
        s.send("go depth 2");
        let lines = s.until("bestmove");
        assert!(
            lines.iter().any(|l| l.starts_with("info depth 2 ")),
            "alpha-beta plays: {lines:?}"
        );
        assert_eq!(
            answer(&mut s, "setoption name Game value hexxagon"),
            [] as [&str; 0]
        );
        assert_eq!(perft1(&mut s), "nodes 24");
        s.quit();
    }
}

/// `stop` ends an MCTS search long before its simulation count, and it answers a move.
#[test]
fn stop_ends_an_mcts_search() {
    let mut s = Session::start();
    s.send("setoption name Player value mcts:bootstrap");
    s.send("setoption name Simulations value 1000000");
    s.send("position startpos");
    s.send("go");
    std::thread::sleep(Duration::from_millis(300));
    s.send("isready");
    let lines = s.within("readyok", PROMPT);
    assert_eq!(lines, ["readyok"]);
    s.send("stop");
    let lines = s.within("bestmove", PROMPT);
    assert!(legal_at_start("ataxx", &move_of(&lines)), "{lines:?}");
    s.quit();
}

/// `go infinite` on an MCTS player stops growing its tree at `TreeMemory` (reported), and
/// still answers only on `stop`; a bound out of range is refused, naming the range.
#[test]
fn an_infinite_mcts_search_stops_at_its_tree_bound() {
    let mut s = Session::start();
    s.send("uai");
    let options = s.within("uaiok", PROMPT);
    assert!(
        options.contains(&"option name TreeMemory type spin default 2048 min 16 max 32768".into()),
        "{options:?}"
    );
    s.send("setoption name TreeMemory value 15");
    let lines = s.within("info string error", PROMPT);
    assert!(
        lines
            .last()
            .unwrap()
            .contains("TreeMemory must be a number of MiB in 16..=32768, got `15`"),
        "{lines:?}"
    );
    s.send("setoption name TreeMemory value 16");
    s.send("setoption name Player value mcts:bootstrap");
    s.send("position startpos");
    s.send("go infinite");
    // The MCTS search's one info line (it reports its depth first, as UAI has it).
    let lines = s.within("info depth", Duration::from_secs(60));
    assert!(
        lines
            .last()
            .unwrap()
            .contains("the tree reached TreeMemory (16 MiB): search stopped"),
        "{lines:?}"
    );
    // Stopped, but no answer before `stop` (time enough for one to come if it would).
    std::thread::sleep(Duration::from_millis(300));
    s.send("isready");
    assert_eq!(s.within("readyok", PROMPT), ["readyok"]);
    s.send("stop");
    let lines = s.within("bestmove", PROMPT);
    assert!(legal_at_start("ataxx", &move_of(&lines)), "{lines:?}");
    s.quit();
}

#[test]
fn every_go_is_answered_with_a_bestmove() {
    // What the engine cannot use is reported and left out, never left unanswered; a clock
    // for the side not to move only (x moves first, on `btime`) means an empty clock.
    let mut s = Session::start();
    for go in [
        "go wtime 100000 winc 1000",
        "go searchmoves f2 g2 depth 3",
        "go ponder movetime 50",
        "go movetime 99999999999999999999999 depth 2",
        "go nodes 18446744073709551615 depth 2",
        "go depth two movetime 50",
        "go mate 3 depth 2",
        "go bogus depth 2",
    ] {
        s.send("position startpos");
        s.send(go);
        let lines = s.within("bestmove", Duration::from_secs(5));
        let mv = move_of(&lines);
        assert!(legal_at_start("ataxx", &mv), "{go}: {lines:?}");
    }
    // A deep perft counts on its own thread: the loop still answers, `stop` ends it.
    s.send("perft 12");
    s.send("isready");
    s.within("readyok", PROMPT);
    s.send("stop");
    s.within("info string perft 12 stopped", PROMPT);
    s.quit();
}

#[test]
fn the_game_can_be_chosen_at_start() {
    let dir = temp("start-game");
    write_model(&dir, "ataxx/assimilation");
    let out = Command::new(env!("CARGO_BIN_EXE_flipzero"))
        .args(["uai", "--game", "ataxx/assimilation", "--model"])
        .arg(&dir)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = Command::new(env!("CARGO_BIN_EXE_flipzero"))
        .args(["uai", "--model"])
        .arg(&dir)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("ataxx/assimilation"),
        "{err}"
    );
}

#[test]
fn every_game_speaks_uai_othello_with_its_passes() {
    let mut s = Session::start();
    s.send("setoption name Game value othello");
    // (The engine names cells as chess does, rank 1 at the bottom: Othello's f5 is f4.)
    s.send("position startpos moves f4 d3");
    s.send("go movetime 100");
    let mv = move_of(&s.until("bestmove"));
    let mut pos = "othello".parse::<engine::Game>().unwrap().startpos();
    for m in ["f4", "d3"] {
        pos.play(pos.parse_move(m).unwrap());
    }
    assert!(pos.parse_move(&mv).is_ok(), "{mv} is not legal after f4 d3");
    // Black (x) has no move: the pass is its move.
    s.send("position fen othello 8/8/8/8/8/8/8/ox6 x play - - 0");
    s.send("go movetime 100");
    assert_eq!(move_of(&s.until("bestmove")), "0000");
    s.send("position fen othello 8/8/8/8/8/8/8/ox6 x play - - 0 moves 0000");
    s.send("go nodes 50");
    // White's one move: the cell beyond Black's disc.
    let mut after = "othello"
        .parse::<engine::Game>()
        .unwrap()
        .parse_position("othello 8/8/8/8/8/8/8/ox6 x play - - 0")
        .unwrap();
    after.play(after.parse_move("0000").unwrap());
    let only = after.legal_moves();
    assert_eq!(only.len(), 1);
    assert_eq!(move_of(&s.until("bestmove")), after.move_to_string(only[0]));
    // A position of another game is refused by the game's own parser.
    s.send("position fen x5o/7/7/7/7/7/o5x x 0 1");
    s.send("isready");
    let lines = s.until("readyok");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("info string error: bad FEN")),
        "{lines:?}"
    );
    s.quit();
}

/// The move of a `=== F5/EVAL/SECONDS` answer, legal in `pos` once its row is turned
/// over (Othello counts rows from the top, the engine ranks from the bottom).
fn nboard_move(reply: &str, pos: &engine::State) -> String {
    let fields: Vec<&str> = reply.strip_prefix("=== ").unwrap().split('/').collect();
    assert_eq!(fields.len(), 3, "{reply}");
    assert!(
        fields[1].parse::<f64>().is_ok() && fields[2].parse::<f64>().is_ok(),
        "{reply}"
    );
    let (file, row) = fields[0].split_at(1);
    let cell = format!("{}{}", file.to_lowercase(), 9 - row.parse::<u32>().unwrap());
    assert!(pos.parse_move(&cell).is_ok(), "{reply} is not legal");
    fields[0].to_string()
}

/// The NBoard session of a GUI: its replies, and every malformed line answered on a
/// `status` line without changing the position.
#[test]
fn nboard_plays_othello_in_othellos_coordinates() {
    let ggf = "(;GM[Othello]PC[NBoard]PB[a]PW[b]RE[?]TI[15:00]TY[8]BO[8 ---------------------------O*------*O--------------------------- *]B[F5]W[F6]B[D3]W[C5]B[E6]W[F7]B[E7]W[F4];)";
    let mut pos = "othello".parse::<engine::Game>().unwrap().startpos();
    for m in ["f5", "f6", "d3", "c5", "e6", "f7", "e7", "f4"] {
        let (file, row) = m.split_at(1);
        let engine_cell = format!("{file}{}", 9 - row.parse::<u32>().unwrap());
        pos.play(pos.parse_move(&engine_cell).unwrap());
    }
    let mut s = Session::spawn(&["nboard", "--player", "ab"]);
    s.send_raw(format!("nboard 2\nset depth 3\nset game {ggf}\nping 1\ngo\n").as_bytes());
    let lines = s.within("=== ", Duration::from_secs(30));
    assert_eq!(
        lines[..2],
        ["set myname flipzero ab", "pong 1"],
        "{lines:?}"
    );
    let first = nboard_move(lines.last().unwrap(), &pos);
    s.send_raw(b"hint 2\n");
    let lines = s.within("search ", Duration::from_secs(30));
    assert!(lines.last().unwrap().ends_with(" 0 3"), "{lines:?}");
    s.send_raw(b"move A1\n\xff\xfe\nset game (;GM[Othello]BO[8 x *];)\nset depth 0\nunknown command\nping 2\n");
    let lines = s.within("pong 2", Duration::from_secs(30));
    for wanted in [
        "status error: `A1` is not legal here; position unchanged",
        "status error: an input line is not valid UTF-8; ignored",
        "status error: board `8 x *` (8, 64 cells of - * O, the side to move); position unchanged",
        "status error: depth `0` (1 to 60); still 3",
    ] {
        assert!(
            lines.iter().any(|l| l == wanted),
            "missing `{wanted}` in {lines:?}"
        );
    }
    // Nothing malformed changed the position: the same search (a new player: depth
    // set again, empty tables), the same move.
    s.send_raw(b"set depth 3\ngo\n");
    let again = s.within("=== ", Duration::from_secs(30));
    assert_eq!(nboard_move(again.last().unwrap(), &pos), first);
    // `ping` stops a search that would take hours: its answer first, then the pong.
    s.send_raw(b"set depth 60\ngo\n");
    std::thread::sleep(Duration::from_millis(300));
    s.send_raw(b"ping 3\n");
    let lines = s.within("pong 3", Duration::from_secs(5));
    let answer = lines
        .iter()
        .find(|l| l.starts_with("=== "))
        .expect("the search's answer");
    nboard_move(answer, &pos);
    // And `quit` ends one at once.
    s.send_raw(b"go\n");
    std::thread::sleep(Duration::from_millis(300));
    s.send_raw(b"quit\n");
    // (Within 5 s: `exit_within` fails otherwise.)
    s.exit_within(Duration::from_secs(5));
}

/// `nboard:<path>` plays an external NBoard engine in a match: here this project's own
/// (`flipzero nboard`), Othello's coordinates both ways; games are forfeited by one that
/// hangs, and what cannot work is refused before any game.
#[test]
fn matches_against_nboard_engines() {
    let dir = rundir::Scratch::temp("nboard-match", "");
    std::fs::create_dir_all(&dir).unwrap();
    let pgn = dir.join("games.pgn");
    let pgn = pgn.to_str().unwrap();
    let own = script(
        "own-nboard",
        &format!("exec {} nboard --player ab", env!("CARGO_BIN_EXE_flipzero")),
    );
    let spec = format!("nboard:{}:depth=2", own.display());
    let (ok, out) = run_match(&[
        "--game", "othello", "--a", &spec, "--b", "random", "--games", "6", "--seed", "3", "--pgn",
        pgn, "--quiet",
    ]);
    assert!(ok, "{out}");
    assert!(!out.contains("forfeit"), "{out}");
    let last = out.lines().last().unwrap();
    assert!(last.ends_with("games 6"), "{last}");
    // A 2-ply search against random moves: it wins nearly every game.
    let score: f64 = last.split_whitespace().nth(1).unwrap().parse().unwrap();
    assert!(score >= 0.8, "{out}");
    let games = std::fs::read_to_string(pgn).unwrap();
    assert_eq!(games.matches("[Event ").count(), 6);
    assert!(
        games.contains(&format!("nboard:{}:depth=2", own.display())),
        "{games}"
    );

    // Answers `ping` but never `go`: forfeits on the move timeout; the match goes on.
    let hang = script(
        "hang-nboard",
        "while read c n rest; do case \"$c\" in ping) echo \"pong $n\";; quit) exit 0;; esac; done",
    );
    let spec = format!("nboard:{}", hang.display());
    let timeout = ["--move-timeout-ms", "300", "--pgn", pgn];
    let players = ["--game", "othello", "--a", "greedy", "--b", &spec];
    forfeited_match(&[&players[..], &timeout[..]].concat(), "1.000");

    // An illegal answer forfeits too.
    let corner = script(
        "corner-nboard",
        "while read c n rest; do case \"$c\" in ping) echo \"pong $n\";; go) echo '=== A1';; quit) exit 0;; esac; done",
    );
    let spec = format!("nboard:{}", corner.display());
    let players = [
        "--game", "othello", "--a", &spec, "--b", "greedy", "--pgn", pgn,
    ];
    forfeited_match(&players, "0.000");
    let games = std::fs::read_to_string(pgn).unwrap();
    assert!(
        games.contains("illegal answer `=== A1`: `A1` is not legal here (in Othello's coordinates"),
        "{games}"
    );

    // An answer without end (2 MB before its newline): read no further than the cap.
    let endless = script(
        "endless-nboard",
        "while read c n rest; do case \"$c\" in ping) echo \"pong $n\";; go) head -c 2000000 /dev/zero | tr '\\0' x; echo;; quit) exit 0;; esac; done",
    );
    let spec = format!("nboard:{}", endless.display());
    let players = [
        "--game", "othello", "--a", "greedy", "--b", &spec, "--pgn", pgn,
    ];
    forfeited_match(&players, "1.000");
    let games = std::fs::read_to_string(pgn).unwrap();
    assert!(
        games.contains("the engine wrote a line of 2000001 bytes"),
        "{games}"
    );

    // Refused before any game: another game, a bad depth, an unknown option.
    let own_spec = |o: &str| format!("nboard:{}{o}", own.display());
    for (game, spec, why) in [
        ("ataxx", own_spec(""), "NBoard plays Othello, not ataxx"),
        (
            "othello",
            own_spec(":depth=0"),
            "its depth `0` is not 1..=60",
        ),
        ("othello", own_spec(":hash=16"), "unknown option `hash`"),
    ] {
        let (ok, out) = run_match(&[
            "--game", game, "--a", &spec, "--b", "random", "--games", "2", "--quiet",
        ]);
        assert!(!ok && out.contains(why), "{spec}: {out}");
    }
}
