//! MCTS with network-free evaluators: wins, escapes, visit accounting, forced passes,
//! and the Gumbel root's budget.

use engine::{Game, Move, Rng, State};
use selfplay::{Evaluator, MctsConfig, RootKind, Search, Uniform};

fn run(root: State, sims: u32, cfg: &MctsConfig, seed: u64) -> (Search, selfplay::SearchOutcome) {
    search_with(root, sims, cfg, seed, &mut Uniform)
}

/// A full search of `sims` simulations from `root`, one leaf at a time with `eval`.
pub(crate) fn search_with(
    root: State,
    sims: u32,
    cfg: &MctsConfig,
    seed: u64,
    eval: &mut dyn Evaluator,
) -> (Search, selfplay::SearchOutcome) {
    let mut rng = Rng::new(seed);
    let mut search = Search::new(root);
    search.start(sims, true, cfg, &mut rng);
    while let Some(req) = search.next_request(cfg, &mut rng) {
        let e = eval.evaluate(
            std::slice::from_ref(&req.state),
            std::slice::from_ref(&req.moves),
        );
        search.apply(&e[0], cfg, &mut rng);
    }
    let out = search.outcome(cfg);
    (search, out)
}

pub(crate) fn wins_now(s: &State, m: Move) -> bool {
    let child = s.after(m);
    child
        .result()
        .is_some_and(|r| r.winner == Some(s.side_to_move()))
}

/// Whether the opponent can wipe the mover out right after `m`.
pub(crate) fn loses_next(s: &State, m: Move) -> bool {
    let child = s.after(m);
    !child.is_game_over() && child.legal_moves().into_iter().any(|r| wins_now(&child, r))
}

/// Positions from short random games of few pieces, with `pick` true.
pub(crate) fn find(count: usize, pick: impl Fn(&State) -> bool) -> Vec<State> {
    let game: Game = "ataxx".parse().unwrap();
    let mut rng = Rng::new(4);
    let mut out = vec![];
    for _ in 0..200_000 {
        if out.len() == count {
            break;
        }
        // One or two pieces a side on an empty board.
        let mut text = String::new();
        let mut cells = ['.'; 49];
        for p in ['x', 'o', 'x', 'o'].iter().take(2 + rng.below(3) as usize) {
            cells[rng.below(49) as usize] = *p;
        }
        for r in (0..7).rev() {
            let row: String = cells[r * 7..r * 7 + 7].iter().collect();
            let mut run = 0;
            for c in row.chars() {
                if c == '.' {
                    run += 1;
                } else {
                    if run > 0 {
                        text.push_str(&run.to_string());
                        run = 0;
                    }
                    text.push(c);
                }
            }
            if run > 0 {
                text.push_str(&run.to_string());
            }
            if r > 0 {
                text.push('/');
            }
        }
        text.push_str(" x 0 1");
        let Ok(s) = game.parse_position(&text) else {
            continue;
        };
        if !s.is_game_over() && pick(&s) {
            out.push(s);
        }
    }
    assert_eq!(out.len(), count, "not enough test positions");
    out
}

#[test]
fn finds_a_wipe_out() {
    let cfg = MctsConfig {
        dirichlet_epsilon: 0.0,
        ..MctsConfig::default()
    };
    let positions = find(10, |s| {
        let m = s.legal_moves();
        let w = m.iter().filter(|&&x| wins_now(s, x)).count();
        w >= 1 && w * 4 <= m.len()
    });
    for (s, lazy) in positions.iter().flat_map(|&s| [(s, false), (s, true)]) {
        let cfg = MctsConfig {
            lazy_expansion: lazy,
            ..cfg.clone()
        };
        let (_, out) = run(s, 300, &cfg, 1);
        assert!(
            wins_now(&s, out.best),
            "{} (lazy {lazy}): chose {}",
            s.text(),
            s.move_to_string(out.best)
        );
    }
}

#[test]
fn avoids_an_immediate_wipe_out() {
    let cfg = MctsConfig {
        dirichlet_epsilon: 0.0,
        ..MctsConfig::default()
    };
    let positions = find(10, |s| {
        let m = s.legal_moves();
        let losing = m.iter().filter(|&&x| loses_next(s, x)).count();
        let winning = m.iter().filter(|&&x| wins_now(s, x)).count();
        winning == 0 && losing * 2 >= m.len() && losing < m.len()
    });
    for (s, lazy) in positions.iter().flat_map(|&s| [(s, false), (s, true)]) {
        let cfg = MctsConfig {
            lazy_expansion: lazy,
            ..cfg.clone()
        };
        let (_, out) = run(s, 600, &cfg, 2);
        assert!(
            !loses_next(&s, out.best),
            "{} (lazy {lazy}): chose {}",
            s.text(),
            s.move_to_string(out.best)
        );
    }
}

/// Lazy expansion asks for a leaf's value alone on its first visit and for its policy on
/// the next: every simulation is one value (the positions here never end the game), a
/// policy is asked for only for the root and the leaves visited again, and the search
/// spends its budget exactly, its visits adding up.
#[test]
fn lazy_expansion_asks_for_policies_of_revisited_leaves_only() {
    for game in ["ataxx", "othello", "hexxagon"] {
        let root = game.parse::<Game>().unwrap().startpos();
        let cfg = MctsConfig {
            lazy_expansion: true,
            ..MctsConfig::default()
        };
        let mut rng = Rng::new(3);
        let mut search = Search::new(root);
        search.start(400, true, &cfg, &mut rng);
        let (mut values, mut policies) = (0, 0);
        let mut eval = selfplay::HashRandom;
        while let Some(req) = search.next_request(&cfg, &mut rng) {
            let e = if req.value_only {
                values += 1;
                eval.evaluate_values(
                    std::slice::from_ref(&req.state),
                    std::slice::from_ref(&req.moves),
                )
            } else {
                policies += 1;
                eval.evaluate(
                    std::slice::from_ref(&req.state),
                    std::slice::from_ref(&req.moves),
                )
            };
            search.apply(&e[0], &cfg, &mut rng);
        }
        let out = search.outcome(&cfg);
        assert_eq!(values, 400, "{game}");
        assert_eq!(search.simulations(), 400, "{game}");
        assert_eq!(out.visits.iter().sum::<u32>(), 400, "{game}");
        // 189 to 205 measured: a pseudo-random evaluator spreads the visits wide.
        assert!(
            (150..=250).contains(&policies),
            "{game}: {policies} policies"
        );
    }
}

/// A search told that its evaluator needs no moves for a value alone hands out
/// value-only requests without moves, and searches exactly as one that lists them (the
/// value here depends on the position alone).
#[test]
fn value_requests_come_without_moves_when_the_evaluator_needs_none() {
    let root = "ataxx".parse::<Game>().unwrap().startpos();
    let cfg = MctsConfig {
        lazy_expansion: true,
        ..MctsConfig::default()
    };
    let mut runs = vec![];
    for need in [true, false] {
        let mut rng = Rng::new(5);
        let mut search = Search::new(root);
        search.set_values_need_moves(need);
        search.start(300, true, &cfg, &mut rng);
        let mut eval = Uniform;
        let (mut listed, mut bare) = (0, 0);
        while let Some(req) = search.next_request(&cfg, &mut rng) {
            if req.value_only {
                if req.moves.is_empty() {
                    bare += 1;
                } else {
                    listed += 1;
                }
            } else {
                assert!(!req.moves.is_empty());
            }
            let mut e = selfplay::Evaluation::default();
            eval.evaluate_into(&req.state, &req.moves, req.value_only, &mut e);
            e.value = (req.position.hash() % 200) as f32 / 100.0 - 1.0;
            search.apply(&e, &cfg, &mut rng);
        }
        assert_eq!(listed + bare, 300);
        assert_eq!((listed, bare), if need { (300, 0) } else { (0, 300) });
        runs.push(search.outcome(&cfg).visits);
        // A new root outside the tree restarts it, keeping the setting.
        let mut far = root;
        for _ in 0..3 {
            far = far.after(far.legal_moves()[0]);
        }
        assert!(!search.reroot(&far));
        search.start(20, true, &cfg, &mut rng);
        while let Some(req) = search.next_request(&cfg, &mut rng) {
            if req.value_only {
                assert_eq!(req.moves.is_empty(), !need);
            }
            let mut e = selfplay::Evaluation::default();
            eval.evaluate_into(&req.state, &req.moves, req.value_only, &mut e);
            search.apply(&e, &cfg, &mut rng);
        }
    }
    assert_eq!(runs[0], runs[1]);
}

#[test]
fn visits_add_up_and_targets_are_distributions() {
    let game: Game = "ataxx".parse().unwrap();
    for (forced, sims) in [(false, 100), (true, 100), (true, 257)] {
        let cfg = MctsConfig {
            forced_playouts: forced,
            ..MctsConfig::default()
        };
        let (search, out) = run(game.startpos(), sims, &cfg, 3);
        assert_eq!(out.visits.iter().sum::<u32>(), sims);
        assert_eq!(search.simulations(), sims);
        let total: f32 = out.policy.iter().sum();
        assert!((total - 1.0).abs() < 1e-5 && out.policy.iter().all(|&p| p >= 0.0));
        assert_eq!(out.moves, game.startpos().legal_moves());
    }
}

#[test]
fn a_forced_pass_is_searched_through() {
    let s = "ataxx"
        .parse::<Game>()
        .unwrap()
        .parse_position("7/7/7/7/ooooooo/ooooooo/xxxxxxx x 0 1")
        .unwrap();
    let (search, out) = run(s, 64, &MctsConfig::default(), 4);
    assert_eq!(out.moves, vec![Move::PASS]);
    assert_eq!(out.visits, vec![64]);
    // The tree grew below the pass: o's replies were expanded and searched.
    assert!(search.tree_size() > 30, "{}", search.tree_size());
}

#[test]
fn gumbel_spends_exactly_its_budget() {
    for game in ["ataxx", "othello", "hexxagon"] {
        let root = game.parse::<Game>().unwrap().startpos();
        for (n, k) in [(16, 8), (50, 4), (7, 16), (100, 1), (64, 32)] {
            let cfg = MctsConfig {
                root: RootKind::Gumbel,
                gumbel_k: k,
                ..MctsConfig::default()
            };
            let (search, out) = run(root, n, &cfg, n as u64 + k as u64);
            assert_eq!(search.simulations(), n, "{game} n={n} k={k}");
            assert_eq!(out.visits.iter().sum::<u32>(), n, "{game} n={n} k={k}");
            let considered = out.visits.iter().filter(|&&v| v > 0).count();
            assert!(considered <= k.min(out.moves.len()));
            let total: f32 = out.policy.iter().sum();
            assert!((total - 1.0).abs() < 1e-4, "{total}");
            assert!(out.policy.iter().all(|p| p.is_finite() && *p >= 0.0));
            assert!(out.visits[out.moves.iter().position(|&m| m == out.best).unwrap()] > 0);
        }
    }
}

/// Batches under virtual loss meet leaves already in flight (collisions): with a Gumbel
/// root every descent follows the schedule, and one that collides is no simulation, so
/// the schedule must get its visit back to spend the budget exactly.
#[test]
fn gumbel_spends_exactly_its_budget_in_batches() {
    for game in ["ataxx", "othello"] {
        let root = game.parse::<Game>().unwrap().startpos();
        for (n, k, batch) in [(64, 8, 16), (40, 4, 8), (200, 16, 32)] {
            let cfg = MctsConfig {
                root: RootKind::Gumbel,
                gumbel_k: k,
                ..MctsConfig::default()
            };
            let mut rng = Rng::new(n as u64);
            let mut search = Search::new(root);
            search.start(n, true, &cfg, &mut rng);
            let mut collisions = 0;
            while !search.finished() {
                let mut b = search.gather(batch, &cfg, &mut rng);
                let states: Vec<State> = b.requests.iter().map(|r| r.state).collect();
                let moves: Vec<Vec<Move>> = b
                    .requests
                    .iter_mut()
                    .map(|r| std::mem::take(&mut r.moves))
                    .collect();
                let evals = if states.is_empty() {
                    vec![]
                } else {
                    selfplay::HashRandom.evaluate(&states, &moves)
                };
                collisions += usize::from(states.len() < batch && !search.finished());
                search.apply_batch(b, &evals, &cfg, &mut rng);
            }
            let out = search.outcome(&cfg);
            assert!(
                collisions > 0,
                "{game} n={n}: the batches met leaves in flight"
            );
            assert_eq!(search.simulations(), n, "{game} n={n} k={k}");
            assert_eq!(out.visits.iter().sum::<u32>(), n, "{game} n={n} k={k}");
        }
    }
}

#[test]
fn tree_reuse_keeps_the_subtree() {
    let game: Game = "ataxx".parse().unwrap();
    let cfg = MctsConfig::default();
    let (mut search, out) = run(game.startpos(), 200, &cfg, 5);
    let child_visits = out.visits[out.moves.iter().position(|&m| m == out.best).unwrap()];
    let before = search.tree_size();
    search.advance(out.best, true);
    assert_eq!(search.root_state(), game.startpos().after(out.best));
    assert!(search.tree_size() < before && search.tree_size() as u32 >= child_visits);
    // Searching on from the reused root works and adds the new simulations.
    let mut rng = Rng::new(6);
    search.start(50, true, &cfg, &mut rng);
    let mut eval = Uniform;
    while let Some(req) = search.next_request(&cfg, &mut rng) {
        let e = eval.evaluate(
            std::slice::from_ref(&req.state),
            std::slice::from_ref(&req.moves),
        );
        search.apply(&e[0], &cfg, &mut rng);
    }
    assert_eq!(search.simulations(), 50);
}
