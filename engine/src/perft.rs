//! Perft: the number of leaf nodes of the legal-move tree to a fixed depth, the standard
//! check of a move generator. A forced pass counts as one move; a finished game has no
//! children. The last ply is bulk-counted ([`Position::count_moves`]), not played.

use std::marker::PhantomData;

use crate::isa::{Level, Task, with_level};
use crate::movegen::{Kernel, with_kernel};
use crate::{Isa, Move, MoveList, Position};

/// Leaf nodes at `depth` plies below `pos`.
///
/// ```
/// use engine::{perft, Position, Rules};
/// assert_eq!(perft(&Position::startpos(Rules::ATAXX), 3), 6460);
/// ```
pub fn perft(pos: &Position, depth: u32) -> u64 {
    perft_with(pos, depth, Isa::current())
}

/// [`perft`] run by the kernels of instruction-set level `isa` (the portable ones where
/// this CPU lacks it): every level counts the same.
pub fn perft_with(pos: &Position, depth: u32, isa: Isa) -> u64 {
    match depth {
        0 => 1,
        1 => pos.count_moves(),
        _ => with_kernel!(pos.rules.variant, K => with_level!(isa, L, l => {
            l.run(Perft::<K> { pos, depth, kernel: PhantomData })
        })),
    }
}

/// Perft of depth ≥ 2 in kernel `K`, as a [`Task`] of any level.
struct Perft<'a, K> {
    pos: &'a Position,
    depth: u32,
    kernel: PhantomData<K>,
}

impl<K: Kernel, L: Level> Task<L> for Perft<'_, K> {
    type Output = u64;

    #[inline(always)]
    fn run(self, level: L) -> u64 {
        let Perft { pos, depth, .. } = self;
        if pos.is_trivially_over() {
            return 0;
        }
        if depth == 2 {
            return leaf_parents::<K>(pos);
        }
        let mut total = 0;
        let mut any = false;
        pos.for_each_nonpass_k::<K>(|mv| {
            any = true;
            let mut child = *pos;
            child.play_k::<false, K>(mv);
            total += level.run(Perft::<K> {
                pos: &child,
                depth: depth - 1,
                kernel: PhantomData,
            });
        });
        if !any && pos.can_move_k::<K>(pos.side.other()) {
            let mut child = *pos;
            child.play_k::<false, K>(Move::PASS);
            total = level.run(Perft::<K> {
                pos: &child,
                depth: depth - 1,
                kernel: PhantomData,
            });
        }
        total
    }
}

/// The number of legal moves of the side with pieces `own` (bulk counting at the last
/// ply), for a position that is not over by its clock.
#[inline(always)]
fn count<K: Kernel>(own: u64, opp: u64, empty: u64) -> u64 {
    if own == 0 || empty == 0 {
        return 0;
    }
    let n = K::count(own, empty);
    if n > 0 {
        u64::from(n)
    } else {
        u64::from(K::can_move(opp, empty))
    }
}

/// Perft 2 of a position that is not trivially over: the moves of every child counted
/// from the pieces alone, without building the child position.
#[inline(always)]
fn leaf_parents<K: Kernel>(pos: &Position) -> u64 {
    let us = pos.side.index();
    let own = pos.pieces[us].0;
    let opp = pos.pieces[us ^ 1].0;
    let empty = pos.empty().0;
    let limit = pos.rules.halfmove_limit;
    // After a jump or a pass the clock is one higher; a clone resets it.
    let capped = limit > 0 && pos.halfmove.saturating_add(1) >= limit;
    let mut total = 0;
    let mut clones = K::clone_targets(own) & empty;
    let any = clones != 0;
    while clones != 0 {
        let to = clones.trailing_zeros() as usize;
        let bit = 1u64 << to;
        let flips = K::flip_mask(to) & opp;
        total += count::<K>(opp ^ flips, own | bit | flips, empty ^ bit);
        clones &= clones - 1;
    }
    let mut jumped = false;
    let mut from = own;
    while from != 0 {
        let s = from.trailing_zeros() as usize;
        let mut to = K::GEOMETRY.jump[s].0 & empty;
        jumped |= to != 0;
        if !capped {
            let own = own ^ (1u64 << s);
            while to != 0 {
                let t = to.trailing_zeros() as usize;
                let bit = 1u64 << t;
                let flips = K::flip_mask(t) & opp;
                total += count::<K>(opp ^ flips, own | bit | flips, empty ^ bit ^ (1u64 << s));
                to &= to - 1;
            }
        }
        from &= from - 1;
    }
    if !any && !jumped && !capped && K::can_move(opp, empty) {
        // The forced pass: the opponent moves next on the same board.
        total = count::<K>(opp, own, empty);
    }
    total
}

/// Perft split by the legal moves of `pos`: each move with the leaf count below it, in
/// move-generation order.
pub fn divide(pos: &Position, depth: u32) -> Vec<(Move, u64)> {
    if depth == 0 {
        return Vec::new();
    }
    pos.legal_moves()
        .into_iter()
        .map(|mv| (mv, perft(&pos.after(mv), depth - 1)))
        .collect()
}

/// [`perft`] with the root moves shared out over `threads` OS threads.
pub fn perft_parallel(pos: &Position, depth: u32, threads: usize) -> u64 {
    if depth <= 2 || threads <= 1 {
        return perft(pos, depth);
    }
    let moves = pos.legal_moves();
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut sum = 0;
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(&mv) = moves.get(i) else { return sum };
                        sum += perft(&pos.after(mv), depth - 1);
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("perft worker panicked"))
            .sum()
    })
}

/// [`perft`] without bulk counting: every move of every ply is generated into a move list
/// on the stack and played through make-move with the hash update. Same count as
/// [`perft`]; used to measure make-move throughput (see [`perft_make_all_hashed`]).
pub fn perft_make_all(pos: &Position, depth: u32) -> u64 {
    perft_make_all_hashed(pos, depth).0
}

/// [`perft_make_all`] that also returns a checksum of the leaves: the wrapping sum of
/// each leaf's digest (its hash, both piece sets, the clocks and the side to move), so
/// that no part of make-move can be skipped as unused. What the make-move benchmark runs
/// (`bench/engine-vs-reference.sh` runs the same loop over libataxx).
pub fn perft_make_all_hashed(pos: &Position, depth: u32) -> (u64, u64) {
    perft_make_all_with(pos, depth, Isa::current())
}

/// [`perft_make_all_hashed`] run by the kernels of level `isa` (see [`perft_with`]).
pub fn perft_make_all_with(pos: &Position, depth: u32, isa: Isa) -> (u64, u64) {
    if depth == 0 {
        return (1, digest(pos));
    }
    with_kernel!(pos.rules.variant, K => with_level!(isa, L, l => {
        l.run(MakeAll::<K> { pos, depth, kernel: PhantomData })
    }))
}

/// A leaf's digest for [`perft_make_all_hashed`].
#[inline(always)]
fn digest(p: &Position) -> u64 {
    p.hash
        ^ p.pieces[0].0.rotate_left(7)
        ^ p.pieces[1].0.rotate_left(29)
        ^ (u64::from(p.halfmove) | u64::from(p.fullmove) << 16 | (p.side as u64) << 32)
}

/// Depth ≥ 1: the moves of every node go into a list on the stack; at depth 1 each move
/// is made and its digest summed. Returns (leaves, checksum).
struct MakeAll<'a, K> {
    pos: &'a Position,
    depth: u32,
    kernel: PhantomData<K>,
}

impl<K: Kernel, L: Level> Task<L> for MakeAll<'_, K> {
    type Output = (u64, u64);

    #[inline(always)]
    fn run(self, level: L) -> (u64, u64) {
        let MakeAll { pos, depth, .. } = self;
        let mut moves = MoveList::new();
        pos.for_each_legal_k::<K>(|m| moves.push(m));
        let mut sum = 0u64;
        if depth == 1 {
            for &mv in &moves {
                let mut child = *pos;
                child.play_k::<true, K>(mv);
                sum = sum.wrapping_add(digest(&child));
            }
            return (moves.len() as u64, sum);
        }
        let mut n = 0;
        for &mv in &moves {
            let mut child = *pos;
            child.play_k::<true, K>(mv);
            let (c, h) = level.run(MakeAll::<K> {
                pos: &child,
                depth: depth - 1,
                kernel: PhantomData,
            });
            n += c;
            sum = sum.wrapping_add(h);
        }
        (n, sum)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Rules;

    #[test]
    fn every_way_of_counting_agrees() {
        let pos = Position::from_fen("x5o/7/2-1-2/7/2-1-2/7/o5x x 0 1", Rules::ATAXX).unwrap();
        for d in 0..4 {
            let want = perft(&pos, d);
            assert_eq!(perft_make_all(&pos, d), want);
            assert_eq!(perft_parallel(&pos, d, 3), want);
            assert_eq!(
                divide(&pos, d).iter().map(|&(_, n)| n).sum::<u64>(),
                if d == 0 { 0 } else { want }
            );
        }
    }
}
