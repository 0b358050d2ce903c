//! The transposition table: buckets of four 16-byte entries, one cache line each, the
//! whole 64-bit key kept (a false hit would need two positions with the same key).
//! A store replaces the same position's entry, or else the bucket's least useful one:
//! the shallowest, counting an entry from an earlier search as eight plies shallower.

use crate::{Move, fastmod, fastmod_magic};

/// What a stored score bounds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum Bound {
    /// No entry.
    #[default]
    None,
    /// The exact value.
    Exact,
    /// At least this (the node failed high).
    Lower,
    /// At most this (the node failed low).
    Upper,
}

/// The move bits of "no move" ([`Move::from_bits`] of it is no legal move: source and
/// target are both off every board).
const NO_MOVE: u16 = 0xFEFE;

/// The stored evaluation of an entry without one.
pub(super) const NO_EVAL: i32 = i16::MIN as i32;

/// One entry, as stored.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub(super) struct Entry {
    key: u64,
    mv: u16,
    score: i16,
    eval: i16,
    depth: u8,
    /// The search's generation (high six bits) and the bound (low two).
    gen_bound: u8,
}

impl Default for Entry {
    fn default() -> Entry {
        Entry {
            key: 0,
            mv: NO_MOVE,
            score: 0,
            eval: 0,
            depth: 0,
            gen_bound: 0,
        }
    }
}

const _: () = assert!(std::mem::size_of::<Entry>() == 16);

/// What a probe found.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Hit {
    pub mv: Option<Move>,
    /// The score, relative to the node (mate scores still as stored: see `super::from_tt`).
    pub score: i32,
    /// The static evaluation stored with it.
    pub eval: i32,
    pub depth: i32,
    pub bound: Bound,
}

#[derive(Clone, Copy, Default)]
#[repr(C, align(64))]
struct Bucket([Entry; 4]);

const _: () = assert!(std::mem::size_of::<Bucket>() == 64);

/// The table.
pub(super) struct Table {
    buckets: Vec<Bucket>,
    /// [`crate::fastmod`]'s constant for `buckets.len()`.
    magic: u128,
    /// The current search's generation (six bits).
    generation: u8,
}

impl Table {
    /// A table of about `mb` MiB (at least 256 buckets).
    pub fn new(mb: usize) -> Table {
        let n = (mb * 1024 * 1024 / std::mem::size_of::<Bucket>()).max(256);
        Table {
            buckets: vec![Bucket::default(); n],
            magic: fastmod_magic(n as u64),
            generation: 0,
        }
    }

    /// Forgets every entry.
    pub fn clear(&mut self) {
        self.buckets.fill(Bucket::default());
        self.generation = 0;
    }

    /// A new search begins: older entries give way first.
    pub fn new_search(&mut self) {
        self.generation = (self.generation + 1) & 63;
    }

    #[inline(always)]
    fn index(&self, key: u64) -> usize {
        let i = fastmod(key, self.magic, self.buckets.len() as u64) as usize;
        debug_assert_eq!(i as u64, key % self.buckets.len() as u64);
        i
    }

    /// Asks the CPU to bring the bucket of `key` into its caches.
    #[inline(always)]
    pub fn prefetch(&self, key: u64) {
        crate::prefetch(&self.buckets[self.index(key)]);
    }

    /// The entry of `key`, if the table holds one.
    #[inline(always)]
    pub fn probe(&self, key: u64) -> Option<Hit> {
        let bucket = &self.buckets[self.index(key)];
        let e = bucket
            .0
            .iter()
            .find(|e| e.key == key && e.bound() != Bound::None)?;
        Some(Hit {
            mv: (e.mv != NO_MOVE).then(|| Move::from_bits(e.mv)),
            score: e.score.into(),
            eval: e.eval.into(),
            depth: e.depth.into(),
            bound: e.bound(),
        })
    }

    /// Stores what a search of `key` to `depth` found (scores and evaluations fit in 16
    /// bits: they lie within ±`super::INF`). A store without a move keeps the move an
    /// entry of the same position had.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub fn store(
        &mut self,
        key: u64,
        mv: Option<Move>,
        score: i32,
        eval: i32,
        depth: i32,
        bound: Bound,
    ) {
        let generation = self.generation;
        let i = self.index(key);
        let bucket = &mut self.buckets[i].0;
        let slot = match bucket.iter().position(|e| e.key == key) {
            Some(s) => s,
            None => {
                // The least useful: the shallowest, an older search's entries counted as
                // eight plies shallower per generation of age.
                let worth = |e: &Entry| {
                    let age = (generation.wrapping_sub(e.gen_bound >> 2) & 63) as i32;
                    if e.bound() == Bound::None {
                        i32::MIN
                    } else {
                        i32::from(e.depth) - 8 * age
                    }
                };
                (0..4).min_by_key(|&s| worth(&bucket[s])).unwrap_or(0)
            }
        };
        let e = &mut bucket[slot];
        let keep_move = e.key == key && mv.is_none();
        *e = Entry {
            key,
            mv: match mv {
                Some(m) => m.to_bits(),
                None if keep_move => e.mv,
                None => NO_MOVE,
            },
            score: score.clamp(i16::MIN.into(), i16::MAX.into()) as i16,
            eval: eval.clamp(i16::MIN.into(), i16::MAX.into()) as i16,
            depth: depth.clamp(0, 255) as u8,
            gen_bound: generation << 2 | bound as u8,
        };
    }
}

impl Entry {
    #[inline(always)]
    fn bound(&self) -> Bound {
        match self.gen_bound & 3 {
            0 => Bound::None,
            1 => Bound::Exact,
            2 => Bound::Lower,
            _ => Bound::Upper,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stores_and_finds_and_replaces_the_least_useful() {
        let mut t = Table::new(0);
        let n = t.buckets.len() as u64;
        let mv = Move::from_bits(0x0102);
        // Five keys of one bucket: the fifth replaces the shallowest.
        for (k, depth) in [(1, 5), (2, 3), (3, 7), (4, 6)] {
            t.store(k * n + 7, Some(mv), 10 * k as i32, -3, depth, Bound::Lower);
        }
        t.store(5 * n + 7, None, -40, 2, 1, Bound::Upper);
        assert!(t.probe(2 * n + 7).is_none());
        let h = t.probe(5 * n + 7).unwrap();
        assert_eq!(
            (h.mv, h.score, h.eval, h.depth, h.bound),
            (None, -40, 2, 1, Bound::Upper)
        );
        let h = t.probe(3 * n + 7).unwrap();
        assert_eq!(
            (h.mv, h.score, h.depth, h.bound),
            (Some(mv), 30, 7, Bound::Lower)
        );
        // The same position keeps its move when a store has none.
        t.store(3 * n + 7, None, 5, 0, 2, Bound::Exact);
        assert_eq!(t.probe(3 * n + 7).unwrap().mv, Some(mv));
        // Two searches later, an old deep entry gives way to new shallow ones: three of
        // them take the old shallow ones' places, the fourth the old deepest's.
        t.store(3 * n + 7, None, 5, 0, 9, Bound::Exact);
        for _ in 0..2 {
            t.new_search();
        }
        for k in 6..9 {
            t.store(k * n + 7, None, 0, 0, 2, Bound::Exact);
        }
        assert!(
            t.probe(3 * n + 7).is_some(),
            "the deepest stays while others are older"
        );
        t.store(9 * n + 7, None, 0, 0, 2, Bound::Exact);
        assert!(t.probe(3 * n + 7).is_none(), "the deepest but oldest went");
        assert!((6..10).all(|k| t.probe(k * n + 7).is_some()));
        t.clear();
        assert!(t.probe(6 * n + 7).is_none());
    }
}
