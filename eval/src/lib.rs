//! Evaluation: players usable everywhere a player is named (the alpha-beta ladder and
//! external UAI engines), paired matches, and match statistics.

#![warn(missing_docs)]

mod gate;
mod ggf;
mod input;
mod matches;
pub mod nboard;
mod operating;
pub mod pgn;
mod players;
mod stats;
pub mod tournament;
pub mod tune;
pub mod uai;

pub use gate::{
    CapRule, GameResult, GateConfig, GateConfigError, GateDecision, GateError, GateMode,
    GateOutcome, GateVerdict, MatchSummary, anchor, gate, gate_loop, openings_for,
};
pub use matches::{
    BadClock, GameRecord, MatchClock, MatchConfig, MatchError, TIME_LOSS, generate_openings,
    match_stats, run_match, run_match_until,
};
pub use operating::{
    OperatingError, OperatingPoint, PairModel, operating_characteristic, operating_point,
    standard_elos,
};
pub use pgn::to_pgn;
pub use players::baselines::{AbSearch, AlphaBetaPlayer, GreedyPlayer, RandomPlayer, clock_limits};
pub use players::mcts::{
    BOOTSTRAP_BEST, MctsPlayer, NetSource, ResolvedNet, Thinking, batch_for, build_evaluator,
    build_evaluators, check_loads, load_fastnet, load_network, mcts_evaluators, model_game,
    resolve_net,
};
pub use players::params::{PARAM_KEYS, SearchParams};
pub use players::spec::{BadPlayerName, DEFAULT_MCTS_SIMS, PLAYER_NAMES, PlayerSpec};
pub use players::uai::UaiPlayer;
pub use players::{Evaluation, Player, PlayerError, Timeouts};
/// The engine that runs a network in play (see `PlayerSpec::Mcts`).
pub use selfplay::NetEngine;
pub use stats::{
    EXACT_INTERVALS_UP_TO, EloEstimate, INTERVAL_PROJECTIONS, MatchStats, Outcome, PairTotals,
    Rating, RatingError, SprtConfig, SprtVerdict, elo_from_score, mle_ratings, score_from_elo,
};
pub use tune::{TuneParam, TuneRecord, TuneResult, TuneStep, spsa};
