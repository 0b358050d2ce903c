//! `flipzero uai` over pipes, and `flipzero match` against external UAI engines,
//! including engines that hang or crash.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

struct Session {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Session {
    fn start() -> Session {
        let mut child = Command::new(env!("CARGO_BIN_EXE_flipzero"))
            .arg("uai")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let out = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for l in BufReader::new(out).lines() {
                if tx.send(l.unwrap()).is_err() {
                    break;
                }
            }
        });
        Session {
            child,
            stdin,
            lines,
        }
    }

    fn send(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").unwrap();
    }

    /// Lines up to and including the first that starts with `prefix`.
    fn until(&mut self, prefix: &str) -> Vec<String> {
        let mut seen = vec![];
        loop {
            let l = self
                .lines
                .recv_timeout(Duration::from_secs(20))
                .unwrap_or_else(|_| panic!("no `{prefix}` after {seen:?}"));
            let done = l.starts_with(prefix);
            seen.push(l);
            if done {
                return seen;
            }
        }
    }

    fn bestmove(&mut self) -> String {
        let lines = self.until("bestmove");
        lines
            .last()
            .unwrap()
            .split_whitespace()
            .nth(1)
            .unwrap()
            .to_string()
    }
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

/// Writes an executable shell script into a fresh temporary folder.
fn script(name: &str, body: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("flipzero-test-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn run_match(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_flipzero"))
        .arg("match")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn matches_against_external_engines_forfeit_broken_ones() {
    let dir = std::env::temp_dir().join(format!("flipzero-match-{}", std::process::id()));
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
    let (ok, out) = run_match(&[
        "--a",
        "greedy",
        "--b",
        &spec,
        "--games",
        "2",
        "--move-timeout-ms",
        "300",
        "--pgn",
        pgn,
        "--quiet",
    ]);
    assert!(ok, "{out}");
    assert!(out.contains("forfeits: 2"), "{out}");
    assert!(
        out.lines().last().unwrap().starts_with("score 1.000"),
        "{out}"
    );

    // Dies at the first `go`; and a program that does not exist.
    let crash = script(
        "crash",
        "while read l; do case \"$l\" in uai) echo uaiok;; isready) echo readyok;; go*) exit 3;; esac; done",
    );
    for spec in [
        format!("uai:{}", crash.display()),
        "uai:/nonexistent/engine".to_string(),
    ] {
        let (ok, out) = run_match(&[
            "--a", &spec, "--b", "greedy", "--games", "2", "--pgn", pgn, "--quiet",
        ]);
        assert!(ok, "{out}");
        assert!(
            out.lines().last().unwrap().starts_with("score 0.000"),
            "{spec}: {out}"
        );
    }
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
}
