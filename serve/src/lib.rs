//! `flipzero serve`: one process serving a single-page UI and a JSON API over the run
//! directories it was given: a live dashboard of each run, a viewer of its recorded
//! games, and a board to play or analyse any game against any player.
//!
//! The engine and the searches run here; the page only draws what the API returns.
//! Safe by default: run directories are only read, and only through names this server
//! gave them (a request never names a path), every malformed request gets a 4xx with a
//! message, searches are bounded in number, and a server listening beyond the loopback
//! interface requires a token.
//!
//! - **Host check.** A server without a token (the loopback default) answers only
//!   requests whose `Host` names the loopback interface: `localhost`, `127.x.y.z` or
//!   `[::1]`, with or without a port, in any case ([`is_loopback_host`]). Any other
//!   Host, or none, gets 403 with a message naming it, on every path: another site's
//!   page that makes its own name resolve to 127.0.0.1 (DNS rebinding) can neither read
//!   runs nor start searches. A server with a token answers any Host (it may be reached
//!   by any name); the token, which such a page does not have, keeps others out.
//! - **Search slots.** At most `max_searches` searches (`think`, `analyse`) run at
//!   once; more wait up to `queue_wait`, then get 503. A search holds its slot for as
//!   long as its thread runs, not as long as its client waits: a client that hangs up
//!   cannot free a slot while its search goes on. The hang-up sets the search's stop
//!   flag, which the players poll, so such a search ends within milliseconds (with the
//!   best move so far, sent to nobody) and its slot frees then.
//! - **Records and paths.** A record that cannot be read (a truncated
//!   `eval/gen-0003.json`, say) leaves out only itself: the run is listed with every
//!   generation, each with its intact records, and the bad file is listed in `problems`
//!   with what is wrong, named relative to the run. No answer shows where the server
//!   keeps its files: error messages name files relative to their run, and the
//!   dashboard shows a recorded player by its `models/gen-NNNN`, not its path.
//!
//! ```text
//! GET  /                       the page (assets embedded in the binary)
//! GET  /api/games              game names
//! GET  /api/runs               the runs: id, generations, best, unreadable records
//! GET  /api/runs/{run}         its generations, rating list, loss curves, problems
//! GET  /api/runs/{run}/games   its recorded games (?generation=N&result=1-0|0-1|1/2-1/2
//!                              &source=selfplay|gate|anchor)
//! GET  /api/runs/{run}/games/{gen}/{game}   one self-play game, ply by ply
//! GET  /api/runs/{run}/matches/{gen}/{gate|anchor}/{n}   one gating or anchoring game
//! GET  /api/position?game=G&position=TEXT   a position: board, legal moves, result
//! GET  /api/move?game=G&position=TEXT&move=M the position after a legal move
//! POST /api/think   {game, position, player, seed}   a player's move
//! POST /api/analyse {game, position, net}            a network's policy and value
//! ```

#![warn(missing_docs)]

mod api;
mod assets;
mod config;
mod error;
mod games;
mod insight;
mod matches;
mod position;
mod runs;
mod status;

use std::sync::Arc;

use axum::Router;

pub use config::{
    ServeConfig, ServeError, TOKEN_HEADER, generate_token, is_loopback_host, needs_token,
};
pub use error::ApiError;
pub use games::{GameDetail, GameListing, Ply, PolicyEntry};
pub use insight::{Candidate, SearchInsight};
pub use position::{BoardCell, LegalMove, Outcome, PositionView};
pub use runs::{RecordProblem, RunDashboard, RunEntry};
pub use status::RunStatus;

/// The router of a server over `config`'s runs. Each run must be a run directory.
pub fn router(config: ServeConfig) -> Result<Router, ServeError> {
    let state = api::AppState::new(config)?;
    Ok(api::routes(Arc::new(state)))
}

/// Serves `router` on `listener` until the process ends.
pub async fn serve(listener: tokio::net::TcpListener, router: Router) -> std::io::Result<()> {
    axum::serve(listener, router).await
}
