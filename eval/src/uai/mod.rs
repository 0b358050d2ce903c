//! A UAI engine for Ataxx GUIs and tournament managers (cuteataxx): the loop behind
//! `flipzero uai`, which plays any player of the ladder, an MCTS player with a network,
//! or the alpha-beta search on the GUI's clock; [`serve`] runs the loop on any input and
//! output.
//!
//! The input is read on its own thread (`input`) and searches run on another (`go`), so
//! the command loop is never blocked: `isready` is answered during a search, `stop` and
//! `quit` end it at once, and a command that changes the engine's state (`go`,
//! `position`, `setoption`, `uainewgame`, `perft`) stops a running search first, whose
//! `bestmove` comes before anything else, as Stockfish does.
//!
//! ```
//! use std::io::{BufReader, Write};
//! use std::sync::{Arc, Mutex};
//!
//! /// What the engine wrote, kept for reading afterwards.
//! #[derive(Clone, Default)]
//! struct Lines(Arc<Mutex<Vec<u8>>>);
//! impl Write for Lines {
//!     fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
//!         self.0.lock().unwrap().write(b)
//!     }
//!     fn flush(&mut self) -> std::io::Result<()> {
//!         Ok(())
//!     }
//! }
//!
//! let settings = eval::uai::Settings::new("ataxx".parse().unwrap());
//! let input = BufReader::new(&b"isready\nposition startpos moves g2\nperft 2\nquit\n"[..]);
//! let out = Lines::default();
//! eval::uai::serve(&settings, input, out.clone()).unwrap();
//! let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
//! assert_eq!(text, "readyok\nnodes 368\n");
//! ```

mod go;
mod input;
mod options;
mod output;

use std::io::{BufRead, Write};
use std::path::PathBuf;

use engine::search::Searcher;
use engine::{Game, State};
use selfplay::TimeManager;

use go::{GoParams, KeptMcts, Running, Setup};
use input::Input;
use options::{Choice, check_net, model_player, parse_player, split_setoption};
use output::Output;

/// How the engine starts; the GUI's options change it later.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The Ataxx rule set (the `Game` option); a model must be of this game.
    pub game: Game,
    /// The player (the `Player` option): `ab` (alpha-beta on the GUI's clock), any
    /// ladder name, or an MCTS player (`mcts:bootstrap`, `mcts:<model or run dir>`).
    pub player: String,
    /// A model (or run) directory whose network plays, by MCTS on the GUI's clock,
    /// instead of the player (the `Model` option).
    pub model: Option<PathBuf>,
    /// MCTS simulations per move; 0 = as many as the clock allows (`Simulations`).
    pub simulations: u32,
}

impl Settings {
    /// `game` with the defaults: the alpha-beta player `ab`, no model, simulations by
    /// the clock.
    pub fn new(game: Game) -> Settings {
        Settings {
            game,
            player: "ab".into(),
            model: None,
            simulations: 0,
        }
    }
}

/// Why the engine could not start, or stopped.
#[derive(Debug, thiserror::Error)]
pub enum UaiError {
    /// A game outside the Ataxx family.
    #[error("{0}: UAI plays the Ataxx family (ataxx, ataxx/assimilation, …)")]
    NotAtaxx(Game),
    /// A player that cannot play (its name, or its network).
    #[error("{0}")]
    Player(String),
    /// A model that cannot play.
    #[error("{0}")]
    Model(String),
    /// Writing a reply failed.
    #[error("cannot write a reply: {0}")]
    Output(std::io::Error),
}

const DEFAULT_HASH_MB: usize = 16;

/// The most search threads of an MCTS player (the alpha-beta search uses one).
const MAX_THREADS: usize = 64;

/// The deepest `perft` the UAI loop accepts (it runs on its own thread and stops on
/// `stop`; deeper counts than this would not end in a lifetime anyway).
const MAX_UAI_PERFT: u32 = 32;

/// The most characters of a malformed input that an error message repeats.
const SHOWN_CHARS: usize = 80;

/// `text` as an error message repeats it: at most [`SHOWN_CHARS`] characters, the rest
/// counted (a 10 MB line is not echoed back).
fn shown(text: &str) -> String {
    let n = text.chars().count();
    if n <= SHOWN_CHARS {
        text.to_string()
    } else {
        let head: String = text.chars().take(SHOWN_CHARS).collect();
        format!("{head}… ({} more characters)", n - SHOWN_CHARS)
    }
}

struct Engine {
    game: Game,
    position: State,
    /// The `Player` option's player; it plays while no model is set.
    player: Choice,
    /// The `Model` option: its directory and its MCTS player, which plays when set.
    model: Option<(PathBuf, Choice)>,
    /// Simulations per move of an MCTS player; 0 = by the clock.
    simulations: u32,
    hash_mb: usize,
    /// Search threads of an MCTS player (the `Threads` option).
    threads: usize,
    /// The time manager (the `MoveOverhead` option).
    time_manager: TimeManager,
    /// The search tables, while no search holds them.
    searcher: Option<Searcher>,
    /// The MCTS player kept between searches (its tree, its evaluators), while no search
    /// holds it.
    mcts: Option<KeptMcts>,
    /// The running (or finished but not yet joined) search.
    search: Option<Running>,
    /// Where replies go.
    out: Output,
}

/// Runs the UAI loop on `input` until `quit` or the end of the input, writing replies to
/// `output`; a running search still answers before it returns. The input is read on a
/// thread of its own, which ends at the end of the input. A failed write to `output`
/// ends the loop with [`UaiError::Output`].
pub fn serve(
    settings: &Settings,
    input: impl BufRead + Send + 'static,
    output: impl Write + Send + 'static,
) -> Result<(), UaiError> {
    let game = settings.game;
    if !matches!(game, Game::Ataxx(_)) {
        return Err(UaiError::NotAtaxx(game));
    }
    let player = parse_player(&settings.player, game).map_err(UaiError::Player)?;
    let model = match &settings.model {
        Some(dir) => Some((
            dir.clone(),
            model_player(dir, game).map_err(UaiError::Model)?,
        )),
        None => None,
    };
    let out = Output::new(output);
    let mut e = Engine {
        game,
        position: game.startpos(),
        player,
        model,
        simulations: settings.simulations,
        hash_mb: DEFAULT_HASH_MB,
        threads: 1,
        time_manager: TimeManager::default(),
        searcher: Some(Searcher::new(DEFAULT_HASH_MB)),
        mcts: None,
        search: None,
        out: out.clone(),
    };
    let lines = input::spawn_reader(input);
    let mut failed = None;
    for event in lines {
        let line = match event {
            Input::Line(line) => line,
            Input::NotUtf8(text) => {
                out.error(format!(
                    "input line is not valid UTF-8, ignored: `{}`",
                    shown(&text)
                ));
                continue;
            }
            Input::TooLong(bytes) => {
                out.error(format!(
                    "input line of {bytes} bytes ignored (at most {} a line)",
                    input::MAX_LINE
                ));
                continue;
            }
            Input::Failed(err) => {
                out.error(format!("cannot read standard input: {err}"));
                break;
            }
            Input::Eof => break,
        };
        let go_on = e.command(line.trim());
        if let Some(err) = out.take_failure() {
            failed = Some(err);
            break;
        }
        if !go_on {
            break;
        }
    }
    // `quit` or end of input: a running search still answers.
    e.stop();
    match failed.or_else(|| out.take_failure()) {
        Some(err) => Err(UaiError::Output(err)),
        None => Ok(()),
    }
}

impl Engine {
    /// Handles one command; false on `quit`.
    fn command(&mut self, line: &str) -> bool {
        let (cmd, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        match cmd {
            "" => {}
            "uai" => self.hello(),
            "isready" => self.out.say("readyok"),
            "stop" => self.stop(),
            "quit" => return false,
            "setoption" => {
                self.stop();
                self.setoption(rest)
            }
            "uainewgame" => {
                self.stop();
                if let Some(s) = self.searcher.as_mut() {
                    s.clear();
                }
                if let Some(m) = self.mcts.as_mut() {
                    m.new_game();
                }
                self.position = self.game.startpos();
            }
            "position" => {
                self.stop();
                self.set_position(rest)
            }
            "go" => {
                self.stop();
                self.go(rest)
            }
            "perft" => {
                self.stop();
                // Deeper counts run on a thread of its own, as a search: `stop` ends
                // it, `isready` is answered meanwhile.
                match rest.trim().parse::<u32>() {
                    // A few plies take microseconds: answered in order, at once.
                    Ok(d) if d <= 3 => self.out.say(&format!("nodes {}", self.position.perft(d))),
                    Ok(d) if d <= MAX_UAI_PERFT => {
                        let kept = (
                            self.searcher
                                .take()
                                .unwrap_or_else(|| Searcher::new(self.hash_mb)),
                            self.mcts.take(),
                        );
                        let out = self.out.clone();
                        self.search = Some(go::start_perft(self.position, d, kept, out));
                    }
                    Ok(d) => self
                        .out
                        .error(format!("`perft {d}`: at most {MAX_UAI_PERFT} plies")),
                    Err(_) => self
                        .out
                        .error(format!("`perft {}`: expected a depth", shown(rest))),
                }
            }
            other => self
                .out
                .error(format!("unknown command `{}`", shown(other))),
        }
        true
    }

    /// Stops the running search, if any (it still answers `bestmove`), and takes its
    /// tables back.
    fn stop(&mut self) {
        if let Some(running) = self.search.take() {
            let (searcher, mcts) = running.stop().unzip();
            self.searcher = searcher;
            self.mcts = mcts.flatten();
        }
    }

    fn setoption(&mut self, rest: &str) {
        let (name, value) = match split_setoption(rest) {
            Ok(nv) => nv,
            Err(msg) => return self.out.error(msg),
        };
        match name.to_ascii_lowercase().as_str() {
            "hash" => match value.parse::<usize>() {
                Ok(mb) if (1..=4096).contains(&mb) => {
                    self.hash_mb = mb;
                    self.searcher = Some(Searcher::new(mb));
                }
                _ => self.out.error(format!(
                    "Hash must be a number of MiB in 1..=4096, got `{}`",
                    shown(value)
                )),
            },
            "threads" => match value.parse::<usize>() {
                Ok(n) if (1..=MAX_THREADS).contains(&n) => self.threads = n,
                _ => self.out.error(format!(
                    "Threads must be a number in 1..={MAX_THREADS}, got `{}`",
                    shown(value)
                )),
            },
            "moveoverhead" | "move overhead" => match value.parse::<u64>() {
                Ok(ms) if ms <= 5000 => {
                    self.time_manager.move_overhead = std::time::Duration::from_millis(ms)
                }
                _ => self.out.error(format!(
                    "MoveOverhead must be a number of milliseconds in 0..=5000, got `{}`",
                    shown(value)
                )),
            },
            "model" if value.is_empty() || value == "<empty>" => self.model = None,
            "model" => {
                let dir = PathBuf::from(value);
                match model_player(&dir, self.game) {
                    Ok(p) => self.model = Some((dir, p)),
                    Err(msg) => self.out.error(msg),
                }
            }
            "simulations" => match value.parse::<u32>() {
                Ok(n) if n <= 1_000_000 => self.simulations = n,
                _ => self.out.error(format!(
                    "Simulations must be a number in 0..=1000000, got `{}`",
                    shown(value)
                )),
            },
            "player" => match parse_player(value, self.game) {
                Ok(p) => self.player = p,
                Err(msg) => self.out.error(msg),
            },
            "game" => match value.parse::<Game>() {
                Ok(g @ Game::Ataxx(_)) => match self.check_nets(g) {
                    Ok(()) => {
                        self.game = g;
                        self.position = g.startpos();
                    }
                    Err(msg) => self
                        .out
                        .error(format!("{msg}; the game stays {}", self.game)),
                },
                Ok(_) => self
                    .out
                    .error(format!("`{}` is not an Ataxx-family game", shown(value))),
                Err(err) => self.out.error(err),
            },
            // Tournament managers send their usual options (debug, ownbook) to every
            // engine; an option this engine lacks is not an error.
            _ => self.out.say(&format!(
                "info string ignoring unknown option `{}`",
                shown(name)
            )),
        }
    }

    /// Checks every network the engine is set to use against `game`.
    fn check_nets(&self, game: Game) -> Result<(), String> {
        let model = self.model.as_ref().map(|(dir, _)| dir.as_path());
        for dir in model.into_iter().chain(self.player.net_path()) {
            check_net(dir, game)?;
        }
        Ok(())
    }

    fn set_position(&mut self, rest: &str) {
        let (base, moves) = match rest.split_once(" moves") {
            Some((b, m)) => (b.trim(), m.split_whitespace().collect::<Vec<_>>()),
            None => (rest.trim(), vec![]),
        };
        let start = if base == "startpos" {
            Ok(self.game.startpos())
        } else if let Some(fen) = base.strip_prefix("fen ") {
            self.game
                .parse_position(fen)
                .map_err(|err| format!("bad FEN `{}`: {err}", shown(fen)))
        } else {
            Err(format!(
                "expected `position startpos|fen <FEN> [moves ...]`, got `{}`",
                shown(rest)
            ))
        };
        let mut pos = match start {
            Ok(p) => p,
            Err(msg) => return self.out.error(msg),
        };
        for m in moves {
            match pos.parse_move(m) {
                Ok(mv) => pos.play(mv),
                Err(err) => {
                    return self
                        .out
                        .error(format!("move `{}`: {err}; position unchanged", shown(m)));
                }
            }
        }
        self.position = pos;
    }

    fn go(&mut self, rest: &str) {
        let (params, warnings) = GoParams::parse(rest);
        for w in warnings {
            self.out.error(w);
        }
        if self.position.legal_moves().is_empty() {
            self.out.error("the game is over");
            return self.out.say("bestmove 0000");
        }
        let player = match &self.model {
            Some((_, p)) => p.clone(),
            None => self.player.clone(),
        };
        let setup = Setup {
            player,
            simulations: self.simulations,
            threads: self.threads,
            time_manager: self.time_manager,
            mcts: self.mcts.take(),
            searcher: self
                .searcher
                .take()
                .unwrap_or_else(|| Searcher::new(self.hash_mb)),
        };
        let out = self.out.clone();
        self.search = Some(go::start(self.position, &params, setup, out));
    }

    /// The answer to `uai`: who this is, its options, `uaiok`.
    fn hello(&self) {
        self.out
            .say(concat!("id name flipzero ", env!("CARGO_PKG_VERSION")));
        self.out.say("id author the flipzero developers");
        self.out
            .say("option name Hash type spin default 16 min 1 max 4096");
        self.out.say(&format!(
            "option name Threads type spin default 1 min 1 max {MAX_THREADS}"
        ));
        self.out
            .say("option name MoveOverhead type spin default 30 min 0 max 5000");
        self.out.say("option name Player type string default ab");
        self.out
            .say("option name Model type string default <empty>");
        self.out
            .say("option name Simulations type spin default 0 min 0 max 1000000");
        let games: Vec<String> = engine::GAME_NAMES
            .iter()
            .filter(|n| matches!(n.parse::<Game>(), Ok(Game::Ataxx(_))))
            .map(|n| format!("var {n}"))
            .collect();
        self.out.say(&format!(
            "option name Game type combo default ataxx {}",
            games.join(" ")
        ));
        self.out.say("uaiok");
    }
}
