//! Alpha-beta search: exact fixed-depth values, forced wins, legality, determinism.

use std::sync::atomic::AtomicBool;

use engine::search::{Limits, MATE, Searcher, evaluate};
use engine::{Game, Rng, State};

/// Plain negamax without pruning or tables, with the searcher's evaluation.
fn minimax(s: &State, depth: u32, ply: i32) -> i32 {
    let moves = s.legal_moves();
    if moves.is_empty() {
        return match s.result().unwrap().winner {
            None => 0,
            Some(w) if w == s.side_to_move() => MATE - ply,
            Some(_) => -(MATE - ply),
        };
    }
    if depth == 0 {
        return evaluate(s);
    }
    moves
        .into_iter()
        .map(|m| -minimax(&s.after(m), depth - 1, ply + 1))
        .max()
        .unwrap()
}

fn search(s: &State, limits: Limits) -> engine::search::SearchReport {
    Searcher::new(4)
        .search(s, limits, &AtomicBool::new(false), |_| {})
        .unwrap()
}

fn random_positions(game: &str, count: usize, seed: u64) -> Vec<State> {
    let game: Game = game.parse().unwrap();
    let mut rng = Rng::new(seed);
    let mut out = vec![];
    while out.len() < count {
        let mut s = game.startpos();
        let plies = rng.below(40);
        for _ in 0..plies {
            let m = s.legal_moves();
            if m.is_empty() {
                break;
            }
            s.play(m[rng.below(m.len() as u64) as usize]);
        }
        if !s.is_game_over() {
            out.push(s);
        }
    }
    out
}

#[test]
fn fixed_depth_search_returns_the_minimax_value() {
    for game in [
        "ataxx",
        "ataxx/misere",
        "hexxagon",
        "othello",
        "annexation32",
    ] {
        for s in random_positions(game, 12, 1) {
            let depth = 3;
            let want = minimax(&s, depth, 0);
            let got = search(
                &s,
                Limits {
                    depth: Some(depth),
                    ..Limits::default()
                },
            );
            assert_eq!(got.score, want, "{game}: {}", s.text());
            // The principal variation is legal and its first move achieves the score.
            let mut t = s;
            for &m in &got.pv {
                assert!(t.is_legal(m), "{game}: {} pv {:?}", s.text(), got.pv);
                t.play(m);
            }
            let first = got.pv[0];
            assert_eq!(
                -minimax(&s.after(first), depth - 1, 1),
                want,
                "{}",
                s.text()
            );
        }
    }
}

#[test]
fn finds_a_wipe_out_and_avoids_one() {
    let g: Game = "ataxx".parse().unwrap();
    // x clones next to the lone o piece and wipes it out.
    let s = g.parse_position("7/7/7/7/7/1o5/x6 x 0 1").unwrap();
    let r = search(
        &s,
        Limits {
            depth: Some(3),
            ..Limits::default()
        },
    );
    assert_eq!(r.score, MATE - 1);
    assert!(s.after(r.pv[0]).is_game_over());
    // o has one piece at g7 next to x's two; only moves that flip both x pieces, or keep
    // away from them, avoid losing at once. The search must not blunder into a wipe-out.
    let s = g.parse_position("5xo/6x/7/7/7/7/7 o 0 1").unwrap();
    let r = search(
        &s,
        Limits {
            depth: Some(2),
            ..Limits::default()
        },
    );
    let after = s.after(r.pv[0]);
    assert!(
        after
            .result()
            .is_none_or(|res| res.winner == Some(engine::Side::O))
    );
    // Othello: a move that takes every remaining white disc wins at once.
    let o: Game = "othello".parse().unwrap();
    let s = o.parse_position("8/8/8/8/3oxx2/8/8/8 x play - -").unwrap();
    let r = search(
        &s,
        Limits {
            depth: Some(4),
            ..Limits::default()
        },
    );
    assert_eq!(r.score, MATE - 1, "{:?}", r);
}

#[test]
fn deeper_searches_play_legal_moves() {
    for game in [
        "ataxx",
        "ataxx/thomas",
        "hexxagon",
        "othello",
        "annexation64",
    ] {
        for s in random_positions(game, 4, 2) {
            let r = search(
                &s,
                Limits {
                    depth: Some(5),
                    nodes: Some(200_000),
                    ..Limits::default()
                },
            );
            assert!(s.is_legal(r.pv[0]), "{game}: {}", s.text());
        }
    }
}

#[test]
fn node_limited_search_is_deterministic_and_stops() {
    let s = "ataxx".parse::<Game>().unwrap().startpos();
    let limits = Limits {
        nodes: Some(20_000),
        ..Limits::default()
    };
    let a = search(&s, limits);
    let b = search(&s, limits);
    assert_eq!((a.pv.clone(), a.nodes), (b.pv.clone(), b.nodes));
    assert!(a.nodes <= 20_000);
    // A search stopped before it starts still returns a legal move.
    let stop = AtomicBool::new(true);
    let r = Searcher::new(1)
        .search(&s, Limits::default(), &stop, |_| {})
        .unwrap();
    assert!(s.is_legal(r.pv[0]));
    // A finished game has nothing to search.
    let over = "ataxx"
        .parse::<Game>()
        .unwrap()
        .parse_position("x6/7/7/7/7/7/7 o 0 1")
        .unwrap();
    assert!(
        Searcher::new(1)
            .search(&over, Limits::default(), &stop, |_| {})
            .is_none()
    );
}
