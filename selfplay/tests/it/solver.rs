//! The MCTS-solver: finished games met in the tree prove their parents, a proven win at
//! the root ends the search and is played, a proven loss is never chosen while another
//! move does not lose, and short forced wins found by alpha-beta are proven by the tree.

use engine::search::{Limits, MATE, Searcher};
use engine::{Move, Rng, State};
use selfplay::{Evaluation, Evaluator, MctsConfig, Search, SearchOutcome, Uniform};

use crate::mcts::{find, loses_next, search_with, wins_now};

fn cfg() -> MctsConfig {
    MctsConfig {
        dirichlet_epsilon: 0.0,
        ..MctsConfig::default()
    }
}

fn run(root: State, sims: u32, eval: &mut dyn Evaluator) -> (Search, SearchOutcome) {
    search_with(root, sims, &cfg(), 3, eval)
}

/// An alpha-beta score as a proof: 1 a forced win, −1 a forced loss, `None` neither.
fn proof(score: i32) -> Option<f32> {
    if score >= MATE - 128 {
        Some(1.0)
    } else if score <= -(MATE - 128) {
        Some(-1.0)
    } else {
        None
    }
}

/// Puts nearly all its prior on the moves `lure` picks and values every position as won
/// for the side to move there: a net that walks into losses.
struct Lure(fn(&State, Move) -> bool);

impl Evaluator for Lure {
    fn evaluate(&mut self, states: &[State], moves: &[Vec<Move>]) -> Vec<Evaluation> {
        states
            .iter()
            .zip(moves)
            .map(|(s, ms)| {
                let w: Vec<f32> = ms
                    .iter()
                    .map(|&m| if (self.0)(s, m) { 100.0 } else { 0.01 })
                    .collect();
                let sum: f32 = w.iter().sum();
                Evaluation {
                    policy: w.iter().map(|x| x / sum).collect(),
                    value: 0.9,
                    wdl: None,
                    score: None,
                }
            })
            .collect()
    }

    fn name(&self) -> String {
        "lure".into()
    }
}

#[test]
fn a_wipe_out_is_proven_at_the_root_ends_the_search_and_is_played() {
    let positions = find(10, |s| {
        let m = s.legal_moves();
        let w = m.iter().filter(|&&x| wins_now(s, x)).count();
        w >= 1 && w * 4 <= m.len()
    });
    for s in positions {
        let (search, out) = run(s, 2000, &mut Uniform);
        let best = out.moves.iter().position(|&m| m == out.best).unwrap();
        assert_eq!(out.proven, Some(1.0), "{}", s.text());
        assert_eq!(out.move_proofs[best], Some(1.0), "{}", s.text());
        assert!(wins_now(&s, out.best), "{}", s.text());
        assert_eq!(out.root_q, 1.0);
        // The winning move is the policy target, and the search stopped once it knew.
        assert_eq!(out.policy[best], 1.0);
        assert!(search.simulations() < 2000, "{}", search.simulations());
        // Every move the tree proved is a real win or loss.
        for (m, p) in out.moves.iter().zip(&out.move_proofs) {
            match p {
                Some(1.0) => assert!(wins_now(&s, *m)),
                Some(-1.0) => assert!(loses_next(&s, *m)),
                _ => {}
            }
        }
    }
}

#[test]
fn a_proven_loss_is_never_chosen_over_a_move_that_does_not_lose() {
    let positions = find(10, |s| {
        let m = s.legal_moves();
        let losing = m.iter().filter(|&&x| loses_next(s, x)).count();
        let winning = m.iter().filter(|&&x| wins_now(s, x)).count();
        winning == 0 && losing * 2 >= m.len() && losing < m.len()
    });
    for s in positions {
        // The evaluator lures the search into the losing moves (and into the
        // opponent's wipe-outs after them, which prove those moves lost).
        let mut lure = Lure(|s, m| loses_next(s, m) || wins_now(s, m));
        let (_, out) = run(s, 400, &mut lure);
        assert!(
            !loses_next(&s, out.best),
            "{}: chose {}",
            s.text(),
            s.move_to_string(out.best)
        );
        let best = out.moves.iter().position(|&m| m == out.best).unwrap();
        assert_ne!(out.move_proofs[best], Some(-1.0));
        assert_ne!(out.proven, Some(-1.0));
        // The lure made the search visit losing moves, and it proved them lost.
        let proven_lost = out.move_proofs.iter().filter(|p| **p == Some(-1.0)).count();
        assert!(proven_lost >= 1, "{}", s.text());
    }
}

#[test]
fn short_forced_wins_of_alpha_beta_are_proven_by_the_tree() {
    // Positions near the end of random games where a 3-ply alpha-beta search proves a
    // win for the side to move.
    let game: engine::Game = "ataxx".parse().unwrap();
    let mut rng = Rng::new(17);
    let mut searcher = Searcher::new(1);
    let stop = std::sync::atomic::AtomicBool::new(false);
    let mut found = 0;
    for _ in 0..4000 {
        if found == 6 {
            break;
        }
        let mut s = game.startpos();
        while !s.is_game_over() && s.empty_cells() > 3 {
            let m = s.legal_moves();
            s.play(m[rng.below(m.len() as u64) as usize]);
        }
        if s.is_game_over() || s.legal_moves().iter().any(|&m| wins_now(&s, m)) {
            continue;
        }
        let limits = Limits {
            depth: Some(3),
            ..Limits::default()
        };
        let Some(r) = searcher.search(&s, limits, &stop, |_| {}) else {
            continue;
        };
        if r.score < MATE - 3 {
            continue;
        }
        found += 1;
        let (_, out) = run(s, 20_000, &mut Uniform);
        assert_eq!(out.proven, Some(1.0), "{}", s.text());
        // The move played wins: alpha-beta proves the opponent lost after it.
        let after = s.after(out.best);
        if !after.is_game_over() {
            let r = searcher.search(&after, limits, &stop, |_| {}).unwrap();
            assert!(r.score <= -(MATE - 3), "{}: {}", s.text(), r.score);
        } else {
            assert!(wins_now(&s, out.best));
        }
    }
    assert_eq!(found, 6, "not enough positions");
}

/// Positions of random Ataxx games stopped with at most `empties` empty cells, not over.
fn near_the_end(count: usize, empties: u32, seed: u64) -> Vec<State> {
    near_the_end_of("ataxx", count, empties, seed)
}

/// Positions of random games of `game` stopped with at most `cells` cells left to fill
/// ([`State::cells_to_fill`]), not over.
fn near_the_end_of(game: &str, count: usize, cells: u32, seed: u64) -> Vec<State> {
    let game: engine::Game = game.parse().unwrap();
    let mut rng = Rng::new(seed);
    let mut out = vec![];
    while out.len() < count {
        let mut s = game.startpos();
        while !s.is_game_over() && s.cells_to_fill() > cells {
            let m = s.legal_moves();
            s.play(m[rng.below(m.len() as u64) as usize]);
        }
        if !s.is_game_over() {
            out.push(s);
        }
    }
    out
}

#[test]
fn the_endgame_solver_agrees_with_plain_alpha_beta() {
    let stop = std::sync::atomic::AtomicBool::new(false);
    let (mut proven, mut checked) = (0, 0);
    for s in near_the_end(40, 3, 23) {
        let mut small = Searcher::new(1);
        let solved = selfplay::mcts::endgame::solve(&mut small, &s, 20_000);
        // Plain alpha-beta, deeper and with a fresh table of its own.
        let mut plain = Searcher::new(16);
        let limits = Limits {
            nodes: Some(400_000),
            ..Limits::default()
        };
        let r = plain.search(&s, limits, &stop, |_| {}).unwrap();
        let deep = proof(r.score);
        if let Some(v) = solved {
            proven += 1;
            assert_eq!(Some(v), deep, "{}", s.text());
        }
        checked += 1;
    }
    assert_eq!(checked, 40);
    // About half the positions with 3 empty cells are solved within 20,000 nodes
    // (18 of these 40; 30 with 200,000; with 4 empty cells, none with 20,000).
    assert!(proven >= 15, "{proven} of 40 solved");
}

#[test]
fn the_tree_with_the_endgame_solver_proves_what_alpha_beta_proves() {
    let cfg = MctsConfig {
        endgame_empties: 3,
        ..cfg()
    };
    let stop = std::sync::atomic::AtomicBool::new(false);
    let (mut proven_roots, mut confirmed) = (0, 0);
    for s in near_the_end(12, 4, 29) {
        let (_, out) = search_with(s, 1500, &cfg, 3, &mut Uniform);
        let Some(v) = out.proven else { continue };
        proven_roots += 1;
        let best = out.moves.iter().position(|&m| m == out.best).unwrap();
        assert_eq!(out.move_proofs[best], Some(v), "{}", s.text());
        // Plain alpha-beta never proves the opposite, and mostly proves the same (the
        // tree's proof may be deeper than its budget reaches).
        let limits = Limits {
            nodes: Some(1_000_000),
            ..Limits::default()
        };
        let r = Searcher::new(16).search(&s, limits, &stop, |_| {}).unwrap();
        let plain = proof(r.score);
        assert_ne!(plain, Some(-v), "{}: {}", s.text(), r.score);
        if plain == Some(v) {
            confirmed += 1;
        }
    }
    // 11 of 12 proven, 8 of them confirmed within the plain search's budget.
    assert!(proven_roots >= 9, "{proven_roots} of 12 roots proven");
    assert!(
        confirmed * 2 >= proven_roots,
        "{confirmed} of {proven_roots} confirmed"
    );
}

#[test]
fn the_endgame_solver_counts_the_cells_left_to_fill_not_the_empty_ones() {
    // Annexation 80's supplies run out with at least 16 cells empty: counted by empty
    // cells, no position of the game would ever reach the solver.
    let with = MctsConfig {
        endgame_empties: 4,
        ..cfg()
    };
    let (mut proven_with, mut proven_without) = (0, 0);
    for s in near_the_end_of("annexation80", 12, 4, 31) {
        assert!(s.empty_cells() >= 16, "{}", s.text());
        let (_, out) = search_with(s, 60, &with, 3, &mut Uniform);
        proven_with += usize::from(out.proven.is_some());
        let (_, out) = search_with(s, 60, &cfg(), 3, &mut Uniform);
        proven_without += usize::from(out.proven.is_some());
    }
    // 10 of 12 proven with the solver in 60 simulations, none without it.
    assert!(
        proven_with >= 9 && proven_without <= 1,
        "{proven_with} of 12 proven with the solver, {proven_without} without it"
    );
}
