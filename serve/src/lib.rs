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
mod error;
mod games;
mod matches;
mod position;
mod runs;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use axum::Router;

pub use error::ApiError;
pub use games::{GameDetail, GameListing, Ply, PolicyEntry};
pub use position::{BoardCell, LegalMove, Outcome, PositionView};
pub use runs::{RecordProblem, RunDashboard, RunEntry};

/// The header (or query parameter `token`) that carries the access token.
pub const TOKEN_HEADER: &str = "x-flipzero-token";

/// What a server serves and how.
#[derive(Clone, Debug)]
pub struct ServeConfig {
    /// Run directories, read-only (none: only the board to play and analyse).
    pub runs: Vec<PathBuf>,
    /// Searches (`think`, `analyse`) running at once, at most; more wait.
    pub max_searches: usize,
    /// How long a search request waits for a free slot before it is refused (503).
    pub queue_wait: Duration,
    /// The access token required on `/api/`; `None`: no token.
    pub token: Option<String>,
}

/// Errors starting a server.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// A run directory is not one.
    #[error("{0}")]
    NotARun(String),
    /// The listening socket could not be opened or served.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// Whether a server listening on `addr` must require a token: any address but the
/// loopback interface.
pub fn needs_token(addr: &SocketAddr) -> bool {
    !addr.ip().is_loopback()
}

/// A fresh random token: 128 bits from the operating system's random source, hex.
pub fn generate_token() -> std::io::Result<String> {
    use std::io::Read;
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The router of a server over `config`'s runs. Each run must be a run directory.
pub fn router(config: ServeConfig) -> Result<Router, ServeError> {
    let state = api::AppState::new(config)?;
    Ok(api::routes(Arc::new(state)))
}

/// Serves `router` on `listener` until the process ends.
pub async fn serve(listener: tokio::net::TcpListener, router: Router) -> std::io::Result<()> {
    axum::serve(listener, router).await
}

/// Whether `host` (a `Host` header or a URI authority) names the loopback interface:
/// `localhost`, an IPv4 address of 127.0.0.0/8 or `[::1]`, with or without a port,
/// letters in any case. A server without a token answers only such requests, so a web
/// page of another site that makes its own name resolve to 127.0.0.1 (DNS rebinding)
/// cannot read runs or start searches: the browser sends that site's name as the Host.
pub fn is_loopback_host(host: &str) -> bool {
    let (name, port) = match host.strip_prefix('[') {
        Some(rest) => match rest.split_once(']') {
            Some((inside, "")) => (inside, None),
            Some((inside, after)) => match after.strip_prefix(':') {
                Some(port) => (inside, Some(port)),
                None => return false,
            },
            None => return false,
        },
        None => match host.split_once(':') {
            Some((name, port)) => (name, Some(port)),
            None => (host, None),
        },
    };
    let port_ok =
        port.is_none_or(|p| !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()));
    let bracketed = host.starts_with('[');
    let name_ok = if bracketed {
        name.parse::<std::net::Ipv6Addr>()
            .is_ok_and(|ip| ip.is_loopback())
    } else {
        name.eq_ignore_ascii_case("localhost")
            || name
                .parse::<std::net::Ipv4Addr>()
                .is_ok_and(|ip| ip.is_loopback())
    };
    port_ok && name_ok
}

/// `text` with the directory `dir` no longer named: `dir/x/y` becomes `x/y` (a path
/// relative to it) and `dir` itself becomes `name`. Each spelling of `dir` is replaced:
/// as given, made absolute, and with its links resolved.
pub(crate) fn hide_dir(text: &str, dir: &Path, name: &str) -> String {
    let mut forms: Vec<String> = vec![dir.display().to_string()];
    if let Ok(p) = std::path::absolute(dir) {
        forms.push(p.display().to_string());
    }
    if let Ok(p) = dir.canonicalize() {
        forms.push(p.display().to_string());
    }
    forms.retain(|f| !f.is_empty() && f != "." && f != "/");
    forms.sort_by_key(|f| std::cmp::Reverse(f.len()));
    forms.dedup();
    let mut out = text.to_string();
    for f in &forms {
        let f = f.trim_end_matches('/');
        out = out.replace(&format!("{f}/"), "");
        // The directory itself, where the path ends (not a longer name that starts so).
        let mut rest = out.as_str();
        let mut done = String::new();
        while let Some(i) = rest.find(f) {
            let after = &rest[i + f.len()..];
            let ends = after
                .chars()
                .next()
                .is_none_or(|c| !(c.is_alphanumeric() || "-_.~".contains(c)));
            done.push_str(&rest[..i]);
            done.push_str(if ends { name } else { f });
            rest = after;
        }
        done.push_str(rest);
        out = done;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts_are_told_from_other_names() {
        for h in [
            "127.0.0.1",
            "127.0.0.1:8080",
            "localhost",
            "LocalHost:80",
            "[::1]",
            "[::1]:8080",
            "127.1.2.3:9",
        ] {
            assert!(is_loopback_host(h), "{h}");
        }
        for h in [
            "",
            "evil.example",
            "evil.example:8080",
            "localhost.evil.example",
            "localhost.",
            "127.0.0.1.nip.io",
            "10.0.0.1",
            "0.0.0.0:8080",
            "[::2]:80",
            "::1",
            "[::1",
            "[::1]x",
            "127.0.0.1:",
            "127.0.0.1:80:80",
            "127.0.0.1:http",
            "localhost:123456",
            "[::ffff:127.0.0.1]",
        ] {
            assert!(!is_loopback_host(h), "{h}");
        }
    }

    #[test]
    fn a_directory_is_hidden_in_messages() {
        let d = Path::new("/srv/data/runs/a");
        assert_eq!(
            hide_dir("/srv/data/runs/a/eval/gen-0003.json: corrupt", d, "run `a`"),
            "eval/gen-0003.json: corrupt"
        );
        assert_eq!(
            hide_dir("/srv/data/runs/a is not a run", d, "run `a`"),
            "run `a` is not a run"
        );
        assert_eq!(
            hide_dir("see /srv/data/runs/ab/x", d, "run `a`"),
            "see /srv/data/runs/ab/x"
        );
    }

    #[test]
    fn a_token_is_needed_beyond_loopback() {
        assert!(!needs_token(&"127.0.0.1:8080".parse().unwrap()));
        assert!(!needs_token(&"[::1]:8080".parse().unwrap()));
        assert!(needs_token(&"0.0.0.0:8080".parse().unwrap()));
        assert!(needs_token(&"192.168.1.5:80".parse().unwrap()));
        let (a, b) = (generate_token().unwrap(), generate_token().unwrap());
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
    }
}
