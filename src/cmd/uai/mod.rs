//! `flipzero uai`: a UAI engine for Ataxx GUIs and tournament managers (cuteataxx).
//!
//! Standard input is read on its own thread ([`input`]) and searches run on another
//! ([`go`]), so the command loop is never blocked: `isready` is answered during a search,
//! `stop` and `quit` end it at once, and a command that changes the engine's state
//! (`go`, `position`, `setoption`, `uainewgame`, `perft`) stops a running search first,
//! whose `bestmove` comes before anything else, as Stockfish does.

mod go;
mod input;
mod options;

use std::path::PathBuf;

use clap::Args;
use engine::search::Searcher;
use engine::{Game, State};
use selfplay::TimeManager;

use go::{GoParams, KeptMcts, Running, Setup};
use input::Input;
use options::{Choice, check_net, model_player, parse_player, split_setoption};

/// Arguments of `flipzero uai`.
#[derive(Args)]
pub struct UaiArgs {
    /// The player to use at start (the `Player` option changes it): `ab` (alpha-beta on the
    /// GUI's clock), any ladder name (random, greedy, ab1..ab64, ab:nodes=N, ab:time=MS), or
    /// an MCTS player (mcts:bootstrap, mcts:<model or run dir>).
    #[arg(long, default_value = "ab")]
    player: String,
    /// A trained model (or run) directory to play with: MCTS with the network, on the
    /// GUI's clock, instead of the player (the `Model` option changes it; empty: none).
    #[arg(long)]
    model: Option<PathBuf>,
    /// MCTS simulations per move; 0 = as many as the clock allows (option `Simulations`).
    #[arg(long, default_value_t = 0)]
    simulations: u32,
    /// The Ataxx rule set at start (the `Game` option changes it), e.g. ataxx/assimilation;
    /// a --model must be of this game.
    #[arg(long, default_value = "ataxx")]
    game: String,
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
}

fn say(line: &str) {
    println!("{line}");
}

fn error(msg: impl std::fmt::Display) {
    say(&format!("info string error: {msg}"));
}

/// Runs the UAI loop on standard input until `quit` or end of input.
pub fn run(a: UaiArgs) -> anyhow::Result<()> {
    let game: Game = a.game.parse()?;
    if !matches!(game, Game::Ataxx(_)) {
        anyhow::bail!("--game {game}: UAI plays the Ataxx family (ataxx, ataxx/assimilation, …)");
    }
    let player = parse_player(&a.player, game).map_err(anyhow::Error::msg)?;
    let model = match &a.model {
        Some(dir) => Some((
            dir.clone(),
            model_player(dir, game).map_err(anyhow::Error::msg)?,
        )),
        None => None,
    };
    let mut e = Engine {
        game,
        position: game.startpos(),
        player,
        model,
        simulations: a.simulations,
        hash_mb: DEFAULT_HASH_MB,
        threads: 1,
        time_manager: TimeManager::default(),
        searcher: Some(Searcher::new(DEFAULT_HASH_MB)),
        mcts: None,
        search: None,
    };
    let lines = input::spawn_reader();
    for event in lines {
        let line = match event {
            Input::Line(line) => line,
            Input::NotUtf8(text) => {
                error(format!(
                    "input line is not valid UTF-8, ignored: `{}`",
                    shown(&text)
                ));
                continue;
            }
            Input::TooLong(bytes) => {
                error(format!(
                    "input line of {bytes} bytes ignored (at most {} a line)",
                    input::MAX_LINE
                ));
                continue;
            }
            Input::Failed(err) => {
                error(format!("cannot read standard input: {err}"));
                break;
            }
            Input::Eof => break,
        };
        if !e.command(line.trim()) {
            break;
        }
    }
    // `quit` or end of input: a running search still answers.
    e.stop();
    Ok(())
}

impl Engine {
    /// Handles one command; false on `quit`.
    fn command(&mut self, line: &str) -> bool {
        let (cmd, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        match cmd {
            "" => {}
            "uai" => hello(),
            "isready" => say("readyok"),
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
                    Ok(d) if d <= 3 => say(&format!("nodes {}", self.position.perft(d))),
                    Ok(d) if d <= MAX_UAI_PERFT => {
                        let kept = (
                            self.searcher
                                .take()
                                .unwrap_or_else(|| Searcher::new(self.hash_mb)),
                            self.mcts.take(),
                        );
                        self.search = Some(go::start_perft(self.position, d, kept));
                    }
                    Ok(d) => error(format!("`perft {d}`: at most {MAX_UAI_PERFT} plies")),
                    Err(_) => error(format!("`perft {}`: expected a depth", shown(rest))),
                }
            }
            other => error(format!("unknown command `{}`", shown(other))),
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
            Err(msg) => return error(msg),
        };
        match name.to_ascii_lowercase().as_str() {
            "hash" => match value.parse::<usize>() {
                Ok(mb) if (1..=4096).contains(&mb) => {
                    self.hash_mb = mb;
                    self.searcher = Some(Searcher::new(mb));
                }
                _ => error(format!(
                    "Hash must be a number of MiB in 1..=4096, got `{}`",
                    shown(value)
                )),
            },
            "threads" => match value.parse::<usize>() {
                Ok(n) if (1..=MAX_THREADS).contains(&n) => self.threads = n,
                _ => error(format!(
                    "Threads must be a number in 1..={MAX_THREADS}, got `{}`",
                    shown(value)
                )),
            },
            "moveoverhead" | "move overhead" => match value.parse::<u64>() {
                Ok(ms) if ms <= 5000 => {
                    self.time_manager.move_overhead = std::time::Duration::from_millis(ms)
                }
                _ => error(format!(
                    "MoveOverhead must be a number of milliseconds in 0..=5000, got `{}`",
                    shown(value)
                )),
            },
            "model" if value.is_empty() || value == "<empty>" => self.model = None,
            "model" => {
                let dir = PathBuf::from(value);
                match model_player(&dir, self.game) {
                    Ok(p) => self.model = Some((dir, p)),
                    Err(msg) => error(msg),
                }
            }
            "simulations" => match value.parse::<u32>() {
                Ok(n) if n <= 1_000_000 => self.simulations = n,
                _ => error(format!(
                    "Simulations must be a number in 0..=1000000, got `{}`",
                    shown(value)
                )),
            },
            "player" => match parse_player(value, self.game) {
                Ok(p) => self.player = p,
                Err(msg) => error(msg),
            },
            "game" => match value.parse::<Game>() {
                Ok(g @ Game::Ataxx(_)) => match self.check_nets(g) {
                    Ok(()) => {
                        self.game = g;
                        self.position = g.startpos();
                    }
                    Err(msg) => error(format!("{msg}; the game stays {}", self.game)),
                },
                Ok(_) => error(format!("`{}` is not an Ataxx-family game", shown(value))),
                Err(err) => error(err),
            },
            // Tournament managers send their usual options (debug, ownbook) to every
            // engine; an option this engine lacks is not an error.
            _ => say(&format!(
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
            Err(msg) => return error(msg),
        };
        for m in moves {
            match pos.parse_move(m) {
                Ok(mv) => pos.play(mv),
                Err(err) => {
                    return error(format!("move `{}`: {err}; position unchanged", shown(m)));
                }
            }
        }
        self.position = pos;
    }

    fn go(&mut self, rest: &str) {
        let (params, warnings) = GoParams::parse(rest);
        for w in warnings {
            error(w);
        }
        if self.position.legal_moves().is_empty() {
            error("the game is over");
            return say("bestmove 0000");
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
        self.search = Some(go::start(self.position, &params, setup));
    }
}

fn hello() {
    say(concat!("id name flipzero ", env!("CARGO_PKG_VERSION")));
    say("id author the flipzero developers");
    say("option name Hash type spin default 16 min 1 max 4096");
    say(&format!(
        "option name Threads type spin default 1 min 1 max {MAX_THREADS}"
    ));
    say("option name MoveOverhead type spin default 30 min 0 max 5000");
    say("option name Player type string default ab");
    say("option name Model type string default <empty>");
    say("option name Simulations type spin default 0 min 0 max 1000000");
    let games: Vec<String> = engine::GAME_NAMES
        .iter()
        .filter(|n| matches!(n.parse::<Game>(), Ok(Game::Ataxx(_))))
        .map(|n| format!("var {n}"))
        .collect();
    say(&format!(
        "option name Game type combo default ataxx {}",
        games.join(" ")
    ));
    say("uaiok");
}
