//! The serverless player (`flipzero export --web`): the bundle of the second fast run's
//! best net, served by a plain static file server (Python's `http.server`) on
//! 127.0.0.1 and played in Chromium: the net against itself to a finished game, its
//! moves equal to the native player's (`mcts:DIR:sims=N`, the same seed); a human's
//! clicks, the net's replies, a take-back and a refused move; a phone-wide screen.
//! Screenshots under target/screenshots/.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::AtomicBool;

use eval::{PlayerSpec, Timeouts};
use fantoccini::{Client, Locator};
use serde_json::{Value, json};

use crate::browser::{Driver, open, runtime, screenshot, wait_for};

/// The second fast run's best net (docs/strength.md).
fn net() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/strength/fast-replay/best")
}

/// `python3 -m http.server` serving `dir` on a free port of 127.0.0.1, stopped when
/// dropped.
struct StaticServer {
    child: Child,
    port: u16,
}

impl StaticServer {
    fn start(dir: &Path) -> StaticServer {
        let mut child = Command::new("python3")
            .args([
                "-u",
                "-m",
                "http.server",
                "0",
                "--bind",
                "127.0.0.1",
                "--directory",
            ])
            .arg(dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3 (a plain static file server)");
        // "Serving HTTP on 127.0.0.1 port 40123 (http://127.0.0.1:40123/) ..."
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .split_whitespace()
            .skip_while(|w| *w != "port")
            .nth(1)
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no port in `{line}`"));
        StaticServer { child, port }
    }
}

impl Drop for StaticServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `flipzero export --web` of `model` into `dir` at `sims` and `seed`, which must succeed.
fn export_bundle(model: &Path, dir: &Path, sims: u32, seed: u64) {
    let out = Command::new(env!("CARGO_BIN_EXE_flipzero"))
        .args(["export", "--web", "--model"])
        .arg(model)
        .arg("--out")
        .arg(dir)
        .args(["--sims", &sims.to_string(), "--seed", &seed.to_string()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// On a page with x to move (the human's turn): a click on a hinted cell, then the
/// net's reply, checked against the native player's answer to that move; returns the
/// two moves.
async fn a_click_and_the_nets_reply(c: &Client, model: &Path, sims: u32, seed: u64) -> Value {
    let target = c
        .execute(
            "return document.querySelector('#board .cell circle.hint').parentNode.dataset.name",
            vec![],
        )
        .await
        .unwrap();
    let target = target.as_str().unwrap().to_string();
    c.find(Locator::Css(&format!("#board .cell[data-name='{target}']")))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let after = wait_for(
        c,
        "const m = document.getElementById('moves').dataset.moves.split(' '); return m.length === 2 && document.getElementById('board').dataset.turn === 'human' && m",
        "the net's reply",
    )
    .await;
    assert_eq!(after[0], json!(target));
    let game: engine::Game = "ataxx".parse().unwrap();
    let mut s = game.startpos();
    s.play(s.parse_move(&target).unwrap());
    let reply = native_player(model, sims, seed)
        .choose_until(&s, &AtomicBool::new(false))
        .unwrap();
    assert_eq!(after[1], json!(s.move_to_string(reply)));
    after
}

/// The native player the page's must equal: `mcts:MODEL:sims=N` built with `seed`.
fn native_player(model: &Path, sims: u32, seed: u64) -> Box<dyn eval::Player> {
    let spec: PlayerSpec = format!("mcts:{}:sims={sims}", model.display())
        .parse()
        .unwrap();
    let game: engine::Game = "ataxx".parse().unwrap();
    spec.build(game, seed, Timeouts::default()).unwrap()
}

/// The moves of a game the native player plays against itself from the start, one
/// player for both sides, as the page's player.
fn native_game(sims: u32, seed: u64) -> Vec<String> {
    let mut p = native_player(&net(), sims, seed);
    let mut s = "ataxx".parse::<engine::Game>().unwrap().startpos();
    let mut moves = Vec::new();
    while s.result().is_none() {
        let m = p.choose_until(&s, &AtomicBool::new(false)).unwrap();
        moves.push(s.move_to_string(m));
        s.play(m);
    }
    moves
}

#[test]
fn browser_the_exported_player_plays_the_native_players_moves_offline() {
    let (sims, seed) = (32, 11);
    let dir = rundir::Scratch::temp("web", "");
    export_bundle(&net(), &dir, sims, seed);
    let native = native_game(sims, seed);
    assert!(native.len() > 40, "{native:?}");

    let server = StaticServer::start(&dir);
    let driver = Driver::start();
    let base = format!("http://127.0.0.1:{}", server.port);
    runtime().block_on(async {
        let c = driver.client().await;
        // The net against itself, to the end of the game.
        open(&c, &format!("{base}/?human=none")).await;
        let moves = wait_for(
            &c,
            "const o = document.getElementById('outcome'); return o.dataset.result !== '' && document.getElementById('moves').dataset.moves",
            "the net's game to end",
        )
        .await;
        let web: Vec<&str> = moves.as_str().unwrap().split(' ').collect();
        assert_eq!(web, native, "the page's moves against the native player's");
        let shown = c
            .execute("return [document.getElementById('outcome').textContent, document.querySelectorAll('#moves .move').length, document.querySelectorAll('#lines tbody tr').length > 0, [...document.querySelectorAll('#moves .move-no')].map((n) => n.textContent), document.getElementById('search-note').textContent]", vec![])
            .await
            .unwrap();
        assert!(shown[0].as_str().unwrap().starts_with("Game over:"), "{shown}");
        assert_eq!(shown[1], json!(native.len()));
        assert_eq!(shown[2], json!(true));
        // Numbered by moves as flipzero serve numbers them: "1." before x's first move
        // and o's reply, "2." before the next pair.
        let numbers: Vec<String> = (1..=native.len().div_ceil(2)).map(|k| format!("{k}.")).collect();
        assert_eq!(shown[3], json!(numbers));
        // The value shown says for which side it is: the side that made the last move.
        let mover = if native.len() % 2 == 1 { "x" } else { "o" };
        let note = shown[4].as_str().unwrap();
        assert!(note.contains(&format!("for {mover} (+1: {mover} wins")), "{note}");
        screenshot(&c, "web-player-watch.png").await;

        // A human's game as x: a click places a piece, the net answers at once.
        c.execute("const h = document.getElementById('human'); h.value = 'x'; h.dispatchEvent(new Event('change')); document.getElementById('new').click(); return null;", vec![]).await.unwrap();
        let turn = "const b = document.getElementById('board'); return b.dataset.turn === 'human' && document.getElementById('moves').dataset.moves";
        assert_eq!(wait_for(&c, turn, "x to move").await, json!(""));
        let after = a_click_and_the_nets_reply(&c, &net(), sims, seed).await;
        screenshot(&c, "web-player.png").await;

        // A move typed that is not legal is refused, and nothing changes.
        c.execute("document.getElementById('move').value = 'a1g7'; document.getElementById('move-form').requestSubmit(); return null;", vec![]).await.unwrap();
        let refused = wait_for(&c, "const e = document.getElementById('error').textContent; return e !== '' && [e, document.getElementById('moves').dataset.moves]", "the refusal").await;
        assert!(refused[0].as_str().unwrap().contains("a1g7"), "{refused}");
        assert_eq!(refused[1], json!(after.as_array().unwrap().iter().map(|m| m.as_str().unwrap()).collect::<Vec<_>>().join(" ")));
        // Take back: the human's move and the net's reply.
        c.find(Locator::Id("undo")).await.unwrap().click().await.unwrap();
        assert_eq!(wait_for(&c, turn, "the start again").await, json!(""));

        // A phone: the page fits 390 px without sideways scrolling.
        c.set_window_size(390, 844).await.unwrap();
        let widths = wait_for(&c, "return [document.documentElement.scrollWidth, window.innerWidth]", "the layout").await;
        assert!(widths[0].as_u64().unwrap() <= widths[1].as_u64().unwrap(), "{widths}");
        screenshot(&c, "web-player-phone.png").await;
        c.close().await.unwrap();
    });
}

/// The shipped player's net (1024 hidden, 38 MB of float weights) exported for a phone:
/// the bundle is under 10 MB (the weights quantised and packed), loads at 390 px wide
/// and answers a move with the native player's reply (the same integers, the same
/// search). An earlier bundle's float weights file is removed when it is replaced.
#[test]
fn browser_the_shipped_net_in_a_bundle_under_10_mb_loads_and_plays_on_a_phone() {
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/strength/fast-quick/fresh1024");
    let (sims, seed) = (16, 3);
    let dir = rundir::Scratch::temp("web-phone", "");
    // An earlier (version 1) bundle in the folder: its float weights must not stay.
    std::fs::create_dir_all(dir.join("net")).unwrap();
    std::fs::write(
        dir.join("bundle.json"),
        r#"{"format": "flipzero-web-bundle", "version": 1, "weights": "net/fastnet.safetensors"}"#,
    )
    .unwrap();
    std::fs::write(dir.join("net/fastnet.safetensors"), vec![0u8; 1 << 20]).unwrap();
    export_bundle(&shipped, &dir, sims, seed);
    assert!(
        !dir.join("net/fastnet.safetensors").exists(),
        "the old float weights were left"
    );
    let mut total = 0;
    let mut stack = vec![dir.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else {
                total += e.metadata().unwrap().len();
            }
        }
    }
    eprintln!("the bundle of fresh1024: {total} bytes");
    assert!(total < 10_000_000, "{total} bytes");
    // Its packed weights are more than half the bundle (the net is really in it).
    let packed = std::fs::metadata(dir.join("net/fastnet-quant.packed"))
        .unwrap()
        .len();
    assert!(packed > total / 2, "{packed} of {total}");

    let server = StaticServer::start(&dir);
    let driver = Driver::start();
    let base = format!("http://127.0.0.1:{}", server.port);
    runtime().block_on(async {
        let c = driver.client().await;
        c.set_window_size(390, 844).await.unwrap();
        open(&c, &format!("{base}/?human=x")).await;
        let turn = "const b = document.getElementById('board'); return b.dataset.turn === 'human' && document.getElementById('moves').dataset.moves";
        assert_eq!(wait_for(&c, turn, "x to move").await, json!(""));
        a_click_and_the_nets_reply(&c, &shipped, sims, seed).await;
        let widths = c.execute("return [document.documentElement.scrollWidth, window.innerWidth]", vec![]).await.unwrap();
        assert!(widths[0].as_u64().unwrap() <= widths[1].as_u64().unwrap(), "{widths}");
        screenshot(&c, "tour-phone-bundle-390.png").await;
        c.close().await.unwrap();
    });
}

/// `export --web` writes only into a new, empty or earlier bundle's folder, through no
/// link, and says what is wrong with a model that is not a loadable fast net.
#[test]
fn export_web_refuses_foreign_folders_links_and_broken_nets() {
    let base = rundir::Scratch::temp("web-refusals", "");
    std::fs::create_dir_all(&base).unwrap();
    let export = |model: &Path, out: &Path| {
        let o = Command::new(env!("CARGO_BIN_EXE_flipzero"))
            .args(["export", "--web", "--model"])
            .arg(model)
            .arg("--out")
            .arg(out)
            .output()
            .unwrap();
        (
            o.status.success(),
            String::from_utf8_lossy(&o.stderr).to_string(),
        )
    };
    // A folder with a bundle.json that is not a bundle's keeps its files.
    let foreign = base.join("foreign");
    std::fs::create_dir_all(&foreign).unwrap();
    std::fs::write(foreign.join("index.html"), "precious").unwrap();
    std::fs::write(foreign.join("bundle.json"), "not json").unwrap();
    let (ok, err) = export(&net(), &foreign);
    assert!(
        !ok && err.contains("holds files and no bundle.json"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(foreign.join("index.html")).unwrap(),
        "precious"
    );
    // A bundle whose net/ is a link to another folder: refused before anything is written.
    let linked = base.join("linked");
    assert!(export(&net(), &linked).0);
    let elsewhere = base.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::write(elsewhere.join("model.json"), "mine").unwrap();
    std::fs::remove_dir_all(linked.join("net")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, linked.join("net")).unwrap();
    let (ok, err) = export(&net(), &linked);
    assert!(
        !ok && err.contains("is not a folder (a link or a file)"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(elsewhere.join("model.json")).unwrap(),
        "mine"
    );
    // The bundle's folder itself may be a link to a folder: followed, as `import`
    // follows it; a file in its place is refused by name.
    let target = base.join("target-dir");
    std::fs::create_dir_all(&target).unwrap();
    let via = base.join("via-link");
    std::os::unix::fs::symlink(&target, &via).unwrap();
    let (ok, err) = export(&net(), &via);
    assert!(ok, "{err}");
    assert!(target.join("bundle.json").is_file());
    let file = base.join("a-file");
    std::fs::write(&file, "mine").unwrap();
    let (ok, err) = export(&net(), &file);
    assert!(!ok && err.contains("is not a folder"), "{err}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine");
    // A fast net whose model.json is cut short: the loader's reason, not "a CNN".
    let broken = base.join("broken");
    std::fs::create_dir_all(&broken).unwrap();
    for f in ["model.json", "fastnet.safetensors"] {
        std::fs::copy(net().join(f), broken.join(f)).unwrap();
    }
    let meta = std::fs::read(broken.join("model.json")).unwrap();
    std::fs::write(broken.join("model.json"), &meta[..meta.len() / 2]).unwrap();
    let (ok, err) = export(&broken, &base.join("out-broken"));
    assert!(
        !ok && err.contains("holds no fast net the web player can load")
            && err.contains("model.json"),
        "{err}"
    );
    let cnn = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/strength/gen-0131");
    let (ok, err) = export(&cnn, &base.join("out-cnn"));
    assert!(!ok && err.contains("is a CNN model"), "{err}");
}
