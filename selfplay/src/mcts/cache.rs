//! The play-time search's evaluation cache: evaluations by position, kept from move to
//! move, so that a transposition (common in Ataxx: a clone and a jump reach the same
//! board) or a position of an earlier tree that was not kept costs no evaluator call.

use engine::State;

use crate::evaluator::Evaluation;

/// Entries of a new cache: 2¹⁶, about 10 MB of slots and as much again of policies.
/// Larger tables find more transpositions but miss the processor's caches more: over a
/// game's first 40 plies searched to 50,000 simulations each (tree and cache kept from
/// move to move), 2¹⁸ entries search 8% fewer simulations a second than 2¹⁶, and 2²⁰
/// 10% fewer; only a long search of the start position, rich in transpositions, gains
/// from them (docs/benchmarks.md, "The evaluation cache's hashes apart").
pub const DEFAULT_CACHE_ENTRIES: usize = 1 << 16;

/// Slots a page: a cache allocates its slots a page at a time, when one is first filled,
/// so that a cache costs nothing until a search fills it (a player without tree reuse
/// makes one a move).
const PAGE: usize = 1 << 12;

type Slot = Option<(State, Evaluation)>;

/// A table of evaluations indexed by the position's Zobrist hash, one position a slot
/// (a newer evaluation replaces an older one in its slot). An entry is returned only for
/// the very position it holds (the whole position compared, the move clocks included),
/// so a hash collision costs an evaluation, never a wrong one.
///
/// The slots' hashes are kept apart from the slots, 8 bytes each: about half the lookups
/// miss, and a miss then reads a line of a table of 512 KB ([`DEFAULT_CACHE_ENTRIES`])
/// instead of a slot of some 150 bytes in one of 10 MB.
pub struct EvalCache {
    /// The hash of the position in the slot of the same index; 0 where the slot is
    /// empty (a position whose hash is 0 is then compared with an empty slot: a miss).
    /// Zeroed memory, which the system gives out untouched.
    keys: Vec<u64>,
    /// The slots by pages of [`PAGE`], each allocated when first filled.
    pages: Vec<Option<Box<[Slot]>>>,
    hits: u64,
    lookups: u64,
}

impl EvalCache {
    /// A cache of `entries` slots (0: a cache that holds nothing).
    pub fn new(entries: usize) -> EvalCache {
        EvalCache {
            keys: vec![0; entries],
            pages: (0..entries.div_ceil(PAGE)).map(|_| None).collect(),
            hits: 0,
            lookups: 0,
        }
    }

    /// The slot of a position of hash `h`: the hash scaled to the table's length (its
    /// high bits, which a Zobrist hash mixes as well as its low ones; a multiply where a
    /// remainder would divide).
    fn index(&self, h: u64) -> Option<usize> {
        let n = self.keys.len() as u64;
        (n > 0).then(|| ((u128::from(h) * u128::from(n)) >> 64) as usize)
    }

    fn slot(&self, i: usize) -> Option<&Slot> {
        Some(&self.pages[i / PAGE].as_ref()?[i % PAGE])
    }

    /// Slot `i`, its page allocated if it was not.
    fn slot_mut(&mut self, i: usize) -> &mut Slot {
        let page = self.pages[i / PAGE].get_or_insert_with(|| (0..PAGE).map(|_| None).collect());
        &mut page[i % PAGE]
    }

    /// The held evaluation of `s`, counted as a lookup (and a hit).
    fn lookup(&mut self, s: &State) -> Option<&Evaluation> {
        let h = s.hash();
        let i = self.index(h)?;
        self.lookups += 1;
        if self.keys[i] != h {
            return None;
        }
        if !matches!(self.slot(i)?, Some((held, _)) if held == s) {
            return None;
        }
        self.hits += 1;
        self.slot(i)?.as_ref().map(|(_, e)| e)
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
        let Some(e) = self.lookup(s) else {
            return false;
        };
        if value_only {
            out.policy.clear();
        } else if e.policy.len() == moves {
            out.policy.clone_from(&e.policy);
        } else {
            return false;
        }
        (out.value, out.wdl, out.score) = (e.value, e.wdl, e.score);
        true
    }

    /// Keeps the evaluation of `s`, in the memory of the one it replaces (a value alone,
    /// with an empty policy, does not replace a whole evaluation of the same position).
    pub fn put(&mut self, s: State, e: &Evaluation) {
        let h = s.hash();
        let Some(i) = self.index(h) else {
            return;
        };
        self.keys[i] = h;
        match self.slot_mut(i) {
            Some((held, old)) if *held == s && e.policy.is_empty() && !old.policy.is_empty() => {}
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

    /// A cache allocates the page of a slot when the slot is first filled, and no other:
    /// positions in other pages miss without one.
    #[test]
    fn a_page_is_allocated_when_first_filled() {
        let s = "ataxx".parse::<engine::Game>().unwrap().startpos();
        let mut cache = EvalCache::new(8 * PAGE);
        let pages = |c: &EvalCache| c.pages.iter().filter(|p| p.is_some()).count();
        assert_eq!(pages(&cache), 0);
        let eval = Evaluation {
            policy: vec![],
            value: 0.5,
            wdl: None,
            score: None,
        };
        let mut out = eval.clone();
        // Positions of other pages than the start's, found among the first moves' and
        // their replies'.
        let page_of = |c: &EvalCache, t: &State| c.index(t.hash()).unwrap() / PAGE;
        let others: Vec<State> = s
            .legal_moves()
            .into_iter()
            .flat_map(|m| {
                let t = s.after(m);
                t.legal_moves().into_iter().map(move |r| t.after(r))
            })
            .filter(|t| page_of(&cache, t) != page_of(&cache, &s))
            .collect();
        assert!(others.len() > 100);
        for t in &others {
            assert!(!cache.get_into(t, true, 0, &mut out));
        }
        cache.put(s, &eval);
        assert_eq!(pages(&cache), 1);
        assert!(cache.get_into(&s, true, 0, &mut out));
        for t in &others {
            assert!(!cache.get_into(t, true, 0, &mut out));
        }
        cache.put(others[0], &eval);
        assert_eq!(pages(&cache), 2);
    }
}
