//! The play-time search's evaluation cache: evaluations by position, kept from move to
//! move, so that a transposition (common in Ataxx: a clone and a jump reach the same
//! board) or a position of an earlier tree that was not kept costs no evaluator call.

use engine::{Game, State};
use engine::{fastmod, fastmod_magic};

use super::leaves::LeafRequest;
use super::pages::written;
use crate::evaluator::Evaluation;

/// Entries of a new cache: 16 MiB of slots and, on Linux, a table of 64 MiB for their
/// policies (up to [`INLINE`] moves a slot; a longer one, rarer, has its own buffer).
/// A search of 600,000 simulations makes a fifth fewer evaluations than with 65,536 (the
/// transpositions of distant parts of its tree are found): 10% more simulations a second
/// with 1,024 hidden, 1% with 256 (docs/benchmarks.md).
pub const DEFAULT_CACHE_ENTRIES: usize = 1 << 18;

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

/// A slot's position and what a lookup needs of its evaluation: 16 bytes, four a cache
/// line. A value alone, most lookups, is read from here, and a fast net's evaluation is
/// held here and in the policy table alone: a leaf's lookup and store touch one line of
/// slots (and its policy's), where a slot's evaluation kept beside it, 56 bytes, took
/// one or two more lines a leaf, fetched ahead of every lookup and written at every
/// store (docs/benchmarks.md).
#[derive(Clone, Copy, Debug)]
struct Entry {
    /// The position's [`key`].
    key: u64,
    value: f32,
    /// The moves its policy covers (0 for a value alone).
    policy: u16,
    /// Whether the slot holds a position.
    held: bool,
    /// Whether the slot's [`Extras`] hold the evaluation's (else it has none).
    extras: bool,
}

const _: () = assert!(size_of::<Entry>() == 16);

/// What an evaluation holds besides its value and policy: the W/D/L and score that some
/// evaluators give (a CNN's heads); a fast net gives neither, and its slots never read or
/// write theirs.
#[derive(Clone, Copy, Debug, Default)]
struct Extras {
    wdl: Option<[f32; 3]>,
    score: Option<f32>,
}

/// The priors a slot holds in the cache's own table ([`EvalCache::priors`]): the policy
/// of a position of at most this many moves. An expansion reads its leaf's policy from
/// a slot it did not visit for long, a miss: in one table on huge pages, written when
/// the memory is made ready ([`EvalCache::prepare`]), the miss takes no page walk, where
/// a buffer of its own (on the heap's small pages) took one; and its address is the
/// slot's, prefetched without a load ([`EvalCache::prefetch`]). A cache not made ready
/// (a short search's: the browser's analysis) maps the table's pages as its search first
/// touches them, small ones, and writes nothing ahead. Only on Linux, which gives such
/// tables huge pages: elsewhere (the WebAssembly player among them) the table's 64 MiB
/// would buy no walks, and every policy has its own buffer as before.
const INLINE: usize = if cfg!(target_os = "linux") { 64 } else { 0 };

impl Entry {
    const NONE: Entry = Entry {
        key: 0,
        value: 0.0,
        policy: 0,
        held: false,
        extras: false,
    };

    /// Whether the entry holds the position of key `key`.
    fn holds(&self, key: u64) -> bool {
        self.held && self.key == key
    }
}

/// What a position is known by in the cache: its Zobrist hash, with what the hash leaves
/// out mixed in: the move clocks, an outflanking game's passes (an evaluator may read the
/// half-move clock, as the CNN's inputs do; and an evaluation of another symmetry of the
/// position is not the same bits, so that a search that found one in another's place
/// would not be the same search). Two positions with one key are one position but for a
/// chance of about 2⁻⁶⁴ a lookup, as lc0's cache keys positions; the game's rules are
/// not in it, and a cache holds one game's positions ([`EvalCache::keep_for`]). The slot
/// is the hash's (positions that differ in their clocks alone share one).
fn key(s: &State) -> u64 {
    let clocks = match s {
        State::Ataxx(p) => u64::from(p.halfmove_clock()) | u64::from(p.fullmove_number()) << 16,
        // Consecutive passes: the one field of a position its hash leaves out.
        State::Flank(p) => u64::from(p.passes()),
    };
    s.hash() ^ clocks.wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// A table of evaluations indexed by the position's key ([`key`]), one position a slot
/// (a newer evaluation replaces an older one in its slot).
pub struct EvalCache {
    entries: Vec<Entry>,
    /// Each slot's W/D/L and score, where its entry says it has them.
    extras: Vec<Extras>,
    /// Each slot's policy where it has more than `inline` moves (else in `priors`; the
    /// buffer here is then stale).
    long: Vec<Vec<f32>>,
    /// Each slot's policy of at most `inline` moves, `inline` floats a slot.
    priors: Vec<f32>,
    /// [`INLINE`] (another in tests).
    inline: usize,
    /// Whether `priors` was written ahead, on huge pages ([`EvalCache::prepare`]).
    table_written: bool,
    /// Where an evaluation is made before it is stored.
    made: Evaluation,
    /// The game of the positions held (none before the first).
    game: Option<Game>,
    /// [`fastmod`]'s constant for the number of slots.
    magic: u128,
    hits: u64,
    lookups: u64,
}

impl EvalCache {
    /// A cache of `entries` slots (0: a cache that holds nothing).
    pub fn new(entries: usize) -> EvalCache {
        EvalCache::with_inline(entries, INLINE)
    }

    /// A cache of `entries` slots that holds policies of up to `inline` moves in its
    /// table ([`INLINE`]).
    fn with_inline(entries: usize, inline: usize) -> EvalCache {
        EvalCache {
            entries: written(entries, || Entry::NONE),
            extras: written(entries, Extras::default),
            long: written(entries, Vec::new),
            // Zeroed pages, mapped when first touched: nothing written here.
            priors: vec![0.0; entries * inline],
            inline,
            table_written: false,
            made: Evaluation::default(),
            game: None,
            magic: fastmod_magic(entries.max(1) as u64),
            hits: 0,
            lookups: 0,
        }
    }

    /// Writes the policy table ahead of a search, on huge pages where the kernel gives
    /// them (`pages`), what it holds kept; once.
    pub(super) fn prepare(&mut self) {
        if self.table_written || self.priors.is_empty() {
            return;
        }
        let mut table = written(self.priors.len(), || 0.0);
        table.copy_from_slice(&self.priors);
        self.priors = table;
        self.table_written = true;
    }

    /// Whether the cache has no slots (and answers nothing).
    pub(super) fn holds_nothing(&self) -> bool {
        self.entries.is_empty()
    }

    /// Empties the cache if it holds positions of another game than `game` (its keys do
    /// not tell games apart): a search calls it with its root's game.
    pub fn keep_for(&mut self, game: Game) {
        if self.game.is_some_and(|g| g != game) {
            self.clear();
        }
        self.game = Some(game);
    }

    /// Empties the cache, its memory kept (the policies' buffers too).
    pub fn clear(&mut self) {
        self.entries.fill(Entry::NONE);
        self.game = None;
    }

    fn slot(&self, s: &State) -> Option<usize> {
        let n = self.entries.len() as u64;
        // The remainder by multiplications: a 64-bit division takes tens of cycles, and
        // a leaf's slot is computed up to four times (prefetch, lookups, store).
        (n > 0).then(|| fastmod(s.hash(), self.magic, n) as usize)
    }

    /// Asks the CPU to bring `s`'s entry into its caches, ahead of its lookup (and of the
    /// evaluation stored there where the lookup misses); and where `policy` (an
    /// expansion's), the first lines of the policy in the slot's table (or its buffer's
    /// header where there is no table), while the descent goes on (the request's moves
    /// generated). The slot may hold another position, or a policy of its own buffer:
    /// then a few lines are fetched for nothing.
    pub fn prefetch(&self, s: &State, policy: bool) {
        let Some(i) = self.slot(s) else {
            return;
        };
        engine::prefetch(&self.entries[i]);
        if !policy {
            return;
        }
        if self.inline == 0 {
            engine::prefetch(&self.long[i]);
            return;
        }
        // A line holds 16 priors: three lines cover the moves of most positions.
        for k in [0, 16, 32] {
            if let Some(p) = self.priors.get(i * self.inline + k) {
                engine::prefetch(p);
            }
        }
    }

    /// Slot `i`'s policy (its entry holds a position).
    fn policy(&self, i: usize) -> &[f32] {
        let n = self.entries[i].policy as usize;
        if n <= self.inline {
            &self.priors[i * self.inline..][..n]
        } else {
            &self.long[i]
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
        if whole {
            out.policy.clear();
            if !value_only {
                out.policy.extend_from_slice(self.policy(i));
            }
        }
        self.held_into(i, out);
    }

    /// Sets `out`'s value, W/D/L and score to slot `i`'s (no W/D/L or score where it
    /// holds neither), its policy left as it is.
    fn held_into(&self, i: usize, out: &mut Evaluation) {
        let entry = &self.entries[i];
        let x = if entry.extras {
            self.extras[i]
        } else {
            Extras::default()
        };
        (out.value, out.wdl, out.score) = (entry.value, x.wdl, x.score);
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
        let e = self.entries[i];
        let lookup = if e.holds(key(s)) {
            self.hits += 1;
            if value_only || e.policy as usize == moves {
                Lookup::Answered
            } else if policy_alone {
                Lookup::PolicyAlone
            } else {
                Lookup::Miss
            }
        } else {
            Lookup::Miss
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
    /// its slot's policy to be read, or, where the cache did not answer, has `make` make
    /// the evaluation (told what to make: the policy alone where `PolicyAlone`, the value
    /// being kept; the whole evaluation where `Miss`) and stores it, the slot then
    /// holding `r`'s position. Where a leaf is evaluated during the descent, the
    /// evaluation is not copied out of the cache. `None` for a cache of no slots.
    pub(super) fn answer_in_place(
        &mut self,
        r: &LeafRequest,
        policy_alone: bool,
        make: impl FnOnce(Lookup, &mut Evaluation),
    ) -> Option<&[f32]> {
        debug_assert!(
            !r.value_only,
            "a value alone is looked up with value_in_place"
        );
        let (i, lookup) = self.classify_request(r, policy_alone)?;
        if lookup != Lookup::Answered {
            self.make(i, &r.position, |e| make(lookup, e));
        }
        Some(self.policy(i))
    }

    /// The value of position `s` as [`EvalCache::look_up`] finds it for a value alone,
    /// or, where the cache did not answer, as `make` makes it, the slot then holding `s`
    /// (what [`EvalCache::put`] of that evaluation would leave there). A hit reads the
    /// slot's entry alone. `None` for a cache of no slots.
    pub(super) fn value_in_place(
        &mut self,
        s: &State,
        make: impl FnOnce(&mut Evaluation),
    ) -> Option<f32> {
        let (i, lookup) = self.classify(s, true, 0, false)?;
        if lookup != Lookup::Answered {
            self.make(i, s, make);
        }
        Some(self.entries[i].value)
    }

    /// Slot `i`'s evaluation made by `make` for position `s` and stored there. `make`
    /// is handed the slot's value, W/D/L and score (what a policy made alone keeps) and
    /// a buffer of the cache's for the rest.
    fn make(&mut self, i: usize, s: &State, make: impl FnOnce(&mut Evaluation)) {
        let mut e = std::mem::take(&mut self.made);
        self.held_into(i, &mut e);
        make(&mut e);
        self.store(i, s, &e);
        self.made = e;
    }

    /// Keeps evaluation `e` of position `s` in slot `i`, in the memory of the one it
    /// replaces: its policy in the slot's priors where it fits, else in its buffer.
    fn store(&mut self, i: usize, s: &State, e: &Evaluation) {
        // The pattern names every field, so that a new one cannot be forgotten.
        let Evaluation {
            policy,
            value,
            wdl,
            score,
        } = e;
        let extras = wdl.is_some() || score.is_some();
        if extras {
            self.extras[i] = Extras {
                wdl: *wdl,
                score: *score,
            };
        }
        let n = policy.len();
        if n <= self.inline {
            self.priors[i * self.inline..][..n].copy_from_slice(policy);
        } else {
            // In place: the buffer's memory is kept.
            self.long[i].clone_from(policy);
        }
        self.entries[i] = Entry {
            key: key(s),
            value: *value,
            policy: u16::try_from(n).expect("fewer than 65,536 legal moves"),
            held: true,
            extras,
        };
    }

    /// Keeps the evaluation of `s`, in the memory of the one it replaces (a value alone,
    /// with an empty policy, does not replace a whole evaluation of the same position).
    pub fn put(&mut self, s: State, e: &Evaluation) {
        let Some(i) = self.slot(&s) else {
            return;
        };
        let held = self.entries[i];
        if held.holds(key(&s)) && e.policy.is_empty() && held.policy > 0 {
            return;
        }
        self.store(i, &s, e);
    }

    /// Lookups and hits since the cache was made.
    pub fn counts(&self) -> (u64, u64) {
        (self.lookups, self.hits)
    }
}

#[cfg(test)]
mod tests;
