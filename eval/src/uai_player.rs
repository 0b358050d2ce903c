//! External engines as players, spoken to over UAI.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::Duration;

use engine::{Move, State};

use crate::player::{Player, PlayerError, Timeouts};

/// An external engine spoken to over UAI; killed when dropped.
pub struct UaiPlayer {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    go: String,
    move_budget: Duration,
    timeouts: Timeouts,
}

impl UaiPlayer {
    /// Starts the engine and completes the `uai` / `isready` handshake.
    pub fn start(
        path: PathBuf,
        options: Vec<(String, String)>,
        timeouts: Timeouts,
    ) -> Result<UaiPlayer, PlayerError> {
        let mut child = Command::new(&path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|source| PlayerError::Spawn {
                path: path.display().to_string(),
                source,
            })?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut go = vec![];
        let mut set = vec![];
        let mut move_budget = Duration::from_millis(100);
        for (k, v) in options {
            match k.as_str() {
                "movetime" | "depth" | "nodes" => {
                    if k == "movetime" {
                        move_budget = Duration::from_millis(v.parse().unwrap_or(100));
                    }
                    go.push(format!("{k} {v}"));
                }
                _ => set.push((k, v)),
            }
        }
        if go.is_empty() {
            go.push("movetime 100".into());
        }
        let mut p = UaiPlayer {
            child,
            stdin,
            lines,
            go: format!("go {}", go.join(" ")),
            move_budget,
            timeouts,
        };
        p.send("uai")?;
        p.wait_for("uaiok", timeouts.startup)?;
        for (k, v) in set {
            p.send(&format!("setoption name {k} value {v}"))?;
        }
        p.send("isready")?;
        p.wait_for("readyok", timeouts.startup)?;
        Ok(p)
    }

    fn send(&mut self, line: &str) -> Result<(), PlayerError> {
        writeln!(self.stdin, "{line}")?;
        self.stdin.flush()?;
        Ok(())
    }

    /// Waits for a line starting with `prefix`; returns it.
    fn wait_for(&mut self, prefix: &'static str, within: Duration) -> Result<String, PlayerError> {
        let deadline = std::time::Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if line.trim_start().starts_with(prefix) => return Ok(line),
                Ok(_) => continue,
                Err(RecvTimeoutError::Timeout) => return Err(PlayerError::Timeout(within, prefix)),
                Err(RecvTimeoutError::Disconnected) => return Err(PlayerError::Exited),
            }
        }
    }
}

impl Player for UaiPlayer {
    fn new_game(&mut self) -> Result<(), PlayerError> {
        self.send("uainewgame")?;
        self.send("isready")?;
        self.wait_for("readyok", self.timeouts.startup).map(|_| ())
    }

    fn choose(&mut self, state: &State) -> Result<Move, PlayerError> {
        self.send(&format!("position fen {}", state.text()))?;
        let go = self.go.clone();
        self.send(&go)?;
        let line = self.wait_for("bestmove", self.move_budget + self.timeouts.per_move)?;
        let text = line.split_whitespace().nth(1).unwrap_or("").to_string();
        state
            .parse_move(&text)
            .map_err(|_| PlayerError::IllegalMove(text))
    }
}

impl Drop for UaiPlayer {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "quit");
        let _ = self.stdin.flush();
        // Give it a moment to exit by itself, then make sure it is gone.
        for _ in 0..20 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
