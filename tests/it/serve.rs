//! `flipzero serve` over HTTP: every API endpoint on a finished micro run, bad input
//! (unknown run, bad position, illegal move, traversal attempts) answered with the right
//! status and a message, the token check, the Host check of a server without a token,
//! the search slots against clients that hang up, corrupt records, and the page's assets.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;

use engine::Game;
use serde_json::{Value, json};

/// A finished micro run (two generations), made once per test binary and shared.
pub fn micro_run() -> &'static Path {
    // Never dropped (a static): the next run removes it, its process gone.
    static RUN: OnceLock<rundir::Scratch> = OnceLock::new();
    RUN.get_or_init(|| {
        let dir = rundir::Scratch::temp("serve", "run");
        let out = Command::new(env!("CARGO_BIN_EXE_flipzero"))
            .arg("run")
            .arg("--run")
            .arg(&dir)
            .arg("--quiet")
            .args(crate::pipeline::MICRO)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "micro run failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        dir
    })
}

/// A `flipzero serve` process on a free port of 127.0.0.1, stopped when dropped.
pub struct Server {
    child: Child,
    /// `host:port`.
    pub addr: String,
    /// The token it printed, if any.
    pub token: Option<String>,
}

impl Server {
    /// Starts a server over `runs` with extra arguments.
    pub fn start(runs: &[&Path], extra: &[&str]) -> Server {
        let mut c = Command::new(env!("CARGO_BIN_EXE_flipzero"));
        c.arg("serve");
        if !extra.contains(&"--listen") {
            c.args(["--listen", "127.0.0.1:0"]);
        }
        for r in runs {
            c.arg("--run").arg(r);
        }
        let mut child = c
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let addr = line
            .trim()
            .strip_prefix("flipzero serve: http://")
            .unwrap_or_else(|| panic!("unexpected first line `{line}`"));
        let (addr, rest) = addr.split_once('/').unwrap();
        let token = rest.strip_prefix("?token=").map(str::to_string);
        Server {
            child,
            addr: addr.to_string(),
            token,
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A plain HTTP/1.1 exchange: status and body.
pub fn request(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> (u16, String) {
    request_to(addr, Some(addr), method, path, headers, body)
}

/// Like [`request`], with the Host header `host` (none: no Host header).
pub fn request_to(
    addr: &str,
    host: Option<&str>,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> (u16, String) {
    let (status, _, body) = exchange(addr, host, method, path, headers, body);
    (status, body)
}

/// A plain HTTP/1.1 exchange: status, head (lower case) and body.
pub fn exchange(
    addr: &str,
    host: Option<&str>,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> (u16, String, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    let mut req = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    if let Some(h) = host {
        req.push_str(&format!("Host: {h}\r\n"));
    }
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    if let Some(b) = body {
        req.push_str(&format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            b.len()
        ));
    }
    req.push_str("\r\n");
    req.push_str(body.unwrap_or(""));
    s.write_all(req.as_bytes()).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let text = String::from_utf8_lossy(&raw).to_string();
    let (head, body) = text.split_once("\r\n\r\n").expect("a response head");
    assert!(
        !head
            .to_ascii_lowercase()
            .contains("transfer-encoding: chunked"),
        "chunked answer to {path}"
    );
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, head.to_ascii_lowercase(), body.to_string())
}

fn get(addr: &str, path: &str) -> (u16, Value) {
    let (s, b) = request(addr, "GET", path, &[], None);
    (
        s,
        serde_json::from_str(&b).unwrap_or_else(|e| panic!("{path}: not JSON ({e}): {b}")),
    )
}

fn post(addr: &str, path: &str, body: &Value) -> (u16, Value) {
    let (s, b) = request(addr, "POST", path, &[], Some(&body.to_string()));
    (
        s,
        serde_json::from_str(&b).unwrap_or_else(|e| panic!("{path}: not JSON ({e}): {b}")),
    )
}

/// A 4xx answer with a message.
fn refused(addr: &str, path: &str, status: u16) -> String {
    let (s, v) = get(addr, path);
    assert_eq!(s, status, "{path}: {v}");
    v["error"]
        .as_str()
        .unwrap_or_else(|| panic!("{path}: no message: {v}"))
        .to_string()
}

/// A copy of the directory `from` at `to`.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let p = e.path();
        if p.is_dir() {
            copy_dir(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).unwrap();
        }
    }
}

/// A copy of the micro run, for a test to change: removed when dropped.
pub struct RunCopy(pub rundir::Scratch);

impl RunCopy {
    /// A fresh copy named after `what`.
    pub fn new(what: &str) -> RunCopy {
        let dir = rundir::Scratch::temp("serve", what);
        copy_dir(micro_run(), &dir);
        RunCopy(dir)
    }

    /// Cuts file `rel` of the run to half its length (a write that never finished).
    pub fn truncate(&self, rel: &str) {
        let path = self.0.join(rel);
        let len = std::fs::metadata(&path).unwrap().len();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(len / 2)
            .unwrap();
    }
}

fn enc(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The self-play rows of generation `g` of `run`, by game.
pub fn shard_games(run: &Path, g: u32) -> BTreeMap<u64, Vec<selfplay::Sample>> {
    let dir = run.join("selfplay").join(format!("gen-{g:04}"));
    let mut out: BTreeMap<u64, Vec<selfplay::Sample>> = BTreeMap::new();
    for f in selfplay::shard_files(&dir).unwrap() {
        for s in selfplay::read_shard(&f).unwrap().0 {
            out.entry(s.game_id).or_default().push(s);
        }
    }
    for v in out.values_mut() {
        v.sort_by_key(|s| s.ply);
    }
    out
}

#[test]
fn api_dashboard_and_games_of_a_micro_run() {
    let run = micro_run();
    let srv = Server::start(&[run], &[]);
    let a = &srv.addr;

    let (s, runs) = get(a, "/api/runs");
    assert_eq!(s, 200);
    let id = runs[0]["id"].as_str().unwrap().to_string();
    assert_eq!(runs.as_array().unwrap().len(), 1);
    assert_eq!(runs[0]["generations"], 2);

    let (s, d) = get(a, &format!("/api/runs/{id}"));
    assert_eq!(s, 200);
    let gens = d["generations"].as_array().unwrap();
    assert_eq!(gens.len(), 2);
    assert_eq!(gens[0]["selfplay"]["games"], 8);
    assert_eq!(d["elapsed_s"].as_array().unwrap().len(), 2);
    // Both generations anchored against random and greedy.
    let elo = d["elo"].as_array().unwrap();
    assert_eq!(elo.len(), 4, "{elo:?}");
    assert_eq!(d["anchor"], "greedy");
    let rated: Vec<&str> = d["ratings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert!(
        rated.contains(&"random") && rated.contains(&"greedy"),
        "{rated:?}"
    );
    let loss = &d["losses"][0];
    assert_eq!(loss["name"], "loss");
    assert!(!loss["points"].as_array().unwrap().is_empty());

    // Every self-play game of each generation is listed, with its plies and result.
    let (s, list) = get(a, &format!("/api/runs/{id}/games?source=selfplay"));
    assert_eq!(s, 200);
    let list = list.as_array().unwrap();
    for g in 0..2u32 {
        let rows = shard_games(run, g);
        let listed: Vec<&Value> = list.iter().filter(|l| l["generation"] == g).collect();
        assert_eq!(listed.len(), rows.len());
        assert_eq!(rows.len(), 8);
        for l in listed {
            assert_eq!(
                l["plies"].as_u64().unwrap() as usize,
                rows[&l["id"].as_u64().unwrap()].len()
            );
        }
    }
    // Filters: generation and result.
    let (_, g1) = get(
        a,
        &format!("/api/runs/{id}/games?generation=1&source=selfplay"),
    );
    assert_eq!(g1.as_array().unwrap().len(), 8);
    assert!(g1.as_array().unwrap().iter().all(|l| l["generation"] == 1));
    for r in ["1-0", "0-1", "1/2-1/2"] {
        let (_, f) = get(a, &format!("/api/runs/{id}/games?result={}", enc(r)));
        assert!(f.as_array().unwrap().iter().all(|l| l["result"] == r));
    }
    // Gating and anchoring games are listed from the evaluation records.
    let (_, anchors) = get(a, &format!("/api/runs/{id}/games?source=anchor"));
    let anchors = anchors.as_array().unwrap();
    assert_eq!(
        anchors.len(),
        2 * 2 * 2 * 2,
        "2 generations × 2 baselines × 2 pairs × 2 games"
    );
    assert!(
        anchors
            .iter()
            .all(|l| l["viewable"] == true && l["plies"].as_u64().unwrap() > 0)
    );
    let (_, gates) = get(a, &format!("/api/runs/{id}/games?source=gate"));
    let gates = gates.as_array().unwrap();
    let gate_games = d["generations"][1]["eval"]["gate"]["matched"]["games"]
        .as_u64()
        .unwrap();
    assert_eq!(gates.len() as u64, gate_games);
    // Each match game replays through the engine to the result its record gives.
    for l in anchors.iter().chain(gates) {
        let path = format!(
            "/api/runs/{id}/matches/{}/{}/{}",
            l["generation"],
            l["source"].as_str().unwrap(),
            l["id"]
        );
        let (s, m) = get(a, &path);
        assert_eq!(s, 200, "{path}: {m}");
        assert_eq!(
            m["plies"].as_array().unwrap().len() as u64,
            l["plies"].as_u64().unwrap()
        );
        let g: Game = m["game"].as_str().unwrap().parse().unwrap();
        let mut st = g
            .parse_position(m["plies"][0]["view"]["position"].as_str().unwrap())
            .unwrap();
        for p in m["plies"].as_array().unwrap() {
            assert_eq!(p["view"]["position"], st.text().as_str());
            st.play(st.parse_move(p["played"].as_str().unwrap()).unwrap());
        }
        assert_eq!(m["end"]["position"], st.text().as_str());
        if let Some(r) = st.result() {
            assert_eq!(l["reason"], r.reason.name());
            assert_eq!(m["end"]["outcome"]["result"], l["result"]);
        }
    }
    refused(a, &format!("/api/runs/{id}/matches/0/gate/0"), 404);
    refused(a, &format!("/api/runs/{id}/matches/1/anchor/999"), 404);
    refused(a, &format!("/api/runs/{id}/matches/1/selfplay/0"), 400);
    refused(a, &format!("/api/runs/{id}/matches/1/..%2F..%2Fetc/0"), 400);

    // One game, ply by ply: each position is the record's, each move the one played,
    // and the end is the engine's position after the last move.
    let rows = shard_games(run, 1);
    let (gid, rows) = rows.iter().next().unwrap();
    let (s, game) = get(a, &format!("/api/runs/{id}/games/1/{gid}"));
    assert_eq!(s, 200, "{game}");
    let plies = game["plies"].as_array().unwrap();
    assert_eq!(plies.len(), rows.len());
    let g: Game = rows[0].variant.parse().unwrap();
    let mut last = None;
    for (p, r) in plies.iter().zip(rows) {
        assert_eq!(p["view"]["position"], r.fen.as_str());
        let st = g.parse_position(&r.fen).unwrap();
        let mv = st.parse_move(p["played"].as_str().unwrap()).unwrap();
        assert_eq!(st.policy_index(mv), r.played as usize);
        let total: f64 = p["policy"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["p"].as_f64().unwrap())
            .sum();
        assert!((total - 1.0).abs() < 1e-3, "policy sums to {total}");
        assert_eq!(p["policy"].as_array().unwrap().len(), r.legal.len());
        assert!((p["root_q"].as_f64().unwrap() - f64::from(r.root_q)).abs() < 1e-6);
        last = Some(st.after(mv));
    }
    assert_eq!(game["end"]["position"], last.unwrap().text().as_str());

    // Unknown run, generation, game; malformed ids; traversal attempts.
    assert!(refused(a, "/api/runs/nope", 404).contains("nope"));
    refused(a, "/api/runs/nope/games", 404);
    refused(a, &format!("/api/runs/{id}/games/1/999999"), 404);
    refused(a, &format!("/api/runs/{id}/games/7/0"), 404);
    refused(a, &format!("/api/runs/{id}/games/x/0"), 400);
    refused(a, &format!("/api/runs/{id}/games/1/-1"), 400);
    refused(a, &format!("/api/runs/{id}/games?generation=-1"), 400);
    refused(a, &format!("/api/runs/{id}/games?result=win"), 400);
    refused(a, &format!("/api/runs/{id}/games?source=disk"), 400);
    for t in [
        "..",
        "..%2F..%2Fetc",
        "%2Fetc%2Fpasswd",
        "..%5C..",
        "%2E%2E",
    ] {
        refused(a, &format!("/api/runs/{t}"), 404);
        refused(a, &format!("/api/runs/{t}/games/0/0"), 404);
    }
    let (s, _) = request(a, "GET", "/assets/..%2F..%2FCargo.toml", &[], None);
    assert_eq!(s, 404);
    let (s, _) = request(a, "GET", "/assets/../../Cargo.toml", &[], None);
    assert_eq!(s, 404);
    refused(a, "/api/nothing", 404);
}

#[test]
fn api_positions_moves_and_players() {
    let run = micro_run();
    let srv = Server::start(&[run], &["--max-searches", "1"]);
    let a = &srv.addr;
    let (_, runs) = get(a, "/api/runs");
    let id = runs[0]["id"].as_str().unwrap().to_string();

    let (s, names) = get(a, "/api/games");
    assert_eq!(s, 200);
    assert_eq!(names.as_array().unwrap().len(), engine::GAME_NAMES.len());

    // Every game's start: its cells, pieces, blockers and legal moves are the engine's.
    for name in engine::GAME_NAMES {
        let g: Game = name.parse().unwrap();
        let st = g.startpos();
        let (s, v) = get(a, &format!("/api/position?game={}", enc(name)));
        assert_eq!(s, 200, "{name}: {v}");
        assert_eq!(v["position"], st.text().as_str());
        let cells = v["cells"].as_array().unwrap();
        assert_eq!(cells.len(), g.cells().len(), "{name}");
        let pieces = cells.iter().filter(|c| !c["piece"].is_null()).count() as u32;
        assert_eq!(pieces, st.counts()[0] + st.counts()[1], "{name}");
        assert_eq!(
            v["legal"].as_array().unwrap().len(),
            st.legal_moves().len(),
            "{name}"
        );
        assert_eq!(
            v["shape"],
            if name.starts_with("hexxagon") {
                "hex"
            } else {
                "square"
            }
        );
    }
    // A position with blockers, given as text.
    let fen = "x5o/7/2-1-2/7/2-1-2/7/o5x x 0 1";
    let (s, v) = get(
        a,
        &format!("/api/position?game=ataxx&position={}", enc(fen)),
    );
    assert_eq!(s, 200, "{v}");
    assert_eq!(
        v["cells"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["blocked"] == true)
            .count(),
        4
    );

    // A move: the engine's next position; a forced pass is flagged.
    let (s, v) = get(a, "/api/move?game=ataxx&move=a7b6");
    assert_eq!(s, 200, "{v}");
    let st = "ataxx".parse::<Game>().unwrap().startpos();
    let mv = st.parse_move("a7b6").unwrap();
    assert_eq!(v["position"], st.after(mv).text().as_str());
    assert_eq!(v["side_to_move"], "o");
    let stuck = "1xxxxxx/xxxxxxx/xxxxxxx/xxxxxxx/xxxxxxx/xxxxxxx/xxxxxxo o 0 1";
    let (s, v) = get(
        a,
        &format!("/api/position?game=ataxx&position={}", enc(stuck)),
    );
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["must_pass"], true, "{v}");
    assert!(v["outcome"].is_null());
    let (s, v) = get(
        a,
        &format!("/api/move?game=ataxx&position={}&move=0000", enc(stuck)),
    );
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["side_to_move"], "x");
    let full = "xxxxxxx/xxxxxxx/xxxxxxx/xxxxxxx/xxxxxxx/xxxxxxx/xxxxxoo x 0 1";
    let (s, v) = get(
        a,
        &format!("/api/position?game=ataxx&position={}", enc(full)),
    );
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["outcome"]["result"], "1-0");
    assert_eq!(v["outcome"]["reason"], "full-board");
    assert!(
        v["outcome"]["explanation"]
            .as_str()
            .unwrap()
            .contains("x wins by 45"),
        "{v}"
    );
    assert!(v["legal"].as_array().unwrap().is_empty());

    // Bad input: 400 with a message.
    assert!(refused(a, "/api/position?game=chess", 400).contains("chess"));
    refused(a, "/api/position", 400);
    assert!(refused(a, "/api/position?game=ataxx&position=x5o%2F7", 400).contains("bad position"));
    assert!(refused(a, "/api/move?game=ataxx&move=a1a1", 400).contains("illegal"));
    refused(a, "/api/move?game=ataxx&move=zz", 400);
    refused(a, "/api/move?game=ataxx&move=0000", 400);
    refused(a, "/api/move?game=ataxx", 400);
    refused(
        a,
        &format!("/api/move?game=ataxx&position={}&move=a1", enc(full)),
        400,
    );
    let long = "x".repeat(5000);
    refused(a, &format!("/api/position?game=ataxx&position={long}"), 400);

    // Players: a legal move from each allowed kind; external engines and paths refused.
    for p in [
        "random",
        "greedy",
        "ab2",
        "mcts:bootstrap:sims=8",
        &format!("mcts:{id}:sims=8"),
    ] {
        let (s, v) = post(
            a,
            "/api/think",
            &json!({"game": "ataxx", "player": p, "seed": 3}),
        );
        assert_eq!(s, 200, "{p}: {v}");
        let mv = st.parse_move(v["move"].as_str().unwrap()).unwrap();
        assert!(st.is_legal(mv));
        assert_eq!(v["view"]["position"], st.after(mv).text().as_str());
    }
    let (s, v) = post(
        a,
        "/api/think",
        &json!({"game": "othello", "player": "greedy"}),
    );
    assert_eq!(s, 200, "{v}");
    for (p, status) in [
        ("uai:/bin/sh", 403),
        ("nboard:/bin/sh", 403),
        ("mcts:/etc", 403),
        (&format!("mcts:{}", run.display()) as &str, 403),
        ("mcts:../x", 403),
        ("nobody", 400),
        ("mcts:bootstrap:sims=100000", 400),
    ] {
        let (s, v) = post(a, "/api/think", &json!({"game": "ataxx", "player": p}));
        assert_eq!(s, status, "{p}: {v}");
        assert!(v["error"].is_string());
    }
    let (s, v) = post(
        a,
        "/api/think",
        &json!({"game": "ataxx", "position": full, "player": "random"}),
    );
    assert_eq!(s, 400, "{v}");
    let (s, body) = request(a, "POST", "/api/think", &[], Some("{not json"));
    assert_eq!(s, 400, "{body}");
    let (s, body) = request(a, "POST", "/api/think", &[], Some("{\"game\": \"ataxx\"}"));
    assert_eq!(s, 400, "{body}");

    // Analysis: the network's policy over the legal moves (sums to 1) and a value.
    for net in ["bootstrap", id.as_str(), &format!("{id}/gen-0001")] {
        let (s, v) = post(a, "/api/analyse", &json!({"game": "ataxx", "net": net}));
        assert_eq!(s, 200, "{net}: {v}");
        let pol = v["policy"].as_array().unwrap();
        assert_eq!(pol.len(), st.legal_moves().len());
        let total: f64 = pol.iter().map(|e| e["p"].as_f64().unwrap()).sum();
        assert!((total - 1.0).abs() < 1e-3, "{net}: policy sums to {total}");
        assert!(v["value"].as_f64().unwrap().abs() <= 1.0);
    }
    for (net, status) in [
        ("../etc", 403),
        ("/tmp", 403),
        (&format!("{id}/gen-0009") as &str, 404),
        (&format!("{id}/x"), 400),
    ] {
        let (s, v) = post(a, "/api/analyse", &json!({"game": "ataxx", "net": net}));
        assert_eq!(s, status, "{net}: {v}");
    }
    // A network of another game.
    let (s, v) = post(a, "/api/analyse", &json!({"game": "othello", "net": id}));
    assert_eq!(s, 400, "{v}");
}

#[test]
fn token_and_assets() {
    let run = micro_run();
    let srv = Server::start(&[run], &["--token", "s3cret"]);
    assert_eq!(srv.token.as_deref(), Some("s3cret"));
    let a = &srv.addr;
    let (s, v) = get(a, "/api/runs");
    assert_eq!(s, 401, "{v}");
    let (s, _) = request(
        a,
        "GET",
        "/api/runs",
        &[("x-flipzero-token", "wrong")],
        None,
    );
    assert_eq!(s, 401);
    let (s, _) = request(
        a,
        "GET",
        "/api/runs",
        &[("x-flipzero-token", "s3cret")],
        None,
    );
    assert_eq!(s, 200);
    let (s, _) = get(a, "/api/runs?token=s3cret");
    assert_eq!(s, 200);
    // Beyond the loopback interface a token is generated, printed, and required.
    let open = Server::start(&[run], &["--listen", "0.0.0.0:0"]);
    let token = open.token.clone().expect("a generated token");
    assert_eq!(token.len(), 32);
    let port = open.addr.rsplit(':').next().unwrap();
    let local = format!("127.0.0.1:{port}");
    let (s, _) = get(&local, "/api/runs");
    assert_eq!(s, 401);
    let (s, _) = request(
        &local,
        "GET",
        "/api/runs",
        &[("x-flipzero-token", &token)],
        None,
    );
    assert_eq!(s, 200);
    drop(open);
    // The page and its assets need no token (they hold no data), and are embedded.
    let (s, html) = request(a, "GET", "/", &[], None);
    assert_eq!(s, 200);
    assert!(html.contains("/assets/app.js"));
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "no outside resource"
    );
    for f in ["app.js", "app.css"] {
        let (s, body) = request(a, "GET", &format!("/assets/{f}"), &[], None);
        assert_eq!(s, 200);
        assert!(!body.contains("https://"), "{f} loads nothing from outside");
    }
    let (s, _) = request(a, "GET", "/assets/nothing.js", &[], None);
    assert_eq!(s, 404);

    // Not a run directory: the server does not start.
    let out = Command::new(env!("CARGO_BIN_EXE_flipzero"))
        .args(["serve", "--listen", "127.0.0.1:0", "--run", "/"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a run directory"));
}

#[test]
fn searches_beyond_the_bound_wait_then_are_refused() {
    let run = micro_run();
    // One search slot, a tenth of a second of waiting for it; one search holds it 3 s.
    let srv = Server::start(&[run], &["--max-searches", "1", "--queue-wait", "0.1"]);
    let a = srv.addr.clone();
    let slow = std::thread::spawn(move || {
        post(
            &a,
            "/api/think",
            &json!({"game": "ataxx", "player": "ab:time=3000"}),
        )
    });
    // The slow search has started once a second one is refused; retry until then.
    std::thread::sleep(std::time::Duration::from_millis(300));
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(2500);
    let mut refused_busy = false;
    while std::time::Instant::now() < deadline {
        let (s, v) = post(&srv.addr, "/api/analyse", &json!({"game": "ataxx"}));
        if s == 503 {
            assert!(v["error"].as_str().unwrap().contains("busy"));
            refused_busy = true;
            break;
        }
        assert_eq!(s, 200, "{v}");
    }
    assert!(refused_busy, "a second search ran beside the first");
    // Positions and moves are not searches: answered at once meanwhile.
    let (s, _) = get(&srv.addr, "/api/position?game=ataxx");
    assert_eq!(s, 200);
    let (s, v) = slow.join().unwrap();
    assert_eq!(s, 200, "{v}");
    // Free again.
    let (s, v) = post(&srv.addr, "/api/analyse", &json!({"game": "ataxx"}));
    assert_eq!(s, 200, "{v}");
}

#[test]
fn several_runs_are_served_side_by_side() {
    let run = micro_run();
    // The same run twice: two ids, each its own dashboard.
    let srv = Server::start(&[run, run], &[]);
    let (s, runs) = get(&srv.addr, "/api/runs");
    assert_eq!(s, 200);
    let ids: Vec<&str> = runs
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 2);
    assert_eq!(ids[1], format!("{}-2", ids[0]));
    for id in ids {
        let (s, d) = get(&srv.addr, &format!("/api/runs/{id}"));
        assert_eq!(s, 200);
        assert_eq!(d["id"], id);
        assert_eq!(d["generations"].as_array().unwrap().len(), 2);
        let (s, v) = post(
            &srv.addr,
            "/api/think",
            &json!({"game": "ataxx", "player": format!("mcts:{id}:sims=4")}),
        );
        assert_eq!(s, 200, "{v}");
    }
}

/// CPU seconds (user and system) process `pid` has used so far. /proc counts in
/// USER_HZ, which is 100 on Linux.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // After the command name in parentheses: state, then utime and stime at 12 and 13.
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    ticks as f64 / 100.0
}

#[test]
fn searches_whose_clients_hung_up_stop_and_free_their_slots() {
    use std::time::{Duration, Instant};
    let run = micro_run();
    let srv = Server::start(&[run], &["--max-searches", "2"]);
    let pid = srv.child.id();
    let body = json!({"game": "ataxx", "player": "ab:time=6000"}).to_string();
    // Six six-second searches asked for: two run, four wait for a slot.
    let clients: Vec<TcpStream> = (0..6)
        .map(|_| {
            let mut s = TcpStream::connect(&srv.addr).unwrap();
            write!(
                s,
                "POST /api/think HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                srv.addr,
                body.len()
            )
            .unwrap();
            s
        })
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    let before = cpu_seconds(pid);
    std::thread::sleep(Duration::from_millis(400));
    let searching = cpu_seconds(pid) - before;
    assert!(
        searching >= 0.1,
        "the searches are not running: {searching} CPU s in 0.4 s"
    );
    // Every client hangs up after a fraction of a second.
    drop(clients);
    std::thread::sleep(Duration::from_millis(300));
    // The searches stop: the server is idle, not searching on for nobody.
    let before = cpu_seconds(pid);
    std::thread::sleep(Duration::from_secs(1));
    let after_hangup = cpu_seconds(pid) - before;
    assert!(
        after_hangup < 0.1,
        "searches went on after their clients hung up: {after_hangup} CPU s in the next second"
    );
    // Their slots are free again: a new search is answered at once.
    let t = Instant::now();
    let (s, v) = post(
        &srv.addr,
        "/api/think",
        &json!({"game": "ataxx", "player": "ab:time=200"}),
    );
    assert_eq!(s, 200, "{v}");
    assert!(
        t.elapsed() < Duration::from_millis(1500),
        "{:?}",
        t.elapsed()
    );
}

#[test]
fn a_server_without_a_token_answers_only_loopback_host_names() {
    let run = micro_run();
    let srv = Server::start(&[run], &[]);
    let a = &srv.addr;
    let port = a.rsplit(':').next().unwrap();
    let think = json!({"game": "ataxx", "player": "random"}).to_string();
    // Another site's name (DNS rebinding), with and without a port; names that only
    // start or end like a loopback name; an address of another interface.
    for host in [
        "evil.example".to_string(),
        format!("evil.example:{port}"),
        format!("localhost.evil.example:{port}"),
        "127.0.0.1.nip.io".into(),
        format!("10.1.2.3:{port}"),
        format!("127.0.0.1:{port}@evil.example"),
    ] {
        for (method, path, body) in [
            ("GET", "/api/runs", None),
            ("POST", "/api/think", Some(think.as_str())),
            ("GET", "/", None),
            ("GET", "/assets/app.js", None),
        ] {
            let (s, b) = request_to(a, Some(&host), method, path, &[], body);
            assert_eq!(s, 403, "{host} {path}: {b}");
            let v: Value = serde_json::from_str(&b).unwrap();
            let msg = v["error"].as_str().unwrap();
            assert!(
                msg.contains(&format!("Host `{host}` is not a loopback name"))
                    && msg.contains("--token"),
                "{msg}"
            );
        }
    }
    let (s, b) = request_to(a, None, "GET", "/api/runs", &[], None);
    assert_eq!(s, 403, "{b}");
    assert!(b.contains("no Host header"), "{b}");
    // A second Host header does not get a foreign name through.
    let (s, b) = request(a, "GET", "/api/runs", &[("Host", "evil.example")], None);
    assert!((400..500).contains(&s), "{s}: {b}");
    // The loopback names, with or without the port, in any case.
    for host in [
        a.to_string(),
        "127.0.0.1".into(),
        format!("localhost:{port}"),
        "LocalHost".into(),
        format!("[::1]:{port}"),
    ] {
        let (s, b) = request_to(a, Some(&host), "GET", "/api/runs", &[], None);
        assert_eq!(s, 200, "{host}: {b}");
        let (s, b) = request_to(a, Some(&host), "POST", "/api/think", &[], Some(&think));
        assert_eq!(s, 200, "{host}: {b}");
    }
    // A server with a token answers any name: the token keeps others out.
    let srv = Server::start(&[run], &["--token", "s3cret"]);
    let (s, _) = request_to(
        &srv.addr,
        Some("evil.example"),
        "GET",
        "/api/runs",
        &[],
        None,
    );
    assert_eq!(s, 401);
    let (s, b) = request_to(
        &srv.addr,
        Some("flipzero.lan:8080"),
        "GET",
        "/api/runs",
        &[("x-flipzero-token", "s3cret")],
        None,
    );
    assert_eq!(s, 200, "{b}");
}

#[test]
fn a_corrupt_record_leaves_out_only_itself_and_no_answer_shows_a_server_path() {
    let copy = RunCopy::new("corrupt");
    let dir = &copy.0;
    copy.truncate("eval/gen-0001.json");
    copy.truncate("selfplay/gen-0000/summary.json");
    copy.truncate("models/gen-0001/model.json");
    let srv = Server::start(&[dir], &[]);
    let a = &srv.addr;
    let canonical = dir.canonicalize().unwrap();
    let no_path = |what: &str, body: &str| {
        for p in [dir.display().to_string(), canonical.display().to_string()] {
            assert!(!body.contains(&p), "{what} shows the server's path: {body}");
        }
        assert!(
            !body.contains(&std::env::temp_dir().display().to_string()),
            "{what}: {body}"
        );
    };
    // The run is listed with both generations, and the two bad records named.
    let (s, b) = request(a, "GET", "/api/runs", &[], None);
    assert_eq!(s, 200, "{b}");
    no_path("/api/runs", &b);
    let runs: Value = serde_json::from_str(&b).unwrap();
    assert_eq!(runs[0]["generations"], 2, "{runs}");
    let id = runs[0]["id"].as_str().unwrap().to_string();
    let problems = runs[0]["problems"].as_array().unwrap();
    let named: Vec<(u64, &str)> = problems
        .iter()
        .map(|p| {
            (
                p["generation"].as_u64().unwrap(),
                p["file"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        named,
        [
            (0, "selfplay/gen-0000/summary.json"),
            (1, "eval/gen-0001.json")
        ]
    );
    for p in problems {
        assert!(
            p["problem"].as_str().unwrap().contains("corrupt record"),
            "{p}"
        );
    }
    // The dashboard: every intact record, the bad ones absent and listed.
    let (s, b) = request(a, "GET", &format!("/api/runs/{id}"), &[], None);
    assert_eq!(s, 200, "{b}");
    no_path("the dashboard", &b);
    let d: Value = serde_json::from_str(&b).unwrap();
    let gens = d["generations"].as_array().unwrap();
    assert_eq!(gens.len(), 2);
    assert!(
        gens[0]["selfplay"].is_null()
            && gens[0]["train"].is_object()
            && gens[0]["eval"].is_object()
    );
    assert!(
        gens[1]["selfplay"].is_object()
            && gens[1]["train"].is_object()
            && gens[1]["eval"].is_null()
    );
    assert_eq!(d["problems"].as_array().unwrap().len(), 2);
    // The rating list from generation 0's anchoring games (2 baselines × 2 pairs × 2).
    let games: u64 = d["ratings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["games"].as_u64().unwrap())
        .sum();
    assert_eq!(games, 2 * 8, "each game counts for both players: {d}");
    // The games of the intact records are listed.
    let (s, b) = request(
        a,
        "GET",
        &format!("/api/runs/{id}/games?source=anchor"),
        &[],
        None,
    );
    assert_eq!(s, 200, "{b}");
    assert_eq!(
        serde_json::from_str::<Value>(&b)
            .unwrap()
            .as_array()
            .unwrap()
            .len(),
        8
    );
    // A network whose model.json is cut short: an error naming the file within the run.
    let (s, b) = request(
        a,
        "POST",
        "/api/analyse",
        &[],
        Some(&json!({"game": "ataxx", "net": format!("{id}/gen-0001")}).to_string()),
    );
    assert!((400..600).contains(&s), "{s}: {b}");
    no_path("a broken network", &b);
    assert!(b.contains("models/gen-0001/model.json"), "{b}");
}

/// The value of header `name` (lower case) in a response head.
fn header_of(head: &str, name: &str) -> Option<String> {
    head.lines().find_map(|l| {
        l.strip_prefix(&format!("{name}: "))
            .map(|v| v.trim().to_string())
    })
}

#[test]
fn the_dashboard_polls_incrementally_and_an_unchanged_run_costs_no_body() {
    let run = micro_run();
    let srv = Server::start(&[run], &[]);
    let a = &srv.addr;
    let (_, runs) = get(a, "/api/runs");
    let id = runs[0]["id"].as_str().unwrap().to_string();
    // Every generation's network can be chosen by name.
    assert_eq!(runs[0]["models"], json!(["gen-0000", "gen-0001"]));

    let path = format!("/api/runs/{id}");
    let (s, head, body) = exchange(a, Some(a), "GET", &path, &[], None);
    assert_eq!(s, 200);
    let d: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(d["total_generations"], 2);
    // The games of each match are not sent (the rating list is computed from them).
    for g in d["generations"].as_array().unwrap() {
        for m in g["eval"]["anchor"].as_array().unwrap() {
            assert!(m["games"].as_u64().unwrap() > 0);
            assert_eq!(m["results"], json!([]), "{m}");
        }
    }
    // A finished run: both generations done, nobody holds it.
    assert_eq!(d["status"]["state"], "finished", "{}", d["status"]);
    assert_eq!(d["status"]["generations_done"], 2);
    assert_eq!(d["status"]["generations_planned"], 2);
    assert_eq!(d["status"]["holder"], Value::Null);
    assert!(d["status"]["positions"].as_u64().unwrap() > 0);

    // Unchanged: 304 with no body; a stale tag gets the whole answer.
    let tag = header_of(&head, "etag").expect("an ETag");
    let (s, _, body) = exchange(a, Some(a), "GET", &path, &[("If-None-Match", &tag)], None);
    assert_eq!((s, body.as_str()), (304, ""));
    // Compared weakly (a compressing proxy marks the tag W/), and in a list.
    let weak = format!("\"x\", W/{tag}");
    let (s, _, _) = exchange(a, Some(a), "GET", &path, &[("If-None-Match", &weak)], None);
    assert_eq!(s, 304);
    let (s, _, body) = exchange(
        a,
        Some(a),
        "GET",
        &path,
        &[("If-None-Match", "\"0-1\"")],
        None,
    );
    assert_eq!(s, 200);
    assert_eq!(serde_json::from_str::<Value>(&body).unwrap(), d);

    // From generation 1 on: its records, its time and its Elo points only.
    let (s, part) = get(a, &format!("{path}?from=1"));
    assert_eq!(s, 200);
    assert_eq!(part["total_generations"], 2);
    let gens = part["generations"].as_array().unwrap();
    assert_eq!(gens.len(), 1);
    assert_eq!(gens[0], d["generations"][1]);
    assert_eq!(part["elapsed_s"], json!([d["elapsed_s"][1]]));
    assert!(
        part["elo"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["generation"] == 1)
    );
    assert_eq!(part["elo"].as_array().unwrap().len(), 2);
    assert_eq!(part["ratings"], d["ratings"]);
    assert!(refused(a, &format!("{path}?from=x"), 400).contains("from"));

    // The config as the run saved it.
    let (s, c) = get(a, &format!("{path}/config"));
    assert_eq!(s, 200);
    let text = c["text"].as_str().unwrap();
    assert!(
        text.contains("[run]") && text.contains("generations = 2"),
        "{text}"
    );
}

#[test]
fn a_runs_status_follows_its_lock_holder() {
    let run = micro_run();
    let dir = rundir::Scratch::temp("serve-status", "");
    copy_dir(run, &dir);
    let srv = Server::start(&[&dir], &[]);
    let a = &srv.addr;
    let (_, runs) = get(a, "/api/runs");
    let id = runs[0]["id"].as_str().unwrap().to_string();
    let host = rundir::host_name();
    let state = |lock: &str, planned: &str| {
        std::fs::write(dir.join("run.lock"), lock).unwrap();
        let cfg = std::fs::read_to_string(run.join("config.toml")).unwrap();
        std::fs::write(
            dir.join("config.toml"),
            cfg.replace("generations = 2", &format!("generations = {planned}")),
        )
        .unwrap();
        let (_, d) = get(a, &format!("/api/runs/{id}"));
        d["status"].clone()
    };
    // This test process stands in for a live `flipzero run` with generations left.
    let me = format!(
        "flipzero run, PID {} on host {host}, since 1 (Unix time)\n",
        std::process::id()
    );
    let s = state(&me, "5");
    assert_eq!(s["state"], "running", "{s}");
    assert_eq!(s["holder"], me.trim());
    assert_eq!(s["generations_planned"], 5);
    // The last line of the micro run's log is its last anchoring match of generation 1.
    assert_eq!(s["generation"], 1, "{s}");
    assert!(s["last_line_unix"].as_u64().unwrap() > 1_700_000_000);
    assert!(s["eta_unix"].as_u64().is_some(), "{s}");
    // The holder died with generations left: stalled; none holds it: stopped.
    let dead = format!(
        "flipzero run, PID {} on host {host}, since 1 (Unix time)\n",
        u32::MAX - 3
    );
    let s = state(&dead, "5");
    assert_eq!(s["state"], "stalled", "{s}");
    assert_eq!(s["holder"], Value::Null);
    assert_eq!(state("", "5")["state"], "stopped");
    assert_eq!(state("", "2")["state"], "finished");
    // A run that ended with its final net (run.final_net_hidden: its newest generation's
    // record says so) is finished, with generations left and its budget unused.
    let record = dir.join("models/gen-0001/train.json");
    let text = std::fs::read_to_string(&record).unwrap();
    let mut marked: Value = serde_json::from_str(&text).unwrap();
    marked["final_net"] = Value::Bool(true);
    std::fs::write(&record, marked.to_string()).unwrap();
    assert_eq!(state("", "5")["state"], "finished");
    std::fs::write(&record, text).unwrap();
    assert_eq!(state("", "5")["state"], "stopped");
    // Held on another machine: running while its log is recent (the micro run's is).
    let elsewhere = "flipzero run, PID 1 on host some-other-machine, since 1 (Unix time)\n";
    assert_eq!(state(elsewhere, "5")["state"], "running");
    // A lock that names no process: not taken for a live one.
    assert_eq!(state("hello", "5")["state"], "stalled");
    // A log line naming the run's directory is shown without it.
    let dir_text = dir.canonicalize().unwrap().display().to_string();
    let mut log = std::fs::OpenOptions::new()
        .append(true)
        .open(dir.join("run.log"))
        .unwrap();
    writeln!(
        log,
        "1796000000 [  1s] run {dir_text}: 5 generations of ataxx"
    )
    .unwrap();
    let s = state(&me, "5");
    let line = s["last_line"].as_str().unwrap();
    assert!(
        !line.contains(&dir_text) && line.contains("run `"),
        "{line}"
    );
    // The run's own files are read where they are, never through a link out of it: a
    // linked lock, log or config shows nothing of what it points to.
    let outside = dir.with_extension("outside");
    std::fs::write(&outside, format!("{me}secret-text\n")).unwrap();
    for f in ["run.lock", "run.log", "config.toml"] {
        std::fs::rename(dir.join(f), dir.join(format!("{f}.real"))).unwrap();
        std::os::unix::fs::symlink(&outside, dir.join(f)).unwrap();
    }
    let (_, d) = get(a, &format!("/api/runs/{id}"));
    assert!(!d.to_string().contains("secret-text"), "{}", d["status"]);
    assert_ne!(d["status"]["state"], "running");
    let (st, c) = get(a, &format!("/api/runs/{id}/config"));
    assert_eq!(st, 404, "{c}");
    assert!(c["error"].as_str().unwrap().contains("is a link"), "{c}");
    assert!(!c.to_string().contains("secret-text"));
    drop(srv);
    let _ = std::fs::remove_file(&outside);
}

#[test]
fn a_search_shows_each_candidate_with_its_visits_value_prior_and_line() {
    let run = micro_run();
    let srv = Server::start(&[run], &[]);
    let a = &srv.addr;
    let (_, runs) = get(a, "/api/runs");
    let id = runs[0]["id"].as_str().unwrap().to_string();
    let game: Game = "ataxx".parse().unwrap();
    let start = game.startpos();
    for net in [id.clone(), format!("{id}/gen-0000"), "bootstrap".into()] {
        let (s, r) = post(
            a,
            "/api/search",
            &json!({"game": "ataxx", "net": net, "sims": 200, "seed": 1}),
        );
        assert_eq!(s, 200, "{r}");
        assert_eq!(r["net"], net.as_str());
        assert_eq!(r["sims"], 200);
        let c = r["candidates"].as_array().unwrap();
        assert_eq!(c.len(), start.legal_moves().len());
        let visits: Vec<u64> = c.iter().map(|m| m["visits"].as_u64().unwrap()).collect();
        // Every simulation passes through one candidate.
        assert_eq!(visits.iter().sum::<u64>(), 200, "{visits:?}");
        assert!(
            visits.windows(2).all(|w| w[0] >= w[1]),
            "most visited first: {visits:?}"
        );
        let prior: f64 = c.iter().map(|m| m["prior"].as_f64().unwrap()).sum();
        assert!((prior - 1.0).abs() < 1e-3, "{prior}");
        for m in c {
            let pv: Vec<&str> = m["pv"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_str().unwrap())
                .collect();
            assert_eq!(pv[0], m["text"].as_str().unwrap());
            // The line is legal from the start position on.
            let mut st = start;
            for t in &pv {
                let mv = st.parse_move(t).unwrap_or_else(|e| panic!("{t}: {e}"));
                assert!(st.is_legal(mv), "{t} in {pv:?}");
                st = st.after(mv);
            }
            if m["visits"].as_u64().unwrap() > 1 {
                assert!(pv.len() >= 2, "{m}");
                let q = m["q"].as_f64().unwrap();
                assert!((-1.0..=1.0).contains(&q), "{q}");
            }
        }
        // The same seed searches the same tree.
        let (_, again) = post(
            a,
            "/api/search",
            &json!({"game": "ataxx", "net": net, "sims": 200, "seed": 1}),
        );
        assert_eq!(again["candidates"], r["candidates"]);
    }
    // A won position: the search proves the capture that wipes the opponent out.
    let won = "xo5/7/7/7/7/7/7 x 0 1";
    let (s, r) = post(
        a,
        "/api/search",
        &json!({"game": "ataxx", "position": won, "net": id, "sims": 50}),
    );
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["candidates"][0]["proof"], "win", "{r}");
    // A forced move (x's only move is the pass) is not searched: no value.
    let forced = "xoooooo/ooooooo/ooooooo/ooooooo/ooooooo/ooooooo/oooooo1 x 0 1";
    let (s, r) = post(
        a,
        "/api/search",
        &json!({"game": "ataxx", "position": forced, "net": id, "sims": 50}),
    );
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["value"], Value::Null, "{r}");
    assert_eq!(r["candidates"].as_array().unwrap().len(), 1);
    for (sims, why) in [(0, "sims = 0"), (20_001, "sims = 20001")] {
        let (s, r) = post(
            a,
            "/api/search",
            &json!({"game": "ataxx", "net": id, "sims": sims}),
        );
        assert_eq!(s, 400);
        assert!(r["error"].as_str().unwrap().contains(why), "{r}");
    }
    let (s, r) = post(
        a,
        "/api/search",
        &json!({"game": "ataxx", "net": "/etc", "sims": 10}),
    );
    assert_eq!(s, 403, "{r}");
}
