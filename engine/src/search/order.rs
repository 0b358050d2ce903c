//! The move order: the hash move first, before the other moves are generated (most nodes
//! that have one cut on it, and then no other move is generated), then the rest by the
//! margin they gain (flips twice, plus one for a new piece), killers, then history.

use crate::{Move, MoveKind, State};

/// The key of the hash move: above every other.
pub(super) const TT_MOVE_KEY: u32 = u32::MAX;

/// History values are clamped to ± this in a move's key (their bits stay below the
/// killer's, bit 20, and the gain's, from bit 21).
const HISTORY_SPAN: i32 = 1 << 18;

/// The moves of one node, in order, generated when first needed.
pub(super) struct Picker {
    /// The legal hash move, until it is handed out.
    hash: Option<Move>,
    /// The hash move, left out of the generated moves.
    hash_move: Option<Move>,
    generated: bool,
    /// The next generated move's rank.
    next: usize,
}

impl Picker {
    /// The order of a node whose hash move is `hash` (already checked to be legal).
    pub fn new(hash: Option<Move>) -> Picker {
        Picker {
            hash,
            hash_move: hash,
            generated: false,
            next: 0,
        }
    }

    /// The next move and its key (the gain in bits 21 and up, [`TT_MOVE_KEY`] for the
    /// hash move), or `None` when every move was handed out. `moves` and `ordered` are the
    /// node's buffers; `killers` and `history` (by [`history_index`]) rank the moves.
    #[inline(always)]
    pub fn next(
        &mut self,
        s: &State,
        moves: &mut Vec<Move>,
        ordered: &mut Vec<u64>,
        killers: [Option<Move>; 2],
        history: &[i32],
    ) -> Option<(Move, u32)> {
        if let Some(m) = self.hash.take() {
            return Some((m, TT_MOVE_KEY));
        }
        if !self.generated {
            self.generated = true;
            s.legal_moves_into(moves);
            ordered.clear();
            let side = s.side_to_move().index();
            for (i, &m) in moves.iter().enumerate() {
                if Some(m) == self.hash_move {
                    continue;
                }
                let gain = 2 * s.flips(m) + u32::from(matches!(m.kind(), MoveKind::Clone { .. }));
                let killer = u32::from(killers.contains(&Some(m)));
                let h = history[history_index(side, m)].clamp(-HISTORY_SPAN, HISTORY_SPAN);
                let key = (gain.min(1000) << 21) | (killer << 20) | (h + HISTORY_SPAN) as u32;
                ordered.push(u64::from(key) << 32 | u64::from(u32::MAX - i as u32));
            }
        }
        let i = self.next;
        if i >= ordered.len() {
            return None;
        }
        self.next += 1;
        // Keys are distinct, so taking the largest remaining one each time gives the order
        // of a full sort; most nodes cut after a move or two, so only the first few are
        // picked one by one and the rest sorted once.
        if i < 3 {
            let mut top = i;
            for j in i + 1..ordered.len() {
                if ordered[j] > ordered[top] {
                    top = j;
                }
            }
            ordered.swap(i, top);
        } else if i == 3 {
            ordered[3..].sort_unstable_by(|a, b| b.cmp(a));
        }
        let mv = moves[(u32::MAX - ordered[i] as u32) as usize];
        Some((mv, (ordered[i] >> 32) as u32))
    }
}

/// The pieces `mv` flips, read back from its key when it has one.
#[inline(always)]
pub(super) fn flips(s: &State, mv: Move, key: u32) -> u32 {
    if key == TT_MOVE_KEY {
        return s.flips(mv);
    }
    let flips = ((key >> 21) - u32::from(matches!(mv.kind(), MoveKind::Clone { .. }))) / 2;
    debug_assert_eq!(flips, s.flips(mv));
    flips
}

/// The history table's index of `mv` for `side`.
#[inline(always)]
pub(super) fn history_index(side: usize, mv: Move) -> usize {
    side << 16 | usize::from(mv.to_bits())
}
