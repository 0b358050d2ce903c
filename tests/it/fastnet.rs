//! A fast net end to end through the binary: trained from self-play shards, reloaded,
//! playing both searchers in a match, playing self-play itself, and refused with a clear
//! error where it does not belong.

use std::process::Command;

fn flipzero(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_flipzero"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

#[test]
fn a_fast_net_trains_reloads_plays_both_searchers_and_plays_self_play() {
    let dir = rundir::Scratch::temp("fastnet", "");
    let data = dir.join("data");
    let net = dir.join("net");
    let (d, n) = (data.to_str().unwrap(), net.to_str().unwrap());
    let sp = [
        "selfplay",
        "--game",
        "ataxx",
        "--games",
        "6",
        "--threads",
        "2",
        "--quiet",
    ];
    let (ok, _, err) = flipzero(&[&sp[..], &["--evaluator", "bootstrap", "--out", d]].concat());
    assert!(ok, "{err}");
    let (ok, out, err) = flipzero(&[
        "train",
        "--net",
        "fast",
        "--data",
        d,
        "--out",
        n,
        "--game",
        "ataxx",
        "--set",
        "epochs=2",
        "--set",
        "hidden=64",
        "--set",
        "batch_size=64",
        "--quiet",
    ]);
    assert!(ok, "{err}");
    let last: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(last["epoch"], 2);
    for f in [
        "model.json",
        "fastnet.safetensors",
        "fastnet-quant.safetensors",
        "metrics.csv",
    ] {
        assert!(net.join(f).is_file(), "{f}");
    }
    let csv = std::fs::read_to_string(net.join("metrics.csv")).unwrap();
    assert_eq!(csv.lines().count(), 3, "{csv}");

    // Both searchers, reloaded from the folder, play a whole match.
    let pgn = dir.join("m.pgn");
    let both = || {
        flipzero(&[
            "match",
            "--a",
            &format!("mcts:{n}:sims=32"),
            "--b",
            &format!("abnet:{n}:depth=2"),
            "--games",
            "2",
            "--pgn",
            pgn.to_str().unwrap(),
        ])
    };
    let (ok, out, err) = both();
    assert!(ok, "{err}");
    assert!(out.contains("games 2"), "{out}");
    // The quantised file is an export (docs/export.md): without it, the same games;
    // `flipzero export` writes it again, the same bytes.
    let played = std::fs::read_to_string(&pgn).unwrap();
    let quant = std::fs::read(net.join("fastnet-quant.safetensors")).unwrap();
    std::fs::remove_file(net.join("fastnet-quant.safetensors")).unwrap();
    let (ok, _, err) = both();
    assert!(ok, "{err}");
    assert_eq!(std::fs::read_to_string(&pgn).unwrap(), played);
    let (ok, out, err) = flipzero(&["export", "--model", n, "--out", n]);
    assert!(ok, "{err}");
    assert_eq!(out.lines().count(), 1, "{out}");
    assert_eq!(
        std::fs::read(net.join("fastnet-quant.safetensors")).unwrap(),
        quant
    );
    // The smallest form: model.json and the quantised file alone play the same games,
    // and are refused as a start for training (their weights are rounded).
    std::fs::remove_file(net.join("fastnet.safetensors")).unwrap();
    let (ok, _, err) = both();
    assert!(ok, "{err}");
    assert_eq!(std::fs::read_to_string(&pgn).unwrap(), played);
    let retrain = dir.join("retrain");
    let (ok, _, err) = flipzero(&[
        "train",
        "--net",
        "fast",
        "--data",
        d,
        "--out",
        retrain.to_str().unwrap(),
        "--game",
        "ataxx",
        "--init",
        n,
        "--set",
        "hidden=64",
        "--quiet",
    ]);
    assert!(
        !ok && err.contains("quantised form of a net alone"),
        "{err}"
    );
    // An export never replaces another model: a CNN's folder is refused as --out.
    let cnn = dir.join("cnn");
    std::fs::create_dir_all(&cnn).unwrap();
    std::fs::write(cnn.join("model.json"), b"{\"format\": \"another model\"}").unwrap();
    let (ok, _, err) = flipzero(&["export", "--model", n, "--out", cnn.to_str().unwrap()]);
    assert!(!ok && err.contains("holds another model"), "{err}");
    assert_eq!(
        std::fs::read(cnn.join("model.json")).unwrap(),
        b"{\"format\": \"another model\"}"
    );
    // Nor over anything it does not write (a run directory, a user's notes), nor over a
    // net whose model.json is the same but whose weights are not.
    let notes = dir.join("notes");
    std::fs::create_dir_all(&notes).unwrap();
    std::fs::write(notes.join("README"), "mine").unwrap();
    let (ok, _, err) = flipzero(&["export", "--model", n, "--out", notes.to_str().unwrap()]);
    assert!(
        !ok && err.contains("holds `README`, which this export does not write"),
        "{err}"
    );
    let twin = dir.join("twin");
    std::fs::create_dir_all(&twin).unwrap();
    std::fs::copy(net.join("model.json"), twin.join("model.json")).unwrap();
    std::fs::write(twin.join("fastnet-quant.safetensors"), b"other weights").unwrap();
    let (ok, _, err) = flipzero(&["export", "--model", n, "--out", twin.to_str().unwrap()]);
    assert!(
        !ok && err.contains("its `fastnet-quant.safetensors` differs"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(twin.join("fastnet-quant.safetensors")).unwrap(),
        b"other weights"
    );
    // Exported elsewhere: a whole folder again (float weights from the rounded ones).
    let copy = dir.join("copy");
    let (ok, out, err) = flipzero(&["export", "--model", n, "--out", copy.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert_eq!(out.lines().count(), 3, "{out}");
    assert_eq!(
        std::fs::read(copy.join("fastnet-quant.safetensors")).unwrap(),
        quant
    );
    // Again into the same folder: the same net's export, so it may.
    let (ok, _, err) = flipzero(&["export", "--model", n, "--out", copy.to_str().unwrap()]);
    assert!(ok, "{err}");
    std::fs::rename(
        copy.join("fastnet.safetensors"),
        net.join("fastnet.safetensors"),
    )
    .unwrap();

    // Self-play with the fast net: its game comes from its model.json.
    let more = dir.join("more");
    let (ok, out, err) =
        flipzero(&[&sp[..], &["--model", n, "--out", more.to_str().unwrap()]].concat());
    assert!(ok, "{err}");
    assert!(out.contains("model net"), "{out}");

    // A fast net of Ataxx does not play Othello; an unknown setting is named.
    let (ok, _, err) = flipzero(&[
        "match",
        "--game",
        "othello",
        "--a",
        &format!("abnet:{n}:depth=1"),
        "--b",
        "random",
        "--games",
        "2",
    ]);
    assert!(
        !ok && err.contains("ataxx") && err.contains("othello"),
        "{err}"
    );
    let (ok, _, err) = flipzero(&[
        "train", "--net", "fast", "--data", d, "--out", n, "--game", "ataxx", "--set", "epoch=2",
    ]);
    assert!(
        !ok && err.contains("epoch=2")
            && err.contains("unknown field `epoch`, expected one of `epochs`"),
        "{err}"
    );
    // A policy of no known kind, and a frozen value with nothing to freeze.
    let train = [
        "train", "--net", "fast", "--data", d, "--out", n, "--game", "ataxx",
    ];
    let (ok, _, err) = flipzero(&[&train[..], &["--set", "fastnet.policy=cells"]].concat());
    assert!(
        !ok && err.contains("unknown variant `cells`, expected `accumulator` or `board`"),
        "{err}"
    );
    let (ok, _, err) = flipzero(&[&train[..], &["--set", "fastnet.train_value=false"]].concat());
    assert!(
        !ok && err.contains("train_value = false") && err.contains("--init"),
        "{err}"
    );
    // A fast-net player on a folder that holds no model.
    let (ok, _, err) = flipzero(&[
        "match",
        "--a",
        &format!("abnet:{d}:depth=1"),
        "--b",
        "random",
    ]);
    assert!(!ok && err.contains("neither a model directory"), "{err}");
    // In `flipzero uai`, the fast-net alpha-beta player keeps to the GUI's limits and
    // stops at `stop` (it searched without end before).
    let start = std::time::Instant::now();
    let input = format!(
        "uai\nsetoption name Player value abnet:{n}\nisready\nposition startpos\n\
         go movetime 200\nisready\nposition startpos moves f2\ngo infinite\nstop\nisready\nquit\n"
    );
    let out = crate::with_input(&["uai"], input.as_bytes());
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.matches("bestmove").count(), 2, "{text}");
    assert!(!text.contains("plays instead"), "{text}");
    assert!(start.elapsed() < std::time::Duration::from_secs(5));
    // The `abnet:` player's net is checked and loaded when the player is chosen, not on
    // the clock of its first move: a net of another game is refused at once (the player
    // stays `ab`), the game cannot change under a chosen one, and a folder without a
    // model is named.
    let input = format!(
        "uai\nsetoption name Game value othello\nsetoption name Player value abnet:{n}\n\
         setoption name Game value ataxx\nsetoption name Player value abnet:{n}\n\
         setoption name Game value othello\nsetoption name Player value abnet:{d}\n\
         isready\nquit\n"
    );
    let out = crate::with_input(&["uai"], input.as_bytes());
    let text = String::from_utf8_lossy(&out.stdout);
    let errors: Vec<&str> = text.lines().filter(|l| l.contains("error")).collect();
    assert_eq!(errors.len(), 3, "{text}");
    assert_eq!(
        errors[0],
        format!("info string error: model {n} is for game ataxx, not othello"),
        "{text}"
    );
    assert_eq!(
        errors[1],
        format!(
            "info string error: model {n} is for game ataxx, not othello; the game stays ataxx"
        ),
        "{text}"
    );
    assert!(errors[2].contains("neither a model directory"), "{text}");
    assert!(text.trim_end().ends_with("readyok"), "{text}");

    // The commands of the other family name the format.
    let (ok, _, err) = flipzero(&["infer", "--model", n, "--position", "startpos"]);
    assert!(!ok && err.contains("flipzero-fastnet"), "{err}");
    assert!(!err.contains("  "), "a message in one piece: {err}");
}

/// The alpha-beta family: self-play by alpha-beta, a net trained on the value alone
/// (`policy_weight = 0`) says in its model.json that it is for the alpha-beta searcher;
/// `flipzero uai --model` and the web player then play it by alpha-beta, and the MCTS
/// players (which search with a policy) refuse it, naming the player that plays it.
#[test]
fn a_value_net_plays_by_alpha_beta_everywhere_and_is_refused_by_mcts() {
    let dir = rundir::Scratch::temp("valuenet", "");
    let (data, net) = (dir.join("data"), dir.join("net"));
    let (d, n) = (data.to_str().unwrap(), net.to_str().unwrap());
    let (ok, out, err) = flipzero(&[
        "selfplay",
        "--games",
        "6",
        "--out",
        d,
        "--set",
        "selfplay.search=\"alphabeta\"",
        "--set",
        "selfplay.ab_soft_nodes=300",
        "--set",
        "selfplay.ab_hard_nodes=600",
        "--quiet",
    ]);
    assert!(ok && out.contains("nodes/s"), "{out}{err}");
    let train = |out: &str, policy_weight: &str| {
        flipzero(&[
            "train",
            "--net",
            "fast",
            "--data",
            d,
            "--out",
            out,
            "--game",
            "ataxx",
            "--set",
            "epochs=1",
            "--set",
            "hidden=32",
            "--set",
            "batch_size=64",
            "--set",
            policy_weight,
            "--quiet",
        ])
    };
    let (ok, _, err) = train(n, "policy_weight=0");
    assert!(ok, "{err}");
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(net.join("model.json")).unwrap()).unwrap();
    assert_eq!(meta["search"], "alphabeta");
    // UAI plays it by alpha-beta: a move, without the MCTS player's evaluation counts.
    let input = "uai\nisready\nposition startpos\ngo nodes 2000\nisready\nquit\n";
    let out = crate::with_input(&["uai", "--model", n], input.as_bytes());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("bestmove") && !text.contains("evaluations in"),
        "{text}"
    );
    // The MCTS player refuses it, naming abnet:.
    let (ok, _, err) = flipzero(&[
        "match",
        "--a",
        &format!("mcts:{n}:sims=16"),
        "--b",
        "random",
        "--games",
        "2",
    ]);
    assert!(
        !ok && err.contains(&format!("play it as abnet:{n}")),
        "{err}"
    );
    let (ok, out, err) = flipzero(&[
        "match",
        "--a",
        &format!("abnet:{n}:nodes=300"),
        "--b",
        "random",
        "--games",
        "2",
    ]);
    assert!(ok && out.contains("games 2"), "{out}{err}");
    // The web player plays it by alpha-beta too, the native `abnet:` player's moves at
    // its node budget (10 nodes a simulation of the page's setting).
    let web = dir.join("web");
    let (ok, _, err) = flipzero(&[
        "export",
        "--web",
        "--model",
        n,
        "--out",
        web.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    let (meta, weights) = fastnet::io::read_files(&net).unwrap();
    let mut page = web::player::WebPlayer::load(&meta, &weights, 40, 1).unwrap();
    let spec: eval::PlayerSpec = format!("abnet:{n}:nodes=400").parse().unwrap();
    let game: engine::Game = "ataxx".parse().unwrap();
    let mut native = spec.build(game, 1, eval::Timeouts::default()).unwrap();
    let mut s = game.startpos();
    for _ in 0..8 {
        let a = page.call(r#"{"op":"think"}"#).unwrap();
        assert_eq!(a.effort, "alpha-beta, 400 nodes");
        assert_eq!(serde_json::to_value(&a).unwrap()["search"], "alphabeta");
        let m = native.choose(&s).unwrap();
        assert_eq!(a.played.as_deref(), Some(s.move_to_string(m).as_str()));
        assert!(
            a.evaluations > 0 && a.evaluations <= 400,
            "{}",
            a.evaluations
        );
        s.play(m);
    }
    // A net whose policy was trained stays an MCTS net.
    let mcts = dir.join("mcts");
    let (ok, _, err) = train(mcts.to_str().unwrap(), "policy_weight=1");
    assert!(ok, "{err}");
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(mcts.join("model.json")).unwrap()).unwrap();
    assert_eq!(meta["search"], "mcts");
}
