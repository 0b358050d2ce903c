//! The play-time search's evaluation cache: evaluations by position, kept from move to
//! move, so that a transposition (common in Ataxx: a clone and a jump reach the same
//! board) or a position of an earlier tree that was not kept costs no evaluator call.

use engine::State;

use crate::evaluator::Evaluation;

/// Entries of a new cache: about 25 MB with Ataxx policies.
pub const DEFAULT_CACHE_ENTRIES: usize = 1 << 16;

/// A table of evaluations indexed by the position's Zobrist hash, one position a slot
/// (a newer evaluation replaces an older one in its slot). An entry is returned only for
/// the very position it holds (the whole position compared, the move clocks included),
/// so a hash collision costs an evaluation, never a wrong one.
pub struct EvalCache {
    slots: Vec<Option<(State, Evaluation)>>,
    hits: u64,
    lookups: u64,
}

impl EvalCache {
    /// A cache of `entries` slots (0: a cache that holds nothing).
    pub fn new(entries: usize) -> EvalCache {
        EvalCache {
            slots: (0..entries).map(|_| None).collect(),
            hits: 0,
            lookups: 0,
        }
    }

    fn slot(&self, s: &State) -> Option<usize> {
        let n = self.slots.len() as u64;
        (n > 0).then(|| (s.hash() % n) as usize)
    }

    /// The held evaluation of `s`, counted as a lookup (and a hit).
    fn lookup(&mut self, s: &State) -> Option<&Evaluation> {
        let i = self.slot(s)?;
        self.lookups += 1;
        match &self.slots[i] {
            Some((held, e)) if held == s => {
                self.hits += 1;
                Some(e)
            }
            _ => None,
        }
    }

    /// The evaluation of `s` (its policy over `s.legal_moves()` in that order), if held.
    pub fn get(&mut self, s: &State) -> Option<Evaluation> {
        self.lookup(s).cloned()
    }

    /// The value of `s`, if held: for a leaf whose value alone is wanted (lazy
    /// expansion's first visit), without copying a policy.
    pub fn value(&mut self, s: &State) -> Option<Evaluation> {
        self.lookup(s).map(|e| Evaluation {
            policy: Vec::new(),
            ..*e
        })
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
        cache.put(s, &value);
        assert_eq!(cache.get(&s), Some(value.clone()));
        cache.put(s, &whole);
        assert_eq!(
            cache.get(&s),
            Some(whole.clone()),
            "a whole one replaces a value"
        );
        cache.put(s, &value);
        assert_eq!(cache.get(&s), Some(whole), "a value keeps the whole one");
        // Asked for its value alone, the cache gives the whole one's value, no policy.
        assert_eq!(cache.value(&s), Some(value));
        let other = s.after(s.legal_moves()[0]);
        assert_eq!(cache.value(&other), None);
        assert_eq!(cache.counts(), (5, 4));
    }
}
