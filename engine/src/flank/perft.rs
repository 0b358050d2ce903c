//! Perft of the outflanking games.

use super::position::FlankPosition;

/// Perft for outflanking games (pass = one move, finished game = no children; bulk
/// counting at the last ply).
pub fn flank_perft(pos: &FlankPosition, depth: u32) -> u64 {
    if depth <= 1 {
        return if depth == 0 { 1 } else { pos.count_moves() };
    }
    let own = pos.placements(pos.side_to_move());
    if own.is_empty() {
        if pos.empty().is_empty() || pos.placements(pos.side_to_move().other()).is_empty() {
            return 0;
        }
        let mut c = *pos;
        c.play(None);
        return flank_perft(&c, depth - 1);
    }
    own.iter()
        .map(|i| {
            let mut c = *pos;
            c.play(Some(i));
            flank_perft(&c, depth - 1)
        })
        .sum()
}
