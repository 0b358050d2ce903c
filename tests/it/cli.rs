//! The `flipzero` binary as a user runs it.

use std::process::Command;

fn flipzero(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_flipzero"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn perft_last_line_is_the_node_count() {
    let (ok, out, _) = flipzero(&["perft", "--depth", "5"]);
    assert!(ok);
    assert_eq!(out.lines().last(), Some("nodes 4752668"));
    let (ok, out, _) = flipzero(&[
        "perft",
        "--game",
        "hexxagon",
        "--depth",
        "3",
        "--threads",
        "2",
    ]);
    assert!(ok);
    assert_eq!(out.lines().last(), Some("nodes 16548"));
}

#[test]
fn perft_divide_lists_moves_then_total() {
    let fen = "7/7/7/7/ooooooo/ooooooo/xxxxxxx x 0 1";
    let (ok, out, _) = flipzero(&["perft", "--fen", fen, "--depth", "3", "--divide"]);
    assert!(ok);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "0000 249");
    assert_eq!(lines.last(), Some(&"nodes 249"));
}

#[test]
fn bad_input_gets_a_clear_error() {
    let (ok, _, err) = flipzero(&["perft", "--fen", "x5o/7/7/7/7/7/o5q x", "--depth", "1"]);
    assert!(!ok);
    assert!(err.contains("rank 1: unexpected character `q`"), "{err}");
    let (ok, _, err) = flipzero(&["perft", "--game", "chess", "--depth", "1"]);
    assert!(!ok);
    assert!(
        err.contains("unknown game `chess`") && err.contains("hexxagon"),
        "{err}"
    );
}

#[test]
fn perft_works_for_every_family() {
    let (ok, out, _) = flipzero(&["perft", "--game", "othello", "--depth", "6"]);
    assert!(ok);
    assert_eq!(out.lines().last(), Some("nodes 8200"));
    let pos = "annexation76-parallel 4/6/8/10/4xo4/4xo4/10/8/6/4 x play 38 38 0";
    let (ok, out, _) = flipzero(&[
        "perft",
        "--game",
        "annexation76-parallel",
        "--position",
        pos,
        "--depth",
        "3",
    ]);
    assert!(ok);
    assert_eq!(out.lines().last(), Some("nodes 68"));
    let (ok, _, err) = flipzero(&[
        "perft",
        "--game",
        "annexation64",
        "--position",
        "8/8 x",
        "--depth",
        "1",
    ]);
    assert!(!ok);
    assert!(
        err.contains("bad position") && err.contains("annexation64"),
        "{err}"
    );
}

/// One config path: `flipzero selfplay --config FILE` lays the file's `[selfplay]` over
/// the built-in configs/default.toml, as `flipzero run` does (a file that sets only
/// `games` searches the built-in 128/32 simulations, not a library default), `--set`
/// overrides either, and an override at fault is named as it was given.
#[test]
fn selfplay_lays_its_config_over_the_built_in_one() {
    let dir = rundir::Scratch::temp("cli-sp-cfg", "");
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = dir.join("only-games.toml");
    std::fs::write(&cfg, "[selfplay]\ngames = 2\n").unwrap();
    let visits = |out: &std::path::Path, extra: &[&str]| {
        let mut args = vec![
            "selfplay",
            "--config",
            cfg.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--evaluator",
            "uniform",
            "--threads",
            "1",
            "--quiet",
        ];
        args.extend_from_slice(extra);
        let (ok, stdout, err) = flipzero(&args);
        assert!(ok, "{err}");
        assert!(stdout.contains("games 2"), "{stdout}");
        let mut seen = std::collections::BTreeSet::new();
        for e in std::fs::read_dir(out).unwrap() {
            for row in selfplay::read_shard(&e.unwrap().path()).unwrap().0 {
                seen.insert(row.visits);
            }
        }
        // The most simulations of a search, and whether a fast search's count is there
        // (fewer: a forced move, a proven result).
        move |fast: u32| (seen.last().copied(), seen.contains(&fast))
    };
    assert_eq!(visits(&dir.join("a"), &[])(32), (Some(128), true));
    let sets = [
        "--set",
        "selfplay.simulations=40",
        "--set",
        "fast_simulations=10",
    ];
    assert_eq!(visits(&dir.join("b"), &sets)(10), (Some(40), true));
    for (set, want) in [
        ("simulations=abc", "[selfplay]"),
        ("train.steps=1", "reads only [selfplay] settings"),
    ] {
        let (ok, _, err) = flipzero(&["selfplay", "--out", "/nonexistent/x", "--set", set]);
        assert!(!ok);
        assert!(
            err.contains(&format!("--set {set}: ")) && err.contains(want),
            "{err}"
        );
    }
}

#[test]
fn selfplay_writes_shards_and_rejects_bad_config() {
    let dir = rundir::Scratch::temp("cli-sp", "");
    let out = dir.join("data");
    let (ok, stdout, err) = flipzero(&[
        "selfplay",
        "--game",
        "hexxagon",
        "--games",
        "4",
        "--out",
        out.to_str().unwrap(),
        "--evaluator",
        "uniform",
        "--threads",
        "2",
        "--quiet",
    ]);
    assert!(ok, "{err}");
    assert!(stdout.contains("games 4"), "{stdout}");
    let shards: Vec<_> = std::fs::read_dir(&out).unwrap().collect();
    assert_eq!(shards.len(), 2, "one shard per worker");
    let cfg = dir.join("bad.toml");
    std::fs::write(&cfg, "[selfplay]\nsimulations = 0\n").unwrap();
    let (ok, _, err) = flipzero(&[
        "selfplay",
        "--out",
        out.to_str().unwrap(),
        "--config",
        cfg.to_str().unwrap(),
    ]);
    assert!(!ok);
    assert!(
        err.contains("selfplay.simulations = 0 is out of range: 1..=100000"),
        "{err}"
    );
    std::fs::write(&cfg, "[selfplay]\nsimulation = 10\n").unwrap();
    let (ok, _, err) = flipzero(&[
        "selfplay",
        "--out",
        out.to_str().unwrap(),
        "--config",
        cfg.to_str().unwrap(),
    ]);
    assert!(!ok);
    assert!(err.contains("unknown field `simulation`"), "{err}");
}

#[test]
fn user_errors_print_the_chain_without_a_backtrace() {
    for backtrace in ["1", "full"] {
        let out = Command::new(env!("CARGO_BIN_EXE_flipzero"))
            .args(["perft", "--fen", "x5o/7/7/7/7/7/o5q x", "--depth", "1"])
            .env("RUST_BACKTRACE", backtrace)
            .env("RUST_LIB_BACKTRACE", backtrace)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(
            err.starts_with("error: bad position") && err.contains("unexpected character `q`"),
            "{err}"
        );
        assert!(!err.to_lowercase().contains("backtrace"), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

#[test]
fn a_closed_output_pipe_ends_quietly() {
    // `flipzero … | head -0`: the reader is gone before the first line is written (the
    // UAI engine writes only when asked, so the order is certain).
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_flipzero"))
        .arg("uai")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let mut stdin = child.stdin.take().unwrap();
    let _ = stdin.write_all(b"uai\nisready\n");
    let _ = stdin.flush();
    let out = child.wait_with_output().unwrap();
    drop(stdin);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.is_empty(), "{err}");
    assert_eq!(out.status.code(), Some(141));
}

#[test]
fn libataxx_fen_forms_are_accepted() {
    for fen in [
        "x5o/7/7/7/7/7/o5x/ x 0 1",
        "x5o/7/7/7/7/7/o5x x 0",
        "x5o/7/7/7/7/7/o5x",
    ] {
        let (ok, out, err) = flipzero(&["perft", "--fen", fen, "--depth", "2"]);
        assert!(ok, "{fen}: {err}");
        assert_eq!(out.lines().last(), Some("nodes 256"), "{fen}");
    }
}

/// `flipzero gate --operating-characteristic` lines as (elo, promote, pairs).
fn operating_characteristic(args: &[&str]) -> Vec<(i32, f64, f64)> {
    let mut all = vec!["gate", "--operating-characteristic"];
    all.extend_from_slice(args);
    let (ok, out, err) = flipzero(&all);
    assert!(ok, "{err}");
    out.lines()
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            assert_eq!(
                (f.len(), f[0], f[2], f[4]),
                (6, "elo", "promote", "pairs"),
                "{l}"
            );
            (
                f[1].parse().unwrap(),
                f[3].parse().unwrap(),
                f[5].parse().unwrap(),
            )
        })
        .collect()
}

#[test]
fn gate_operating_characteristic_of_the_shipped_configs() {
    let dir = env!("CARGO_MANIFEST_DIR");
    let default = format!("{dir}/configs/default.toml");
    let standard = format!("{dir}/configs/standard.toml");
    // The built-in config is configs/default.toml; no model is needed.
    let builtin = operating_characteristic(&[]);
    assert_eq!(builtin, operating_characteristic(&["--config", &default]));
    let elos: Vec<i32> = builtin.iter().map(|r| r.0).collect();
    assert_eq!(elos, (-6..=8).map(|k| k * 10).collect::<Vec<_>>());
    for cfg in [&default, &standard] {
        for draw in ["0", "0.3"] {
            let oc = operating_characteristic(&["--config", cfg, "--draw-rate", draw]);
            let at = |elo| oc.iter().find(|r| r.0 == elo).unwrap();
            assert!(
                at(-30).1 <= 0.10 && at(40).1 >= 0.80,
                "{cfg} {draw}: {oc:?}"
            );
            assert!(oc.windows(2).all(|w| w[1].1 > w[0].1), "{oc:?}");
            assert!(oc.iter().all(|r| r.2 >= 1.0 && r.2 <= 150.0), "{oc:?}");
        }
    }
    // --set reaches the computation: the old cap rule ("score" at 0.5) and the old
    // 30-pair cap let a weaker net through far more often.
    let old = operating_characteristic(&[
        "--set",
        "gate.cap_rule=\"score\"",
        "--set",
        "gate.max_pairs=30",
        "--draw-rate",
        "0",
    ]);
    let at = |oc: &[(i32, f64, f64)], elo| oc.iter().find(|r| r.0 == elo).unwrap().1;
    assert!(at(&old, -30) > 0.15, "{old:?}");
    assert!(at(&builtin, -30) < 0.09, "{builtin:?}");
    // An impossible draw rate is an error, not a panic; --draw-rate alone plays nothing.
    let (ok, _, err) = flipzero(&["gate", "--operating-characteristic", "--draw-rate", "0.9"]);
    assert!(
        !ok && err.contains("draw rate of 0.9 is impossible at -60 Elo"),
        "{err}"
    );
    let (ok, _, err) = flipzero(&[
        "gate",
        "--candidate",
        "random",
        "--incumbent",
        "random",
        "--draw-rate",
        "0.1",
    ]);
    assert!(!ok && err.contains("--operating-characteristic"), "{err}");
}

#[test]
fn config_errors_name_the_file_or_the_override_at_fault() {
    let dir = rundir::Scratch::temp("cli-cfg", "");
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad-selfplay.toml");
    std::fs::write(&bad, "[selfplay]\nsimulations = 0\n[train]\nsteps = 10\n").unwrap();
    let bad = bad.to_str().unwrap();
    let train = |extra: &[&str]| {
        let mut args = vec![
            "train",
            "--data",
            "/nonexistent/data",
            "--out",
            "/nonexistent/out",
        ];
        args.extend_from_slice(extra);
        flipzero(&args)
    };
    // A bad value, bare or with the table, is blamed on that override.
    for set in ["steps=abc", "train.steps=abc"] {
        let (ok, _, err) = train(&["--set", set]);
        assert!(!ok);
        assert!(
            err.contains(&format!("--set {set}: ")) && err.contains("[train]"),
            "{err}"
        );
    }
    // The whole file is checked, and its errors name it.
    let (ok, _, err) = train(&["--config", bad]);
    assert!(!ok);
    assert!(
        err.contains(bad) && err.contains("selfplay.simulations"),
        "{err}"
    );
    // Settings the command would ignore are refused.
    let (ok, _, err) = train(&["--set", "selfplay.games=1"]);
    assert!(!ok && err.contains("only [train]"), "{err}");
    let (ok, _, err) = flipzero(&[
        "gate",
        "--candidate",
        "random",
        "--incumbent",
        "greedy",
        "--set",
        "selfplay.games=1",
    ]);
    assert!(!ok && err.contains("only [gate]"), "{err}");
    // Of several overrides, only the one at fault is named.
    let (ok, _, err) = flipzero(&[
        "run",
        "--dry-run",
        "--set",
        "run.generations=1",
        "--set",
        "gate.alpha=0.7",
        "--set",
        "selfplay.games=8",
    ]);
    assert!(!ok);
    assert!(err.contains("--set gate.alpha=0.7"), "{err}");
    assert!(
        !err.contains("generations=1") && !err.contains("games=8"),
        "{err}"
    );
    // A rule over two keys holds for the overrides together, in either order.
    for (a, b) in [("elo0=50", "elo1=80"), ("elo1=80", "elo0=50")] {
        let (ok, out, err) =
            flipzero(&["gate", "--operating-characteristic", "--set", a, "--set", b]);
        assert!(ok && out.starts_with("elo -60 promote"), "{a} {b}: {err}");
    }
}

#[test]
fn play_reports_input_that_is_not_text_and_goes_on() {
    let out = crate::with_input(&["play", "--opponent", "random"], b"\xff\xfe\ng2\nquit\n");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("not valid UTF-8"), "{text}");
    assert!(text.contains("random plays"), "the game went on: {text}");
}

#[test]
fn train_dry_run_describes_the_configured_network() {
    let (ok, out, err) = flipzero(&[
        "train",
        "--data",
        "/nonexistent",
        "--out",
        "/nonexistent/out",
        "--dry-run",
        "--game",
        "othello",
        "--set",
        "blocks=2",
        "--set",
        "gpool_every=0",
        "--set",
        "train.head_channels=16",
        "--set",
        "value_hidden=8",
    ]);
    assert!(ok, "{err}");
    assert!(out.contains("network for othello (8x8 grid)"), "{out}");
    assert!(out.contains("2 residual blocks of 32 channels"), "{out}");
    assert!(out.contains("global pooling in blocks: none"), "{out}");
    assert!(
        out.contains("policy (16 channels, 1 policy planes + pass)"),
        "{out}"
    );
    assert!(
        out.contains("blocks.1.b.conv.weight       [32, 32, 3, 3]"),
        "{out}"
    );
    assert!(!out.contains("gpool.weight"), "{out}");
    assert!(out.contains("head_channels = 16"), "{out}");
    // Out of range: refused, naming the key.
    let (ok, _, err) = flipzero(&[
        "train",
        "--data",
        "/nonexistent",
        "--out",
        "/nonexistent/out",
        "--dry-run",
        "--set",
        "head_channels=0",
    ]);
    assert!(!ok && err.contains("train.head_channels = 0"), "{err}");
}

#[test]
fn gating_and_anchoring_take_a_clock() {
    let dir = rundir::Scratch::temp("cli-clock", "");
    let run = dir.to_string_lossy().to_string();
    let ladder = "anchor.ladder=[\"random\",\"ab\"]";
    // `ab` has no limit of its own: refused without a clock, accepted with one.
    let (ok, _, err) = flipzero(&["run", "--dry-run", "--run", &run, "--set", ladder]);
    assert!(!ok && err.contains("set gate.clock"), "{err}");
    let (ok, out, err) = flipzero(&[
        "run",
        "--dry-run",
        "--run",
        &run,
        "--set",
        ladder,
        "--set",
        "gate.clock=\"tc=1+0.01\"",
    ]);
    assert!(ok, "{err}");
    assert!(out.contains("clock = \"tc=1+0.01\""), "{out}");
    let (ok, _, err) = flipzero(&[
        "run",
        "--dry-run",
        "--run",
        &run,
        "--set",
        "gate.clock=\"time=0\"",
    ]);
    assert!(!ok && err.contains("bad clock `time=0`"), "{err}");
}

/// `infer --dump-input` writes the encoded planes `[1, planes, height, width]` as a
/// version-1.0 `.npy` file of little-endian float32 in C order (what `np.load` reads,
/// checked with Python by the ONNX export test): the header describes them, the data is
/// the position's encoding, and no temporary file is left beside it.
#[test]
fn infer_dumps_the_encoded_input_as_npy() {
    let dir = rundir::Scratch::temp("cli-dump", "");
    let model = dir.join("model");
    std::fs::create_dir_all(&model).unwrap();
    let game: engine::Game = "hexxagon".parse().unwrap();
    let shape = train::NetConfig::preset("tiny", game.policy_planes()).unwrap();
    let net = shape.init(&burn::prelude::Device::flex());
    let digest = train::store::save_net(&net, &model.join("model.bpk")).unwrap();
    train::store::write_metadata(&model, game, &shape, 0, 0, &digest).unwrap();
    let out = dir.join("in.npy");
    let (ok, _, err) = flipzero(&[
        "infer",
        "--model",
        model.to_str().unwrap(),
        "--position",
        "startpos",
        "--dump-input",
        out.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00");
    let len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    assert_eq!((10 + len) % 64, 0, "the data is aligned");
    let header = std::str::from_utf8(&bytes[10..10 + len]).unwrap();
    let (w, h) = game.grid();
    let planes = train::net::PLANES;
    for part in [
        "'descr': '<f4'".to_string(),
        "'fortran_order': False".to_string(),
        format!("'shape': (1, {planes}, {h}, {w})"),
    ] {
        assert!(header.contains(&part), "{header}");
    }
    let data: Vec<f32> = bytes[10 + len..]
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    let want = train::net::encode(&game.startpos());
    assert_eq!(data, want.as_slice().unwrap());
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

/// `ratings --pgn` rates match files: a timed match's players carry its clock (the same
/// engine at another time control is another player, so it does not connect to the
/// untimed one), and a file that cannot be rated is named with the game at fault.
#[test]
fn ratings_read_match_pgns_with_their_clocks() {
    let dir = rundir::Scratch::temp("cli-pgn", "");
    std::fs::create_dir_all(&dir).unwrap();
    let path = |n: &str| dir.join(n).to_string_lossy().to_string();
    let (timed, plain) = (path("timed.pgn"), path("plain.pgn"));
    let common = ["--games", "4", "--quiet", "--threads", "2"];
    let (ok, _, err) = flipzero(
        &[
            &[
                "match", "--a", "ab2", "--b", "ab1", "--clock", "time=50", "--pgn", &timed,
            ][..],
            &common,
        ]
        .concat(),
    );
    assert!(ok, "{err}");
    assert!(
        std::fs::read_to_string(&timed)
            .unwrap()
            .contains("[TimeControl \"1/0.05\"]")
    );
    let (ok, _, err) = flipzero(
        &[
            &["match", "--a", "ab3", "--b", "ab2", "--pgn", &plain][..],
            &common,
        ]
        .concat(),
    );
    assert!(ok, "{err}");

    let (ok, out, err) = flipzero(&["ratings", "--pgn", &timed, "--anchor", "ab1 [time=50]"]);
    assert!(ok, "{err}");
    assert!(
        out.starts_with("4 games;") && out.contains("ab2 [time=50]"),
        "{out}"
    );
    let (ok, out, err) = flipzero(&["ratings", "--pgn", &plain, "--anchor", "ab2"]);
    assert!(ok && out.contains("ab3"), "{out}{err}");
    // The timed players have no games against the untimed ones.
    let (ok, _, err) = flipzero(&[
        "ratings", "--pgn", &plain, "--pgn", &timed, "--anchor", "ab2",
    ]);
    assert!(
        !ok && err.contains("no games connect") && err.contains("[time=50]"),
        "{err}"
    );
    // Without a run there is no default anchor; without anything there is nothing to rate.
    let (ok, _, err) = flipzero(&["ratings", "--pgn", &plain]);
    assert!(!ok && err.contains("--anchor"), "{err}");
    let (ok, _, err) = flipzero(&["ratings"]);
    assert!(!ok && err.contains("nothing to rate"), "{err}");
    let (ok, _, err) = flipzero(&["ratings", "--pgn", &plain, "--anchor", "ab7"]);
    assert!(!ok && err.contains("anchor `ab7` is not a player"), "{err}");
    // A result that is not one of PGN's names the file and the game.
    let text = std::fs::read_to_string(&plain).unwrap();
    let at = text.match_indices("[Result").nth(2).unwrap().0;
    let end = at + text[at..].find('\n').unwrap();
    let broken = path("broken.pgn");
    std::fs::write(
        &broken,
        format!("{}[Result \"2-0\"]{}", &text[..at], &text[end..]),
    )
    .unwrap();
    let (ok, _, err) = flipzero(&["ratings", "--pgn", &broken, "--anchor", "ab2"]);
    assert!(
        !ok && err.contains("broken.pgn") && err.contains("game 3") && err.contains("`2-0`"),
        "{err}"
    );
    let (ok, _, err) = flipzero(&["ratings", "--pgn", &path("missing.pgn"), "--anchor", "ab2"]);
    assert!(!ok && err.contains("missing.pgn"), "{err}");
}

/// One game pair (or two alike) measures no spread: `match` and `gate` print an
/// unbounded interval, not "± 0" (the pairs of ab1 against itself all split 1–1).
#[test]
fn match_and_gate_give_no_interval_after_pairs_that_all_scored_the_same() {
    let dir = rundir::Scratch::temp("cli-one-pair", "");
    std::fs::create_dir_all(&dir).unwrap();
    let pgn = dir.join("m.pgn").to_string_lossy().to_string();
    for games in ["2", "4"] {
        let (ok, out, err) = flipzero(&[
            "match", "--a", "ab1", "--b", "ab1", "--games", games, "--quiet", "--pgn", &pgn,
        ]);
        assert!(ok, "{err}");
        assert!(
            out.contains("Elo difference (A - B): 0.0 +- inf (95%)"),
            "{out}"
        );
        let last = out.lines().last().unwrap();
        assert_eq!(last, format!("score 0.500 elo 0.0 +- inf games {games}"));
        // The last line still reads as numbers.
        let ci: f64 = last.split_whitespace().nth(5).unwrap().parse().unwrap();
        assert!(ci.is_infinite());
    }
    for pairs in ["1", "2"] {
        let max = format!("gate.max_pairs={pairs}");
        let (ok, out, err) = flipzero(&[
            "gate",
            "--candidate",
            "ab1",
            "--incumbent",
            "ab1",
            "--set",
            &max,
            "--set",
            "gate.batch_pairs=1",
        ]);
        assert!(ok, "{err}");
        assert!(
            out.lines().next().unwrap().ends_with("Elo +0.0 ± inf"),
            "{out}"
        );
    }
}

/// `ratings --anchor-elo` takes a number, negative ones too, but not NaN or an infinity,
/// which made every rating NaN (exit 0).
#[test]
fn ratings_refuse_an_anchor_elo_that_is_not_a_finite_number() {
    let dir = rundir::Scratch::temp("cli-anchor-elo", "");
    std::fs::create_dir_all(&dir).unwrap();
    let pgn = dir.join("two.pgn");
    std::fs::write(
        &pgn,
        "[Event \"t\"]\n[Black \"a\"]\n[White \"b\"]\n[Result \"1-0\"]\n\n1-0\n\n\
         [Event \"t\"]\n[Black \"b\"]\n[White \"a\"]\n[Result \"1/2-1/2\"]\n\n1/2-1/2\n",
    )
    .unwrap();
    let pgn = pgn.to_string_lossy().to_string();
    for bad in ["nan", "NaN", "inf", "-inf", "infinity", "1e999"] {
        let (ok, out, err) = flipzero(&[
            "ratings",
            "--pgn",
            &pgn,
            "--anchor",
            "a",
            "--anchor-elo",
            bad,
        ]);
        assert!(!ok && out.is_empty(), "{bad}: {out}");
        assert!(
            err.contains("--anchor-elo") && err.contains("not a finite number"),
            "{bad}: {err}"
        );
    }
    let (ok, out, err) = flipzero(&[
        "ratings",
        "--pgn",
        &pgn,
        "--anchor",
        "a",
        "--anchor-elo",
        "-100",
    ]);
    assert!(ok, "{err}");
    assert!(
        out.contains("anchored at a = -100") && !out.contains("NaN"),
        "{out}"
    );
}

/// `ratings` scales: the 3,000 players in 6,000 games (the dense fit was still
/// running after 300 s) and 12,000 players in 120,000 games are rated in seconds. The
/// watchdog only catches a hang; the speed itself is `flipzero bench ratings`'s
/// (docs/benchmarks.md).
#[test]
fn ratings_of_thousands_of_players() {
    let dir = rundir::Scratch::temp("cli-many", "");
    std::fs::create_dir_all(&dir).unwrap();
    for (players, games) in [(3_000, 6_000), (12_000, 120_000)] {
        let pgn = dir
            .join(format!("{players}.pgn"))
            .to_string_lossy()
            .to_string();
        let (p, g) = (players.to_string(), games.to_string());
        let (ok, out, err) = flipzero(&[
            "bench",
            "ratings",
            "--players",
            &p,
            "--games",
            &g,
            "--pgn",
            &pgn,
        ]);
        assert!(
            ok && out.contains(&format!("players {players}  games {games}")),
            "{out}{err}"
        );
        // Into files, not pipes: a list of 12,000 players fills a pipe nobody reads yet.
        let (out_file, err_file) = (dir.join("out.txt"), dir.join("err.txt"));
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_flipzero"))
            .args(["ratings", "--pgn", &pgn, "--anchor", "p00000"])
            .stdout(std::fs::File::create(&out_file).unwrap())
            .stderr(std::fs::File::create(&err_file).unwrap())
            .spawn()
            .unwrap();
        let start = std::time::Instant::now();
        while child.try_wait().unwrap().is_none() {
            if start.elapsed() > std::time::Duration::from_secs(240) {
                let _ = child.kill();
                panic!("ratings of {players} players still running after 240 s");
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let status = child.wait().unwrap();
        let text = std::fs::read_to_string(&out_file).unwrap();
        let err = std::fs::read_to_string(&err_file).unwrap();
        assert!(status.success(), "{err}");
        let first = text.lines().next().unwrap_or("");
        assert!(first.starts_with(&format!("{games} games;")), "{first}");
        let rows = text
            .lines()
            .skip(2)
            .filter(|l| {
                l.split_whitespace()
                    .next()
                    .is_some_and(|rank| rank.parse::<usize>().is_ok())
            })
            .count();
        assert_eq!(rows, players);
        assert!(
            !text
                .split_whitespace()
                .any(|w| ["NaN", "inf", "-inf"].contains(&w))
        );
        // Over EXACT_INTERVALS_UP_TO players the intervals are estimated, and say so.
        let last = text.lines().last().unwrap_or("");
        assert!(last.contains("is estimated, not exact"), "{last}");
    }
}

#[test]
fn tune_runs_spsa_by_matches_and_writes_its_result() {
    let dir = rundir::Scratch::temp("tune", "");
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("tune.json");
    let o = out.to_str().unwrap();
    let args = |seed: &'static str| {
        [
            "tune",
            "--player",
            "mcts:bootstrap:sims=16",
            "--opponent",
            "greedy",
            "--param",
            "cpuct=1.5:0.5:3:0.3:0.05",
            "--param",
            "fpu=0.2:0:1:0.05",
            "--iterations",
            "3",
            "--seed",
            seed,
            "--out",
            o,
        ]
    };
    let (ok, stdout, err) = flipzero(&args("1"));
    assert!(ok, "{err}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let steps = v["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 3);
    // Each iteration's θ± straddle θ (within the ranges), and the result is a points
    // difference of two pairs against the opponent.
    for s in steps {
        let r = s["result"].as_f64().unwrap();
        assert!((-2.0..=2.0).contains(&r) && (r * 2.0).fract() == 0.0, "{s}");
        let (p, m) = (
            s["plus"][0].as_f64().unwrap(),
            s["minus"][0].as_f64().unwrap(),
        );
        assert!(
            (0.5..=3.0).contains(&p) && (0.5..=3.0).contains(&m) && p != m,
            "{s}"
        );
    }
    let tuned = v["tuned_player"].as_str().unwrap();
    assert!(tuned.starts_with("mcts:bootstrap:sims=16"), "{tuned}");
    assert!(stdout.contains("tuned player: mcts:bootstrap"), "{stdout}");
    // A complete tuning is not overwritten by the same command.
    let full = std::fs::read_to_string(&out).unwrap();
    let (ok, _, err) = flipzero(&args("1"));
    assert!(!ok && err.contains("is complete"), "{err}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), full);
    // Stopped after its first iteration, it resumes there: the recorded iteration is
    // taken as it is, the others played, and the whole is the uninterrupted tuning.
    let mut stopped = v.clone();
    stopped["steps"] = serde_json::json!([steps[0].clone()]);
    stopped["result"] = serde_json::Value::Null;
    stopped["tuned_player"] = serde_json::Value::Null;
    std::fs::write(&out, serde_json::to_string(&stopped).unwrap()).unwrap();
    // Another seed is another tuning: refused, naming the setting, the record kept.
    let kept = std::fs::read_to_string(&out).unwrap();
    let (ok, _, err) = flipzero(&args("2"));
    assert!(
        !ok && err.contains("seed 1, this one 2") && err.contains("another tuning"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), kept);
    let (ok, _, err) = flipzero(&args("1"));
    assert!(ok && err.contains("after iteration 1"), "{err}");
    assert!(
        !err.contains("iteration 1:"),
        "the first iteration was played again: {err}"
    );
    let resumed: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(resumed, v);
    // A damaged record (cut short) is refused, not replaced.
    std::fs::write(&out, &full[..full.len() / 2]).unwrap();
    let (ok, _, err) = flipzero(&args("1"));
    assert!(!ok && err.contains("does not read as one"), "{err}");
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        full[..full.len() / 2]
    );
    // Written to standard output, the record comes once, at the end.
    let stdout_file = dir.join("stdout.json");
    let full_args = args("1");
    let status = Command::new(env!("CARGO_BIN_EXE_flipzero"))
        .args(&full_args[..full_args.len() - 1])
        .arg("/dev/stdout")
        .stdout(std::fs::File::create(&stdout_file).unwrap())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let printed = std::fs::read_to_string(&stdout_file).unwrap();
    assert_eq!(
        printed.matches("\"schema_version\"").count(),
        1,
        "{printed}"
    );
    // A parameter that is no search setting, and a player that has none, are refused.
    let (ok, _, err) = flipzero(&[
        "tune",
        "--player",
        "mcts:bootstrap",
        "--param",
        "sims=10:1:100:5",
        "--out",
        o,
    ]);
    assert!(!ok && err.contains("`sims` is no search setting"), "{err}");
    let (ok, _, err) = flipzero(&[
        "tune",
        "--player",
        "ab3",
        "--param",
        "cpuct=1.5:0.5:3:0.3",
        "--out",
        o,
    ]);
    assert!(
        !ok && err.contains("`cpuct` is not a setting of this player"),
        "{err}"
    );
    let (ok, _, err) = flipzero(&[
        "tune",
        "--player",
        "greedy",
        "--param",
        "cpuct=1.5:0.5:3:0.3",
        "--out",
        o,
    ]);
    assert!(!ok && err.contains("only an MCTS player"), "{err}");
    // An output that is some other file is refused and kept; no iterations is no tuning.
    let config = dir.join("my.toml");
    std::fs::write(&config, "[run]\ngames = 3\n").unwrap();
    let mut other = args("1");
    *other.last_mut().unwrap() = config.to_str().unwrap();
    let (ok, _, err) = flipzero(&other);
    assert!(!ok && err.contains("is not a tuning record"), "{err}");
    assert_eq!(
        std::fs::read_to_string(&config).unwrap(),
        "[run]\ngames = 3\n"
    );
    let mut none = args("1");
    none[10] = "0";
    let fresh = dir.join("fresh.json");
    *none.last_mut().unwrap() = fresh.to_str().unwrap();
    let (ok, _, err) = flipzero(&none);
    assert!(
        !ok && err.contains("--iterations must be at least 1"),
        "{err}"
    );
    assert!(!fresh.exists());
}

#[test]
fn import_makes_weights_a_model_that_answers_as_the_original() {
    let model = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/strength/gen-0131");
    let dir = rundir::Scratch::temp("cli-import", "");
    let out = dir.join("net");
    let weights = format!("{model}/model.safetensors");
    let args = |game: &str| {
        [
            "import",
            "--weights",
            weights.as_str(),
            "--game",
            game,
            "--out",
            out.to_str().unwrap(),
        ]
        .map(String::from)
    };
    let run = |a: &[String]| flipzero(&a.iter().map(String::as_str).collect::<Vec<_>>());
    // A file where the model folder would go is named as such, and kept.
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("a-file");
    std::fs::write(&file, "mine").unwrap();
    let mut onto_file = args("ataxx");
    onto_file[6] = file.to_str().unwrap().to_string();
    let (ok, _, err) = run(&onto_file);
    assert!(!ok && err.contains("is not a folder"), "{err}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine");
    let (ok, _, err) = run(&args("othello"));
    assert!(
        !ok && err.contains("17 policy planes; othello has 1"),
        "{err}"
    );
    let (ok, stdout, err) = run(&args("ataxx"));
    assert!(ok, "{err}");
    assert!(
        stdout.starts_with("imported a 6x32 network for ataxx (Burn's names,"),
        "{stdout}"
    );
    for position in ["startpos", "x5o/7/7/3x3/7/7/o5x o 0 3"] {
        let infer = |m: &str| flipzero(&["infer", "--model", m, "--position", position]);
        let (want, got) = (infer(model), infer(out.to_str().unwrap()));
        assert!(want.0 && got.0, "{} {}", want.2, got.2);
        assert_eq!(got.1, want.1);
    }
    let (ok, _, err) = run(&args("ataxx"));
    assert!(!ok && err.contains("already exists"), "{err}");
}

#[test]
fn a_new_run_is_refused_in_a_folder_that_holds_other_files() {
    let dir = rundir::Scratch::temp("cli-foreign", "");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("thesis.tex"), b"years of work").unwrap();
    for extra in [&[][..], &["--async", "--workers", "1"][..]] {
        let mut args = vec!["run", "--run", dir.to_str().unwrap()];
        args.extend_from_slice(extra);
        let (ok, _, err) = flipzero(&args);
        assert!(!ok, "{extra:?}");
        assert!(
            err.contains(
                "is not a run directory (no config.toml) and is not empty (it holds thesis.tex"
            ),
            "{err}"
        );
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(
            names,
            ["thesis.tex"],
            "{extra:?}: the run wrote into the folder"
        );
    }
}
