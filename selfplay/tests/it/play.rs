//! The play-time search: tree reuse over a move pair, batches under virtual loss on
//! several threads, determinism on one thread, and the stop flag.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use engine::{Game, Move, State};
use selfplay::{
    Evaluator, HashRandom, MctsConfig, PlayError, PlayLimits, PlaySearch, TimeBudget, Uniform,
};

use crate::mcts::{find, wins_now};

fn play_cfg() -> MctsConfig {
    MctsConfig {
        dirichlet_epsilon: 0.0,
        forced_playouts: false,
        ..MctsConfig::default()
    }
}

fn evaluators(threads: usize, random: bool) -> Vec<Box<dyn Evaluator>> {
    (0..threads)
        .map(|_| -> Box<dyn Evaluator> {
            if random {
                Box::new(HashRandom)
            } else {
                Box::new(Uniform)
            }
        })
        .collect()
}

fn sims(n: u32) -> PlayLimits {
    PlayLimits {
        sims: Some(n),
        time: None,
    }
}

fn most_visited(children: &[(Move, u32)]) -> Move {
    children.iter().max_by_key(|c| c.1).unwrap().0
}

#[test]
fn a_move_pair_keeps_the_grandchilds_subtree() {
    let game: Game = "ataxx".parse().unwrap();
    let start = game.startpos();
    let mut search = PlaySearch::new(start, play_cfg(), 8, 1);
    let mut evs = evaluators(1, true);
    let stop = AtomicBool::new(false);
    let (out, stats) = search.run(&mut evs, sims(600), &stop).unwrap();
    assert_eq!(stats.simulations, 600);
    assert_eq!(stats.reused_visits, 0);
    // Our move, then the opponent's most searched reply.
    let ours = out.best;
    let (_, replies) = search.tree().visits_at(&[ours]).unwrap();
    let reply = most_visited(&replies);
    let kept = search.tree().visits_at(&[ours, reply]).unwrap();
    assert!(kept.0 >= 10, "the grandchild was searched: {kept:?}");
    let next = start.after(ours).after(reply);
    assert!(search.set_position(&next));
    assert_eq!(search.tree().root_state(), next);
    assert_eq!(search.tree().visits_at(&[]).unwrap(), kept);
    // Searching on adds the new simulations to the kept ones.
    let (out2, stats2) = search.run(&mut evs, sims(100), &stop).unwrap();
    assert_eq!(stats2.reused_visits, kept.0);
    assert_eq!(search.tree().visits_at(&[]).unwrap().0, kept.0 + 100);
    assert_eq!(
        out2.visits.iter().sum::<u32>(),
        kept.1.iter().map(|c| c.1).sum::<u32>() + 100
    );
    // A position the tree does not hold starts a fresh tree.
    let elsewhere = game.parse_position("x5o/7/7/7/7/7/o4xx o 0 1").unwrap();
    assert!(!search.set_position(&elsewhere));
    assert_eq!(search.tree().visits_at(&[]).unwrap().0, 0);
    assert_eq!(search.tree().tree_size(), 1);
}

#[test]
fn threads_find_the_same_wipe_outs() {
    let positions = find(10, |s| {
        let m = s.legal_moves();
        let w = m.iter().filter(|&&x| wins_now(s, x)).count();
        w >= 1 && w * 4 <= m.len()
    });
    let stop = AtomicBool::new(false);
    for s in positions {
        for (threads, batch) in [(1, 1), (1, 16), (2, 8), (4, 16)] {
            let mut search = PlaySearch::new(s, play_cfg(), batch, 1);
            let (out, stats) = search
                .run(&mut evaluators(threads, false), sims(300), &stop)
                .unwrap();
            // The search ends once the tree proves the win (the MCTS-solver).
            assert_eq!(out.proven, Some(1.0), "{}", s.text());
            assert!(stats.simulations < 300, "{}", stats.simulations);
            assert_eq!(out.visits.iter().sum::<u32>(), stats.simulations);
            assert!(
                wins_now(&s, out.best),
                "{} with {threads} threads, batch {batch}: chose {}",
                s.text(),
                s.move_to_string(out.best)
            );
        }
    }
}

fn search_once(root: State, threads: usize, batch: usize, seed: u64) -> (Vec<u32>, usize) {
    let mut search = PlaySearch::new(root, play_cfg(), batch, seed);
    let (out, _) = search
        .run(
            &mut evaluators(threads, true),
            sims(500),
            &AtomicBool::new(false),
        )
        .unwrap();
    (out.visits, search.tree().tree_size())
}

#[test]
fn one_thread_is_deterministic_and_batches_add_up() {
    for game in ["ataxx", "othello"] {
        let root = game.parse::<Game>().unwrap().startpos();
        let a = search_once(root, 1, 16, 9);
        assert_eq!(a, search_once(root, 1, 16, 9), "{game}");
        assert_eq!(a.0.iter().sum::<u32>(), 500);
        // Several threads: every simulation lands once, every virtual loss is returned.
        let (visits, _) = search_once(root, 3, 16, 9);
        assert_eq!(visits.iter().sum::<u32>(), 500, "{game}");
    }
}

#[test]
fn a_set_stop_flag_ends_the_search_after_one_batch() {
    let root = "ataxx".parse::<Game>().unwrap().startpos();
    let mut search = PlaySearch::new(root, play_cfg(), 16, 1);
    let limits = PlayLimits::default();
    let (out, stats) = search
        .run(&mut evaluators(1, true), limits, &AtomicBool::new(true))
        .unwrap();
    assert!((1..=16).contains(&stats.simulations), "{stats:?}");
    assert!(root.is_legal(out.best));
    assert_eq!(stats.batches, 2, "the root, then one batch of leaves");
}

#[test]
fn a_search_without_limits_ends_when_its_tree_is_full() {
    let root = "ataxx".parse::<Game>().unwrap().startpos();
    let mut search = PlaySearch::new(root, play_cfg(), 8, 1);
    let limit = 2 << 20;
    search.set_tree_limit(limit);
    let stop = AtomicBool::new(false);
    // No simulation count and no stop; a time far beyond what the bound allows, so
    // that a search the bound failed to end still ends (over the bound).
    let limits = PlayLimits {
        sims: None,
        time: Some(TimeBudget::fixed(Duration::from_secs(20))),
    };
    let (out, stats) = search.run(&mut evaluators(1, true), limits, &stop).unwrap();
    assert!(stats.tree_full, "{stats:?}");
    let bytes = search.tree().tree_bytes();
    // Stopped at the bound, within one batch of leaves (each at most a node, its
    // position and its 100-odd moves).
    assert!((limit..limit + 8 * 4096).contains(&bytes), "{bytes}");
    assert!(stats.simulations > 500, "{stats:?}");
    assert!(root.is_legal(out.best));
    // The same position again keeps the whole tree, more than half the bound: the next
    // search starts afresh, and one well within the bound does not report it.
    assert!(search.set_position(&root));
    let (_, again) = search
        .run(&mut evaluators(1, true), sims(200), &stop)
        .unwrap();
    assert_eq!(again.reused_visits, 0);
    assert!(!again.tree_full && search.tree().tree_bytes() < limit / 2);
    // A kept tree within half the bound is kept.
    assert!(search.set_position(&root));
    let (_, kept) = search
        .run(&mut evaluators(1, true), sims(50), &stop)
        .unwrap();
    assert_eq!(
        kept.reused_visits, 201,
        "the root's evaluation and 200 simulations"
    );
}

/// A tree searched one leaf at a time keeps tails, which a search with batches grows
/// into edges: the tree's bound is checked on the grown tree, so a kept tree within half
/// the bound with its tails, and over it grown, is dropped before the search, not found
/// full after its first simulation.
#[test]
fn a_tree_with_tails_is_bounded_as_the_search_after_it_holds_it() {
    let root = "ataxx".parse::<Game>().unwrap().startpos();
    let mut search = PlaySearch::new(root, play_cfg(), 1, 1);
    let stop = AtomicBool::new(false);
    search
        .run(&mut evaluators(1, true), sims(3_000), &stop)
        .unwrap();
    let with_tails = search.tree().tree_bytes();
    search.set_tree_limit(with_tails * 100 / 45);
    search.set_batch(4);
    assert!(search.set_position(&root));
    let (_, stats) = search
        .run(&mut evaluators(1, true), sims(200), &stop)
        .unwrap();
    assert!(!stats.tree_full, "{stats:?}");
    assert_eq!(stats.simulations, 200);
    assert_eq!(
        stats.reused_visits, 0,
        "dropped: grown, it was over half the bound"
    );
}

#[test]
fn no_evaluator_or_a_finished_game_is_an_error() {
    let game: Game = "ataxx".parse().unwrap();
    let mut search = PlaySearch::new(game.startpos(), play_cfg(), 8, 1);
    let stop = AtomicBool::new(false);
    assert_eq!(
        search.run(&mut [], sims(10), &stop).err(),
        Some(PlayError::NoEvaluator)
    );
    let over = game.parse_position("7/7/7/7/7/7/6x o 0 1").unwrap();
    let mut search = PlaySearch::new(over, play_cfg(), 8, 1);
    assert_eq!(
        search.run(&mut evaluators(1, false), sims(10), &stop).err(),
        Some(PlayError::GameOver)
    );
}

/// Plays `moves` moves of a game from the start with one search kept between them (tree
/// reuse, the opponent's replies fixed by a side rule), returning every search's visits
/// and stats.
fn game_with_cache(entries: usize, moves: usize) -> (Vec<Vec<u32>>, Vec<selfplay::PlayStats>) {
    let cfg = MctsConfig {
        symmetry: false,
        ..play_cfg()
    };
    let mut s: State = "ataxx".parse::<Game>().unwrap().startpos();
    let mut search = PlaySearch::new(s, cfg, 4, 5);
    search.set_cache(entries);
    let mut evs = evaluators(1, true);
    let stop = AtomicBool::new(false);
    let (mut visits, mut stats) = (vec![], vec![]);
    for ply in 0..moves {
        if s.is_game_over() {
            break;
        }
        search.set_position(&s);
        let (out, st) = search.run(&mut evs, sims(300), &stop).unwrap();
        visits.push(out.visits.clone());
        stats.push(st);
        s.play(out.best);
        // The opponent: a fixed choice, so that the next root is in the tree or not.
        let replies = s.legal_moves();
        if !replies.is_empty() {
            s.play(replies[ply * 7 % replies.len()]);
        }
    }
    (visits, stats)
}

#[test]
fn the_evaluation_cache_changes_no_search_and_is_hit() {
    let (plain, plain_stats) = game_with_cache(0, 12);
    let (cached, cached_stats) = game_with_cache(1 << 12, 12);
    // With a deterministic evaluator and one thread, the same moves and visits.
    assert_eq!(plain, cached);
    assert!(
        plain_stats
            .iter()
            .all(|s| s.cache_hits == 0 && s.cache_lookups == 0)
    );
    let hits: u64 = cached_stats.iter().map(|s| s.cache_hits).sum();
    let lookups: u64 = cached_stats.iter().map(|s| s.cache_lookups).sum();
    let saved: u64 = plain_stats.iter().map(|s| s.evaluations).sum::<u64>()
        - cached_stats.iter().map(|s| s.evaluations).sum::<u64>();
    // Every hit is an evaluation saved, and transpositions make hits.
    assert_eq!(saved, hits);
    assert!(hits > 0 && lookups > hits, "{hits} of {lookups}");
}

/// [`HashRandom`]'s values alone, as an evaluator that needs no moves for them gives them
/// (a policy here would be cached, and answer the leaf's expansion later).
fn values_alone(states: &[State], moves: &[Vec<Move>]) -> Vec<selfplay::Evaluation> {
    let mut out = HashRandom.evaluate_values(states, moves);
    for e in &mut out {
        e.policy.clear();
    }
    out
}

/// `HashRandom`, its values alone without policies, that says whether it needs moves for
/// them, and counts the value-only positions it was given with and without moves.
struct Recording {
    needs_moves: bool,
    seen: std::sync::Arc<std::sync::Mutex<[usize; 2]>>,
}

impl Evaluator for Recording {
    fn evaluate(&mut self, states: &[State], moves: &[Vec<Move>]) -> Vec<selfplay::Evaluation> {
        HashRandom.evaluate(states, moves)
    }

    fn evaluate_values(
        &mut self,
        states: &[State],
        moves: &[Vec<Move>],
    ) -> Vec<selfplay::Evaluation> {
        let mut seen = self.seen.lock().unwrap();
        for m in moves {
            seen[usize::from(m.is_empty())] += 1;
        }
        values_alone(states, moves)
    }

    fn values_need_moves(&self) -> bool {
        self.needs_moves
    }

    fn name(&self) -> String {
        "recording".into()
    }
}

/// Values alone (lazy expansion) come without moves only where no evaluator of the
/// search needs them, and the search is the same either way; on several threads one
/// evaluator that needs moves is enough for every one to get them.
#[test]
fn value_requests_carry_moves_only_for_evaluators_that_need_them() {
    let cfg = MctsConfig {
        lazy_expansion: true,
        ..play_cfg()
    };
    let root = "ataxx".parse::<Game>().unwrap().startpos();
    let stop = AtomicBool::new(false);
    let run = |needs: &[bool], batch: usize| {
        let seen = std::sync::Arc::new(std::sync::Mutex::new([0, 0]));
        let mut evs: Vec<Box<dyn Evaluator>> = needs
            .iter()
            .map(|&needs_moves| -> Box<dyn Evaluator> {
                Box::new(Recording {
                    needs_moves,
                    seen: seen.clone(),
                })
            })
            .collect();
        let mut search = PlaySearch::new(root, cfg.clone(), batch, 9);
        let (out, _) = search.run(&mut evs, sims(400), &stop).unwrap();
        let seen = *seen.lock().unwrap();
        (out.visits, seen)
    };
    for batch in [1, 4] {
        let (listed, with) = run(&[true], batch);
        let (bare, without) = run(&[false], batch);
        assert!(with[0] > 100 && with[1] == 0, "batch {batch}: {with:?}");
        assert!(
            without[0] == 0 && without[1] > 100,
            "batch {batch}: {without:?}"
        );
        assert_eq!(listed, bare, "batch {batch}");
    }
    let (_, mixed) = run(&[false, true], 4);
    assert!(mixed[0] > 100 && mixed[1] == 0, "two threads: {mixed:?}");
}

/// [`HashRandom`] as a fast net is: a value alone without the moves, and (where
/// `.1`) a policy alone where asked, counting those calls.
struct PolicyAlone(std::sync::Arc<std::sync::atomic::AtomicU64>, bool);

impl Evaluator for PolicyAlone {
    fn evaluate(&mut self, states: &[State], moves: &[Vec<Move>]) -> Vec<selfplay::Evaluation> {
        HashRandom.evaluate(states, moves)
    }

    fn evaluate_values(
        &mut self,
        states: &[State],
        moves: &[Vec<Move>],
    ) -> Vec<selfplay::Evaluation> {
        values_alone(states, moves)
    }

    fn values_need_moves(&self) -> bool {
        false
    }

    fn policy_alone(&self) -> bool {
        self.1
    }

    fn policy_into(&mut self, state: &State, moves: &[Move], out: &mut Vec<f32>) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let e = HashRandom.evaluate(std::slice::from_ref(state), &[moves.to_vec()]);
        out.clone_from(&e[0].policy);
    }

    fn name(&self) -> String {
        "policy-alone".into()
    }
}

/// An expansion whose value the evaluation cache holds asks the evaluator for the policy
/// alone, where it says that is cheaper; the search is the one that whole evaluations
/// make (the same value, the same policy), over tree reuse, with batches of one leaf and
/// of several.
#[test]
fn an_expansion_asks_for_the_policy_alone_and_searches_the_same() {
    let game: Game = "ataxx".parse().unwrap();
    let cfg = MctsConfig {
        // A transformed position's random value is another: the cache's would differ.
        symmetry: false,
        // The player's: a leaf's first visit asks for its value, its second expands it.
        lazy_expansion: true,
        ..play_cfg()
    };
    for batch in [1, 8] {
        let calls = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let run = |alone: bool| {
            let mut s = game.startpos();
            let mut search = PlaySearch::new(s, cfg.clone(), batch, 3);
            let mut evs: Vec<Box<dyn Evaluator>> =
                vec![Box::new(PolicyAlone(calls.clone(), alone))];
            let stop = AtomicBool::new(false);
            let mut seen = vec![];
            for _ in 0..4 {
                let (out, stats) = search.run(&mut evs, sims(2_000), &stop).unwrap();
                let (_, children) = search.tree().visits_at(&[]).unwrap();
                seen.push((out.best, children, stats.evaluations, stats.reused_visits));
                s = s.after(out.best);
                assert!(search.set_position(&s));
            }
            seen
        };
        let whole = run(false);
        assert_eq!(calls.load(std::sync::atomic::Ordering::Relaxed), 0);
        let alone = run(true);
        let asked = calls.load(std::sync::atomic::Ordering::Relaxed);
        assert_eq!(alone, whole, "batch {batch}");
        // Expansions are a third of the evaluations here (observed 33%), and they find
        // their value held (the first visit put it there).
        let evaluations: u64 = whole.iter().map(|w| w.2).sum();
        assert!(
            asked * 4 > evaluations,
            "batch {batch}: {asked} policies alone of {evaluations} evaluations"
        );
    }
}
