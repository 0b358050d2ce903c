//! Evaluation: players usable everywhere a player is named (the alpha-beta ladder and
//! external UAI engines), paired matches, and match statistics.

#![warn(missing_docs)]

mod gate;
mod matches;
mod mcts_player;
mod operating;
mod player;
pub mod report;
mod stats;

pub use gate::{
    CapRule, GameResult, GateConfig, GateConfigError, GateDecision, GateMode, GateOutcome,
    GateVerdict, MatchSummary, anchor, current_best, gate, gate_loop, openings_for, promote,
};
pub use matches::{GameRecord, MatchConfig, generate_openings, run_match, to_pgn};
pub use mcts_player::{
    BOOTSTRAP_BEST, MctsPlayer, NetSource, ResolvedNet, build_evaluator, resolve_net,
};
pub use operating::{
    OperatingError, OperatingPoint, PairModel, operating_characteristic, operating_point,
    standard_elos,
};
pub use player::{
    AlphaBetaPlayer, BadPlayerName, DEFAULT_MCTS_SIMS, GreedyPlayer, Player, PlayerError,
    PlayerSpec, RandomPlayer, Timeouts, UaiPlayer,
};
pub use selfplay::data::write_atomic;
pub use stats::{
    EloEstimate, MatchStats, Outcome, PairTotals, Rating, RatingError, SprtConfig, SprtVerdict,
    elo_from_score, mle_ratings, score_from_elo,
};
