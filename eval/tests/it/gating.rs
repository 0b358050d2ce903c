//! Gating end to end on tiny networks: a network trained on bootstrap self-play data is
//! promoted over an untrained one, and the reverse is rejected; promotion is atomic.

use std::collections::HashMap;
use std::path::Path;

use eval::{GateConfig, GateMode, NetSource, PlayerSpec};
use selfplay::{BuiltinEvaluator, SelfplayConfig};
use train::{TrainConfig, TrainOptions};

fn temp(name: &str) -> rundir::Scratch {
    rundir::Scratch::temp("gating", name)
}

/// A tiny network trained for `steps` steps at `lr` on bootstrap self-play games.
fn model(data: &Path, name: &str, steps: u64, lr: f64) -> rundir::Scratch {
    let out = temp(name);
    let tc = TrainConfig {
        steps,
        batch_size: 64,
        learning_rate: lr,
        warmup_steps: 1,
        checkpoint_every: 1000,
        ..TrainConfig::default()
    };
    let opts = TrainOptions {
        data: vec![data.to_path_buf()],
        out: out.clone(),
        resume: false,
        init: None,
        stop_after: None,
        on_step: &|_| {},
        on_warning: &|_| {},
    };
    train::train(&tc, "ataxx".parse().unwrap(), &opts).unwrap();
    out
}

fn mcts(dir: &Path) -> PlayerSpec {
    PlayerSpec::Mcts {
        net: NetSource::Path(dir.to_path_buf()),
        sims: 16,
        time: None,
        engine: selfplay::NetEngine::Fast,
        basic: false,
        params: eval::SearchParams::default(),
    }
}

#[test]
fn trained_net_is_promoted_over_untrained_and_not_the_reverse() {
    let data = temp("data");
    let cfg = SelfplayConfig {
        games: 40,
        threads: 2,
        evaluator: BuiltinEvaluator::Bootstrap,
        simulations: 32,
        fast_simulations: 8,
        ..SelfplayConfig::default()
    };
    selfplay::run_selfplay(
        &cfg,
        &[],
        &|| BuiltinEvaluator::Bootstrap.build(),
        &data,
        &HashMap::new(),
        &|_| {},
    )
    .unwrap();
    let trained = model(&data, "trained", 300, 2e-3);
    let untrained = model(&data, "untrained", 1, 1e-12);
    let gate = GateConfig {
        mode: GateMode::Sprt,
        elo0: 0.0,
        elo1: 50.0,
        alpha: 0.05,
        beta: 0.05,
        max_pairs: 30,
        batch_pairs: 5,
        simulations: 16,
        threads: 2,
        ..GateConfig::default()
    };
    let game = "ataxx".parse().unwrap();
    let v = eval::gate(
        game,
        ("trained", &mcts(&trained)),
        ("untrained", &mcts(&untrained)),
        &gate,
        1,
        &|_| {},
    )
    .unwrap();
    assert!(v.promote, "{v:?}");
    assert!(v.matched.score > 0.7, "{}", v.matched.score);
    assert_eq!(v.sprt, eval::SprtVerdict::H1, "{}", v.reason);
    let v = eval::gate(
        game,
        ("untrained", &mcts(&untrained)),
        ("trained", &mcts(&trained)),
        &gate,
        1,
        &|_| {},
    )
    .unwrap();
    assert!(!v.promote, "{v:?}");
    assert_eq!(v.sprt, eval::SprtVerdict::H0, "{}", v.reason);
    // The verdict records the match: games, score, Elo, LLR and bounds.
    assert_eq!(v.matched.games as usize, v.matched.results.len());
    assert!(v.llr <= v.bounds.0);

    // A run directory's best resolves to its model; promotion replaces it whole.
    let run = temp("run");
    std::fs::create_dir_all(run.join("models")).unwrap();
    copy_dir(&trained, &run.join("models").join("gen-0001"));
    rundir::promote(&run, "gen-0001").unwrap();
    assert_eq!(
        eval::resolve_net(&run).unwrap(),
        eval::ResolvedNet::Model(run.join("models").join("gen-0001"))
    );
    // A temporary file left by a promotion killed before its rename changes nothing.
    std::fs::write(run.join("models").join(".best.999.tmp"), "gen-00").unwrap();
    assert_eq!(
        rundir::current_best(&run).unwrap().as_deref(),
        Some("gen-0001")
    );
    rundir::promote(&run, "bootstrap").unwrap();
    assert_eq!(
        eval::resolve_net(&run).unwrap(),
        eval::ResolvedNet::Bootstrap
    );
    let spec: PlayerSpec = format!("mcts:{}", run.display()).parse().unwrap();
    let mut p = spec.build(game, 1, eval::Timeouts::default()).unwrap();
    let s = "ataxx".parse::<engine::Game>().unwrap().startpos();
    assert!(s.is_legal(p.choose(&s).unwrap()));

    // `models/best` can only name a folder under models/: a path, `..` or binary noise is
    // a named error, never a model from outside the run (nor "no models/best").
    let outside = temp("outside");
    copy_dir(&trained, &outside.join("gen-0007"));
    let best = run.join("models").join("best");
    for bad in [
        "../../outside/gen-0007",
        "..",
        "/etc",
        ".hidden",
        "gen-0001/../..",
    ] {
        std::fs::write(&best, format!("{bad}\n")).unwrap();
        let e = eval::resolve_net(&run).unwrap_err().to_string();
        assert!(
            e.contains("models/best") && e.contains("not a model of this run"),
            "{bad}: {e}"
        );
        assert!(rundir::current_best(&run).is_err(), "{bad}");
        assert!(rundir::promote(&run, bad).is_err(), "{bad}");
    }
    std::fs::write(&best, [0xff, 0xfe, 0x00, 0x17]).unwrap();
    let e = eval::resolve_net(&run).unwrap_err().to_string();
    assert!(
        e.contains("models/best") && e.contains("cannot read"),
        "{e}"
    );
    rundir::promote(&run, "gen-0001").unwrap();

    // A model of another game, or one that does not load, is refused before the first
    // game, in a match and in a gate (no forfeits, no verdict).
    let no_game = |_: &eval::GameRecord| panic!("no game may be played");
    let hex: engine::Game = "hexxagon".parse().unwrap();
    let m = eval::MatchConfig::new(hex, 1, 1);
    let e = eval::run_match(&mcts(&run), &PlayerSpec::Random, &m, &no_game)
        .unwrap_err()
        .to_string();
    assert!(e.contains("is for game ataxx, not hexxagon"), "{e}");
    let missing = mcts(Path::new("/nonexistent/model"));
    for (cand, inc) in [(&mcts(&trained), &missing), (&missing, &mcts(&trained))] {
        let e = eval::gate(game, ("c", cand), ("i", inc), &gate, 1, &no_game)
            .unwrap_err()
            .to_string();
        assert!(e.contains("/nonexistent/model"), "{e}");
    }
    let e = eval::gate(
        hex,
        ("c", &mcts(&trained)),
        ("i", &PlayerSpec::Random),
        &gate,
        1,
        &no_game,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("not hexxagon"), "{e}");
    // A match pins a run directory to its best network of the moment: a promotion (here
    // to a broken model) during the match changes nothing in it.
    std::fs::create_dir_all(run.join("models").join("gen-0002")).unwrap();
    std::fs::write(run.join("models/gen-0002/model.json"), "{}").unwrap();
    let promote_broken = |_: &eval::GameRecord| {
        std::fs::write(run.join("models").join("best"), "gen-0002\n").unwrap();
    };
    let m = eval::MatchConfig::new(game, 3, 1);
    let (records, _) =
        eval::run_match(&mcts(&run), &PlayerSpec::Random, &m, &promote_broken).unwrap();
    assert_eq!(records.len(), 6);
    assert!(
        records.iter().all(|r| !r.reason.starts_with("forfeit")
            && format!("{}{}", r.x_name, r.o_name).contains("gen-0001")),
        "{records:?}"
    );
    rundir::promote(&run, "gen-0001").unwrap();
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        if p.is_file() {
            std::fs::copy(&p, to.join(p.file_name().unwrap())).unwrap();
        }
    }
}
