//! Perft: the number of leaf nodes of the legal-move tree to a fixed depth, the standard
//! check of a move generator. A forced pass counts as one move; a finished game has no
//! children. The last ply is bulk-counted ([`Position::count_moves`]), not played.

use crate::{Move, Position};

/// Leaf nodes at `depth` plies below `pos`.
///
/// ```
/// use engine::{perft, Position, Rules};
/// assert_eq!(perft(&Position::startpos(Rules::ATAXX), 3), 6460);
/// ```
pub fn perft(pos: &Position, depth: u32) -> u64 {
    match depth {
        0 => 1,
        _ => perft_inner(pos, depth),
    }
}

fn perft_inner(pos: &Position, depth: u32) -> u64 {
    if depth == 1 {
        return pos.count_moves();
    }
    if pos.is_trivially_over() {
        return 0;
    }
    let mut total = 0;
    let mut any = false;
    pos.for_each_nonpass(|mv| {
        any = true;
        let mut child = *pos;
        child.play_inner::<false>(mv);
        total += perft_inner(&child, depth - 1);
    });
    if !any && pos.can_move(pos.side_to_move().other()) {
        let mut child = *pos;
        child.play_inner::<false>(Move::PASS);
        total = perft_inner(&child, depth - 1);
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

/// [`perft`] without bulk counting: every move of the last ply is generated as a list and
/// played through the public API (hash update included). Same count as [`perft`]; used to
/// measure make-move throughput.
pub fn perft_make_all(pos: &Position, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    pos.legal_moves()
        .into_iter()
        .map(|mv| perft_make_all(&pos.after(mv), depth - 1))
        .sum()
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
