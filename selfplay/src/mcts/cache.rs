//! The play-time search's evaluation cache: evaluations by position, kept from move to
//! move, so that a transposition (common in Ataxx: a clone and a jump reach the same
//! board) or a position of an earlier tree that was not kept costs no evaluator call.

use engine::State;
use engine::{fastmod, fastmod_magic};

use super::leaves::LeafRequest;
use crate::evaluator::Evaluation;

/// Entries of a new cache: about 25 MB with Ataxx policies.
pub const DEFAULT_CACHE_ENTRIES: usize = 1 << 16;

/// What the evaluation cache did for a request ([`EvalCache::look_up`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Lookup {
    /// It answered: the evaluation is in `out`.
    Answered,
    /// It held the position's value alone, now in `out`: the evaluator gives the policy
    /// alone for less.
    PolicyAlone,
    /// The evaluator evaluates the request whole.
    Miss,
}

/// A table of evaluations indexed by the position's Zobrist hash, one position a slot
/// (a newer evaluation replaces an older one in its slot). An entry is returned only for
/// the very position it holds (the whole position compared, the move clocks included),
/// so a hash collision costs an evaluation, never a wrong one.
pub struct EvalCache {
    slots: Vec<Option<(State, Evaluation)>>,
    /// [`fastmod`]'s constant for the number of slots.
    magic: u128,
    hits: u64,
    lookups: u64,
}

impl EvalCache {
    /// A cache of `entries` slots (0: a cache that holds nothing).
    pub fn new(entries: usize) -> EvalCache {
        EvalCache {
            slots: (0..entries).map(|_| None).collect(),
            magic: fastmod_magic(entries.max(1) as u64),
            hits: 0,
            lookups: 0,
        }
    }

    fn slot(&self, s: &State) -> Option<usize> {
        let n = self.slots.len() as u64;
        // The remainder by multiplications: a 64-bit division takes tens of cycles, and
        // a leaf's slot is computed up to four times (prefetch, lookups, store).
        (n > 0).then(|| fastmod(s.hash(), self.magic, n) as usize)
    }

    /// Asks the CPU to bring `s`'s slot into its caches, ahead of its lookup: a slot is
    /// a cache miss (the table is larger than the caches the tree leaves it).
    pub fn prefetch(&self, s: &State) {
        if let Some(i) = self.slot(s) {
            engine::prefetch(&self.slots[i]);
        }
    }

    /// Copies the held evaluation of `s` into `out` (in `out`'s memory) when there is one
    /// that answers the request: any for a value alone, else one whose policy covers
    /// `moves` moves. Whether it did.
    pub fn get_into(
        &mut self,
        s: &State,
        value_only: bool,
        moves: usize,
        out: &mut Evaluation,
    ) -> bool {
        match self.classify(s, value_only, moves, false) {
            Some((i, Lookup::Answered)) => {
                self.copy(i, true, value_only, out);
                true
            }
            _ => false,
        }
    }

    /// Copies slot `i`'s value into `out`, and its policy where `whole` (cleared for a
    /// value alone, `value_only`); `out`'s policy is left as it is otherwise.
    fn copy(&self, i: usize, whole: bool, value_only: bool, out: &mut Evaluation) {
        let Some((_, e)) = &self.slots[i] else {
            return;
        };
        if whole {
            if value_only {
                out.policy.clear();
            } else {
                out.policy.clone_from(&e.policy);
            }
        }
        (out.value, out.wdl, out.score) = (e.value, e.wdl, e.score);
    }

    /// What the cache holds for a request of position `s` (a value alone where
    /// `value_only`, else a policy over `moves` moves too), counted as a lookup (and a
    /// hit where it holds the position), with the slot: whatever evaluation of the
    /// position answers a value alone, a policy of `moves` moves answers a request for
    /// one, and a value alone spares that request the value where the evaluator gives a
    /// policy alone (`policy_alone`). `None` for a cache of no slots.
    fn classify(
        &mut self,
        s: &State,
        value_only: bool,
        moves: usize,
        policy_alone: bool,
    ) -> Option<(usize, Lookup)> {
        let i = self.slot(s)?;
        self.lookups += 1;
        let lookup = match &self.slots[i] {
            Some((held, e)) if held == s => {
                self.hits += 1;
                if value_only || e.policy.len() == moves {
                    Lookup::Answered
                } else if policy_alone {
                    Lookup::PolicyAlone
                } else {
                    Lookup::Miss
                }
            }
            _ => Lookup::Miss,
        };
        Some((i, lookup))
    }

    /// [`EvalCache::classify`] of request `r`.
    fn classify_request(&mut self, r: &LeafRequest, policy_alone: bool) -> Option<(usize, Lookup)> {
        self.classify(&r.position, r.value_only, r.moves.len(), policy_alone)
    }

    /// Looks request `r` up ([`EvalCache::classify`]), filling `out` with what answers
    /// it: the whole evaluation (its policy left out for a value alone), or the value
    /// alone (`PolicyAlone`, `out`'s policy left as it is).
    pub(super) fn look_up(
        &mut self,
        r: &LeafRequest,
        policy_alone: bool,
        out: &mut Evaluation,
    ) -> Lookup {
        let Some((i, lookup)) = self.classify_request(r, policy_alone) else {
            return Lookup::Miss;
        };
        if lookup != Lookup::Miss {
            self.copy(i, lookup == Lookup::Answered, r.value_only, out);
        }
        lookup
    }

    /// Looks request `r` (not a value alone) up as [`EvalCache::look_up`] does, and gives
    /// its slot's evaluation to be read, or, where the cache did not answer, to be made
    /// in place: the slot then holds `r`'s position, its value kept where `PolicyAlone`
    /// (the policy is left to make), nothing of another position's. Where a leaf is
    /// evaluated during the descent, the evaluation is neither copied out of the cache
    /// nor into it. `None` for a cache of no slots.
    pub(super) fn slot_for(
        &mut self,
        r: &LeafRequest,
        policy_alone: bool,
    ) -> Option<(Lookup, &mut Evaluation)> {
        debug_assert!(
            !r.value_only,
            "a value alone is looked up, not made in place"
        );
        let (i, lookup) = self.classify_request(r, policy_alone)?;
        let slot = &mut self.slots[i];
        let (held, e) = slot.get_or_insert_with(|| (r.position, Evaluation::default()));
        *held = r.position;
        Some((lookup, e))
    }

    /// Keeps the evaluation of `s`, in the memory of the one it replaces (a value alone,
    /// with an empty policy, does not replace a whole evaluation of the same position).
    pub fn put(&mut self, s: State, e: &Evaluation) {
        if let Some(i) = self.slot(&s) {
            match &mut self.slots[i] {
                Some((held, old))
                    if *held == s && e.policy.is_empty() && !old.policy.is_empty() => {}
                Some((held, old)) => {
                    *held = s;
                    // Field by field (a derived `clone_from` would allocate anew); the
                    // pattern names every field, so a new one cannot be forgotten.
                    let Evaluation {
                        policy,
                        value,
                        wdl,
                        score,
                    } = e;
                    old.policy.clone_from(policy);
                    (old.value, old.wdl, old.score) = (*value, *wdl, *score);
                }
                empty => *empty = Some((s, e.clone())),
            }
        }
    }

    /// Lookups and hits since the cache was made.
    pub fn counts(&self) -> (u64, u64) {
        (self.lookups, self.hits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_alone_does_not_replace_a_whole_evaluation() {
        let s = "ataxx".parse::<engine::Game>().unwrap().startpos();
        let whole = Evaluation {
            policy: vec![0.5, 0.5],
            value: 0.25,
            wdl: None,
            score: None,
        };
        let value = Evaluation {
            policy: vec![],
            value: 0.25,
            ..whole.clone()
        };
        let mut cache = EvalCache::new(16);
        let get = |cache: &mut EvalCache, s: &State, value_only: bool| {
            let mut out = Evaluation {
                policy: vec![9.0; 5],
                value: 9.0,
                wdl: Some([9.0; 3]),
                score: Some(9.0),
            };
            cache.get_into(s, value_only, 2, &mut out).then_some(out)
        };
        cache.put(s, &value);
        assert_eq!(get(&mut cache, &s, true), Some(value.clone()));
        assert_eq!(get(&mut cache, &s, false), None, "a value has no policy");
        cache.put(s, &whole);
        assert_eq!(
            get(&mut cache, &s, false),
            Some(whole.clone()),
            "a whole one replaces a value"
        );
        cache.put(s, &value);
        assert_eq!(
            get(&mut cache, &s, false),
            Some(whole),
            "a value keeps the whole one"
        );
        // Asked for its value alone, the cache gives the whole one's value, no policy.
        assert_eq!(get(&mut cache, &s, true), Some(value));
        let other = s.after(s.legal_moves()[0]);
        assert_eq!(get(&mut cache, &other, true), None);
        assert_eq!(cache.counts(), (6, 5));
    }

    /// Positions that share a slot replace each other, and neither is taken for the
    /// other: a one-slot cache holds every position in the same slot.
    #[test]
    fn a_slot_answers_only_for_the_position_it_holds() {
        let s = "ataxx".parse::<engine::Game>().unwrap().startpos();
        let other = s.after(s.legal_moves()[0]);
        let eval = |value: f32| Evaluation {
            policy: vec![],
            value,
            wdl: None,
            score: None,
        };
        let mut cache = EvalCache::new(1);
        let mut out = eval(9.0);
        cache.put(s, &eval(0.5));
        assert!(!cache.get_into(&other, true, 0, &mut out));
        assert!(cache.get_into(&s, true, 0, &mut out));
        assert_eq!(out.value, 0.5);
        cache.put(other, &eval(-0.5));
        assert!(!cache.get_into(&s, true, 0, &mut out), "replaced");
        assert!(cache.get_into(&other, true, 0, &mut out));
        assert_eq!(out.value, -0.5);
        assert_eq!(cache.counts(), (4, 2));
        // A cache of no slots holds nothing and counts no lookup.
        let mut none = EvalCache::new(0);
        none.put(s, &eval(0.5));
        assert!(!none.get_into(&s, true, 0, &mut out));
        assert_eq!(none.counts(), (0, 0));
    }

    /// A slot given for an evaluation made in place answers as a lookup would (whole,
    /// its value alone, nothing), holds the request's position from then on, keeps a
    /// value it held for it and nothing of another position's; what is made there is
    /// found by the next lookups.
    #[test]
    fn a_slot_for_an_evaluation_in_place_answers_as_a_lookup() {
        let s = "ataxx".parse::<engine::Game>().unwrap().startpos();
        let moves = s.legal_moves();
        let other = s.after(moves[0]);
        let request = |p: State| LeafRequest {
            state: p,
            moves: p.legal_moves(),
            position: p,
            value_only: false,
        };
        let eval = |policy: Vec<f32>, value: f32| Evaluation {
            policy,
            value,
            wdl: None,
            score: None,
        };
        let mut cache = EvalCache::new(1);
        cache.put(other, &eval(vec![], 0.75));
        // Another position held: a miss, and the slot is the request's, emptied of it.
        let (lookup, e) = cache.slot_for(&request(s), true).unwrap();
        assert_eq!(lookup, Lookup::Miss);
        *e = eval(vec![1.0 / moves.len() as f32; moves.len()], 0.25);
        let mut out = eval(vec![], 9.0);
        assert!(!cache.get_into(&other, true, 0, &mut out), "replaced");
        assert!(cache.get_into(&s, false, moves.len(), &mut out));
        assert_eq!(out, eval(vec![1.0 / moves.len() as f32; moves.len()], 0.25));
        // The whole evaluation held: answered, as it is.
        let (lookup, e) = cache.slot_for(&request(s), true).unwrap();
        assert_eq!((lookup, e.value), (Lookup::Answered, 0.25));
        // A value alone held: its policy is to be made where the evaluator gives one
        // alone (the value kept), the whole evaluation otherwise.
        let r = request(other);
        cache.put(other, &eval(vec![], -0.5));
        let (lookup, e) = cache.slot_for(&r, true).unwrap();
        assert_eq!((lookup, e.value), (Lookup::PolicyAlone, -0.5));
        assert_eq!(cache.slot_for(&r, false).unwrap().0, Lookup::Miss);
        // Counted as lookups; the position found in all but the first two.
        assert_eq!(cache.counts(), (6, 4));
        assert!(EvalCache::new(0).slot_for(&r, true).is_none());
    }
}
