//! Evaluation: players usable everywhere a player is named (the alpha-beta ladder and
//! external UAI engines), paired matches, and match statistics.

#![warn(missing_docs)]

mod matches;
mod player;
mod stats;

pub use matches::{GameRecord, MatchConfig, generate_openings, run_match, to_pgn, write_atomic};
pub use player::{
    AlphaBetaPlayer, BadPlayerName, GreedyPlayer, Player, PlayerError, PlayerSpec, RandomPlayer,
    Timeouts, UaiPlayer,
};
pub use stats::{EloEstimate, MatchStats, elo_from_score, score_from_elo};
