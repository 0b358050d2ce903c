//! The memory a play-time search works in: the tree's buffers and the evaluation cache,
//! kept from game to game and made ready before a game's first search.
//!
//! A search that grows its buffers from nothing spends 8% of its time in the kernel
//! faulting their pages in: 47,000 faults, 144 ms of system time in a search of 620,000
//! simulations from Ataxx's start (1.7 s, `board256`, the Intel Xeon VM of
//! docs/benchmarks.md). The buffers a move's search leaves are kept for the next move,
//! so a game pays that once, on its first move, on the clock. Engines allocate their
//! tables at `isready` for this reason (Stockfish clears its hash there): a player made
//! ready ([`PlayMemory::prepare`], through `TreePlayer::prepare`) searches its first move
//! in buffers already touched, as it searches every later one.

use super::cache::{DEFAULT_CACHE_ENTRIES, EvalCache};
use super::pages::reserve_written;
use super::tree::{Edge, MAX_SPARE_BYTES, Spare, TailMove};
use engine::Move;

/// The default bound on a search's tree
/// ([`PlaySearch::set_tree_limit`](super::play::PlaySearch::set_tree_limit)), in bytes.
pub const DEFAULT_TREE_BYTES: usize = 2 << 30;

/// The largest bound `PlaySearch::set_tree_limit` takes, in bytes: the tree numbers its
/// moves with 32 bits, 2³² moves of 24 bytes (96 GiB) at most, and a tree of this many
/// bytes holds fewer.
pub const MAX_TREE_BYTES: u64 = 32 << 30;

/// The bytes a player made ready holds for its tree: what a tree keeps between moves
/// (larger buffers are given back), a tree of about two million simulations.
pub const PREPARED_TREE_BYTES: usize = MAX_SPARE_BYTES;

/// The share of a tree's bytes in its positions' tails where it keeps them (one leaf at
/// a time, `Search::set_one_leaf`): a search of 600,000 simulations from Ataxx's start
/// (`board256`) held 2,411,931 edges (58 MB) and 11,443,656 tail moves (92 MB).
const TAIL_SHARE: f64 = 0.6;

/// A search's buffers and evaluation cache, between trees; always empty (made so, or
/// emptied when kept), so that a search in it is the search in new memory.
pub struct PlayMemory {
    pub(super) tree: Spare,
    pub(super) cache: EvalCache,
}

impl Default for PlayMemory {
    fn default() -> Self {
        PlayMemory::new()
    }
}

impl PlayMemory {
    /// Empty buffers and an evaluation cache of [`DEFAULT_CACHE_ENTRIES`].
    pub fn new() -> PlayMemory {
        PlayMemory {
            tree: Spare::default(),
            cache: EvalCache::new(DEFAULT_CACHE_ENTRIES),
        }
    }

    /// Makes room for a tree of `bytes` and writes it, so that the kernel maps its pages
    /// now rather than during a search, huge ones where it gives them (`pages`): in
    /// edges alone, or where the tree keeps tails (`tails`), in edges and tails by their
    /// share in a search from the start. Buffers already as large are left as they are.
    /// The evaluation cache's policy table is written too (`EvalCache::prepare`).
    pub fn prepare(&mut self, bytes: usize, tails: bool) {
        self.cache.prepare();
        let tail_bytes = if tails {
            (bytes as f64 * TAIL_SHARE) as usize
        } else {
            0
        };
        reserve_written(
            &mut self.tree.edges,
            (bytes - tail_bytes) / size_of::<Edge>(),
            Edge::unvisited(Move::PASS, 0.0),
        );
        reserve_written(
            &mut self.tree.tails,
            tail_bytes / size_of::<TailMove>(),
            TailMove {
                prior: 0.0,
                mv: Move::PASS,
                rank: 0,
            },
        );
    }

    /// Bytes of the tree's buffers (their capacity).
    pub fn tree_bytes(&self) -> usize {
        self.tree.bytes()
    }

    /// The memory of a tree done with: its buffers emptied (given back when larger than
    /// [`PREPARED_TREE_BYTES`], as a tree's spare is), its cache emptied (a new tree's
    /// search does not depend on what earlier ones evaluated).
    pub(super) fn kept(mut tree: Spare, mut cache: EvalCache) -> Self {
        tree.edges.clear();
        tree.tails.clear();
        cache.clear();
        PlayMemory {
            tree: tree.within_bound(),
            cache,
        }
    }
}
