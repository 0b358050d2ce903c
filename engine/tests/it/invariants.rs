//! Invariants over random games of every rule set, game records, and results.

use engine::boards::{BlockerParams, random_blocker_board};
use engine::{EndReason, Move, MoveKind, Position, Rng, Rules, Side};

fn all_rules() -> Vec<Rules> {
    Rules::NAMES.iter().map(|n| n.parse().unwrap()).collect()
}

#[test]
fn invariants_hold_over_random_games() {
    let mut rng = Rng::new(9);
    let mut plies = 0;
    for rules in all_rules() {
        for game in 0..40 {
            let mut pos = if game % 2 == 0 {
                Position::startpos(rules)
            } else {
                random_blocker_board(rules, &BlockerParams::default(), &mut rng)
            };
            let blocked = pos.blocked();
            loop {
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                let mv = moves[rng.below(moves.len() as u64) as usize];
                let us = pos.side_to_move();
                let (own, opp) = (pos.pieces(us).len(), pos.pieces(us.other()).len());
                let flips = pos.flips(mv);
                // Notation round-trips through the parser.
                assert_eq!(pos.parse_move(&pos.move_to_string(mv)), Ok(mv));
                pos.play(mv);
                plies += 1;
                assert_eq!(pos.hash(), pos.compute_hash(), "{}", pos.fen());
                assert_eq!(Position::from_fen(&pos.fen(), rules), Ok(pos));
                assert_eq!(pos.blocked(), blocked);
                assert!((pos.pieces(Side::X) & pos.pieces(Side::O)).is_empty());
                assert!(((pos.pieces(Side::X) | pos.pieces(Side::O)) & blocked).is_empty());
                let (own2, opp2) = (pos.pieces(us).len(), pos.pieces(us.other()).len());
                match mv.kind() {
                    MoveKind::Clone { .. } => assert_eq!(own2, own + 1 + flips),
                    MoveKind::Jump { .. } => assert_eq!(own2, own + flips),
                    MoveKind::Pass => assert_eq!(own2, own),
                }
                assert_eq!(opp2, opp - flips);
            }
            let result = pos.result().expect("a game without legal moves is over");
            let [x, o] = result.counts;
            assert_eq!(
                [x, o],
                [pos.pieces(Side::X).len(), pos.pieces(Side::O).len()]
            );
            if result.reason != EndReason::HalfmoveCap {
                let ahead = (x as i32 - o as i32).signum() * if rules.misere { -1 } else { 1 };
                assert_eq!(result.score.signum(), ahead);
            }
        }
    }
    assert!(plies > 10_000, "{plies}");
}

#[test]
fn italian_example_game_replays() {
    // RULES.md: from o5x/7/7/7/7/7/x5o, `1. a2 a7-a5 2. a2-a4`; the last move flips a5.
    let mut pos = Position::from_fen("o5x/7/7/7/7/7/x5o x 0 1", Rules::ATAXX).unwrap();
    for m in ["a2", "a7-a5", "a2-a4"] {
        let mv = pos.parse_move(m).unwrap();
        pos.try_play(mv).unwrap();
    }
    assert_eq!(pos.fen(), "6x/7/x6/x6/7/7/x5o o 2 2");
}

#[test]
fn results_and_reasons() {
    let r = Rules::ATAXX;
    let res = |fen: &str, rules: Rules| Position::from_fen(fen, rules).unwrap().result();
    // Wipe-out scores as if the winner held every playable cell.
    let w = res("x6/7/7/7/7/7/7 o 0 1", r).unwrap();
    assert_eq!(
        (w.winner, w.score, w.reason),
        (Some(Side::X), 49, EndReason::WipeOut)
    );
    let w = res("-6/7/7/7/7/7/6o x 0 1", r).unwrap();
    assert_eq!((w.winner, w.score), (Some(Side::O), -48));
    // Misère: the side wiped out wins.
    let w = res("x6/7/7/7/7/7/7 o 0 1", "ataxx/misere".parse().unwrap()).unwrap();
    assert_eq!((w.winner, w.score), (Some(Side::O), -49));
    // Full board: more pieces wins; misère inverts.
    let full = "xxxxxxx/xxxxxxx/xxxxxxx/xxxxxxx/ooooooo/ooooooo/ooooooo x 0 1";
    let w = res(full, r).unwrap();
    assert_eq!(
        (w.winner, w.score, w.reason),
        (Some(Side::X), 7, EndReason::FullBoard)
    );
    let w = res(full, "ataxx/misere".parse().unwrap()).unwrap();
    assert_eq!((w.winner, w.score), (Some(Side::O), -7));
    // A full board with blockers can tie.
    let tie = "xxxxxxx/xxxxxxx/xxxxxxx/xxx-ooo/ooooooo/ooooooo/ooooooo o 0 1";
    let w = res(tie, r).unwrap();
    assert_eq!((w.winner, w.score), (None, 0));
    // Neither side can move: the empty corner g7 is walled off by blockers two deep.
    let walled = "xxxx--1/xxxx---/oooo---/ooooooo/ooooooo/ooooooo/ooooooo x 0 1";
    let p = Position::from_fen(walled, r).unwrap();
    assert!(!p.can_move(Side::X) && !p.can_move(Side::O));
    assert!(p.legal_moves().is_empty());
    let w = p.result().unwrap();
    assert_eq!(
        (w.winner, w.score, w.reason),
        (Some(Side::O), -24, EndReason::NoMoves)
    );
    // Half-move cap: a draw, unless another ending holds too.
    let w = res("x5o/7/7/7/7/7/o5x x 100 1", r).unwrap();
    assert_eq!(
        (w.winner, w.score, w.reason),
        (None, 0, EndReason::HalfmoveCap)
    );
    let w = res("x6/7/7/7/7/7/7 o 100 1", r).unwrap();
    assert_eq!(w.reason, EndReason::WipeOut);
    // Adjudication can be turned off.
    let off = Rules {
        halfmove_limit: 0,
        ..r
    };
    assert!(res("x5o/7/7/7/7/7/o5x x 100 1", off).is_none());
    // A game in progress has no result.
    assert!(res("x5o/7/7/7/7/7/o5x x 0 1", r).is_none());
}

#[test]
fn forced_pass_is_the_only_move_and_counts_in_the_clock() {
    let mut pos =
        Position::from_fen("7/7/7/7/ooooooo/ooooooo/xxxxxxx x 5 3", Rules::ATAXX).unwrap();
    assert_eq!(pos.legal_moves().as_slice(), &[Move::PASS]);
    assert_eq!(pos.parse_move("0000"), Ok(Move::PASS));
    pos.play(Move::PASS);
    assert_eq!(pos.fen(), "7/7/7/7/ooooooo/ooooooo/xxxxxxx o 6 3");
    // A pass while moves exist is refused and the position is kept.
    let before = pos;
    assert!(pos.try_play(Move::PASS).is_err());
    assert_eq!(pos, before);
}

#[test]
fn result_table() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/ataxx.results");
    let text = std::fs::read_to_string(path).unwrap();
    let mut rules = Rules::ATAXX;
    let mut checked = 0;
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix("game ") {
            rules = name.parse().unwrap();
            continue;
        }
        let (fen, want) = line.split_once(':').unwrap();
        let pos = Position::from_fen(fen, rules).unwrap_or_else(|e| panic!("line {}: {e}", n + 1));
        let got = match pos.result() {
            None => "none".to_string(),
            Some(r) => {
                let who = match r.winner {
                    Some(s) => s.char().to_string(),
                    None => "draw".into(),
                };
                format!("{who} {}", r.reason.name())
            }
        };
        assert_eq!(got, want.trim(), "line {}: {fen}", n + 1);
        assert_eq!(pos.legal_moves().is_empty(), got != "none");
        checked += 1;
    }
    assert!(checked > 20);
}
