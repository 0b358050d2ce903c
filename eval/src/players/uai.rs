//! External engines as players, spoken to over UAI.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::Duration;

use engine::{Game, Move, State};
use selfplay::ClockState;

use super::{Player, PlayerError, Timeouts};

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
    /// Starts the engine and completes the `uai` / `isready` handshake for `game`: an
    /// engine with a `Game` option is set to it (one whose option does not list it is
    /// refused), an engine without one must be playing standard `ataxx`, and an engine
    /// that answers an option with `info string error` is refused.
    pub fn start(
        path: PathBuf,
        options: Vec<(String, String)>,
        game: Game,
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
        let mut set: Vec<(String, String)> = vec![];
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
        let hello = p.wait_for("uaiok", timeouts.startup)?;
        let refuse = |why: String| PlayerError::Refused {
            engine: path.display().to_string(),
            why,
        };
        let game_name = game.to_string();
        // The match's game is the engine's: a Game option among the player's options
        // must name it too, and is then the one sent.
        if let Some((_, v)) = set.iter().find(|(k, _)| k.eq_ignore_ascii_case("game"))
            && v.parse::<Game>().ok() != Some(game)
        {
            return Err(refuse(format!(
                "its options set Game={v}, but the match plays {game_name}"
            )));
        }
        set.retain(|(k, _)| !k.eq_ignore_ascii_case("game"));
        match game_option(&hello) {
            Some(games) => {
                if !games.contains(&game_name) {
                    return Err(refuse(format!(
                        "its Game option offers {}, not {game_name}",
                        games.join(", ")
                    )));
                }
                set.insert(0, ("Game".into(), game_name));
            }
            None if game_name != "ataxx" => {
                return Err(refuse(format!(
                    "it has no Game option, so it plays standard ataxx, not {game_name}"
                )));
            }
            None => {}
        }
        for (k, v) in set {
            p.send(&format!("setoption name {k} value {v}"))?;
        }
        p.send("isready")?;
        let answer = p.wait_for("readyok", timeouts.startup)?;
        if let Some(e) = answer.iter().find(|l| l.contains("info string error")) {
            return Err(refuse(format!(
                "it answered its options with `{}`",
                e.trim()
            )));
        }
        Ok(p)
    }

    fn send(&mut self, line: &str) -> Result<(), PlayerError> {
        writeln!(self.stdin, "{line}")?;
        self.stdin.flush()?;
        Ok(())
    }

    /// Waits for a line starting with `prefix`; returns every line read, that one last.
    fn wait_for(
        &mut self,
        prefix: &'static str,
        within: Duration,
    ) -> Result<Vec<String>, PlayerError> {
        let deadline = std::time::Instant::now() + within;
        let mut read = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    let done = line.trim_start().starts_with(prefix);
                    read.push(line);
                    if done {
                        return Ok(read);
                    }
                }
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
        let go = self.go.clone();
        let within = self.move_budget + self.timeouts.per_move;
        self.go_and_read(state, &go, within)
    }

    /// On a clock: `go` with the mover's clock (`btime`/`binc` for x, the first player,
    /// as libataxx and cuteataxx have it; the opponent's clock is sent as the same), and
    /// `movestogo 1` for a fixed time per move; the engine's own `go` limits are dropped.
    fn choose_timed(&mut self, state: &State, clock: &ClockState) -> Result<Move, PlayerError> {
        let (t, inc) = (clock.remaining.as_millis(), clock.increment.as_millis());
        let mut go = format!("go wtime {t} btime {t} winc {inc} binc {inc}");
        if let Some(m) = clock.moves_to_go {
            go += &format!(" movestogo {m}");
        }
        let within = clock.remaining + self.timeouts.per_move;
        self.go_and_read(state, &go, within)
    }
}

impl UaiPlayer {
    /// Sends the position and `go`, and reads the `bestmove` within `within`.
    fn go_and_read(
        &mut self,
        state: &State,
        go: &str,
        within: Duration,
    ) -> Result<Move, PlayerError> {
        self.send(&format!("position fen {}", state.text()))?;
        self.send(go)?;
        let lines = self.wait_for("bestmove", within)?;
        let line = lines.last().map_or("", String::as_str);
        let text = line.split_whitespace().nth(1).unwrap_or("").to_string();
        state
            .parse_move(&text)
            .map_err(|_| PlayerError::IllegalMove(text))
    }
}

/// The games an engine's `option name Game type combo default … var …` line offers (its
/// default and every `var`), if it has such an option.
fn game_option(hello: &[String]) -> Option<Vec<String>> {
    hello.iter().find_map(|line| {
        let words: Vec<&str> = line.split_whitespace().collect();
        let is_game = words.len() >= 4
            && words[0] == "option"
            && words[1] == "name"
            && words[2].eq_ignore_ascii_case("game")
            && words[3] == "type";
        is_game.then(|| {
            words
                .windows(2)
                .filter(|w| w[0] == "var" || w[0] == "default")
                .map(|w| w[1].to_string())
                .collect()
        })
    })
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
