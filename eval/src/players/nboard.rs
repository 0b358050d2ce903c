//! External Othello engines as players, spoken to over NBoard (the protocol of the NBoard
//! GUI, which Edax, Ntest and Egaroucid's drivers speak): `nboard:<path>[:depth=N]`.
//! Each move sends the whole position as a GGF board (`set game`), so the engine needs
//! no history, then `go`, and reads the `=== MOVE` answer. Othello only (the protocol's
//! board is the 8×8 one).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use engine::uai::excerpt;
use engine::{Game, Move, State};

use super::process::EngineProcess;
use super::{Player, PlayerError, Timeouts};
use crate::ggf::{board_value, parse_move};

/// The depth sent when the player's name gives none (the NBoard GUI's default is 6
/// too).
const DEFAULT_DEPTH: u32 = 6;

/// An external NBoard engine; killed when dropped.
pub struct NboardPlayer {
    process: EngineProcess,
    timeouts: Timeouts,
    /// `ping` numbers, so that a late `pong` is told from the current one.
    ping: u32,
}

impl NboardPlayer {
    /// Starts the engine for `game` (Othello only), sends `nboard 2` and `set depth`
    /// (`depth=N` among the options, 1..=60; no other option is known), and waits for
    /// the `pong` of a `ping` within the startup timeout.
    pub fn start(
        path: PathBuf,
        options: Vec<(String, String)>,
        game: Game,
        timeouts: Timeouts,
    ) -> Result<NboardPlayer, PlayerError> {
        let refuse = |why: String| PlayerError::Refused {
            engine: path.display().to_string(),
            why,
        };
        if game.to_string() != "othello" {
            return Err(refuse(format!(
                "NBoard plays Othello, not {game} (`uai:<path>` names a UAI engine)"
            )));
        }
        let mut depth = DEFAULT_DEPTH;
        for (k, v) in options {
            match k.as_str() {
                "depth" => {
                    depth = v
                        .parse()
                        .ok()
                        .filter(|d| (1..=60).contains(d))
                        .ok_or_else(|| {
                            refuse(format!("its depth `{}` is not 1..=60", excerpt(&v)))
                        })?;
                }
                _ => {
                    return Err(refuse(format!(
                        "unknown option `{}` (an NBoard engine takes depth=N)",
                        excerpt(&k)
                    )));
                }
            }
        }
        let mut p = NboardPlayer {
            process: EngineProcess::spawn(&path)?,
            timeouts,
            ping: 0,
        };
        p.send("nboard 2")?;
        p.send(&format!("set depth {depth}"))?;
        p.sync(timeouts.startup)?;
        Ok(p)
    }

    fn send(&mut self, line: &str) -> Result<(), PlayerError> {
        self.process.send(line)
    }

    /// `ping N`, and every line up to its `pong N`: an engine that has taken every
    /// command before it. Returns the last `status` line among them (an engine reports a
    /// game or a move it refused there).
    fn sync(&mut self, within: Duration) -> Result<Option<String>, PlayerError> {
        self.ping += 1;
        let want = format!("pong {}", self.ping);
        self.send(&format!("ping {}", self.ping))?;
        let deadline = Instant::now() + within;
        let mut status = None;
        loop {
            let line = self.process.next_line(deadline, within, "pong")?;
            if line.trim() == want {
                return Ok(status);
            }
            if line.starts_with("status") {
                status = Some(line);
            }
        }
    }
}

impl Player for NboardPlayer {
    fn choose(&mut self, state: &State) -> Result<Move, PlayerError> {
        self.send(&format!(
            "set game (;GM[Othello]PC[flipzero]TY[8]BO[{}];)",
            board_value(state)
        ))?;
        // The game is taken (or refused, on a `status` line) before the search starts.
        let status = self.sync(self.timeouts.startup)?;
        self.send("go")?;
        // An NBoard engine searches to a depth, not to a clock: a move may take the
        // whole per-move timeout (`flipzero match --move-timeout-ms` for deep levels).
        let within = self.timeouts.per_move;
        let deadline = Instant::now() + within;
        loop {
            let line = self.process.next_line(deadline, within, "=== MOVE")?;
            if let Some(answer) = line.trim().strip_prefix("===") {
                let text = answer.trim().split('/').next().unwrap_or("").trim();
                return parse_move(state, text).map_err(|why| PlayerError::IllegalAnswer {
                    answer: excerpt(line.trim()).to_string(),
                    why: match &status {
                        Some(s) => format!(
                            "{why} (in Othello's coordinates, rows from the top; after the \
                             position was sent the engine said `{}`)",
                            excerpt(s)
                        ),
                        None => format!("{why} (in Othello's coordinates, rows from the top)"),
                    },
                });
            }
        }
    }
}
