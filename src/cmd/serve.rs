//! `flipzero serve`: the web dashboard, game viewer and board (see the `serve` crate).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Args;

/// Arguments of `flipzero serve`.
#[derive(Args)]
pub struct ServeArgs {
    /// A run directory to show (repeat for several; read only).
    #[arg(long = "run")]
    runs: Vec<PathBuf>,
    /// Address and port to listen on. Anything but the loopback interface requires a
    /// token; without one, only requests addressed to localhost, 127.0.0.1 or [::1]
    /// are answered (others get 403: DNS rebinding).
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// The access token (default on a non-loopback address: a random one, printed).
    #[arg(long)]
    token: Option<String>,
    /// Searches (a player's move, an analysis) running at once, at most. A search
    /// whose client hangs up is stopped; it keeps its slot until it has.
    #[arg(long, default_value_t = 2)]
    max_searches: usize,
    /// Seconds a search request waits for a free slot before it is refused (503).
    #[arg(long, default_value_t = 30.0)]
    queue_wait: f64,
}

/// Serves until the process is stopped.
pub fn run(a: ServeArgs) -> anyhow::Result<()> {
    let token = match a.token {
        Some(t) if t.is_empty() => anyhow::bail!("--token must not be empty"),
        Some(t) => Some(t),
        None if serve::needs_token(&a.listen) => {
            Some(serve::generate_token().context("cannot generate an access token")?)
        }
        None => None,
    };
    let config = serve::ServeConfig {
        runs: a.runs,
        max_searches: a.max_searches,
        queue_wait: Duration::try_from_secs_f64(a.queue_wait)
            .context("--queue-wait: expected a number of seconds")?,
        token: token.clone(),
    };
    let router = serve::router(config)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the server's runtime")?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(a.listen)
            .await
            .with_context(|| format!("cannot listen on {}", a.listen))?;
        let addr = listener.local_addr()?;
        match &token {
            Some(t) => println!("flipzero serve: http://{addr}/?token={t}"),
            None => println!("flipzero serve: http://{addr}/"),
        }
        serve::serve(listener, router)
            .await
            .context("the server stopped")
    })
}
