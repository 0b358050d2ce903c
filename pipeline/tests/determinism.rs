//! A run is a function of its config and seed: the same micro pipeline run twice, with
//! two threads in self-play and gating, writes the same table (everything but the
//! times), the same games and the same networks. What a run's table (`make run`'s) is
//! checked against across refactors of the pipeline. Also what a run keeps of its
//! networks (retention).

use pipeline::{RunConfig, Silent, SyncRun};

fn micro(extra: &[&str]) -> RunConfig {
    let mut sets: Vec<String> = [
        "run.generations=3",
        "selfplay.games=8",
        "selfplay.threads=2",
        "selfplay.games_per_thread=4",
        "selfplay.simulations=16",
        "selfplay.fast_simulations=8",
        "train.steps=12",
        "train.batch_size=16",
        "train.checkpoint_every=6",
        "train.warmup_steps=3",
        "train.blocks=1",
        "run.export=false",
        "gate.max_pairs=2",
        "gate.batch_pairs=1",
        "gate.simulations=8",
        "gate.threads=2",
        "anchor.pairs=1",
        "anchor.ladder=[\"random\", \"greedy\"]",
    ]
    .map(String::from)
    .to_vec();
    sets.extend(extra.iter().map(|s| s.to_string()));
    RunConfig::builtin(&sets).unwrap()
}

/// The metrics table without its columns of times and rates.
fn timeless(csv: &str) -> Vec<Vec<String>> {
    let mut rows = csv
        .lines()
        .map(|l| l.split(',').map(String::from).collect::<Vec<_>>());
    let header = rows.next().unwrap();
    let keep: Vec<usize> = header
        .iter()
        .enumerate()
        .filter(|(_, h)| !matches!(h.as_str(), "positions_per_s" | "seconds" | "elapsed_s"))
        .map(|(i, _)| i)
        .collect();
    std::iter::once(header)
        .chain(rows)
        .map(|r| keep.iter().map(|&i| r[i].clone()).collect())
        .collect()
}

#[test]
fn the_same_config_and_seed_give_the_same_run() {
    let base = rundir::Scratch::temp("pipeline-determinism", "");
    let keep = std::env::var_os("KEEP").is_some();
    let mut tables = vec![];
    let mut weights = vec![];
    for k in 0..2 {
        let dir = base.join(format!("run-{k}"));
        let run = SyncRun::open(&dir, micro(&[]), false, &Silent).unwrap();
        run.run().unwrap();
        tables.push(timeless(
            &std::fs::read_to_string(dir.join("metrics.csv")).unwrap(),
        ));
        // The network's outputs on a few positions (its file also holds Burn's random
        // parameter ids, which differ from run to run).
        let model = train::load_model(&dir.join("models/gen-0002")).unwrap();
        let game = model.game;
        let mut positions = vec![game.startpos()];
        for k in 0..6 {
            let s = *positions.last().unwrap();
            let moves = s.legal_moves();
            positions.push(s.after(moves[k % moves.len()]));
        }
        let out: Vec<(Vec<f32>, [f32; 3])> = train::predict(&model, &positions)
            .into_iter()
            .map(|p| (p.policy_logits, p.wdl))
            .collect();
        weights.push(out);
    }
    assert_eq!(tables[0].len(), 1 + 3);
    assert_eq!(tables[0], tables[1]);
    assert!(weights[0] == weights[1], "the last networks differ");
    if !keep {
        let _ = std::fs::remove_dir_all(&base);
    }
}

/// The loop with the fast nets (train.family = "fast"): every generation trains a fast
/// net (the next from the previous one's weights), the promoted one plays the next
/// generation's self-play, and the same config and seed give the same run, bit for bit.
#[test]
fn a_fast_net_run_trains_plays_and_repeats() {
    let base = rundir::Scratch::temp("pipeline-fast", "");
    let mut tables = vec![];
    let mut weights = vec![];
    for k in 0..2 {
        let dir = base.join(format!("run-{k}"));
        let cfg = micro(&[
            "train.family=\"fast\"",
            "fastnet.epochs=2",
            "fastnet.hidden=32",
            "fastnet.batch_size=64",
        ]);
        let run = SyncRun::open(&dir, cfg, false, &Silent).unwrap();
        run.run().unwrap();
        tables.push(timeless(
            &std::fs::read_to_string(dir.join("metrics.csv")).unwrap(),
        ));
        for g in 0..3 {
            let model = dir.join(format!("models/gen-{g:04}"));
            assert!(fastnet::io::is_fastnet(&model), "{}", model.display());
            let train: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(model.join("train.json")).unwrap())
                    .unwrap();
            let init = if g == 0 {
                "random".to_string()
            } else {
                format!("gen-{:04}", g - 1)
            };
            assert_eq!(train["init"], init.as_str());
            assert!(train["window_rows"].as_u64().unwrap() > 0);
            // Its loss curve is a metrics file the report reads.
            let csv = std::fs::read_to_string(model.join("metrics.csv")).unwrap();
            assert!(
                csv.starts_with("epoch,lr,loss,policy_loss,value_loss,"),
                "{csv}"
            );
            assert_eq!(csv.lines().count(), 3);
        }
        // The first network is promoted without a match; generation 1's self-play is
        // played by it (its shards name it as the evaluator).
        let best = std::fs::read_to_string(dir.join("models/best")).unwrap();
        assert!(best.trim().starts_with("gen-"), "{best}");
        let shards = fastnet::data::shard_paths(&dir.join("selfplay/gen-0001")).unwrap();
        assert!(!shards.is_empty());
        let (rows, _) = selfplay::read_shard(&shards[0]).unwrap();
        assert!(rows[0].model.contains("gen-0000"), "{}", rows[0].model);
        weights.push(std::fs::read(dir.join("models/gen-0002/fastnet.safetensors")).unwrap());
    }
    assert_eq!(tables[0].len(), 1 + 3);
    assert_eq!(tables[0], tables[1]);
    assert!(weights[0] == weights[1], "the last networks differ");
}

/// A short run's settings: generation 0 searches at `run.bootstrap_simulations` (its
/// shards say so) and later generations at `selfplay.simulations`; with `run.gating =
/// false` every network is promoted without a match and the record says why.
#[test]
fn a_run_without_gating_promotes_every_network_after_a_cheaper_bootstrap() {
    let dir = rundir::Scratch::temp("pipeline-nogate", "");
    let cfg = micro(&[
        "train.family=\"fast\"",
        "fastnet.epochs=1",
        "fastnet.hidden=32",
        "fastnet.batch_size=64",
        "run.gating=false",
        "run.bootstrap_simulations=10",
        "run.bootstrap_fast_simulations=5",
        "anchor.ladder=[]",
    ]);
    SyncRun::open(&dir, cfg, false, &Silent)
        .unwrap()
        .run()
        .unwrap();
    // The most simulations of generation g's full and fast searches.
    let most_visits = |g: u32| {
        let shards = fastnet::data::shard_paths(&dir.join(format!("selfplay/gen-{g:04}"))).unwrap();
        let mut most = (0, 0);
        for s in shards {
            let (rows, _) = selfplay::read_shard(&s).unwrap();
            for r in rows {
                let m = if r.full_search {
                    &mut most.0
                } else {
                    &mut most.1
                };
                *m = (*m).max(r.visits);
            }
        }
        most
    };
    assert_eq!(most_visits(0), (10, 5));
    assert_eq!(most_visits(1), (16, 8));
    assert_eq!(most_visits(2), (16, 8));
    for g in 1..3 {
        let name = format!("gen-{g:04}");
        let record: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join(format!("eval/{name}.json"))).unwrap(),
        )
        .unwrap();
        assert_eq!(record["promoted"], true, "{record}");
        assert!(record["gate"].is_null(), "{record}");
        let reason = record["reason"].as_str().unwrap();
        assert!(reason.contains("run.gating = false"), "{reason}");
        assert!(!dir.join(format!("eval/{name}-gate.pgn")).exists());
    }
    let best = std::fs::read_to_string(dir.join("models/best")).unwrap();
    assert_eq!(best.trim(), "gen-0002");
}

/// `run.final_net_hidden`: when the loop ends, one more generation, without self-play,
/// holds a fresh net of that width trained on every position of the run, and it is the
/// best (no gating); running the finished run again adds nothing; a run extended after
/// it trains its next generation from the last network of its own width, played by the
/// final net, and ends with a new final net.
#[test]
fn a_run_ends_with_a_fresh_wider_net_on_all_its_positions() {
    let dir = rundir::Scratch::temp("pipeline-final", "");
    let cfg = |generations: u32| {
        micro(&[
            &format!("run.generations={generations}"),
            "train.family=\"fast\"",
            "fastnet.epochs=1",
            "fastnet.hidden=32",
            "fastnet.batch_size=64",
            "run.gating=false",
            "run.final_net_hidden=64",
            "run.final_net_epochs=2",
            "anchor.ladder=[]",
        ])
    };
    let run = |generations: u32| {
        SyncRun::open(&dir, cfg(generations), false, &Silent)
            .unwrap()
            .run()
            .unwrap()
    };
    let json = |path: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(dir.join(path)).unwrap()).unwrap()
    };
    let positions = |upto: u32| -> u64 {
        (0..upto)
            .map(|g| {
                json(&format!("selfplay/gen-{g:04}/summary.json"))["positions"]
                    .as_u64()
                    .unwrap()
            })
            .sum()
    };
    let hidden =
        |g: u32| json(&format!("models/gen-{g:04}/model.json"))["network"]["hidden"].clone();

    let summary = run(2);
    assert_eq!(summary.best, "gen-0002");
    assert!(!dir.join("selfplay/gen-0002").exists());
    let record = json("models/gen-0002/train.json");
    assert_eq!(record["final_net"], true, "{record}");
    assert_eq!(record["init"], "random", "{record}");
    assert_eq!(
        record["window_rows"].as_u64(),
        Some(positions(2)),
        "{record}"
    );
    assert_eq!(hidden(2), 64);
    assert_eq!(hidden(1), 32);
    assert_eq!(json("models/gen-0001/train.json").get("final_net"), None);
    let metrics = std::fs::read_to_string(dir.join("models/gen-0002/metrics.csv")).unwrap();
    assert_eq!(metrics.lines().count(), 1 + 2, "{metrics}");
    assert_eq!(json("eval/gen-0002.json")["promoted"], true);
    let last = summary.table.lines().last().unwrap();
    assert!(
        last.contains("final") && last.contains("gen-0002"),
        "{}",
        summary.table
    );
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(report.contains("| 2 | final | - |"), "{report}");

    // Finished: nothing more.
    assert_eq!(run(2).best, "gen-0002");
    assert!(!dir.join("models/gen-0003").exists());

    // Extended by one generation (the final net is not one of run.generations): played
    // by the final net, trained from gen-0001. A shard of the first generation is cut
    // short first: the final net skips it, and its log counts what it read.
    let cut = fastnet::data::shard_paths(&dir.join("selfplay/gen-0000")).unwrap()[0].clone();
    let lost = selfplay::read_shard(&cut).unwrap().0.len() as u64;
    let bytes = std::fs::read(&cut).unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    assert_eq!(run(3).best, "gen-0004");
    let shards = fastnet::data::shard_paths(&dir.join("selfplay/gen-0003")).unwrap();
    let (rows, _) = selfplay::read_shard(&shards[0]).unwrap();
    assert!(rows[0].model.contains("gen-0002"), "{}", rows[0].model);
    assert_eq!(json("models/gen-0003/train.json")["init"], "gen-0001");
    assert_eq!(hidden(3), 32);
    assert_eq!(json("models/gen-0004/train.json")["final_net"], true);
    let read = positions(2) - lost
        + json("selfplay/gen-0003/summary.json")["positions"]
            .as_u64()
            .unwrap();
    assert_eq!(
        json("models/gen-0004/train.json")["window_rows"].as_u64(),
        Some(read)
    );
    let log = std::fs::read_to_string(dir.join("run.log")).unwrap();
    let said = format!(
        "gen-0004: the final net read {read} positions ({lost} of those produced were in shards left out)"
    );
    assert!(log.contains(&said), "{said}\n{log}");
    assert_eq!(hidden(4), 64);
}

/// Retention (`run.keep_models`): a run of six generations keeping two removes the
/// networks of generations 0 to 3 as it goes (all promoted: the newest two, the best and
/// the one before it stay), leaving each folder's records and a `removed.json` that
/// says what went; the report still reads every generation's loss curve, the best
/// still plays, and a resumed run with `keep_models = 1` and one more generation removes
/// what the new rule lets go. Without retention (`keep_models = 0`) every network stays.
#[test]
fn a_run_keeps_the_networks_its_retention_says() {
    let dir = rundir::Scratch::temp("pipeline-retention", "");
    let cfg = |extra: &[&str]| {
        let mut sets = vec![
            "train.family=\"fast\"",
            "fastnet.epochs=1",
            "fastnet.hidden=32",
            "fastnet.batch_size=64",
            "run.gating=false",
            "anchor.ladder=[]",
            "selfplay.games=4",
        ];
        sets.extend_from_slice(extra);
        micro(&sets)
    };
    let run = |extra: &[&str]| {
        SyncRun::open(&dir, cfg(extra), false, &Silent)
            .unwrap()
            .run()
            .unwrap()
    };
    let has_net = |g: u32| dir.join(format!("models/gen-{g:04}/model.json")).is_file();
    run(&["run.generations=6", "run.keep_models=2"]);
    for g in 0..6 {
        let folder = dir.join(format!("models/gen-{g:04}"));
        assert!(folder.join("train.json").is_file(), "gen {g}");
        assert!(folder.join("metrics.csv").is_file(), "gen {g}");
        let removed = folder.join("removed.json");
        assert_eq!(has_net(g), g >= 4, "gen {g}");
        assert_eq!(removed.is_file(), g < 4, "gen {g}");
        if g < 4 {
            let files: Vec<String> = std::fs::read_dir(&folder)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            assert!(
                files
                    .iter()
                    .all(|f| ["train.json", "metrics.csv", "removed.json"].contains(&f.as_str())),
                "gen {g}: {files:?}"
            );
            let record: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&removed).unwrap()).unwrap();
            let gone: Vec<&str> = record["files"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f.as_str().unwrap())
                .collect();
            assert!(
                gone.contains(&"fastnet.safetensors") && gone.contains(&"model.json"),
                "{record}"
            );
            assert!(record["bytes"].as_u64().unwrap() > 100_000, "{record}");
            assert_eq!(record["rule"], "run.keep_models = 2, run.keep_every = 0");
        }
    }
    let log = std::fs::read_to_string(dir.join("run.log")).unwrap();
    assert_eq!(
        log.matches("network removed by the retention").count(),
        4,
        "{log}"
    );
    // Every generation's loss curve still drawn; the best still a player.
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(report.contains("gen-0000"), "{report}");
    assert_eq!(
        std::fs::read_to_string(dir.join("models/best"))
            .unwrap()
            .trim(),
        "gen-0005"
    );
    eval::check_loads(
        &eval::NetSource::Path(dir.clone()),
        "ataxx".parse().unwrap(),
    )
    .unwrap();
    // A removed network, named as a player, says why it cannot play.
    let e = eval::resolve_net(&dir.join("models/gen-0001"))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("removed by its run's retention"), "{e}");
    // Resumed keeping one: generation 6 is trained from 5 and promoted, then 4 goes (6
    // is the newest and the best, 5 the best before it).
    run(&["run.generations=7", "run.keep_models=1"]);
    assert_eq!((0..7).filter(|&g| has_net(g)).collect::<Vec<_>>(), [5, 6]);
    // A generation's folder that is a link (moved to another disk) is never emptied
    // through the link: the retention warns and leaves it.
    let elsewhere = dir.with_extension("elsewhere");
    let _ = std::fs::remove_dir_all(&elsewhere);
    std::fs::rename(dir.join("models/gen-0005"), &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, dir.join("models/gen-0005")).unwrap();
    // A file of the user's in a folder the retention empties stays: only the network goes.
    std::fs::write(dir.join("models/gen-0006/notes.txt"), "mine").unwrap();
    run(&["run.generations=9", "run.keep_models=1"]);
    assert!(!has_net(6));
    assert_eq!(
        std::fs::read_to_string(dir.join("models/gen-0006/notes.txt")).unwrap(),
        "mine"
    );
    assert!(
        elsewhere.join("model.json").is_file() && elsewhere.join("fastnet.safetensors").is_file()
    );
    let log = std::fs::read_to_string(dir.join("run.log")).unwrap();
    assert!(log.contains("gen-0005: not a folder of the run"), "{log}");
    assert_eq!(
        (0..9).filter(|&g| has_net(g)).collect::<Vec<_>>(),
        [5, 7, 8]
    );
    std::fs::remove_file(dir.join("models/gen-0005")).unwrap();
    std::fs::rename(&elsewhere, dir.join("models/gen-0005")).unwrap();
    // A best pointer that names a removed network: the run falls back to the newest
    // promoted network that loads before anything trusts the pointer (the retention
    // included), keeping the emptied folder's records where they are.
    // A network file put back into an emptied folder goes at the next pass, and the
    // folder's record says so.
    std::fs::write(
        dir.join("models/gen-0002/fastnet-quant.safetensors"),
        "stray",
    )
    .unwrap();
    std::fs::write(dir.join("models/best"), "gen-0001").unwrap();
    run(&["run.generations=10", "run.keep_models=1"]);
    let log = std::fs::read_to_string(dir.join("run.log")).unwrap();
    assert!(log.contains("models/best names gen-0001, whose network the retention removed; the best is gen-0008 again"), "{log}");
    assert!(dir.join("models/gen-0001/train.json").is_file());
    assert!(
        !dir.join("models/gen-0002/fastnet-quant.safetensors")
            .exists()
    );
    let record = std::fs::read_to_string(dir.join("models/gen-0002/removed.json")).unwrap();
    assert!(
        record.contains("fastnet-quant.safetensors") && record.contains("fastnet.safetensors"),
        "{record}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("models/best"))
            .unwrap()
            .trim(),
        "gen-0009"
    );
    // models/ itself a link: the retention removes nothing through it.
    let moved = dir.with_extension("models");
    let _ = std::fs::remove_dir_all(&moved);
    std::fs::rename(dir.join("models"), &moved).unwrap();
    std::os::unix::fs::symlink(&moved, dir.join("models")).unwrap();
    run(&["run.generations=11", "run.keep_models=1"]);
    let log = std::fs::read_to_string(dir.join("run.log")).unwrap();
    assert!(
        log.contains("models: not a folder of the run (a link): the retention removes nothing"),
        "{log}"
    );
    assert!(moved.join("gen-0008/model.json").is_file());
    let _ = std::fs::remove_dir_all(&moved);
    // keep_models = 0: a fresh run keeps all.
    let _ = std::fs::remove_dir_all(&dir);
    run(&["run.generations=4", "run.keep_models=0"]);
    assert!((0..4).all(has_net));
}

/// Alpha-beta self-play in the loop (configs/nnue.toml's kind of run): generation 0 is
/// played with the hand-written evaluation, later ones with the best value net at the
/// search's leaves (the recorded scores are that search's, recomputed here), candidates
/// are gated by alpha-beta games, and the nets train on the value alone.
#[test]
fn an_alpha_beta_run_trains_value_nets_that_play_its_games() {
    use engine::search::{Limits, Searcher};
    let dir = rundir::Scratch::temp("pipeline-ab", "");
    let cfg = micro(&[
        "train.family=\"fast\"",
        "selfplay.search=\"alphabeta\"",
        "selfplay.ab_soft_nodes=150",
        "selfplay.ab_hard_nodes=300",
        "selfplay.opening_random_plies=8",
        "fastnet.epochs=2",
        "fastnet.hidden=32",
        "fastnet.batch_size=64",
        "fastnet.policy_weight=0",
    ]);
    // The CNN family has no value for the searcher: refused before any work.
    let cnn = micro(&["selfplay.search=\"alphabeta\""]);
    let e = SyncRun::open(&dir.join("cnn"), cnn, false, &Silent)
        .err()
        .expect("an alpha-beta run of CNNs is refused")
        .chain();
    assert!(e.contains("train.family = \"fast\""), "{e}");
    assert!(!dir.exists(), "a refused run leaves nothing behind");
    let burn = [
        "selfplay.search=\"alphabeta\"",
        "selfplay.net_engine=\"burn\"",
    ];
    let e = RunConfig::builtin(&burn.map(String::from))
        .unwrap_err()
        .chain();
    assert!(e.contains("selfplay.net_engine = \"fast\""), "{e}");
    let run = SyncRun::open(&dir, cfg, false, &Silent).unwrap();
    run.run().unwrap();
    let rows_of = |g: u32| -> Vec<selfplay::Sample> {
        let folder = dir.join(format!("selfplay/gen-{g:04}"));
        fastnet::data::shard_paths(&folder)
            .unwrap()
            .iter()
            .flat_map(|s| selfplay::read_shard(s).unwrap().0)
            .collect()
    };
    let first = rows_of(0);
    assert!(
        first
            .iter()
            .all(|r| r.model == selfplay::HAND_WRITTEN && r.search_cp.is_some())
    );
    // Generation 1 was gated by alpha-beta games at self-play's node limits.
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("eval/gen-0001.json")).unwrap())
            .unwrap();
    let matched = &record["gate"]["matched"];
    assert!(matched["games"].as_u64().unwrap() >= 2, "{record}");
    for (player, net) in [("a_player", "gen-0001"), ("b_player", "gen-0000")] {
        let name = matched[player].as_str().unwrap();
        assert!(
            name.starts_with("abnet:")
                && name.contains(net)
                && name.ends_with(":nodes=300,soft_nodes=150"),
            "{name}"
        );
    }
    // A later generation's rows are the searches of the best net of its time: the first
    // search of each game (fresh tables) gives the recorded score again.
    let played = rows_of(1);
    let model = &played[0].model;
    assert!(model.starts_with("gen-0000"), "{model}");
    let (net, _) = fastnet::io::load(&dir.join("models/gen-0000")).unwrap();
    let net = std::sync::Arc::new(fastnet::QuantNet::new(&net).unwrap());
    let stop = std::sync::atomic::AtomicBool::new(false);
    let (mut checked, mut differ) = (0, 0);
    for r in played.iter().filter(|r| r.ply == 0) {
        let game: engine::Game = r.variant.parse().unwrap();
        let s = game.parse_position(&r.fen).unwrap();
        let mut searcher =
            Searcher::new(4).with_eval(Box::new(fastnet::FastValue::new(net.clone())));
        let limits = Limits {
            soft_nodes: Some(150),
            nodes: Some(300),
            ..Limits::default()
        };
        let got = searcher.search(&s, limits, &stop, |_| {}).unwrap();
        assert_eq!(Some(got.score), r.search_cp, "{}", r.fen);
        let by_hand = Searcher::new(4).search(&s, limits, &stop, |_| {}).unwrap();
        differ += usize::from(Some(by_hand.score) != r.search_cp);
        checked += 1;
    }
    assert!(checked >= 4, "{checked} games checked");
    assert!(
        differ * 2 > checked,
        "{differ} of {checked} unlike the hand-written"
    );
}
