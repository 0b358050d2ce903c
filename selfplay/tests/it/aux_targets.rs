//! The auxiliary targets of schema 2: every row's ownership is the owner map of its
//! game's final position (recomputed here by replaying the game), its reply target is the
//! next row's search policy, and version-1 shards still read (with empty targets).

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow::datatypes::Schema;
use engine::{Game, Side, State};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use selfplay::data::{KEY_SCHEMA_VERSION, SCHEMA_VERSION};
use selfplay::{BuiltinEvaluator, Sample, SelfplayConfig, ShardStream, read_shard, run_selfplay};

fn temp(name: &str) -> rundir::Scratch {
    rundir::Scratch::temp("aux", name)
}

fn small(game: &str) -> SelfplayConfig {
    SelfplayConfig {
        game: game.into(),
        games: 6,
        threads: 1,
        games_per_thread: 3,
        evaluator: BuiltinEvaluator::Bootstrap,
        simulations: 24,
        fast_simulations: 8,
        full_search_fraction: 0.5,
        ..SelfplayConfig::default()
    }
}

fn play(cfg: &SelfplayConfig, out: &Path) -> Vec<Sample> {
    let e = cfg.evaluator;
    run_selfplay(cfg, &[], &move || e.build(), out, &HashMap::new(), &|_| {}).unwrap();
    ShardStream::open(out).unwrap().collect()
}

fn by_game(rows: &[Sample]) -> BTreeMap<u64, Vec<&Sample>> {
    let mut games: BTreeMap<u64, Vec<&Sample>> = BTreeMap::new();
    for r in rows {
        games.entry(r.game_id).or_default().push(r);
    }
    for g in games.values_mut() {
        g.sort_by_key(|s| s.ply);
    }
    games
}

fn decode(s: &State, index: u16) -> engine::Move {
    s.legal_moves()
        .into_iter()
        .find(|&m| s.policy_index(m) == index as usize)
        .expect("a legal move")
}

/// The owner map of `board` from `side`'s view, by grid coordinates.
fn owners(board: &State, side: Side) -> Vec<i8> {
    let game = board.game();
    let (w, h) = game.grid();
    let mut out = Vec::with_capacity(w * h);
    for y in 0..h {
        for x in 0..w {
            out.push(match game.cell_at(x as i32, y as i32) {
                None => 0,
                Some(c) => match board.piece_at(c) {
                    Some(p) if p == side => 1,
                    Some(_) => -1,
                    None => 0,
                },
            });
        }
    }
    out
}

/// Counts of what a run exercised: rows with an ownership target, rows with a reply
/// target, and rows without one although a next row exists.
#[derive(Default, Debug)]
struct Seen {
    owned: usize,
    replies: usize,
    no_reply_mid_game: usize,
}

/// Checks every game's targets against a replay of the game.
fn check(rows: &[Sample], game: Game, seen: &mut Seen) {
    let (w, h) = game.grid();
    for (id, samples) in by_game(rows) {
        let last = samples[samples.len() - 1];
        // The final position: the last record's move, then the forced moves after it.
        let mut board = game.parse_position(&last.fen).unwrap();
        board.play(decode(&board, last.played));
        while !board.is_game_over() && board.legal_moves().len() == 1 {
            board.play(board.legal_moves()[0]);
        }
        let by_rules = !matches!(last.end_reason.as_str(), "resigned" | "move-cap");
        if by_rules {
            assert!(
                board.is_game_over(),
                "game {id} ended by {}",
                last.end_reason
            );
            assert_eq!(board.result().unwrap().reason.name(), last.end_reason);
        }
        for (k, s) in samples.iter().enumerate() {
            let pos = game.parse_position(&s.fen).unwrap();
            let side = pos.side_to_move();
            if by_rules {
                assert_eq!(s.ownership.len(), w * h);
                assert_eq!(s.ownership, owners(&board, side), "game {id} ply {}", s.ply);
                seen.owned += 1;
            } else {
                assert!(s.ownership.is_empty(), "game {id} ({})", s.end_reason);
            }
            assert_eq!(s.reply_legal.len(), s.reply_policy.len());
            let Some(next) = samples.get(k + 1) else {
                assert!(s.reply_legal.is_empty(), "game {id}: last row has a reply");
                continue;
            };
            let after = pos.after(decode(&pos, s.played));
            let is_reply = next.ply == s.ply + 1 && next.full_search;
            if next.ply == s.ply + 1 {
                // The next row is the position after this row's move, the opponent's.
                assert_eq!(after.text(), next.fen, "game {id} ply {}", s.ply);
                assert_eq!(after.side_to_move(), side.other());
            }
            if is_reply {
                assert_eq!(s.reply_legal, next.legal, "game {id} ply {}", s.ply);
                assert_eq!(s.reply_policy, next.policy, "game {id} ply {}", s.ply);
                seen.replies += 1;
            } else {
                assert!(s.reply_legal.is_empty() && s.reply_policy.is_empty());
                seen.no_reply_mid_game += 1;
            }
        }
    }
}

#[test]
fn rows_carry_the_final_ownership_and_the_next_rows_policy() {
    // Hexxagon has grid cells that are not board cells; Othello passes are explicit.
    for game in ["ataxx", "hexxagon", "othello"] {
        let out = temp(&format!("targets-{game}"));
        let rows = play(&small(game), &out);
        let mut seen = Seen::default();
        check(&rows, game.parse().unwrap(), &mut seen);
        assert!(
            seen.owned == rows.len() && seen.replies > 20 && seen.no_reply_mid_game > 20,
            "{game}: {seen:?} of {} rows",
            rows.len()
        );
    }
}

#[test]
fn games_not_ended_by_the_rules_have_no_ownership() {
    // Stopped at the run's move cap: no final position, but replies as usual.
    let cfg = SelfplayConfig {
        max_plies: 12,
        ..small("ataxx")
    };
    let rows = play(&cfg, &temp("cap"));
    let capped = rows.iter().filter(|r| r.end_reason == "move-cap").count();
    // (Most games reach the cap; the solver ends a few by a wipe-out first.)
    assert!(capped * 2 > rows.len(), "{capped} of {} rows", rows.len());
    let mut seen = Seen::default();
    check(&rows, "ataxx".parse().unwrap(), &mut seen);
    // (A quick wipe-out within the cap is a real ending, with its ownership.)
    assert!(
        seen.owned == rows.len() - capped && seen.replies > 10,
        "{seen:?}"
    );
    // Resigned games: the board at resignation is not a final position.
    let cfg = SelfplayConfig {
        games: 10,
        resign_threshold: Some(-0.6),
        resign_consecutive: 1,
        no_resign_fraction: 0.0,
        ..small("ataxx")
    };
    let rows = play(&cfg, &temp("resigned"));
    let resigned = rows.iter().filter(|r| r.end_reason == "resigned").count();
    assert!(resigned > 0);
    let mut seen = Seen::default();
    check(&rows, "ataxx".parse().unwrap(), &mut seen);
    assert_eq!(seen.owned, rows.len() - resigned);
}

/// Rewrites a shard as schema `version` would have written it: without the columns
/// named in `drop`, with `version` in both metadata places.
fn rewrite(src: &Path, dst: &Path, version: &str, drop: &[&str]) {
    let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(src).unwrap()).unwrap();
    let old = builder.schema().clone();
    let keep: Vec<usize> = (0..old.fields().len())
        .filter(|&i| !drop.contains(&old.field(i).name().as_str()))
        .collect();
    let mut meta = old.metadata().clone();
    meta.insert(KEY_SCHEMA_VERSION, version);
    let schema = Arc::new(Schema::new_with_metadata(
        keep.iter()
            .map(|&i| old.field(i).clone())
            .collect::<Vec<_>>(),
        meta.clone(),
    ));
    let kv = meta
        .iter()
        .map(|(k, v)| KeyValue::new(k.clone(), v.clone()))
        .collect();
    let props = WriterProperties::builder()
        .set_key_value_metadata(Some(kv))
        .build();
    let mut w = ArrowWriter::try_new(File::create(dst).unwrap(), schema, Some(props)).unwrap();
    for batch in builder.build().unwrap() {
        w.write(&batch.unwrap().project(&keep).unwrap()).unwrap();
    }
    w.close().unwrap();
}

#[test]
fn version_1_shards_read_without_targets_and_unknown_versions_are_refused() {
    let out = temp("v1");
    play(&small("ataxx"), &out);
    assert_eq!(SCHEMA_VERSION, "3");
    let src = selfplay::shard_files(&out).unwrap().remove(0);
    let (new_rows, meta) = read_shard(&src).unwrap();
    assert_eq!(meta[KEY_SCHEMA_VERSION], "3");
    assert!(new_rows.iter().any(|r| !r.ownership.is_empty()));
    assert!(new_rows.iter().any(|r| !r.reply_legal.is_empty()));

    let old_dir = temp("v1-old");
    std::fs::create_dir_all(&old_dir).unwrap();
    let v1 = old_dir.join("part-000-0000.parquet");
    rewrite(
        &src,
        &v1,
        "1",
        &[
            "ownership",
            "reply_legal",
            "reply_policy",
            "surprise",
            "search_cp",
        ],
    );
    let (old_rows, meta) = read_shard(&v1).unwrap();
    assert_eq!(meta[KEY_SCHEMA_VERSION], "1");
    // The same rows, every auxiliary target empty.
    let stripped: Vec<Sample> = new_rows
        .iter()
        .map(|r| Sample {
            ownership: Vec::new(),
            reply_legal: Vec::new(),
            reply_policy: Vec::new(),
            surprise: 0.0,
            ..r.clone()
        })
        .collect();
    assert_eq!(old_rows, stripped);
    assert_eq!(ShardStream::open(&old_dir).unwrap().count(), old_rows.len());

    // A version-2 file without the new columns is broken, and says which column.
    let broken = old_dir.join("part-000-0001.parquet");
    rewrite(&src, &broken, "2", &["reply_policy", "search_cp"]);
    let e = read_shard(&broken).unwrap_err().to_string();
    assert!(
        e.contains("part-000-0001") && e.contains("reply_policy"),
        "{e}"
    );

    // An unknown version is refused with the file and the version named.
    let future = old_dir.join("part-000-0002.parquet");
    rewrite(&src, &future, "4", &[]);
    let e = read_shard(&future).unwrap_err().to_string();
    assert!(
        e.contains("part-000-0002.parquet") && e.contains("schema version 4"),
        "{e}"
    );
}

#[test]
fn version_2_shards_read_without_the_search_score() {
    let out = temp("v2");
    let cfg = SelfplayConfig {
        search: selfplay::SearchKind::AlphaBeta,
        ab_soft_nodes: 200,
        ab_hard_nodes: 400,
        games: 2,
        ..small("ataxx")
    };
    play(&cfg, &out);
    let src = selfplay::shard_files(&out).unwrap().remove(0);
    let (rows, _) = read_shard(&src).unwrap();
    assert!(rows.iter().all(|r| r.search_cp.is_some()));
    let old_dir = temp("v2-old");
    std::fs::create_dir_all(&old_dir).unwrap();
    let v2 = old_dir.join("part-000-0000.parquet");
    rewrite(&src, &v2, "2", &["search_cp"]);
    let (old_rows, meta) = read_shard(&v2).unwrap();
    assert_eq!(meta[KEY_SCHEMA_VERSION], "2");
    let stripped: Vec<Sample> = rows
        .iter()
        .map(|r| Sample {
            search_cp: None,
            ..r.clone()
        })
        .collect();
    assert_eq!(old_rows, stripped);
    // A version-3 file without it is broken, and says which column.
    let broken = old_dir.join("part-000-0001.parquet");
    rewrite(&src, &broken, "3", &["search_cp"]);
    let e = read_shard(&broken).unwrap_err().to_string();
    assert!(
        e.contains("part-000-0001") && e.contains("search_cp"),
        "{e}"
    );
}

#[test]
fn surprise_is_the_policy_targets_divergence_from_the_prior() {
    // With the uniform evaluator every prior is 1/n over the n legal moves, so the
    // surprise of a full search is ln n − H(target); fast searches have none.
    let cfg = SelfplayConfig {
        evaluator: BuiltinEvaluator::Uniform,
        ..small("ataxx")
    };
    let rows = play(&cfg, &temp("surprise"));
    let (mut full, mut positive) = (0, 0);
    for r in &rows {
        if !r.full_search {
            assert_eq!(r.surprise, 0.0, "fast search at ply {}", r.ply);
            continue;
        }
        full += 1;
        let entropy: f32 = r
            .policy
            .iter()
            .filter(|&&t| t > 0.0)
            .map(|&t| -t * t.ln())
            .sum();
        let want = (r.legal.len() as f32).ln() - entropy;
        assert!(
            (r.surprise - want).abs() <= 1e-4 * want.max(1.0),
            "ply {}: surprise {} vs ln n − H = {want}",
            r.ply,
            r.surprise
        );
        positive += usize::from(r.surprise > 0.01);
    }
    assert!(full > 20 && positive > full / 2, "{positive} of {full}");
}
