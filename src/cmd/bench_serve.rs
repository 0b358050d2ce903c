//! `flipzero bench serve`: how many dashboard viewers one server holds. A closed loop
//! of N clients on 127.0.0.1, each asking for a run's dashboard (what an open page asks
//! for every 2 s) as soon as the last answer came; latency percentiles and throughput at
//! each N. Clients and server share the machine's cores, so the figures are a floor.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;

/// How often an open dashboard asks for its run (see serve/assets/app.js).
const POLL_S: f64 = 2.0;

fn get(addr: SocketAddr, path: &str) -> anyhow::Result<usize> {
    let mut s = TcpStream::connect(addr)?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )?;
    let mut body = Vec::new();
    s.read_to_end(&mut body)?;
    anyhow::ensure!(body.starts_with(b"HTTP/1.1 200"), "{path}: not 200");
    Ok(body.len())
}

/// Runs the load levels against a server over `run`, on `threads` runtime threads.
pub fn run(run: &Path, threads: usize, seconds: f64) -> anyhow::Result<()> {
    let config = serve::ServeConfig {
        runs: vec![run.to_path_buf()],
        max_searches: 1,
        queue_wait: Duration::from_secs(1),
        token: None,
    };
    let router = serve::router(config)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .max_blocking_threads(threads)
        .enable_all()
        .build()?;
    let listener = rt.block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))?;
    let addr = listener.local_addr()?;
    rt.spawn(serve::serve(listener, router));
    let id = serde_json_id(addr)?;
    let path = format!("/api/runs/{id}");
    let bytes = get(addr, &path).context("the dashboard request fails")?;
    println!("server: {threads} runtime threads; request: GET {path} ({bytes} bytes answered)");
    println!(
        "{:>8} {:>10} {:>9} {:>9} {:>9} {:>16}",
        "clients", "requests/s", "p50 ms", "p99 ms", "max ms", "viewers at 1/2s"
    );
    for clients in [1usize, 4, 16, 64] {
        let stop = Arc::new(AtomicBool::new(false));
        let handles: Vec<_> = (0..clients)
            .map(|_| {
                let (stop, path) = (stop.clone(), path.clone());
                std::thread::spawn(move || {
                    let mut lat = vec![];
                    while !stop.load(Ordering::Relaxed) {
                        let t = Instant::now();
                        if get(addr, &path).is_err() {
                            return Err(());
                        }
                        lat.push(t.elapsed().as_secs_f64() * 1e3);
                    }
                    Ok(lat)
                })
            })
            .collect();
        std::thread::sleep(Duration::from_secs_f64(seconds));
        stop.store(true, Ordering::Relaxed);
        let mut lat = vec![];
        for h in handles {
            lat.extend(
                h.join()
                    .map_err(|_| anyhow::anyhow!("a client panicked"))?
                    .map_err(|_| anyhow::anyhow!("a request failed under load"))?,
            );
        }
        lat.sort_by(f64::total_cmp);
        let q = |p: f64| lat[((lat.len() - 1) as f64 * p).round() as usize];
        let rate = lat.len() as f64 / seconds;
        println!(
            "{clients:>8} {rate:>10.0} {:>9.1} {:>9.1} {:>9.1} {:>16.0}",
            q(0.5),
            q(0.99),
            lat[lat.len() - 1],
            rate * POLL_S
        );
    }
    Ok(())
}

/// The id of the served run.
fn serde_json_id(addr: SocketAddr) -> anyhow::Result<String> {
    let mut s = TcpStream::connect(addr)?;
    write!(
        s,
        "GET /api/runs HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )?;
    let mut text = String::new();
    s.read_to_string(&mut text)?;
    let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    let v: serde_json::Value = serde_json::from_str(body)?;
    v[0]["id"]
        .as_str()
        .map(str::to_string)
        .context("the server lists no run")
}
