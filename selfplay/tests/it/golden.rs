//! The search's results, bit for bit, against a record: the same positions, seeds,
//! settings and evaluator must give the same visits, targets, values and moves whatever
//! the tree's storage. A change to the tree's layout keeps the record; a change to the
//! search's semantics rewrites it on purpose (`FLIPZERO_BLESS=1 cargo test -p selfplay
//! --test it golden`) and says so in its commit.
//!
//! Covered: the PUCT root with noise and forced playouts, fast searches, the Gumbel root,
//! batches under virtual loss, tree reuse along a game, the solver and the endgame solver,
//! three games, and the play-time search over several moves.

use std::fmt::Write as _;
use std::sync::atomic::AtomicBool;

use engine::{Game, Rng, State};
use selfplay::{
    Evaluator, HashRandom, MctsConfig, PlayLimits, PlaySearch, RootKind, Search, SearchOutcome,
};

const RECORD: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/search-golden.txt");

fn bits(x: f32) -> String {
    format!("{:08x}", x.to_bits())
}

fn describe(out: &mut String, s: &State, o: &SearchOutcome) {
    let mv = |m| s.move_to_string(m);
    writeln!(
        out,
        "  best {} q {} proven {:?}",
        mv(o.best),
        bits(o.root_q),
        o.proven
    )
    .unwrap();
    for i in 0..o.moves.len() {
        writeln!(
            out,
            "  {} n {} t {} p {} proof {:?}",
            mv(o.moves[i]),
            o.visits[i],
            bits(o.policy[i]),
            bits(o.prior[i]),
            o.move_proofs[i]
        )
        .unwrap();
    }
}

fn lines(out: &mut String, search: &Search) {
    let s = search.root_state();
    for l in search.root_lines(6).iter().take(4) {
        let pv: Vec<String> = l.pv.iter().map(|&m| s.move_to_string(m)).collect();
        writeln!(
            out,
            "  line {} n {} q {:?} pv {}",
            s.move_to_string(l.mv),
            l.visits,
            l.q.map(bits),
            pv.join(" ")
        )
        .unwrap();
    }
}

/// Runs the current search to its end, gathering up to `batch` leaves at a time and
/// giving them back in reverse order of gathering every other batch pair (two batches in
/// flight), as the workers do.
fn drive(search: &mut Search, cfg: &MctsConfig, rng: &mut Rng, batch: usize) {
    let mut eval = HashRandom;
    loop {
        let a = search.gather(batch, cfg, rng);
        let b = search.gather(batch, cfg, rng);
        if a.is_empty() && b.is_empty() {
            if search.finished() {
                break;
            }
            continue;
        }
        for mut x in [b, a] {
            let states: Vec<State> = x.requests.iter().map(|r| r.state).collect();
            let moves: Vec<_> = x
                .requests
                .iter_mut()
                .map(|r| std::mem::take(&mut r.moves))
                .collect();
            let evals = if states.is_empty() {
                Vec::new()
            } else {
                eval.evaluate(&states, &moves)
            };
            search.apply_batch(x, &evals, cfg, rng);
        }
    }
}

/// A position `plies` random moves into a game of `game`.
fn walk(game: &str, plies: usize, seed: u64) -> State {
    let game: Game = game.parse().unwrap();
    let mut s = game.startpos();
    let mut rng = Rng::new(seed);
    for _ in 0..plies {
        let moves = s.legal_moves();
        if moves.is_empty() {
            break;
        }
        s = s.after(moves[rng.below(moves.len() as u64) as usize]);
    }
    s
}

/// A game of `moves` moves with tree reuse, each searched with `sims` simulations.
fn game_with_reuse(
    out: &mut String,
    root: State,
    cfg: &MctsConfig,
    sims: u32,
    batch: usize,
    moves: usize,
    seed: u64,
) {
    let mut rng = Rng::new(seed);
    let mut search = Search::new(root);
    for ply in 0..moves {
        if search.root_state().legal_moves().is_empty() {
            break;
        }
        // Every third search a fast one (playout-cap randomisation's).
        search.start(sims, ply % 3 != 2, cfg, &mut rng);
        drive(&mut search, cfg, &mut rng, batch);
        let o = search.outcome(cfg);
        writeln!(
            out,
            " ply {ply} tree {} sims {}",
            search.tree_size(),
            search.simulations()
        )
        .unwrap();
        describe(out, &search.root_state(), &o);
        lines(out, &search);
        search.advance(o.best, true);
    }
}

fn record() -> String {
    let mut out = String::new();
    let puct = MctsConfig::default();
    let gumbel = MctsConfig {
        root: RootKind::Gumbel,
        ..MctsConfig::default()
    };
    let endgame = MctsConfig {
        endgame_empties: 7,
        endgame_nodes: 3_000,
        ..MctsConfig::default()
    };
    let cases: [(&str, State, &MctsConfig, u32, usize); 8] = [
        ("ataxx start puct", walk("ataxx", 0, 0), &puct, 300, 1),
        (
            "ataxx middle puct batched",
            walk("ataxx", 24, 3),
            &puct,
            400,
            8,
        ),
        ("ataxx middle gumbel", walk("ataxx", 18, 5), &gumbel, 200, 1),
        (
            "ataxx middle gumbel batched",
            walk("ataxx", 26, 16),
            &gumbel,
            256,
            4,
        ),
        (
            "ataxx late endgame solver",
            walk("ataxx", 110, 7),
            &endgame,
            300,
            4,
        ),
        ("othello middle", walk("othello", 20, 8), &puct, 300, 4),
        ("hexxagon middle", walk("hexxagon", 16, 9), &puct, 300, 2),
        (
            "annexation32 late",
            walk("annexation32", 20, 10),
            &puct,
            400,
            1,
        ),
    ];
    for (i, (name, root, cfg, sims, batch)) in cases.into_iter().enumerate() {
        writeln!(out, "case {name}: {}", root.text()).unwrap();
        game_with_reuse(&mut out, root, cfg, sims, batch, 4, 100 + i as u64);
    }
    // The play-time search: a kept tree over a game's moves, batches of 4.
    let play_cfg = MctsConfig {
        dirichlet_epsilon: 0.0,
        forced_playouts: false,
        ..MctsConfig::default()
    };
    play_game(&mut out, "play", play_cfg.clone(), 4);
    let lazy = MctsConfig {
        lazy_expansion: true,
        ..play_cfg
    };
    play_game(&mut out, "play lazy expansion", lazy.clone(), 4);
    play_game(&mut out, "play lazy expansion, one leaf a call", lazy, 1);
    out
}

/// The play-time search over six moves of a game, its tree kept.
fn play_game(out: &mut String, name: &str, play_cfg: MctsConfig, batch: usize) {
    let mut s = walk("ataxx", 6, 11);
    writeln!(out, "case {name}: {}", s.text()).unwrap();
    let mut play = PlaySearch::new(s, play_cfg, batch, 12);
    let mut evs: Vec<Box<dyn Evaluator>> = vec![Box::new(HashRandom)];
    let never = AtomicBool::new(false);
    for ply in 0..6 {
        if s.legal_moves().is_empty() {
            break;
        }
        play.set_position(&s);
        let limits = PlayLimits {
            sims: Some(300),
            time: None,
        };
        let (o, stats) = play.run(&mut evs, limits, &never).unwrap();
        writeln!(
            out,
            " ply {ply} sims {} evals {} reused {}",
            stats.simulations, stats.evaluations, stats.reused_visits
        )
        .unwrap();
        describe(out, &s, &o);
        s = s.after(o.best);
    }
}

#[test]
fn searches_match_their_record() {
    let got = record();
    if std::env::var_os("FLIPZERO_BLESS").is_some() {
        std::fs::create_dir_all(std::path::Path::new(RECORD).parent().unwrap()).unwrap();
        std::fs::write(RECORD, &got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(RECORD).expect("the record (FLIPZERO_BLESS=1 writes it)");
    for (n, (g, w)) in got.lines().zip(want.lines()).enumerate() {
        assert_eq!(g, w, "line {} of {RECORD} differs", n + 1);
    }
    assert_eq!(got.lines().count(), want.lines().count(), "record length");
    assert!(want.lines().count() > 500, "a record of every case");
}
