//! A UAI engine for Ataxx GUIs and tournament managers (cuteataxx): the loop behind
//! `flipzero uai`, which plays any player of the ladder, an MCTS player with a network,
//! or the alpha-beta search on the GUI's clock. Every game of the engine speaks it:
//! positions in the game's text format (`position fen …`), moves in its notation, a
//! pass as `0000`; Othello GUIs speak NBoard (`crate::nboard`). Commands are parsed and replies
//! formatted by the protocol module, `engine::uai`; [`serve`] runs the loop on any input
//! and output.
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
mod options;
mod output;

use std::io::{BufRead, Write};
use std::path::PathBuf;

use engine::search::Searcher;
use engine::uai::{Command, CommandError, Go, Id, OptionDecl, OptionKind, Reply, Start, excerpt};
use engine::{Game, State};
use selfplay::TimeManager;

use crate::input::{self, Input};
use go::{GoParams, KeptMcts, Running, Setup};
use options::{Choice, check_net, model_player, parse_player};
use output::Output;

/// How the engine starts; the GUI's options change it later.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The game (the `Game` option); a model must be of this game.
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

/// The `TreeMemory` option's default, MiB: the search library's bound.
const DEFAULT_TREE_MB: usize = selfplay::DEFAULT_TREE_BYTES >> 20;
/// The `TreeMemory` option's range, MiB.
const MIN_TREE_MB: usize = 16;
const MAX_TREE_MB: usize = (selfplay::MAX_TREE_BYTES >> 20) as usize;

/// The most search threads of an MCTS player (the alpha-beta search uses one).
const MAX_THREADS: usize = 64;

/// The deepest `perft` the UAI loop accepts (it runs on its own thread and stops on
/// `stop`; deeper counts than this would not end in a lifetime anyway).
const MAX_UAI_PERFT: u32 = 32;

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
    /// The bound on an MCTS player's tree, MiB (the `TreeMemory` option).
    tree_mb: usize,
    /// Search threads of an MCTS player (the `Threads` option).
    threads: usize,
    /// The MCTS settings set by `CPuct`, `FpuReduction` and `EndgameEmpties`, as
    /// [`SearchParams::set`] keys and values: they override an MCTS player's own.
    search_options: Vec<(&'static str, String)>,
    /// The alpha-beta parameters set by their options (`engine::search::PARAMS`): they
    /// override an alpha-beta player's own.
    ab_options: Vec<(&'static str, i32)>,
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
        tree_mb: DEFAULT_TREE_MB,
        threads: 1,
        search_options: Vec::new(),
        ab_options: Vec::new(),
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
                    excerpt(&text)
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
        let go_on = e.command(&line);
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
    /// Handles one command line; false on `quit`.
    fn command(&mut self, line: &str) -> bool {
        let command = match Command::parse(line) {
            Ok(c) => c,
            Err(CommandError::Empty) => return true,
            Err(e) => {
                // A command that changes the engine's state stops a search first, also
                // when its arguments are malformed.
                if e.command().is_some() {
                    self.stop();
                }
                self.out.error(e);
                return true;
            }
        };
        match command {
            Command::Uai => self.hello(),
            Command::IsReady => self.ready(),
            Command::Stop => self.stop(),
            Command::Quit => return false,
            Command::SetOption { name, value } => {
                self.stop();
                self.setoption(&name, value.as_deref().unwrap_or(""))
            }
            Command::UaiNewGame => {
                self.stop();
                if let Some(s) = self.searcher.as_mut() {
                    s.clear();
                }
                if let Some(m) = self.mcts.as_mut() {
                    m.new_game();
                }
                self.position = self.game.startpos();
            }
            Command::Position { start, moves } => {
                self.stop();
                self.set_position(&start, &moves)
            }
            Command::Go(go) => {
                self.stop();
                self.go(&go)
            }
            Command::Perft(d) => {
                self.stop();
                // Deeper counts run on a thread of its own, as a search: `stop` ends
                // it, `isready` is answered meanwhile.
                match d {
                    // A few plies take microseconds: answered in order, at once.
                    d if d <= 3 => self.out.say(&Reply::Nodes(self.position.perft(d))),
                    d if d <= MAX_UAI_PERFT => {
                        let kept = (
                            self.searcher
                                .take()
                                .unwrap_or_else(|| Searcher::new(self.hash_mb)),
                            self.mcts.take(),
                        );
                        let out = self.out.clone();
                        self.search = Some(go::start_perft(self.position, d, kept, out));
                    }
                    d => self
                        .out
                        .error(format!("`perft {d}`: at most {MAX_UAI_PERFT} plies")),
                }
            }
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

    fn setoption(&mut self, name: &str, value: &str) {
        match name.to_ascii_lowercase().as_str() {
            "hash" => match value.parse::<usize>() {
                Ok(mb) if (1..=4096).contains(&mb) => {
                    self.hash_mb = mb;
                    self.searcher = Some(Searcher::new(mb));
                }
                _ => self.out.error(format!(
                    "Hash must be a number of MiB in 1..=4096, got `{}`",
                    excerpt(value)
                )),
            },
            "treememory" => match value.parse::<usize>() {
                Ok(mb) if (MIN_TREE_MB..=MAX_TREE_MB).contains(&mb) => self.tree_mb = mb,
                _ => self.out.error(format!(
                    "TreeMemory must be a number of MiB in {MIN_TREE_MB}..={MAX_TREE_MB}, got `{}`",
                    excerpt(value)
                )),
            },
            "threads" => match value.parse::<usize>() {
                Ok(n) if (1..=MAX_THREADS).contains(&n) => self.threads = n,
                _ => self.out.error(format!(
                    "Threads must be a number in 1..={MAX_THREADS}, got `{}`",
                    excerpt(value)
                )),
            },
            "moveoverhead" | "move overhead" => match value.parse::<u64>() {
                Ok(ms) if ms <= 5000 => {
                    self.time_manager.move_overhead = std::time::Duration::from_millis(ms)
                }
                _ => self.out.error(format!(
                    "MoveOverhead must be a number of milliseconds in 0..=5000, got `{}`",
                    excerpt(value)
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
            "cpuct" | "fpureduction" | "endgameempties" => {
                let (key, hundredths, range) = match name.to_ascii_lowercase().as_str() {
                    "cpuct" => ("cpuct", true, "1..=2000 (hundredths)"),
                    "fpureduction" => ("fpu", true, "0..=200 (hundredths)"),
                    _ => ("endgame", false, "0..=8"),
                };
                let text = value.parse::<u32>().ok().map(|n| {
                    if hundredths {
                        format!("{}", n as f32 / 100.0)
                    } else {
                        n.to_string()
                    }
                });
                match text.filter(|t| crate::SearchParams::default().set(key, t) == Ok(true)) {
                    Some(t) => {
                        self.search_options.retain(|(k, _)| *k != key);
                        self.search_options.push((key, t));
                    }
                    None => self.out.error(format!(
                        "{name} must be a number in {range}, got `{}`",
                        excerpt(value)
                    )),
                }
            }
            "simulations" => match value.parse::<u32>() {
                Ok(n) if n <= 1_000_000 => self.simulations = n,
                _ => self.out.error(format!(
                    "Simulations must be a number in 0..=1000000, got `{}`",
                    excerpt(value)
                )),
            },
            "player" => match parse_player(value, self.game) {
                Ok(p) => {
                    // The table's scores are the old player's evaluation.
                    if p != self.player
                        && let Some(s) = self.searcher.as_mut()
                    {
                        s.clear();
                    }
                    self.player = p;
                }
                Err(msg) => self.out.error(msg),
            },
            "game" => match value.parse::<Game>() {
                Ok(g) => match self.check_nets(g) {
                    Ok(()) => {
                        self.game = g;
                        self.position = g.startpos();
                    }
                    Err(msg) => self
                        .out
                        .error(format!("{msg}; the game stays {}", self.game)),
                },
                Err(err) => self.out.error(err),
            },
            _ if engine::search::param_spec(name).is_some() => {
                let mut p = engine::search::Params::TUNED;
                match p.set(name, value) {
                    Ok(()) => {
                        let spec = engine::search::param_spec(name).expect("checked");
                        let v = p.get(spec.name).expect("a parameter");
                        self.ab_options.retain(|(k, _)| *k != spec.name);
                        self.ab_options.push((spec.name, v));
                    }
                    Err(e) => self.out.error(e),
                }
            }
            // Tournament managers send their usual options (debug, ownbook) to every
            // engine; an option this engine lacks is not an error.
            _ => self
                .out
                .info(format!("ignoring unknown option `{}`", excerpt(name))),
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

    fn set_position(&mut self, start: &Start, moves: &[String]) {
        let start = match start {
            Start::StartPos => Ok(self.game.startpos()),
            Start::Fen(fen) => self
                .game
                .parse_position(fen)
                .map_err(|err| format!("bad FEN `{}`: {err}", excerpt(fen))),
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
                        .error(format!("move `{}`: {err}; position unchanged", excerpt(m)));
                }
            }
        }
        self.position = pos;
    }

    /// The `TreeMemory` bound, bytes.
    fn tree_bytes(&self) -> usize {
        self.tree_mb.saturating_mul(1 << 20)
    }

    /// The player that plays: the `Model` option's where set, else the `Player`
    /// option's; an MCTS player with the MCTS options applied.
    fn playing(&self) -> Choice {
        let mut player = match &self.model {
            Some((_, p)) => p.clone(),
            None => self.player.clone(),
        };
        if let Choice::Ladder(crate::PlayerSpec::Mcts { params, .. }) = &mut player {
            for (k, v) in &self.search_options {
                let _ = params.set(k, v);
            }
        }
        player
    }

    /// `isready`, answered at once during a search; otherwise an MCTS player is made
    /// ready first: its network loaded and the memory of its next new tree written
    /// (`MctsPlayer::prepare`), so that a game's first move pays for neither on its
    /// clock, as engines allocate their tables here. A player that cannot be built is
    /// left to `go`, which says why and plays alpha-beta instead.
    fn ready(&mut self) {
        let tree_bytes = self.tree_bytes();
        if self.search.is_none()
            && let Choice::Ladder(crate::PlayerSpec::Mcts {
                net,
                engine,
                params,
                ..
            }) = self.playing()
            && let Ok(k) = go::kept_player(
                &net,
                (engine, params),
                self.threads,
                &mut self.mcts,
                &self.position,
            )
        {
            k.prepare(tree_bytes);
        }
        self.out.say(&Reply::ReadyOk);
    }

    fn go(&mut self, go: &Go) {
        let (params, warnings) = GoParams::from_uai(go);
        for w in warnings {
            self.out.error(w);
        }
        if self.position.legal_moves().is_empty() {
            self.out.error("the game is over");
            return self.out.say(&Reply::BestMove {
                mv: "0000".into(),
                ponder: None,
            });
        }
        let player = self.playing();
        let mut ab = match &player {
            Choice::Ladder(
                crate::PlayerSpec::AlphaBeta { search, .. }
                | crate::PlayerSpec::NetAlphaBeta { search, .. },
            ) => search.params,
            _ => engine::search::Params::TUNED,
        };
        for (k, v) in &self.ab_options {
            let _ = ab.set(k, &v.to_string());
        }
        let setup = Setup {
            ab,
            player,
            simulations: self.simulations,
            threads: self.threads,
            tree_bytes: self.tree_bytes(),
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
        // The workspace's version: this crate's is the binary's.
        let name = concat!("flipzero ", env!("CARGO_PKG_VERSION"));
        self.out.say(&Reply::Id(Id::Name(name.into())));
        self.out
            .say(&Reply::Id(Id::Author("the flipzero developers".into())));
        let spin = |name: &str, default: i64, min: i64, max: i64| {
            Reply::Option(OptionDecl {
                default: Some(default.to_string()),
                min: Some(min),
                max: Some(max),
                ..OptionDecl::new(name, OptionKind::Spin)
            })
        };
        let string = |name: &str, default: &str| {
            Reply::Option(OptionDecl {
                default: Some(default.into()),
                ..OptionDecl::new(name, OptionKind::String)
            })
        };
        let games = engine::GAME_NAMES.iter().map(|n| n.to_string()).collect();
        let game = Reply::Option(OptionDecl {
            default: Some(self.game.to_string()),
            vars: games,
            ..OptionDecl::new("Game", OptionKind::Combo)
        });
        let d = crate::SearchParams::default();
        for option in [
            spin("Hash", DEFAULT_HASH_MB as i64, 1, 4096),
            spin("Threads", 1, 1, MAX_THREADS as i64),
            spin(
                "TreeMemory",
                DEFAULT_TREE_MB as i64,
                MIN_TREE_MB as i64,
                MAX_TREE_MB as i64,
            ),
            spin("MoveOverhead", 30, 0, 5000),
            string("Player", "ab"),
            string("Model", "<empty>"),
            spin("Simulations", 0, 0, 1_000_000),
            spin("CPuct", (d.c_puct * 100.0).round() as i64, 1, 2000),
            spin(
                "FpuReduction",
                (d.fpu_reduction * 100.0).round() as i64,
                0,
                200,
            ),
            spin("EndgameEmpties", i64::from(d.endgame_empties), 0, 8),
            game,
        ] {
            self.out.say(&option);
        }
        // The alpha-beta search's parameters, each by its name.
        for p in engine::search::PARAMS {
            self.out
                .say(&spin(p.name, p.default.into(), p.min.into(), p.max.into()));
        }
        self.out.say(&Reply::UaiOk);
    }
}
