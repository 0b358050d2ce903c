//! The play loop's part in a descent ([`AtOnce`]): the evaluations a search of one leaf
//! at a time asks for during its descents, made there from the evaluation cache or by
//! the evaluator, counted and timed as the loop's own evaluator calls are.

use std::time::Duration;

use engine::{Move, State};

use super::cache::{EvalCache, Lookup};
use super::leaves::{Descent, LeafRequest};
use crate::evaluator::{Evaluation, Evaluator};
use engine::clock::{now, since};

/// The play loop's part in a descent: the evaluation cache's slot of each leaf fetched
/// early, and where the search asks (one leaf at a time), lazy expansion's first visit
/// ([`Descent::value_now`]) and second ([`Descent::expand_now`]) evaluated at once, from
/// the cache or by the evaluator, as the loop evaluates the leaves handed out.
pub(super) struct AtOnce<'a> {
    pub(super) cache: &'a mut EvalCache,
    pub(super) calls: Calls<'a>,
    /// A leaf's evaluation where the cache has no slots.
    pub(super) eval: &'a mut Evaluation,
}

/// The evaluator of a descent's leaves, and what it counts.
pub(super) struct Calls<'a> {
    pub(super) evaluator: &'a mut dyn Evaluator,
    pub(super) policy_alone: bool,
    /// What the calls made so far count.
    pub(super) counts: Counts,
    /// Where the batch is timed, the batches its evaluator time stands for.
    pub(super) timed_as: Option<u32>,
}

/// The evaluator calls of a descent, and their time (estimated as
/// [`super::play::PlayStats::eval_time`] is).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Counts {
    pub(super) evaluations: u64,
    pub(super) eval_time: Duration,
}

impl Calls<'_> {
    /// Makes the evaluation of `state` (moves `moves`) into `e`: its policy alone where
    /// `lookup` says so, its value alone where `value_only`; counted and timed as the
    /// loop's evaluator calls are.
    fn evaluate(
        &mut self,
        state: &State,
        moves: &[Move],
        value_only: bool,
        lookup: Lookup,
        e: &mut Evaluation,
    ) {
        let start = self.timed_as.and_then(|_| now());
        if lookup == Lookup::PolicyAlone {
            self.evaluator.policy_into(state, moves, &mut e.policy);
        } else {
            self.evaluator.evaluate_into(state, moves, value_only, e);
        }
        self.counts.eval_time += since(start) * self.timed_as.unwrap_or(0);
        self.counts.evaluations += 1;
    }
}

impl Descent for AtOnce<'_> {
    fn leaf(&mut self, position: &State, expands: bool) {
        self.cache.prefetch(position, expands);
    }

    fn expand_now(&mut self, r: &LeafRequest) -> Option<&[f32]> {
        let calls = &mut self.calls;
        // In the cache's slot; in the loop's buffer for a cache of no slots.
        if self.cache.holds_nothing() {
            calls.evaluate(&r.state, &r.moves, false, Lookup::Miss, self.eval);
            return Some(&self.eval.policy);
        }
        self.cache
            .answer_in_place(r, calls.policy_alone, |lookup, e| {
                calls.evaluate(&r.state, &r.moves, false, lookup, e);
            })
    }

    fn value_now(&mut self, position: &State, transformed: impl FnOnce() -> State) -> Option<f32> {
        let calls = &mut self.calls;
        // In the cache's slot; in the loop's buffer for a cache of no slots.
        if self.cache.holds_nothing() {
            calls.evaluate(&transformed(), &[], true, Lookup::Miss, self.eval);
            return Some(self.eval.value);
        }
        self.cache.value_in_place(position, |e| {
            calls.evaluate(&transformed(), &[], true, Lookup::Miss, e);
        })
    }
}
