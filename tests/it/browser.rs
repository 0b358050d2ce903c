//! `flipzero serve` in a real browser (Debian's chromium, headless, over WebDriver with
//! chromedriver): the dashboard of a micro run and a generation published while it is
//! open, a whole game played by clicks against `random`, the game viewer stepping
//! through a recorded game; screenshots of the three pages under target/screenshots/.
//! The dashboard's results column and corrupt records; the play board when the game
//! changes while the engine thinks.
//!
//! The browser is installed by `.ci/install-browser` (run by `make test` and `.ci/run`);
//! without it these tests fail and say so, rather than pass without running.

use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use engine::{Game, MoveKind, State};
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};

use crate::serve::{RunCopy, Server, copy_dir, micro_run, shard_games};

/// chromedriver on a free port, stopped when dropped.
pub(crate) struct Driver {
    child: Child,
    port: u16,
    /// Removed when dropped, after the browser is stopped (fields drop after `drop`).
    profile: rundir::Scratch,
}

impl Driver {
    pub(crate) fn start() -> Driver {
        for tool in ["chromium", "chromedriver"] {
            let found = std::env::var_os("PATH")
                .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()));
            assert!(
                found,
                "`{tool}` is not installed: run `.ci/install-browser` as root (Debian: apt-get install chromium chromium-driver)"
            );
        }
        // A free port is free when asked, not when chromedriver binds it: a server of a
        // test beside this one may take it first (chromedriver then exits, and the port
        // answers, but not as chromedriver). So: chromedriver's own `/status`, or
        // another port.
        let (child, port) = (0..5)
            .find_map(|_| {
                let port = std::net::TcpListener::bind("127.0.0.1:0")
                    .unwrap()
                    .local_addr()
                    .unwrap()
                    .port();
                let mut child = Command::new("chromedriver")
                    .arg(format!("--port={port}"))
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .unwrap();
                let deadline = Instant::now() + Duration::from_secs(20);
                loop {
                    if child.try_wait().unwrap().is_some() {
                        return None;
                    }
                    if chromedriver_ready(port) {
                        return Some((child, port));
                    }
                    if Instant::now() > deadline {
                        let _ = child.kill();
                        let _ = child.wait();
                        return None;
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
            })
            .expect("chromedriver did not start (5 ports tried)");
        // One profile per browser: tests run side by side.
        static BROWSERS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = BROWSERS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let profile = rundir::Scratch::temp("chromium", &n.to_string());
        Driver {
            child,
            port,
            profile,
        }
    }

    pub(crate) async fn client(&self) -> Client {
        let args = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--window-size=1400,1100",
        ];
        let mut args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        args.push(format!("--user-data-dir={}", self.profile.display()));
        let caps = json!({"goog:chromeOptions": {"args": args}});
        let Value::Object(caps) = caps else {
            unreachable!()
        };
        ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(caps)
            .connect(&format!("http://127.0.0.1:{}", self.port))
            .await
            .expect("a chromium session")
    }
}

/// Whether chromedriver answers its `/status` on `port` as ready.
fn chromedriver_ready(port: u16) -> bool {
    use std::io::{Read, Write};
    let Ok(mut c) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = c.set_read_timeout(Some(Duration::from_secs(2)));
    // HTTP/1.1 with the port in `Host`: chromedriver answers HTTP/1.0 with nothing.
    let request =
        format!("GET /status HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    if c.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut reply = Vec::new();
    let _ = c.read_to_end(&mut reply);
    let reply = String::from_utf8_lossy(&reply);
    reply.contains("\"ready\":true") || reply.contains("\"ready\": true")
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `flipzero serve` over `runs`, a chromedriver beside it, and the page's address.
pub(crate) fn serve_and_browser(runs: &[&Path]) -> (Server, Driver, String) {
    let srv = Server::start(runs, &[]);
    let driver = Driver::start();
    let base = format!("http://{}", srv.addr);
    (srv, driver, base)
}

/// A script that waits for the game viewer to show ply `k`, and returns its position.
pub(crate) fn viewer_at(k: usize) -> String {
    format!(
        "const b = document.getElementById('view-board'); return b.dataset.ply === '{k}' && b.dataset.position"
    )
}

/// Evaluates `script` until it returns something other than null or false.
pub(crate) async fn wait_for(c: &Client, script: &str, what: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let v = c.execute(script, vec![]).await.unwrap();
        if !(v.is_null() || v == Value::Bool(false)) {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Opens `url` and waits for the page to be ready.
pub(crate) async fn open(c: &Client, url: &str) {
    c.goto(url).await.unwrap();
    wait_for(
        c,
        "return document.body.dataset.ready === 'true'",
        "the page",
    )
    .await;
}

pub(crate) async fn screenshot(c: &Client, name: &str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target")
        .join("screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(name), c.screenshot().await.unwrap()).unwrap();
}

pub(crate) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap()
}

/// The records that publish generation 1 of a run: moved aside, then back.
const GEN1: [&str; 3] = [
    "selfplay/gen-0001/summary.json",
    "models/gen-0001/train.json",
    "eval/gen-0001.json",
];

#[test]
fn browser_dashboard_viewer_and_a_game_against_random() {
    let run = micro_run();
    // A copy of the run with generation 1 not yet published.
    let live = rundir::Scratch::temp("browser", "live");
    copy_dir(run, &live);
    let held = live.join("held");
    std::fs::create_dir_all(&held).unwrap();
    for (i, f) in GEN1.iter().enumerate() {
        std::fs::rename(live.join(f), held.join(i.to_string())).unwrap();
    }
    let (_srv, driver, base) = serve_and_browser(&[&live]);
    runtime().block_on(async {
        let c = driver.client().await;

        // Dashboard: one generation, then the second appears without a reload.
        open(&c, &format!("{base}/#dashboard")).await;
        let rows = wait_for(
            &c,
            "const n = document.querySelectorAll('#gen-table tbody tr').length; return n > 0 && n;",
            "the generations table",
        )
        .await;
        assert_eq!(rows, 1);
        c.execute("window.__same_page = true; return null;", vec![]).await.unwrap();
        for (i, f) in GEN1.iter().enumerate() {
            std::fs::rename(held.join(i.to_string()), live.join(f)).unwrap();
        }
        let rows = wait_for(
            &c,
            "const n = document.querySelectorAll('#gen-table tbody tr').length; return n > 1 && n;",
            "the published generation",
        )
        .await;
        assert_eq!(rows, 2);
        let same = c.execute("return window.__same_page === true", vec![]).await.unwrap();
        assert_eq!(same, Value::Bool(true), "the page was reloaded");
        // The Elo chart: a line per baseline, a point per generation, and the run's
        // rating curve of its networks.
        let series = wait_for(
            &c,
            "const s = document.querySelectorAll('#elo-chart path.series[data-kind=sample]'); return s.length > 1 && s.length;",
            "the Elo chart",
        )
        .await;
        assert_eq!(series, 2);
        let curves = c
            .execute("return document.querySelectorAll('#elo-chart path.series[data-kind=curve]').length", vec![])
            .await
            .unwrap();
        assert_eq!(curves, 1);
        let points = c
            .execute("return +document.getElementById('elo-chart').dataset.points", vec![])
            .await
            .unwrap();
        assert_eq!(points, 4);
        let loss = c
            .execute("return document.querySelectorAll('#loss-chart path.series').length", vec![])
            .await
            .unwrap();
        assert!(loss.as_u64().unwrap() >= 1);
        screenshot(&c, "dashboard.png").await;

        // Game viewer: step through a recorded game; the board is the record's at each ply.
        open(&c, &format!("{base}/#games")).await;
        let games = shard_games(run, 1);
        let (gid, rows) = games.iter().next().unwrap();
        let sel = format!("#games-table tr.viewable[data-generation='1'][data-id='{gid}']");
        wait_for(&c, &format!("return !!document.querySelector(\"{sel}\")"), "the games list").await;
        c.find(Locator::Css(&sel)).await.unwrap().click().await.unwrap();
        let g: Game = rows[0].variant.parse().unwrap();
        let mut state: Option<State> = None;
        for (k, r) in rows.iter().enumerate() {
            let script = format!(
                "const b = document.getElementById('view-board'); return b.dataset.ply === '{k}' && b.dataset.position"
            );
            let shown = wait_for(&c, &script, "the viewer's ply").await;
            assert_eq!(shown, r.fen.as_str(), "ply {k}");
            let st = g.parse_position(&r.fen).unwrap();
            let mv = st
                .legal_moves()
                .into_iter()
                .find(|&m| st.policy_index(m) == r.played as usize)
                .unwrap();
            state = Some(st.after(mv));
            if k == 3 {
                screenshot(&c, "viewer.png").await;
            }
            c.find(Locator::Id("view-next")).await.unwrap().click().await.unwrap();
        }
        let script = format!(
            "const b = document.getElementById('view-board'); return b.dataset.ply === '{}' && b.dataset.position",
            rows.len()
        );
        let end = wait_for(&c, &script, "the viewer's end").await;
        assert_eq!(end, state.unwrap().text().as_str());

        // A whole game against random, by clicks; the result shown is the engine's.
        open(&c, &format!("{base}/?game=ataxx&player=random&side=x#play")).await;
        let read = "const b = document.getElementById('play-board'); const o = document.getElementById('play-outcome'); \
                    return b.dataset.busy === 'false' && (o.dataset.result ? ['over', b.dataset.position, o.dataset.result] \
                    : b.dataset.turn === 'human' && ['move', b.dataset.position]);";
        let game: Game = "ataxx".parse().unwrap();
        let mut clicks = 0;
        let mut shot = false;
        let shown = loop {
            let v = wait_for(&c, read, "the human's turn").await;
            let pos = game.parse_position(v[1].as_str().unwrap()).unwrap();
            if v[0] == "over" {
                break (pos, v[2].as_str().unwrap().to_string());
            }
            if !shot && clicks >= 6 {
                screenshot(&c, "play.png").await;
                shot = true;
            }
            // The move with the largest gain (a clone when tied): short games.
            let mv = pos
                .legal_moves()
                .into_iter()
                .max_by_key(|&m| (pos.gain(m), matches!(m.kind(), MoveKind::Clone { .. })))
                .unwrap();
            // An empty cell is clicked on its background, a piece on the piece.
            let cell = |sq: engine::Square| format!("#play-board g[data-cell='{}'] .cell-bg", sq.index());
            let piece = |sq: engine::Square| format!("#play-board g[data-cell='{}'] .piece-x", sq.index());
            match mv.kind() {
                MoveKind::Pass => {
                    c.find(Locator::Id("play-pass")).await.unwrap().click().await.unwrap();
                }
                MoveKind::Clone { to } => {
                    c.find(Locator::Css(&cell(to))).await.unwrap().click().await.unwrap();
                }
                MoveKind::Jump { from, to } => {
                    c.find(Locator::Css(&piece(from))).await.unwrap().click().await.unwrap();
                    c.find(Locator::Css(&cell(to))).await.unwrap().click().await.unwrap();
                }
            }
            clicks += 1;
            // Wait for the page to take the move.
            let before = pos.text();
            let script = format!(
                "return document.getElementById('play-board').dataset.position !== {}",
                json!(before)
            );
            wait_for(&c, &script, "the move to be played").await;
            assert!(clicks < 400, "the game does not end");
        };
        let (end, result) = shown;
        let r = end.result().expect("the page says over, so must the engine");
        let expected = match r.winner {
            Some(engine::Side::X) => "1-0",
            Some(engine::Side::O) => "0-1",
            None => "1/2-1/2",
        };
        assert_eq!(result, expected);
        let text = c.find(Locator::Id("play-outcome")).await.unwrap().text().await.unwrap();
        assert!(text.contains(&format!("x {}, o {}", r.counts[0], r.counts[1])), "{text}");
        if !shot {
            screenshot(&c, "play.png").await;
        }

        // The other board shapes: every cell drawn (hexagons on the hexagonal board),
        // the blockers dark.
        for (name, shape) in [("hexxagon", "polygon"), ("annexation76-cross", "rect")] {
            open(&c, &format!("{base}/?game={name}&player=random#play")).await;
            let g: Game = name.parse().unwrap();
            let start = g.startpos();
            let blocked = g.cells().into_iter().filter(|&c| start.is_blocked(c)).count();
            let counts = c
                .execute(
                    &format!(
                        "const b = document.getElementById('play-board'); \
                         return [b.querySelectorAll('{shape}.cell-bg').length, \
                         b.querySelectorAll('.cell-bg.blocked').length, b.dataset.position]"
                    ),
                    vec![],
                )
                .await
                .unwrap();
            assert_eq!(counts, json!([g.cells().len(), blocked, start.text()]), "{name}");
            if name == "hexxagon" {
                // Analysis of the board: the network's policy over every legal move.
                c.find(Locator::Id("an-go")).await.unwrap().click().await.unwrap();
                let lines = wait_for(
                    &c,
                    "const t = document.getElementById('an-result').textContent; \
                     return t.includes('value') && document.getElementById('an-policy').textContent.split('\\n').length",
                    "the analysis",
                )
                .await;
                assert_eq!(lines, start.legal_moves().len().min(12));
                screenshot(&c, "play-hex.png").await;
            }
        }
        c.close().await.unwrap();
    });
}

#[test]
fn browser_results_column_reads_x_draws_o_and_a_corrupt_record_is_marked() {
    let copy = RunCopy::new("browser-results");
    // Distinct counts, so that any other order shows: 5 x wins, 2 o wins, 1 draw.
    let path = copy.0.join("selfplay/gen-0000/summary.json");
    let mut summary: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(summary["games"], 8);
    summary["results"] = json!([5, 2, 1]);
    std::fs::write(&path, summary.to_string()).unwrap();
    copy.truncate("eval/gen-0001.json");
    let srv = Server::start(&[&copy.0], &[]);
    let driver = Driver::start();
    runtime().block_on(async {
        let c = driver.client().await;
        c.goto(&format!("http://{}/#dashboard", srv.addr))
            .await
            .unwrap();
        wait_for(
            &c,
            "return document.body.dataset.ready === 'true'",
            "the page",
        )
        .await;
        let rows = wait_for(
            &c,
            "const n = document.querySelectorAll('#gen-table tbody tr').length; return n > 0 && n;",
            "the generations table",
        )
        .await;
        assert_eq!(
            rows, 2,
            "both generations, the one with a corrupt record too"
        );
        let col = c
            .execute(
                "const h = document.querySelectorAll('#gen-table thead th'); \
                 const r = document.querySelectorAll('#gen-table tbody tr'); \
                 return [h[4].textContent, r[0].cells[4].textContent];",
                vec![],
            )
            .await
            .unwrap();
        // The fifth column: games won by x, drawn, won by o.
        assert_eq!(col, json!(["x wins / draws / o wins", "5 / 1 / 2"]));
        // The generation with a corrupt record is marked, and the file named.
        let marked = c
            .execute(
                "const r = document.querySelectorAll('#gen-table tbody tr'); \
                 return [r[0].classList.contains('problem'), r[1].classList.contains('problem'), \
                 document.getElementById('gen-problems').textContent];",
                vec![],
            )
            .await
            .unwrap();
        assert_eq!(marked[0], false);
        assert_eq!(marked[1], true);
        let note = marked[2].as_str().unwrap();
        assert!(
            note.contains("generation 1: eval/gen-0001.json") && note.contains("corrupt record"),
            "{note}"
        );
        c.close().await.unwrap();
    });
}

#[test]
fn browser_an_old_games_reply_never_lands_on_a_new_game() {
    // Each engine move takes 1.5 s: long enough to act while it thinks.
    let (_srv, driver, base) = serve_and_browser(&[]);
    let think = Duration::from_millis(1500);
    runtime().block_on(async {
        let c = driver.client().await;
        c.goto(&format!("{base}/?game=ataxx&player=ab:time=1500&side=o#play"))
            .await
            .unwrap();
        wait_for(&c, "return document.body.dataset.ready === 'true'", "the page").await;
        let board = "const b = document.getElementById('play-board'); \
                     return b.dataset.busy === 'false' && b.dataset.turn === 'human' \
                     && [b.dataset.game, b.dataset.position, document.getElementById('play-moves').dataset.moves];";

        // New game while the engine thinks, twice: one game, with the one engine move.
        for _ in 0..2 {
            c.execute("document.getElementById('play-new').click(); return null;", vec![])
                .await
                .unwrap();
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
        c.execute("document.getElementById('play-new').click(); return null;", vec![])
            .await
            .unwrap();
        wait_for(&c, board, "the engine's move").await;
        // Every earlier think would have answered by now.
        tokio::time::sleep(think).await;
        let v = wait_for(&c, board, "the human's turn").await;
        let game: Game = "ataxx".parse().unwrap();
        let moves: Vec<&str> = v[2].as_str().unwrap().split_whitespace().collect();
        assert_eq!(moves.len(), 1, "one engine move in the new game, not {moves:?}");
        let start = game.startpos();
        let after = start.after(start.parse_move(moves[0]).unwrap());
        assert_eq!(v[0], "ataxx");
        assert_eq!(v[1], after.text().as_str());

        // Another game while the engine thinks: the board is that game's, and stays so.
        c.execute("document.getElementById('play-new').click(); return null;", vec![])
            .await
            .unwrap();
        wait_for(
            &c,
            "return document.getElementById('play-board').dataset.busy === 'true'",
            "the engine to think",
        )
        .await;
        c.execute(
            "document.getElementById('play-side').value = 'x'; \
             const g = document.getElementById('play-game'); g.value = 'hexxagon'; \
             g.dispatchEvent(new Event('change')); return null;",
            vec![],
        )
        .await
        .unwrap();
        let hex: Game = "hexxagon".parse().unwrap();
        let v = wait_for(&c, board, "the new game").await;
        assert_eq!(v[0], "hexxagon");
        tokio::time::sleep(think + Duration::from_millis(500)).await;
        let v = wait_for(&c, board, "the human's turn").await;
        assert_eq!(
            v,
            json!(["hexxagon", hex.startpos().text(), ""]),
            "the old game's answer landed on the new board"
        );
        let selected = c
            .execute("return document.getElementById('play-game').value", vec![])
            .await
            .unwrap();
        assert_eq!(selected, "hexxagon");
        c.close().await.unwrap();
    });
}

/// A run of 132 generations (0 to 131): the evaluation records of the project's 2-hour run
/// (docs/strength/run), which the dashboard reads as a real run's.
fn run_131() -> rundir::Scratch {
    let dir = rundir::Scratch::temp("browser", "131");
    std::fs::create_dir_all(&dir).unwrap();
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/strength/run");
    std::fs::copy(docs.join("config.toml"), dir.join("config.toml")).unwrap();
    let st = Command::new("tar")
        .arg("xf")
        .arg(docs.join("eval-json.tar.xz"))
        .current_dir(&dir)
        .status()
        .unwrap();
    assert!(st.success());
    assert_eq!(std::fs::read_dir(dir.join("eval")).unwrap().count(), 132);
    dir
}

/// Bytes of the API's answers the page has received so far (headers and bodies, as
/// the browser's resource timing counts them).
const API_BYTES: &str = "return performance.getEntriesByType('resource').filter((e) => e.name.includes('/api/runs/')).reduce((n, e) => n + e.transferSize, 0);";

#[test]
fn browser_dashboard_status_charts_pages_and_an_idle_tabs_traffic() {
    let big = run_131();
    let (srv, driver, base) = serve_and_browser(&[&big, micro_run()]);
    runtime().block_on(async {
        let c = driver.client().await;
        open(&c, &format!("{base}/#dashboard")).await;
        // The newest 25 generations, then the older ones a page at a time.
        let page = wait_for(&c, "const t = document.getElementById('gen-page').textContent; return t.includes('132') && t;", "the pager").await;
        assert_eq!(page, "108–132 of 132");
        assert_eq!(c.execute("return document.querySelectorAll('#gen-table tbody tr').length", vec![]).await.unwrap(), 25);
        c.find(Locator::Id("gen-prev")).await.unwrap().click().await.unwrap();
        let first = c.execute("return [document.getElementById('gen-page').textContent, document.querySelector('#gen-table tbody tr').dataset.generation]", vec![]).await.unwrap();
        assert_eq!(first, json!(["83–107 of 132", "82"]));
        // The records alone (no log, no self-play or training records, so less time than
        // its budget, and fewer generations than its 500): not held, not finished.
        let state = c.execute("return document.querySelector('#run-status .badge').textContent", vec![]).await.unwrap();
        assert_eq!(state, "stopped");
        // The Elo chart: samples against each baseline and each run's rating curve with
        // its band (both runs are ticked).
        let kinds = c.execute("const s = document.getElementById('elo-chart'); return [s.querySelectorAll('path[data-kind=sample]').length, s.querySelectorAll('path[data-kind=curve]').length, s.querySelectorAll('polygon.band').length > 0]", vec![]).await.unwrap();
        assert_eq!(kinds[1], 2);
        assert!(kinds[0].as_u64().unwrap() >= 4, "{kinds}");
        assert_eq!(kinds[2], true);
        // Hover shows the values at the nearest generation.
        let tip = c.execute("const s = document.getElementById('elo-chart'); const r = s.getBoundingClientRect(); \
            s.dispatchEvent(new MouseEvent('mousemove', {clientX: r.left + r.width * 0.5, clientY: r.top + r.height / 2, bubbles: true})); \
            const t = s.parentNode.querySelector('.tip'); return [t.hidden, t.textContent, +s.dataset.hover];", vec![]).await.unwrap();
        assert_eq!(tip[0], false);
        assert!(tip[1].as_str().unwrap().starts_with("generation "), "{tip}");
        let g = tip[2].as_f64().unwrap();
        assert!((50.0..=80.0).contains(&g), "{tip}");
        // A drag across the middle third zooms to it; a double click shows all again.
        let zoom = c.execute("const s = document.getElementById('elo-chart'); const r = s.getBoundingClientRect(); const all = +s.dataset.points; \
            const ev = (t, f) => s.dispatchEvent(new MouseEvent(t, {clientX: r.left + r.width * f, clientY: r.top + 20, bubbles: true})); \
            ev('mousedown', 0.4); ev('mouseup', 0.7); const zoomed = +s.dataset.points; ev('dblclick', 0.5); return [all, zoomed, +s.dataset.points];", vec![]).await.unwrap();
        let (all, zoomed, back) = (zoom[0].as_u64().unwrap(), zoom[1].as_u64().unwrap(), zoom[2].as_u64().unwrap());
        assert!(zoomed > 0 && zoomed * 2 < all, "{zoom}");
        assert_eq!(back, all);
        // A click on a legend entry hides its series.
        let hidden = c.execute("const q = () => document.querySelector('#elo-chart ~ .legend-box .legend-item'); q().click(); \
            return [q().getAttribute('aria-pressed'), document.querySelectorAll('#elo-chart path[data-kind=curve]').length]", vec![]).await.unwrap();
        assert_eq!(hidden, json!(["false", 1]));
        c.execute("window.scrollTo(0, 0); return null;", vec![]).await.unwrap();
        screenshot(&c, "dashboard-131.png").await;

        // Config: the micro run's differences from the 2-hour run's.
        c.execute("const s = document.getElementById('cfg-other'); s.value = s.options[2].value; s.dispatchEvent(new Event('change')); return null;", vec![]).await.unwrap();
        let diff = wait_for(&c, "const r = [...document.querySelectorAll('#cfg-diff tr')].map((t) => t.cells[0].textContent); return r.length > 1 && r;", "the config diff").await;
        assert!(diff.as_array().unwrap().iter().any(|k| k == "run.generations"), "{diff}");
        assert!(diff.as_array().unwrap().iter().all(|k| k != "game"), "the same game is no difference: {diff}");

        // An idle tab: every poll of an unchanged run is a 304 without a body.
        tokio::time::sleep(Duration::from_secs(3)).await;
        let before = c.execute(API_BYTES, vec![]).await.unwrap().as_f64().unwrap();
        let t = Instant::now();
        tokio::time::sleep(Duration::from_secs(20)).await;
        let after = c.execute(API_BYTES, vec![]).await.unwrap().as_f64().unwrap();
        let per_minute = (after - before) / t.elapsed().as_secs_f64() * 60.0;
        let full = crate::serve::request(&srv.addr, "GET", &format!("/api/runs/{}", "flipzero-browser-".to_string() + &std::process::id().to_string() + "-131"), &[], None).1.len();
        eprintln!("idle dashboard: {per_minute:.0} bytes/minute; one whole answer {full} bytes");
        assert!(per_minute > 0.0, "the page stopped polling");
        // Headers only: a few hundred bytes a poll for each of the two runs.
        assert!(per_minute < 30_000.0, "{per_minute} bytes a minute");
        c.close().await.unwrap();
    });
    let _ = std::fs::remove_dir_all(&big);
}

#[test]
fn browser_study_a_game_analyse_and_play_from_a_ply_and_a_phone_screen() {
    let run = micro_run();
    let (_srv, driver, base) = serve_and_browser(&[run]);
    let id = run.file_name().unwrap().to_str().unwrap().to_string();
    let games = shard_games(run, 1);
    let (gid, rows) = games.iter().next().unwrap();
    let g: Game = rows[0].variant.parse().unwrap();
    runtime().block_on(async {
        let c = driver.client().await;
        // A link to a ply opens the game there.
        open(&c, &format!("{base}/#games/{id}/1/selfplay/{gid}/3")).await;
        let ply = viewer_at;
        assert_eq!(wait_for(&c, &ply(3), "ply 3").await, rows[3].fen.as_str());
        // The move list (a button a move) and the value graph (a point a ply).
        let counts = c.execute("return [document.querySelectorAll('#view-moves button.move').length, +document.getElementById('view-value').dataset.points, document.querySelector('#view-moves .current').dataset.ply]", vec![]).await.unwrap();
        assert_eq!(counts, json!([rows.len(), rows.len(), "3"]));
        // Keys step through the game; the link follows the ply.
        let key = |k: &str| format!("document.dispatchEvent(new KeyboardEvent('keydown', {{key: '{k}', bubbles: true}})); return null;");
        c.execute(&key("ArrowRight"), vec![]).await.unwrap();
        assert_eq!(wait_for(&c, &ply(4), "ply 4").await, rows[4].fen.as_str());
        assert!(c.current_url().await.unwrap().as_str().ends_with(&format!("/selfplay/{gid}/4")));
        c.execute(&key("End"), vec![]).await.unwrap();
        wait_for(&c, &ply(rows.len()), "the end").await;
        c.execute(&key("Home"), vec![]).await.unwrap();
        assert_eq!(wait_for(&c, &ply(0), "the start").await, rows[0].fen.as_str());
        // A click on a move shows the position after it.
        c.find(Locator::Css("#view-moves button.move[data-ply='2']")).await.unwrap().click().await.unwrap();
        assert_eq!(wait_for(&c, &ply(2), "ply 2").await, rows[2].fen.as_str());
        screenshot(&c, "study.png").await;

        // Analyse from here: the position goes to the analysis board, the network's
        // search grows to the chosen count, a second network beside it.
        c.execute("document.getElementById('an-sims').value = '100'; const n = document.getElementById('an-net2'); n.value = n.options[2].value; return null;", vec![]).await.unwrap();
        c.find(Locator::Id("view-analyse")).await.unwrap().click().await.unwrap();
        let done = wait_for(&c, "const a = document.getElementById('an-search'), b = document.getElementById('an-search2'); \
            return a.dataset.done === 'true' && b.dataset.done === 'true' && [document.getElementById('an-position').value, a.dataset.sims, b.dataset.sims, a.querySelectorAll('tr').length, location.hash];", "the searches").await;
        let st = g.parse_position(&rows[2].fen).unwrap();
        assert_eq!(done, json!([rows[2].fen, "100", "100", st.legal_moves().len().min(12) + 1, "#play"]));
        c.execute("document.getElementById('an-result').scrollIntoView(); return null;", vec![]).await.unwrap();
        screenshot(&c, "insight.png").await;

        // Play from here, as the side to move: the board starts at the viewed position.
        open(&c, &format!("{base}/#games/{id}/1/selfplay/{gid}/2")).await;
        wait_for(&c, &ply(2), "ply 2").await;
        let side = if st.side_to_move() == engine::Side::X { "x" } else { "o" };
        c.execute(&format!("document.getElementById('play-side').value = '{side}'; return null;"), vec![]).await.unwrap();
        c.find(Locator::Id("view-play")).await.unwrap().click().await.unwrap();
        let shown = wait_for(&c, "const b = document.getElementById('play-board'); return b.dataset.busy === 'false' && b.dataset.turn === 'human' && b.dataset.position", "the game from ply 2").await;
        assert_eq!(shown, rows[2].fen.as_str());

        // A phone: no page scrolls sideways.
        c.set_window_size(390, 844).await.unwrap();
        for page in ["dashboard", "games", "play"] {
            open(&c, &format!("{base}/#{page}")).await;
            let w = c.execute("return [document.documentElement.scrollWidth, window.innerWidth]", vec![]).await.unwrap();
            assert!(w[0].as_u64().unwrap() <= w[1].as_u64().unwrap(), "{page}: {w}");
            screenshot(&c, &format!("phone-{page}.png")).await;
        }
        c.close().await.unwrap();
    });
}
