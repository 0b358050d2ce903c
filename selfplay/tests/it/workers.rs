//! Workers end to end: reproducible shards, legal and replayable records, proper policy
//! targets, and a reader that skips broken files.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use engine::{Game, Move, State};
use selfplay::{
    BuiltinEvaluator, RootKind, Sample, SelfplayConfig, ShardStream, read_shard, run_selfplay,
};

fn temp(name: &str) -> rundir::Scratch {
    rundir::Scratch::temp("sp", name)
}

fn play(cfg: &SelfplayConfig, out: &Path) -> selfplay::SelfplayReport {
    let e = cfg.evaluator;
    run_selfplay(cfg, &[], &move || e.build(), out, &HashMap::new(), &|_| {}).unwrap()
}

fn small(game: &str, evaluator: BuiltinEvaluator) -> SelfplayConfig {
    SelfplayConfig {
        game: game.into(),
        games: 6,
        threads: 1,
        games_per_thread: 4,
        evaluator,
        simulations: 24,
        fast_simulations: 8,
        full_search_fraction: 0.5,
        rows_per_shard: 150,
        ..SelfplayConfig::default()
    }
}

#[test]
fn single_threaded_runs_are_byte_identical() {
    let cfg = small("ataxx", BuiltinEvaluator::Random);
    let (a, b) = (temp("same-a"), temp("same-b"));
    let ra = play(&cfg, &a);
    let rb = play(&cfg, &b);
    assert_eq!(ra.files.len(), rb.files.len());
    assert!(ra.files.len() > 1, "rows_per_shard should split the output");
    for (fa, fb) in ra.files.iter().zip(&rb.files) {
        assert_eq!(
            std::fs::read(fa).unwrap(),
            std::fs::read(fb).unwrap(),
            "{}",
            fa.display()
        );
    }
    let other = SelfplayConfig { seed: 2, ..cfg };
    let c = temp("same-c");
    let rc = play(&other, &c);
    assert_ne!(
        std::fs::read(&ra.files[0]).unwrap(),
        std::fs::read(&rc.files[0]).unwrap()
    );
}

fn decode(s: &State, index: u16) -> Move {
    s.legal_moves()
        .into_iter()
        .find(|&m| s.policy_index(m) == index as usize)
        .expect("the played index is a legal move")
}

/// Replays every game from its first recorded position, checking each record.
fn check_games(rows: &[Sample], game: Game) {
    let mut games: BTreeMap<u64, Vec<&Sample>> = BTreeMap::new();
    for r in rows {
        games.entry(r.game_id).or_default().push(r);
    }
    assert!(!games.is_empty());
    for (id, mut samples) in games {
        samples.sort_by_key(|s| s.ply);
        let mut pos = game.parse_position(&samples[0].fen).unwrap();
        let mut ply = samples[0].ply;
        for (k, s) in samples.iter().enumerate() {
            // Forced moves are played but not recorded: follow them up to this sample.
            while ply < s.ply {
                let m = pos.legal_moves();
                assert_eq!(m.len(), 1, "game {id}: unrecorded ply {ply} was not forced");
                pos.play(m[0]);
                ply += 1;
            }
            assert_eq!(pos.text(), s.fen, "game {id} ply {}", s.ply);
            let legal: Vec<u16> = pos
                .legal_moves()
                .iter()
                .map(|&m| pos.policy_index(m) as u16)
                .collect();
            assert_eq!(s.legal, legal, "game {id} ply {}", s.ply);
            assert_eq!(s.policy.len(), s.legal.len());
            let total: f32 = s.policy.iter().sum();
            assert!(
                (total - 1.0).abs() < 1e-4 && s.policy.iter().all(|&p| p >= 0.0),
                "{total}"
            );
            assert!(s.legal.contains(&s.played));
            let mv = decode(&pos, s.played);
            let side = pos.side_to_move();
            pos.play(mv);
            ply += 1;
            if k + 1 == samples.len() {
                while !pos.is_game_over() {
                    let m = pos.legal_moves();
                    assert_eq!(
                        m.len(),
                        1,
                        "game {id}: unrecorded moves after the last record"
                    );
                    pos.play(m[0]);
                }
                let r = pos.result().unwrap();
                let want = match r.winner {
                    None => 0.0,
                    Some(w) if w == side => 1.0,
                    Some(_) => -1.0,
                };
                assert_eq!(s.result, want, "game {id}");
                assert_eq!(s.end_reason, r.reason.name());
            }
        }
        // Results alternate with the side to move; all rows of a game share the ending.
        assert!(
            samples
                .iter()
                .all(|s| s.end_reason == samples[0].end_reason)
        );
    }
}

#[test]
fn records_are_legal_and_replay_to_the_recorded_result() {
    for (game, root) in [
        ("ataxx", RootKind::Puct),
        ("othello", RootKind::Gumbel),
        ("annexation32", RootKind::Puct),
    ] {
        let cfg = SelfplayConfig {
            root,
            ..small(game, BuiltinEvaluator::Bootstrap)
        };
        let out = temp(&format!("replay-{}", game));
        let report = play(&cfg, &out);
        assert_eq!(report.games, 6);
        let rows: Vec<Sample> = ShardStream::open(&out).unwrap().collect();
        assert_eq!(rows.len() as u64, report.positions);
        check_games(&rows, game.parse().unwrap());
    }
}

#[test]
fn broken_shards_are_reported_and_skipped() {
    let cfg = small("ataxx", BuiltinEvaluator::Uniform);
    let out = temp("broken");
    let report = play(&cfg, &out);
    let good = report.positions as usize;
    // A truncated copy of a real shard, and a file of garbage.
    let bytes = std::fs::read(&report.files[0]).unwrap();
    std::fs::write(out.join("part-900-0000.parquet"), &bytes[..bytes.len() / 2]).unwrap();
    std::fs::write(out.join("part-901-0000.parquet"), b"not parquet at all").unwrap();
    // A leftover temporary file is not a shard.
    std::fs::write(out.join(".part-902-0000.parquet.tmp"), b"partial").unwrap();
    let mut stream = ShardStream::open(&out).unwrap();
    let rows: Vec<Sample> = stream.by_ref().collect();
    assert_eq!(rows.len(), good);
    let skipped: Vec<String> = stream.skipped().iter().map(|e| e.to_string()).collect();
    assert_eq!(skipped.len(), 2, "{skipped:?}");
    assert!(
        skipped.iter().any(|s| s.contains("part-900"))
            && skipped.iter().any(|s| s.contains("part-901"))
    );
    assert!(read_shard(&out.join("part-901-0000.parquet")).is_err());
}

#[test]
fn resignation_ends_games_for_the_losing_side() {
    let mut cfg = small("ataxx", BuiltinEvaluator::Bootstrap);
    cfg.games = 10;
    cfg.resign_threshold = Some(-0.6);
    cfg.resign_consecutive = 1;
    cfg.no_resign_fraction = 0.0;
    let out = temp("resign");
    let report = play(&cfg, &out);
    assert!(report.resignations > 0, "{report:?}");
    let rows: Vec<Sample> = ShardStream::open(&out).unwrap().collect();
    let mut last: BTreeMap<u64, &Sample> = BTreeMap::new();
    for r in rows.iter().filter(|r| r.end_reason == "resigned") {
        let e = last.entry(r.game_id).or_insert(r);
        if r.ply > e.ply {
            *e = r;
        }
    }
    assert_eq!(last.len() as u64, report.resignations);
    for s in last.values() {
        // The last record is the resigning side's own decision: a loss, below threshold.
        assert_eq!(s.result, -1.0);
        assert!(s.root_q < -0.6);
    }
    // With every game exempt, nobody resigns.
    cfg.no_resign_fraction = 1.0;
    assert_eq!(play(&cfg, &temp("no-resign")).resignations, 0);
}
