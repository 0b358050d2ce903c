//! Players: the [`Player`] trait and what every player shares (its errors, the timeouts
//! of external engines). One module per kind of player: `baselines` (random, greedy,
//! alpha-beta), `mcts` (a network or the bootstrap evaluator behind MCTS), `uai` and
//! `nboard` (external engines, over `process`); `spec` is the factory that parses player names and builds
//! them. Imports go one way: `spec` imports the players, the players import this module
//! (and `nboard` the Othello notation of `crate::ggf`).

pub(crate) mod baselines;
pub(crate) mod mcts;
pub(crate) mod nboard;
pub(crate) mod params;
pub(crate) mod process;
pub(crate) mod spec;
pub(crate) mod uai;

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use engine::{Move, State};
use selfplay::{ClockState, PlayError};

/// A player that picks moves.
pub trait Player: Send {
    /// Prepares for a new game.
    fn new_game(&mut self) -> Result<(), PlayerError> {
        Ok(())
    }

    /// A legal move for `state` (which is not finished).
    fn choose(&mut self, state: &State) -> Result<Move, PlayerError>;

    /// Like [`Player::choose`], but a search ends early once `stop` is set, with the best
    /// move found so far (a UAI front end's `stop`, a web client that hung up). Players
    /// that move at once, and external engines, ignore it.
    fn choose_until(&mut self, state: &State, stop: &AtomicBool) -> Result<Move, PlayerError> {
        let _ = stop;
        self.choose(state)
    }

    /// What this player's last search thought of the position it moved from, for the
    /// side to move there; none for players that do not search (or before a search).
    fn last_evaluation(&self) -> Option<Evaluation> {
        None
    }

    /// A legal move for `state` on `clock`, this player's own clock in a timed match.
    /// Players that think ignore their own limits of time and spend the clock as their
    /// time manager sees fit; the default, for players that move at once, ignores it.
    fn choose_timed(&mut self, state: &State, clock: &ClockState) -> Result<Move, PlayerError> {
        let _ = clock;
        self.choose(state)
    }
}

/// A search's opinion of a position, for its side to move, in the search's own terms.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Evaluation {
    /// The expected final margin in pieces (the alpha-beta search's evaluation).
    Pieces(f32),
    /// The expected result, win − loss, in [−1, 1] (an MCTS search's root value; ±1 for
    /// a proven result).
    Value(f32),
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
    /// The engine wrote what no reply can be (a line too long to read).
    #[error("the engine wrote {0}")]
    BadOutput(String),
    /// The engine answered with a move that is not legal.
    #[error("illegal move `{0}`")]
    IllegalMove(String),
    /// The engine's answer names no legal move, and why (with what the engine said about
    /// the position it was sent, if it said anything).
    #[error("illegal answer `{answer}`: {why}")]
    IllegalAnswer {
        /// The answer, as the engine wrote it (bounded).
        answer: String,
        /// Why it is not a legal move here.
        why: String,
    },
    /// Writing to the engine failed.
    #[error("could not talk to the engine: {0}")]
    Io(#[from] std::io::Error),
    /// A network could not be found or loaded.
    #[error("{0}")]
    Model(String),
    /// An external engine that cannot play this game, or refused its options.
    #[error("engine {engine} cannot play here: {why}")]
    Refused {
        /// The program.
        engine: String,
        /// Why.
        why: String,
    },
    /// The search could not run.
    #[error("search: {0}")]
    Search(#[from] PlayError),
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

/// Timeouts for external engines.
#[derive(Clone, Copy, Debug)]
pub struct Timeouts {
    /// From start to `uaiok` / `readyok` (UAI), to the first `pong` (NBoard); and an
    /// NBoard engine's `pong` after each position sent.
    pub startup: Duration,
    /// Allowed beyond the requested move time for each `bestmove` (UAI); the whole time
    /// of an NBoard engine's move, which searches to a depth, not a clock.
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
