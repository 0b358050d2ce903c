//! Alpha-beta self-play (`selfplay.search = "alphabeta"`): positions recorded with the
//! search's score, games that replay legally, the opening filter and adjudication, and
//! rows that do not depend on the number of threads.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use engine::search::value_of_score;
use engine::{Game, Move};
use selfplay::{BuiltinEvaluator, Sample, SearchKind, SelfplayConfig, ShardStream, run_selfplay};

fn temp(name: &str) -> rundir::Scratch {
    rundir::Scratch::temp("ab", name)
}

fn ab(games: u64, threads: usize) -> SelfplayConfig {
    SelfplayConfig {
        search: SearchKind::AlphaBeta,
        evaluator: BuiltinEvaluator::Bootstrap,
        games,
        threads,
        ab_soft_nodes: 400,
        ab_hard_nodes: 800,
        opening_random_plies: 6,
        opening_extra_plies: 3,
        ab_opening_max_cp: 150,
        rows_per_shard: 200,
        ..SelfplayConfig::default()
    }
}

fn games_of(cfg: &SelfplayConfig, out: &Path) -> BTreeMap<u64, Vec<Sample>> {
    let e = cfg.evaluator;
    run_selfplay(cfg, &[], &move || e.build(), out, &HashMap::new(), &|_| {}).unwrap();
    let mut games: BTreeMap<u64, Vec<Sample>> = BTreeMap::new();
    for r in ShardStream::open(out).unwrap() {
        games.entry(r.game_id).or_default().push(r);
    }
    for rows in games.values_mut() {
        rows.sort_by_key(|r| r.ply);
    }
    games
}

#[test]
fn alpha_beta_games_record_the_searches_and_replay_legally() {
    let cfg = ab(6, 1);
    let games = games_of(&cfg, &temp("record"));
    assert_eq!(games.len(), 6);
    let mut parities = [0; 2];
    for rows in games.values() {
        let first = rows[0]
            .variant
            .parse::<Game>()
            .unwrap()
            .parse_position(&rows[0].fen)
            .unwrap();
        // 6 to 9 random plies from the start: x moves first, so the side to move of the
        // first row tells the parity of the random plies.
        parities[first.side_to_move().index()] += 1;
        // The opening filter: the first search, from cleared tables, is the filter's.
        let cp0 = rows[0].search_cp.unwrap();
        assert!(cp0.abs() <= cfg.ab_opening_max_cp, "opening scored {cp0}");
        for (k, r) in rows.iter().enumerate() {
            assert_eq!(r.ply as usize, k, "every position is recorded");
            assert_eq!(r.model, selfplay::HAND_WRITTEN);
            let cp = r.search_cp.expect("an alpha-beta row has its score");
            assert_eq!(r.root_q, value_of_score(cp));
            assert!(r.visits >= 1 && u64::from(r.visits) <= cfg.ab_hard_nodes);
            let s = r
                .variant
                .parse::<Game>()
                .unwrap()
                .parse_position(&r.fen)
                .unwrap();
            let moves: Vec<Move> = s.legal_moves();
            assert_eq!(r.legal.len(), moves.len());
            assert_eq!(r.full_search, moves.len() > 1);
            let hot: Vec<u16> = r
                .legal
                .iter()
                .zip(&r.policy)
                .filter(|(_, p)| **p == 1.0)
                .map(|(&i, _)| i)
                .collect();
            assert_eq!(hot, vec![r.played], "the policy is the move played");
            assert_eq!(r.policy.iter().sum::<f32>(), 1.0);
            let mv = *moves
                .iter()
                .find(|&&m| s.policy_index(m) == usize::from(r.played))
                .expect("the move played is legal");
            let mut next = s;
            next.play(mv);
            match rows.get(k + 1) {
                Some(n) => assert_eq!(n.fen, next.text()),
                None => assert!(
                    next.is_game_over() || r.end_reason == "adjudicated",
                    "{}",
                    r.end_reason
                ),
            }
            let side_sign = if s.side_to_move() == first.side_to_move() {
                1.0
            } else {
                -1.0
            };
            assert_eq!(r.result * side_sign, rows[0].result);
        }
    }
    assert!(
        parities[0] > 0 && parities[1] > 0,
        "openings of both parities: {parities:?}"
    );
}

#[test]
fn alpha_beta_rows_do_not_depend_on_the_threads() {
    let one = games_of(&ab(4, 1), &temp("threads-1"));
    let two = games_of(&ab(4, 2), &temp("threads-2"));
    assert_eq!(one, two);
    let other = games_of(
        &SelfplayConfig {
            seed: 9,
            ..ab(4, 1)
        },
        &temp("seed-9"),
    );
    assert_ne!(one, other);
}

#[test]
fn a_decisive_search_adjudicates_the_game() {
    let cfg = SelfplayConfig {
        ab_adjudicate_cp: 250,
        ab_opening_max_cp: 0,
        ..ab(4, 1)
    };
    let games = games_of(&cfg, &temp("adjudicate"));
    let adjudicated = games
        .values()
        .filter(|rows| rows[0].end_reason == "adjudicated")
        .count();
    assert!(adjudicated >= 3, "{adjudicated} of 4 adjudicated at 250");
    for r in games.values().flatten() {
        let cp = r.search_cp.unwrap();
        assert!(cp.abs() < 250, "a search of {cp} was played on");
        if r.end_reason == "adjudicated" {
            assert!(r.ownership.is_empty() && r.result != 0.0);
        }
    }
}

#[test]
fn an_evaluator_without_a_value_for_alpha_beta_is_refused() {
    let cfg = SelfplayConfig {
        evaluator: BuiltinEvaluator::Random,
        ..ab(2, 1)
    };
    let e = run_selfplay(
        &cfg,
        &[],
        &|| BuiltinEvaluator::Random.build(),
        &temp("refused"),
        &HashMap::new(),
        &|_| {},
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("selfplay.search = \"alphabeta\"") && e.contains("random"),
        "{e}"
    );
}
