//! The batches' tests.

use super::*;
use crate::mcts::select::tests::{answer, eval};

/// `gather_with` shows its callback every leaf it asks an evaluation for, in order,
/// before the batch comes back.
#[test]
fn gather_with_shows_each_leaf_before_its_request() {
    let cfg = crate::MctsConfig::for_play();
    let root = "ataxx".parse::<engine::Game>().unwrap().startpos();
    let mut rng = Rng::new(2);
    let mut s = Search::new(root);
    s.start(400, false, &cfg, &mut rng);
    let mut requested = 0;
    while !s.finished() {
        let mut seen = Vec::new();
        let b = s.gather_with(3, &cfg, &mut rng, &mut |p: &State| seen.push(*p));
        let asked: Vec<State> = b.requests.iter().map(|r| r.position).collect();
        // Each request's leaf was seen, in order (among collisions and finished games).
        let mut rest = seen.iter();
        assert!(
            asked.iter().all(|a| rest.any(|p| p == a)),
            "{seen:?} {asked:?}"
        );
        requested += asked.len();
        answer(&mut s, b, &cfg, &mut rng);
    }
    assert!(requested > 300, "{requested}");
}

/// The made-up evaluation of [`answer`], given at once to a descent that asks: an
/// expansion's, and a first visit's value too where `values`. Each expansion must have
/// been announced by its leaf ([`Descent::leaf`]'s `expands`).
struct AtOnce {
    eval: Evaluation,
    evaluated: u32,
    values: bool,
    valued: u32,
    /// The leaf last announced for an expansion, if none was seen since.
    announced: Option<State>,
}

impl Descent for AtOnce {
    fn leaf(&mut self, position: &State, expands: bool) {
        self.announced = expands.then_some(*position);
    }

    fn expand_now(&mut self, r: &LeafRequest) -> Option<&[f32]> {
        assert!(!r.value_only);
        assert_eq!(
            self.announced.take(),
            Some(r.position),
            "an expansion at once announced by its descent"
        );
        self.eval = eval(&r.position, &r.moves, false);
        self.evaluated += 1;
        Some(&self.eval.policy)
    }

    fn value_now(&mut self, position: &State, _: impl FnOnce() -> State) -> Option<f32> {
        self.valued += u32::from(self.values);
        self.values.then(|| eval(position, &[], true).value)
    }
}

/// A lazy search whose descents go on from the leaf the last batch expanded, or whose
/// descents expand that leaf at once and go on ([`Descent::expand_now`]), or also
/// back a first visit's value up at once ([`Descent::value_now`]), builds the same
/// tree, simulation for simulation, as one whose every descent starts at the root and
/// hands every leaf out; batches of one leaf (the play loop's, with tails and
/// without) and of three.
#[test]
fn a_descent_after_an_expansion_goes_on_as_one_from_the_root() {
    #[derive(Clone, Copy, PartialEq, Debug)]
    enum Mode {
        Root,
        Resume,
        AtOnce,
        Values,
    }
    let cfg = crate::MctsConfig::for_play();
    assert!(cfg.lazy_expansion);
    let root = "ataxx".parse::<engine::Game>().unwrap().startpos();
    for (batch, one_leaf) in [(1, true), (1, false), (3, false)] {
        let run = |mode: Mode| {
            let mut rng = Rng::new(9);
            let mut s = Search::new(root);
            s.set_one_leaf(one_leaf);
            // Values at once are asked only where no moves are needed for them.
            s.set_values_need_moves(mode != Mode::Values);
            s.start(5000, false, &cfg, &mut rng);
            let (mut resumed, mut at_once) = (
                0,
                AtOnce {
                    eval: Evaluation::default(),
                    evaluated: 0,
                    values: mode == Mode::Values,
                    valued: 0,
                    announced: None,
                },
            );
            for _ in 0..20_000 {
                if s.finished() {
                    break;
                }
                resumed += u32::from(s.resume.is_some());
                if mode == Mode::Root {
                    s.resume = None;
                }
                let b = if matches!(mode, Mode::AtOnce | Mode::Values) {
                    s.gather_with(batch, &cfg, &mut rng, &mut at_once)
                } else {
                    s.gather(batch, &cfg, &mut rng)
                };
                answer(&mut s, b, &cfg, &mut rng);
            }
            assert!(s.finished());
            let tree: Vec<(u32, u32, u32, u16, u32)> = s
                .edges
                .iter()
                .map(|e| {
                    (
                        e.visits,
                        e.value_sum.to_bits(),
                        e.first,
                        e.count,
                        e.prior.to_bits(),
                    )
                })
                .collect();
            (tree, resumed, at_once.evaluated, at_once.valued)
        };
        let (rooted_tree, ..) = run(Mode::Root);
        let (resumed_tree, resumed, ..) = run(Mode::Resume);
        assert_eq!(resumed_tree, rooted_tree, "batch {batch}, tails {one_leaf}");
        let (at_once_tree, _, evaluated, _) = run(Mode::AtOnce);
        assert_eq!(at_once_tree, rooted_tree, "batch {batch}, tails {one_leaf}");
        let (values_tree, _, _, valued) = run(Mode::Values);
        assert_eq!(values_tree, rooted_tree, "batch {batch}, tails {one_leaf}");
        // Only a search of one leaf at a time asks for values at once: most of its
        // 5,000 simulations are first visits.
        eprintln!("batch {batch}, tails {one_leaf}: {valued} values at once");
        if one_leaf {
            assert!(valued > 4900, "{valued} values at once");
        } else {
            assert_eq!(valued, 0);
        }
        // A batch of three is seldom one expansion alone: only batches of one resume
        // often; and only a search of one leaf at a time expands at once.
        eprintln!("batch {batch}, tails {one_leaf}: {resumed} resumed, {evaluated} at once");
        if batch == 1 {
            assert!(resumed > 2000, "{resumed} descents resumed");
        }
        if one_leaf {
            assert!(evaluated > 2000, "{evaluated} expanded at once");
        } else {
            assert_eq!(evaluated, 0);
        }
    }
}
