//! Players and their names: the baseline ladder (`random`, `greedy`, `ab1`…, `ab:nodes=N`,
//! `ab:time=MS`) and external UAI engines (`uai:<path>[:options]`).

use std::fmt;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::str::FromStr;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::Duration;

use engine::search::{Limits, Searcher};
use engine::{Game, Move, Rng, State};

use crate::mcts_player::{MctsPlayer, NetSource, build_evaluator};

/// Simulations per move of an MCTS player when its name gives none.
pub const DEFAULT_MCTS_SIMS: u32 = 64;

/// A player that picks moves.
pub trait Player: Send {
    /// Prepares for a new game.
    fn new_game(&mut self) -> Result<(), PlayerError> {
        Ok(())
    }

    /// A legal move for `state` (which is not finished).
    fn choose(&mut self, state: &State) -> Result<Move, PlayerError>;
}

/// Why a player failed to give a move: the game is forfeited.
#[derive(Debug, thiserror::Error)]
pub enum PlayerError {
    /// The engine could not be started.
    #[error("could not start `{path}`: {source}")]
    Spawn {
        /// The program.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// No answer within the time allowed.
    #[error("no answer within {0:?} (waiting for `{1}`)")]
    Timeout(Duration, &'static str),
    /// The engine closed its output or died.
    #[error("the engine exited or closed its output")]
    Exited,
    /// The engine answered with a move that is not legal.
    #[error("illegal move `{0}`")]
    IllegalMove(String),
    /// Writing to the engine failed.
    #[error("could not talk to the engine: {0}")]
    Io(#[from] std::io::Error),
    /// A network could not be found or loaded.
    #[error("{0}")]
    Model(String),
    /// A network of another game.
    #[error("model {model} is for game {model_game}, not {game}")]
    WrongGame {
        /// The model directory.
        model: String,
        /// The game it was trained for.
        model_game: String,
        /// The game being played.
        game: String,
    },
}

/// A player name, parsed. Names are stable and usable everywhere a player is named.
///
/// ```
/// use eval::PlayerSpec;
/// assert_eq!("ab3".parse::<PlayerSpec>().unwrap().to_string(), "ab3");
/// assert_eq!("ab:nodes=5000".parse::<PlayerSpec>().unwrap().to_string(), "ab:nodes=5000");
/// assert!("ab:bogus=1".parse::<PlayerSpec>().is_err());
/// let m = "mcts:data/runs/a:sims=200".parse::<PlayerSpec>().unwrap();
/// assert_eq!(m.to_string(), "mcts:data/runs/a:sims=200");
/// assert_eq!("mcts:bootstrap".parse::<PlayerSpec>().unwrap().to_string(), "mcts:bootstrap");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlayerSpec {
    /// Uniformly random legal moves.
    Random,
    /// The move with the best immediate piece gain (fewest in misère), random tie-break.
    Greedy,
    /// Alpha-beta search with these limits.
    AlphaBeta(Limits),
    /// MCTS with a trained network or the bootstrap evaluator: `sims` simulations a
    /// move, or `time` per move when set.
    Mcts {
        /// Where the evaluations come from.
        net: NetSource,
        /// Simulations per move.
        sims: u32,
        /// Thinking time per move, instead of a simulation count.
        time: Option<Duration>,
    },
    /// An external UAI engine.
    Uai {
        /// The program.
        path: PathBuf,
        /// `setoption` pairs, and the `go` parameters `movetime`, `depth`, `nodes`.
        options: Vec<(String, String)>,
    },
}

/// A player name that names no player.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown player `{0}`: expected random, greedy, ab1..ab64, ab:depth=N, ab:nodes=N, ab:time=MS, mcts:bootstrap|<model or run dir>[:sims=N|:time=MS], or uai:<path>[:name=value,...]"
)]
pub struct BadPlayerName(pub String);

impl FromStr for PlayerSpec {
    type Err = BadPlayerName;

    fn from_str(s: &str) -> Result<PlayerSpec, BadPlayerName> {
        let bad = || BadPlayerName(s.to_string());
        match s {
            "random" => return Ok(PlayerSpec::Random),
            "greedy" => return Ok(PlayerSpec::Greedy),
            _ => {}
        }
        if let Some(rest) = s.strip_prefix("uai:") {
            // Options follow the last `:` when what follows it looks like name=value pairs.
            let (path, options) = match rest.rsplit_once(':') {
                Some((p, o)) if o.contains('=') && !p.is_empty() => (p, o),
                _ => (rest, ""),
            };
            if path.is_empty() {
                return Err(bad());
            }
            let options = options
                .split(',')
                .filter(|o| !o.is_empty())
                .map(|o| {
                    o.split_once('=')
                        .map(|(k, v)| (k.to_string(), v.to_string()))
                })
                .collect::<Option<Vec<_>>>()
                .ok_or_else(bad)?;
            return Ok(PlayerSpec::Uai {
                path: PathBuf::from(path),
                options,
            });
        }
        if let Some(rest) = s.strip_prefix("mcts:") {
            let (source, options) = match rest.rsplit_once(':') {
                Some((p, o)) if o.contains('=') && !p.is_empty() => (p, o),
                _ => (rest, ""),
            };
            if source.is_empty() {
                return Err(bad());
            }
            let (mut sims, mut time) = (DEFAULT_MCTS_SIMS, None);
            for part in options.split(',').filter(|o| !o.is_empty()) {
                let (k, v) = part.split_once('=').ok_or_else(bad)?;
                let n: u64 = v.parse().ok().filter(|&n| n > 0).ok_or_else(bad)?;
                match k {
                    "sims" if n <= 1_000_000 => sims = n as u32,
                    "time" => time = Some(Duration::from_millis(n)),
                    _ => return Err(bad()),
                }
            }
            let net = if source == "bootstrap" {
                NetSource::Bootstrap
            } else {
                NetSource::Path(PathBuf::from(source))
            };
            return Ok(PlayerSpec::Mcts { net, sims, time });
        }
        if let Some(d) = s.strip_prefix("ab").filter(|d| !d.starts_with(':')) {
            let depth: u32 = d
                .parse()
                .ok()
                .filter(|d| (1..=64).contains(d))
                .ok_or_else(bad)?;
            return Ok(PlayerSpec::AlphaBeta(Limits {
                depth: Some(depth),
                ..Limits::default()
            }));
        }
        if let Some(rest) = s.strip_prefix("ab:") {
            let mut limits = Limits::default();
            for part in rest.split(',') {
                let (k, v) = part.split_once('=').ok_or_else(bad)?;
                let n: u64 = v.parse().ok().filter(|&n| n > 0).ok_or_else(bad)?;
                match k {
                    "depth" if n <= 64 => limits.depth = Some(n as u32),
                    "nodes" => limits.nodes = Some(n),
                    "time" => limits.time = Some(Duration::from_millis(n)),
                    _ => return Err(bad()),
                }
            }
            return Ok(PlayerSpec::AlphaBeta(limits));
        }
        Err(bad())
    }
}

impl fmt::Display for PlayerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlayerSpec::Random => f.write_str("random"),
            PlayerSpec::Greedy => f.write_str("greedy"),
            PlayerSpec::AlphaBeta(l) => {
                if let (Some(d), None, None) = (l.depth, l.nodes, l.time) {
                    return write!(f, "ab{d}");
                }
                let mut parts = vec![];
                if let Some(d) = l.depth {
                    parts.push(format!("depth={d}"));
                }
                if let Some(n) = l.nodes {
                    parts.push(format!("nodes={n}"));
                }
                if let Some(t) = l.time {
                    parts.push(format!("time={}", t.as_millis()));
                }
                write!(f, "ab:{}", parts.join(","))
            }
            PlayerSpec::Mcts { net, sims, time } => {
                match net {
                    NetSource::Bootstrap => f.write_str("mcts:bootstrap")?,
                    NetSource::Path(p) => write!(f, "mcts:{}", p.display())?,
                }
                match time {
                    Some(t) => write!(f, ":time={}", t.as_millis()),
                    None if *sims != DEFAULT_MCTS_SIMS => write!(f, ":sims={sims}"),
                    None => Ok(()),
                }
            }
            PlayerSpec::Uai { path, options } => {
                write!(f, "uai:{}", path.display())?;
                if !options.is_empty() {
                    let o: Vec<String> = options.iter().map(|(k, v)| format!("{k}={v}")).collect();
                    write!(f, ":{}", o.join(","))?;
                }
                Ok(())
            }
        }
    }
}

/// Timeouts for external engines.
#[derive(Clone, Copy, Debug)]
pub struct Timeouts {
    /// From start to `uaiok` / `readyok`.
    pub startup: Duration,
    /// Allowed beyond the requested move time for each `bestmove`.
    pub per_move: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            startup: Duration::from_secs(10),
            per_move: Duration::from_secs(5),
        }
    }
}

impl PlayerSpec {
    /// Checks, before any game starts, that this player can play `game`: an MCTS
    /// player's model must load and be a model of `game`. External engines are not
    /// started here (one that fails mid-match forfeits its games).
    pub fn check(&self, game: Game) -> Result<(), PlayerError> {
        match self {
            PlayerSpec::Mcts { net, .. } => build_evaluator(net, game).map(|_| ()),
            _ => Ok(()),
        }
    }

    /// A fresh player for `game`; `seed` drives its random choices (tie-breaks, random
    /// moves).
    pub fn build(
        &self,
        game: Game,
        seed: u64,
        timeouts: Timeouts,
    ) -> Result<Box<dyn Player>, PlayerError> {
        Ok(match self {
            PlayerSpec::Random => Box::new(RandomPlayer(Rng::new(seed))),
            PlayerSpec::Greedy => Box::new(GreedyPlayer(Rng::new(seed))),
            PlayerSpec::AlphaBeta(limits) => Box::new(AlphaBetaPlayer {
                searcher: Searcher::new(16),
                limits: *limits,
            }),
            PlayerSpec::Mcts { net, sims, time } => Box::new(MctsPlayer::new(
                build_evaluator(net, game)?,
                *sims,
                *time,
                seed,
            )),
            PlayerSpec::Uai { path, options } => {
                Box::new(UaiPlayer::start(path.clone(), options.clone(), timeouts)?)
            }
        })
    }
}

/// Plays uniformly random legal moves.
pub struct RandomPlayer(Rng);

impl Player for RandomPlayer {
    fn choose(&mut self, state: &State) -> Result<Move, PlayerError> {
        let moves = state.legal_moves();
        Ok(moves[self.0.below(moves.len() as u64) as usize])
    }
}

/// Plays the move with the largest immediate change of the piece margin (the smallest in
/// misère), breaking ties at random.
pub struct GreedyPlayer(Rng);

impl Player for GreedyPlayer {
    fn choose(&mut self, state: &State) -> Result<Move, PlayerError> {
        let sign = if state.game().misere() { -1 } else { 1 };
        let moves = state.legal_moves();
        let value = |m: Move| sign * (state.gain(m) + state.flips(m)) as i64;
        let best = moves.iter().map(|&m| value(m)).max().expect("a legal move");
        let top: Vec<Move> = moves.into_iter().filter(|&m| value(m) == best).collect();
        Ok(top[self.0.below(top.len() as u64) as usize])
    }
}

/// Alpha-beta search with fixed limits.
pub struct AlphaBetaPlayer {
    searcher: Searcher,
    limits: Limits,
}

impl Player for AlphaBetaPlayer {
    fn new_game(&mut self) -> Result<(), PlayerError> {
        self.searcher.clear();
        Ok(())
    }

    fn choose(&mut self, state: &State) -> Result<Move, PlayerError> {
        let stop = AtomicBool::new(false);
        let report = self
            .searcher
            .search(state, self.limits, &stop, |_| {})
            .expect("not over");
        Ok(report.pv[0])
    }
}

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
