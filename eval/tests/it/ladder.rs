//! The baseline ladder is ordered, and matches reproduce from their seed.

use eval::{MatchConfig, PlayerSpec, run_match};

fn score(a: &str, b: &str, game: &str, pairs: usize) -> f64 {
    let mut cfg = MatchConfig::new(game.parse().unwrap(), pairs, 7);
    cfg.threads = 2;
    let (_, stats) = run_match(
        &a.parse::<PlayerSpec>().unwrap(),
        &b.parse().unwrap(),
        &cfg,
        &|_| {},
    )
    .unwrap();
    assert_eq!(stats.games() as usize, 2 * pairs);
    stats.score()
}

#[test]
fn ladder_is_ordered_on_ataxx() {
    // 100 paired games each (50 openings, colours swapped).
    for (a, b) in [("greedy", "random"), ("ab2", "greedy"), ("ab4", "ab2")] {
        let s = score(a, b, "ataxx", 50);
        assert!(s >= 0.70, "{a} vs {b}: {s}");
    }
}

#[test]
fn search_beats_greedy_on_the_other_families() {
    for game in ["othello", "hexxagon", "annexation32"] {
        let s = score("ab3", "greedy", game, 10);
        assert!(s >= 0.65, "{game}: {s}");
    }
}

#[test]
fn same_seed_same_games_whatever_the_threads() {
    let game = "ataxx".parse().unwrap();
    let (a, b) = (
        "greedy".parse::<PlayerSpec>().unwrap(),
        "ab1".parse::<PlayerSpec>().unwrap(),
    );
    let mut one = MatchConfig::new(game, 8, 99);
    one.random_plies = 4;
    let mut two = one.clone();
    two.threads = 2;
    let r1 = run_match(&a, &b, &one, &|_| {}).unwrap();
    let r2 = run_match(&a, &b, &two, &|_| {}).unwrap();
    assert_eq!(r1, r2);
    // Every game starts from its pair's opening, and each opening is played both ways.
    for pair in r1.0.chunks(2) {
        assert_eq!(pair[0].opening, pair[1].opening);
        assert!(pair[0].a_is_x && !pair[1].a_is_x);
    }
    let mut other = one.clone();
    other.seed = 100;
    assert_ne!(run_match(&a, &b, &other, &|_| {}).unwrap().0, r1.0);
}
