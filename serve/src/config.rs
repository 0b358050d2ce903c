//! What a server serves and who may ask: its settings and start-up errors, and the
//! access rules (the loopback Host check, the token).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

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
