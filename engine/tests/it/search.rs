//! Alpha-beta search: the full-width search's exact fixed-depth values, forced wins, the
//! tuned search's legality, determinism and limits, every technique behind its switch.

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use engine::search::{Limits, MATE, Params, Searcher, evaluate};
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

/// The full-width search.
fn search(s: &State, limits: Limits) -> engine::search::SearchReport {
    Searcher::full_width(4)
        .search(s, limits, &AtomicBool::new(false), |_| {})
        .unwrap()
}

/// The tuned search.
fn tuned(s: &State, limits: Limits) -> engine::search::SearchReport {
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
            let limits = Limits {
                depth: Some(5),
                nodes: Some(200_000),
                ..Limits::default()
            };
            for r in [search(&s, limits), tuned(&s, limits)] {
                assert!(s.is_legal(r.pv[0]), "{game}: {}", s.text());
                // The principal variation is legal throughout.
                let mut t = s;
                for &m in &r.pv {
                    assert!(t.is_legal(m), "{game}: {} pv {:?}", s.text(), r.pv);
                    t.play(m);
                }
            }
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
    for run in [search, tuned] {
        let a = run(&s, limits);
        let b = run(&s, limits);
        assert_eq!((a.pv.clone(), a.nodes), (b.pv.clone(), b.nodes));
        assert!(a.nodes <= 20_000);
    }
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

#[test]
fn the_tuned_search_finds_and_avoids_wipe_outs() {
    let g: Game = "ataxx".parse().unwrap();
    let s = g.parse_position("7/7/7/7/7/1o5/x6 x 0 1").unwrap();
    let r = tuned(
        &s,
        Limits {
            depth: Some(6),
            ..Limits::default()
        },
    );
    assert_eq!(r.score, MATE - 1);
    let s = g.parse_position("5xo/6x/7/7/7/7/7 o 0 1").unwrap();
    for depth in 2..7 {
        let r = tuned(
            &s,
            Limits {
                depth: Some(depth),
                ..Limits::default()
            },
        );
        let after = s.after(r.pv[0]);
        assert!(
            after
                .result()
                .is_none_or(|res| res.winner == Some(engine::Side::O)),
            "depth {depth}: {r:?}"
        );
        assert!(r.score > -(MATE - 10), "depth {depth}: o survives: {r:?}");
    }
}

#[test]
fn every_technique_is_behind_its_switch() {
    // The full-width search is the tuned one with every technique switched off (and the
    // original evaluation's weights): nothing else differs.
    const SWITCHES: [&str; 9] = [
        "asp_depth",
        "rfp_depth",
        "nmp_depth",
        "iir_depth",
        "lmr_depth",
        "lmp_depth",
        "fp_depth",
        "se_depth",
        "tt_deeper",
    ];
    for (name, value) in Params::FULL_WIDTH.diff(&Params::TUNED) {
        assert!(
            name.starts_with("ev_") || (SWITCHES.contains(&name) && value == 0),
            "{name}={value}"
        );
    }
    // Each technique alone changes the search (it does something), on these positions.
    let limits = Limits {
        depth: Some(7),
        ..Limits::default()
    };
    // Middle games: enough pieces on both sides that no wipe-out is near (where the
    // static pruning stands aside), room left on the board (null moves).
    let game: Game = "ataxx".parse().unwrap();
    let mut rng = Rng::new(5);
    let mut positions = vec![];
    while positions.len() < 4 {
        // Greedy play (the largest gain, ties at random) fills the board fast.
        let mut s = game.startpos();
        for _ in 0..14 + rng.below(6) {
            let moves = s.legal_moves();
            if moves.is_empty() {
                break;
            }
            let gain = |m: &engine::Move| s.gain(*m) + s.flips(*m);
            let best = moves.iter().map(gain).max().unwrap();
            let top: Vec<_> = moves.iter().filter(|m| gain(m) == best).collect();
            s.play(*top[rng.below(top.len() as u64) as usize]);
        }
        if !s.is_game_over() && s.counts().iter().all(|&n| n > 8) && s.empty_cells() > 20 {
            positions.push(s);
        }
    }
    let nodes = |p: Params| -> u64 {
        positions
            .iter()
            .map(|s| {
                Searcher::new(4)
                    .with_params(p)
                    .search(s, limits, &AtomicBool::new(false), |_| {})
                    .unwrap()
                    .nodes
            })
            .sum()
    };
    let base = nodes(Params::FULL_WIDTH);
    let on = [
        ("rfp_depth", 6),
        ("nmp_depth", 3),
        ("iir_depth", 3),
        ("lmr_depth", 3),
        ("lmp_depth", 64),
        ("fp_depth", 6),
        ("tt_deeper", 1),
        ("asp_depth", 3),
        ("se_depth", 4),
    ];
    let (mut named, mut all) = (on.map(|(n, _)| n).to_vec(), SWITCHES.to_vec());
    named.sort_unstable();
    all.sort_unstable();
    assert_eq!(named, all, "every switch is tried");
    for (name, value) in on {
        let mut p = Params::FULL_WIDTH;
        p.set(name, &value.to_string()).unwrap();
        assert_ne!(nodes(p), base, "{name}={value} changes nothing");
    }
}

#[test]
fn soft_limits_end_the_search_between_iterations() {
    let s = "ataxx".parse::<Game>().unwrap().startpos();
    // No iteration starts past the soft node count: the search ends with the iteration
    // that passed it, well before a hard limit would.
    let r = tuned(
        &s,
        Limits {
            soft_nodes: Some(5_000),
            ..Limits::default()
        },
    );
    let before = tuned(
        &s,
        Limits {
            depth: Some(r.depth - 1),
            ..Limits::default()
        },
    );
    assert!(r.nodes >= 5_000 && before.nodes < 5_000, "{r:?} {before:?}");
    // A soft time of 20 ms with a hard one of 2 s: the search ends long before the hard
    // limit, after at least one iteration.
    let t = Instant::now();
    let r = tuned(
        &s,
        Limits {
            soft_time: Some(Duration::from_millis(20)),
            time: Some(Duration::from_secs(2)),
            ..Limits::default()
        },
    );
    assert!(r.depth >= 1);
    assert!(
        t.elapsed() < Duration::from_millis(1500),
        "{:?}",
        t.elapsed()
    );
}
