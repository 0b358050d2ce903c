//! Evaluation: players usable everywhere a player is named (the alpha-beta ladder and
//! external UAI engines), paired matches, and match statistics.

#![warn(missing_docs)]

mod gate;
mod matches;
mod mcts_player;
mod player;
pub mod report;
pub mod rundir;
mod stats;

pub use gate::{
    GameResult, GateConfig, GateConfigError, GateError, GateMode, GateVerdict, MatchSummary,
    anchor, gate, openings_for,
};
pub use matches::{GameRecord, MatchConfig, MatchError, generate_openings, run_match, to_pgn};
pub use mcts_player::{
    BOOTSTRAP_BEST, MctsPlayer, NetSource, ResolvedNet, build_evaluator, resolve_net,
};
pub use player::{
    AlphaBetaPlayer, BadPlayerName, DEFAULT_MCTS_SIMS, GreedyPlayer, Player, PlayerError,
    PlayerSpec, RandomPlayer, Timeouts, UaiPlayer,
};
pub use rundir::{BestError, LockError, RunLock, current_best, promote};
pub use selfplay::data::write_atomic;
pub use stats::{
    EloEstimate, MatchStats, Outcome, Rating, RatingError, SprtConfig, SprtVerdict, elo_from_score,
    mle_ratings, score_from_elo,
};
