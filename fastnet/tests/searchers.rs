//! Both searchers with a fast net: alpha-beta with its value at the leaves and MCTS with
//! its value and policy find the forced wipe-outs and avoid the ones that lose at once,
//! whatever the (here untrained) net thinks of the positions.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use engine::search::{Limits, MATE, Searcher};
use engine::{Game, Move, Rng, State};
use fastnet::{FastEvaluator, FastNetConfig, FastValue, FloatNet, QuantNet};
use selfplay::{Evaluator, MctsConfig, Search};

fn net() -> Arc<QuantNet> {
    let game: Game = "ataxx".parse().unwrap();
    let f = FloatNet::init(FastNetConfig::for_game(game, 64), 3).unwrap();
    Arc::new(QuantNet::new(&f).unwrap())
}

fn wins_now(s: &State, m: Move) -> bool {
    s.after(m)
        .result()
        .is_some_and(|r| r.winner == Some(s.side_to_move()))
}

fn loses_next(s: &State, m: Move) -> bool {
    let child = s.after(m);
    !child.is_game_over() && child.legal_moves().into_iter().any(|r| wins_now(&child, r))
}

/// Positions of two to four pieces on an empty 7×7 board where `pick` holds.
fn find(count: usize, pick: impl Fn(&State) -> bool) -> Vec<State> {
    let game: Game = "ataxx".parse().unwrap();
    let mut rng = Rng::new(4);
    let mut out = vec![];
    while out.len() < count {
        let mut cells = ['1'; 49];
        for p in ['x', 'o', 'x', 'o'].iter().take(2 + rng.below(3) as usize) {
            cells[rng.below(49) as usize] = *p;
        }
        let rows: Vec<String> = (0..7)
            .rev()
            .map(|r| cells[r * 7..r * 7 + 7].iter().collect())
            .collect();
        let Ok(s) = game.parse_position(&format!("{} x 0 1", rows.join("/"))) else {
            continue;
        };
        if !s.is_game_over() && pick(&s) {
            out.push(s);
        }
    }
    out
}

#[test]
fn alpha_beta_with_the_value_net_finds_and_avoids_wipe_outs() {
    let q = net();
    let mut searcher = Searcher::new(1).with_eval(Box::new(FastValue::new(q)));
    let stop = AtomicBool::new(false);
    let depth = |d| Limits {
        depth: Some(d),
        ..Limits::default()
    };
    for s in find(10, |s| s.legal_moves().iter().any(|&m| wins_now(s, m))) {
        let r = searcher.search(&s, depth(3), &stop, |_| {}).unwrap();
        assert_eq!(r.score, MATE - 1, "{}", s.text());
        assert!(wins_now(&s, r.pv[0]), "{}", s.text());
    }
    for s in find(10, |s| {
        let m = s.legal_moves();
        let losing = m.iter().filter(|&&x| loses_next(s, x)).count();
        !m.iter().any(|&x| wins_now(s, x)) && losing * 2 >= m.len() && losing < m.len()
    }) {
        let r = searcher.search(&s, depth(2), &stop, |_| {}).unwrap();
        assert!(!loses_next(&s, r.pv[0]), "{}", s.text());
    }
}

fn mcts(root: State, sims: u32, eval: &mut FastEvaluator) -> Move {
    let cfg = MctsConfig {
        dirichlet_epsilon: 0.0,
        ..MctsConfig::default()
    };
    let mut rng = Rng::new(1);
    let mut search = Search::new(root);
    search.start(sims, true, &cfg, &mut rng);
    while let Some(req) = search.next_request(&cfg, &mut rng) {
        let e = eval.evaluate(
            std::slice::from_ref(&req.state),
            std::slice::from_ref(&req.moves),
        );
        search.apply(&e[0], &cfg, &mut rng);
    }
    search.outcome(&cfg).best
}

#[test]
fn mcts_with_the_fast_net_finds_and_avoids_wipe_outs() {
    let mut eval = FastEvaluator::new(net(), "fast");
    for s in find(10, |s| {
        let m = s.legal_moves();
        let w = m.iter().filter(|&&x| wins_now(s, x)).count();
        w >= 1 && w * 4 <= m.len()
    }) {
        let best = mcts(s, 300, &mut eval);
        assert!(
            wins_now(&s, best),
            "{}: {}",
            s.text(),
            s.move_to_string(best)
        );
    }
    for s in find(10, |s| {
        let m = s.legal_moves();
        let losing = m.iter().filter(|&&x| loses_next(s, x)).count();
        !m.iter().any(|&x| wins_now(s, x)) && losing * 2 >= m.len() && losing < m.len()
    }) {
        let best = mcts(s, 600, &mut eval);
        assert!(
            !loses_next(&s, best),
            "{}: {}",
            s.text(),
            s.move_to_string(best)
        );
    }
}
