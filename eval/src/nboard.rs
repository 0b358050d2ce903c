//! An NBoard engine: the protocol of the NBoard Othello GUI (which Ntest, Edax and
//! Egaroucid also speak), the loop behind `flipzero nboard`. It plays Othello with any
//! player of the ladder, an MCTS player with a network, or the alpha-beta search at the
//! GUI's depth.
//!
//! The GUI names cells as Othello does, rows counted from the top (the first moves are
//! d3, c4, f5, e6); the engine counts ranks from the bottom as chess does: moves and GGF
//! boards are turned over at the edge (module `ggf`). A pass is `PA`.
//!
//! A search runs on a thread of its own while the loop reads on: `ping` stops it (the
//! protocol asks that a `pong` never precede the answer of a search it interrupts, so the
//! search answers first, with its best move so far), as do `quit` and the end of the
//! input; other commands wait for the answer and are then handled in order. A malformed
//! game, an illegal move or an unknown setting is reported on a `status` line and changes
//! nothing; a command the protocol does not know is ignored, as it asks.
//!
//! ```
//! let out = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
//! struct Sink(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);
//! impl std::io::Write for Sink {
//!     fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
//!         self.0.lock().unwrap().write(b)
//!     }
//!     fn flush(&mut self) -> std::io::Result<()> {
//!         Ok(())
//!     }
//! }
//! let input = &b"nboard 2\nset depth 2\nset game (;GM[Othello]BO[8 ---------------------------O*------*O--------------------------- *];)\nping 1\ngo\n"[..];
//! eval::nboard::serve(&eval::nboard::Settings::new("ab"), std::io::BufReader::new(input), Sink(out.clone())).unwrap();
//! let text = String::from_utf8(out.lock().unwrap().clone()).unwrap();
//! assert!(text.contains("pong 1\n"));
//! // (The end of the input stops the search at once: its move is a legal one, unsearched.)
//! let reply = text.lines().find(|l| l.starts_with("=== ")).unwrap();
//! assert!(["=== D3/", "=== C4/", "=== F5/", "=== E6/"].iter().any(|m| reply.starts_with(m)), "{reply}");
//! ```

use std::collections::VecDeque;
use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use engine::search::Limits;
use engine::uai::excerpt;
use engine::{Game, Move, State};

use crate::ggf::{move_name, parse_ggf, parse_move};
use crate::input::{Input, MAX_LINE, spawn_reader};
use crate::players::{Evaluation, Player, PlayerError, Timeouts};
use crate::{AlphaBetaPlayer, PlayerSpec};

/// How the engine starts.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The player: `ab` (the alpha-beta search at the GUI's `set depth`), any ladder
    /// name (`ab6`, `ab:time=500`, `mcts:DIR:sims=800`, …).
    pub player: String,
}

impl Settings {
    /// A session with `player`.
    pub fn new(player: &str) -> Settings {
        Settings {
            player: player.into(),
        }
    }
}

/// Why the engine could not start, or stopped.
#[derive(Debug, thiserror::Error)]
pub enum NboardError {
    /// A player that cannot play Othello.
    #[error("{0}")]
    Player(String),
    /// Writing a reply failed.
    #[error("cannot write a reply: {0}")]
    Output(std::io::Error),
}

/// The depth the alpha-beta player searches until the GUI sets one.
const DEFAULT_DEPTH: u32 = 6;
/// The deepest `set depth` taken (the board has 60 empty cells).
const MAX_DEPTH: u32 = 60;

struct Engine<W: Write> {
    game: Game,
    position: State,
    spec: PlayerSpec,
    depth: u32,
    /// The player, built at the first search after a change of depth.
    player: Option<Box<dyn Player>>,
    /// Input read during a search, handled after it.
    pending: VecDeque<Input>,
    out: W,
}

/// Runs the NBoard loop on `input` until `quit` or the end of the input, writing replies
/// to `output` (flushed line by line).
pub fn serve(
    settings: &Settings,
    input: impl BufRead + Send + 'static,
    output: impl Write,
) -> Result<(), NboardError> {
    let game: Game = "othello".parse().expect("a game of the engine");
    let spec: PlayerSpec = settings
        .player
        .parse()
        .map_err(|e: crate::BadPlayerName| NboardError::Player(e.to_string()))?;
    spec.check(game, Timeouts::default())
        .map_err(|e| NboardError::Player(format!("{}: {e}", settings.player)))?;
    let mut e = Engine {
        game,
        position: game.startpos(),
        spec,
        depth: DEFAULT_DEPTH,
        player: None,
        pending: VecDeque::new(),
        out: output,
    };
    let events = spawn_reader(input);
    loop {
        let event = match e.pending.pop_front() {
            Some(event) => event,
            None => match events.recv() {
                Ok(event) => event,
                Err(_) => break,
            },
        };
        let line = match event {
            Input::Line(line) => line,
            Input::NotUtf8(_) => {
                e.status("error: an input line is not valid UTF-8; ignored")?;
                continue;
            }
            Input::TooLong(bytes) => {
                e.status(&format!(
                    "error: an input line of {bytes} bytes ignored (at most {MAX_LINE})"
                ))?;
                continue;
            }
            Input::Failed(_) | Input::Eof => break,
        };
        if !e.command(line.trim(), &events)? {
            break;
        }
    }
    Ok(())
}

/// Whether an input event stops a running search: `ping`, `quit`, the end of the input.
fn stops_search(event: &Input) -> bool {
    match event {
        Input::Line(l) => {
            let word = l.split_whitespace().next().unwrap_or("");
            word == "ping" || word == "quit"
        }
        Input::Eof | Input::Failed(_) => true,
        Input::NotUtf8(_) | Input::TooLong(_) => false,
    }
}

impl<W: Write> Engine<W> {
    fn say(&mut self, line: &str) -> Result<(), NboardError> {
        writeln!(self.out, "{line}")
            .and_then(|()| self.out.flush())
            .map_err(NboardError::Output)
    }

    /// The GUI's status line; an empty text clears it.
    fn status(&mut self, text: &str) -> Result<(), NboardError> {
        if text.is_empty() {
            self.say("status")
        } else {
            self.say(&format!("status {text}"))
        }
    }

    /// Handles one line; false on `quit`.
    fn command(&mut self, line: &str, events: &Receiver<Input>) -> Result<bool, NboardError> {
        let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
        let rest = rest.trim();
        match word {
            "nboard" => self.say(&format!("set myname flipzero {}", self.spec))?,
            "ping" => self.say(&format!("pong {rest}"))?,
            "learn" => self.say("learned")?,
            "quit" => return Ok(false),
            "set" => {
                let (what, value) = rest.split_once(' ').unwrap_or((rest, ""));
                match what {
                    "depth" => match value.trim().parse::<u32>() {
                        Ok(d) if (1..=MAX_DEPTH).contains(&d) => {
                            self.depth = d;
                            self.player = None;
                        }
                        _ => self.status(&format!(
                            "error: depth `{}` (1 to {MAX_DEPTH}); still {}",
                            excerpt(value),
                            self.depth
                        ))?,
                    },
                    // The player is kept: its tables, its tree, its loaded network.
                    "game" => match parse_ggf(value, self.game) {
                        Ok(p) => self.position = p,
                        Err(msg) => self.status(&format!("error: {msg}; position unchanged"))?,
                    },
                    // contempt and the settings of other engines: not ours.
                    _ => {}
                }
            }
            "move" => self.play(rest)?,
            "hint" => self.think(true, events)?,
            "go" => self.think(false, events)?,
            // NBoard 1.1 sends a bare move; another two-letter word is a command this
            // engine does not know, ignored.
            w if rest.is_empty() && parse_move(&self.position, w).is_ok() => self.play(w)?,
            _ => {}
        }
        Ok(true)
    }

    fn play(&mut self, text: &str) -> Result<(), NboardError> {
        let mv = text.split('/').next().unwrap_or("");
        match parse_move(&self.position, mv) {
            Ok(m) => self.position.play(m),
            Err(msg) => self.status(&format!("error: {msg}; position unchanged"))?,
        }
        Ok(())
    }

    /// `go` (`=== MOVE/EVAL/TIME`) or `hint` (a `search` line, then an empty status).
    fn think(&mut self, hint: bool, events: &Receiver<Input>) -> Result<(), NboardError> {
        if self.position.result().is_some() {
            return self.status("error: the game is over");
        }
        self.status("flipzero is thinking")?;
        let start = Instant::now();
        let chosen = self.choose(events);
        let seconds = start.elapsed().as_secs_f64();
        let (mv, eval) = match chosen {
            Ok(found) => found,
            Err(e) => {
                return self.status(&format!("error: {} cannot move: {e}", self.spec));
            }
        };
        let name = move_name(&self.position, mv);
        // NBoard's eval is in discs for the side to move: the alpha-beta margin (±64 for
        // a proven result), or an MCTS value (win − loss) times 64.
        let discs = eval.map(|e| match e {
            Evaluation::Pieces(p) => p,
            Evaluation::Value(v) => v * 64.0,
        });
        if hint {
            // The depth is the GUI's for `ab`; other players search to their own limits.
            let depth = if self.gui_depth() { self.depth } else { 0 };
            let eval = discs.map_or_else(|| "0".to_string(), |d| format!("{d:.2}"));
            self.say(&format!("search {name} {eval} 0 {depth}"))?;
            self.status("")
        } else {
            let eval = discs.map_or_else(String::new, |d| format!("{d:.2}"));
            self.say(&format!("=== {name}/{eval}/{seconds:.2}"))?;
            self.status("")
        }
    }

    /// Whether the player is `ab` alone, which searches to the GUI's `set depth`.
    fn gui_depth(&self) -> bool {
        matches!(&self.spec, PlayerSpec::AlphaBeta { limits, .. } if *limits == Limits::default())
    }

    /// The player's move and evaluation, searched on a thread of its own while `events`
    /// are read into `pending`; one that stops a search ([`stops_search`]) stops it.
    fn choose(
        &mut self,
        events: &Receiver<Input>,
    ) -> Result<(Move, Option<Evaluation>), PlayerError> {
        if self.player.is_none() {
            let player: Box<dyn Player> = if let PlayerSpec::AlphaBeta { search, .. } = &self.spec
                && self.gui_depth()
            {
                let limits = Limits {
                    depth: Some(self.depth),
                    ..Limits::default()
                };
                Box::new(AlphaBetaPlayer::new(limits, search))
            } else {
                self.spec
                    .build(self.game, self.position.hash(), Timeouts::default())?
            };
            self.player = Some(player);
        }
        let p = self.player.as_mut().expect("built above");
        let (position, pending) = (&self.position, &mut self.pending);
        // A `ping` or `quit` already waiting (sent with the `go`, in one burst) stops
        // this search as one arriving during it would.
        let stop = AtomicBool::new(pending.iter().any(stops_search));
        std::thread::scope(|scope| {
            let search = scope.spawn(|| -> Result<(Move, Option<Evaluation>), PlayerError> {
                let mv = p.choose_until(position, &stop)?;
                Ok((mv, p.last_evaluation()))
            });
            while !search.is_finished() {
                match events.recv_timeout(Duration::from_millis(10)) {
                    Ok(event) => {
                        if stops_search(&event) {
                            stop.store(true, Ordering::Relaxed);
                        }
                        pending.push_back(event);
                    }
                    Err(RecvTimeoutError::Timeout) => {}
                    // The input has ended (its end already read): wait for the search.
                    Err(RecvTimeoutError::Disconnected) => {
                        stop.store(true, Ordering::Relaxed);
                        std::thread::sleep(Duration::from_millis(10));
                    }
                }
            }
            match search.join() {
                Ok(found) => found,
                Err(panic) => std::panic::resume_unwind(panic),
            }
        })
    }
}
