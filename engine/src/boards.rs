//! Starting boards: the engine community's tournament boards and random blocker boards.

use crate::{Bitboard, Position, Rng, Rules, Square};

/// The ten boards of the engine community's tournament opening set (7×7, `x` to move).
pub const TOURNAMENT_BOARDS: [&str; 10] = [
    "x5o/7/7/7/7/7/o5x x 0 1",
    "x5o/7/2-1-2/7/2-1-2/7/o5x x 0 1",
    "x5o/7/3-3/2-1-2/3-3/7/o5x x 0 1",
    "x2-2o/3-3/2---2/7/2---2/3-3/o2-2x x 0 1",
    "x2-2o/3-3/7/--3--/7/3-3/o2-2x x 0 1",
    "x1-1-1o/2-1-2/2-1-2/7/2-1-2/2-1-2/o1-1-1x x 0 1",
    "x5o/7/2-1-2/3-3/2-1-2/7/o5x x 0 1",
    "x5o/7/3-3/2---2/3-3/7/o5x x 0 1",
    "x5o/2-1-2/1-3-1/7/1-3-1/2-1-2/o5x x 0 1",
    "x5o/1-3-1/2-1-2/7/2-1-2/1-3-1/o5x x 0 1",
];

/// Which symmetry a random blocker board keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum BlockerSymmetry {
    /// Symmetric about the centre (180° rotation), the minimum for a fair board.
    #[default]
    Point,
    /// Symmetric about both axes (and so about the centre), as all ten tournament boards
    /// are. On the hex board, the same as `Point`.
    ///
    /// (The Hexxagon start is symmetric about the vertical axis, not the centre: on the
    /// hex board both choices mirror left–right.)
    Mirror,
}

/// Parameters of [`random_blocker_board`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BlockerParams {
    /// Fewest blocked cells.
    pub min: u32,
    /// Most blocked cells.
    pub max: u32,
    /// The symmetry the blockers keep.
    pub symmetry: BlockerSymmetry,
}

impl Default for BlockerParams {
    fn default() -> Self {
        BlockerParams {
            min: 2,
            max: 12,
            symmetry: BlockerSymmetry::Point,
        }
    }
}

/// The images of `sq` under the chosen symmetry group (including `sq`).
fn orbit(rules: Rules, sq: Square, symmetry: BlockerSymmetry) -> Bitboard {
    let g = rules.geometry();
    let mut images = Bitboard::EMPTY.with(sq);
    match g.shape {
        crate::Shape::Rect { width, height } => {
            let (f, r) = g.column_row(sq);
            let (w, h) = (width - 1, height - 1);
            let mut points = vec![(w - f, h - r)];
            if symmetry == BlockerSymmetry::Mirror {
                points.extend([(w - f, r), (f, h - r)]);
            }
            for (f, r) in points {
                images = images.with(g.cell(f, r).expect("reflection stays on the board"));
            }
        }
        // The hex start (and its blockers d4, e6, f4) is not symmetric about the centre
        // but about the vertical axis through e: mirror the column, keep the row.
        crate::Shape::Hex5 => {
            let (c, r) = g.column_row(sq);
            images = images.with(g.cell(8 - c, r).expect("mirror stays on the board"));
        }
    }
    images
}

/// Whether every playable cell can be reached from the pieces through clone and jump
/// steps over playable cells.
pub fn all_reachable(pos: &Position) -> bool {
    let g = pos.geometry();
    let playable = pos.playable();
    let mut seen = pos.pieces(crate::Side::X) | pos.pieces(crate::Side::O);
    let mut frontier = seen;
    while !frontier.is_empty() {
        let mut next = Bitboard::EMPTY;
        for s in frontier {
            next |= (g.clone[s.index()] | g.jump[s.index()]) & playable;
        }
        frontier = next & !seen;
        seen |= next;
    }
    (playable & !seen).is_empty()
}

/// A random board of the rule set's standard start with blockers added: symmetric as
/// `params.symmetry` asks, corners and starting cells free, every playable cell
/// reachable, and between `params.min` and `params.max` blocked cells beyond those of
/// the standard start (fewer only when the symmetry makes the count impossible).
///
/// ```
/// use engine::{boards, Rng, Rules};
/// let mut rng = Rng::new(1);
/// let p = boards::random_blocker_board(Rules::ATAXX, &boards::BlockerParams::default(), &mut rng);
/// assert!(boards::all_reachable(&p));
/// ```
pub fn random_blocker_board(rules: Rules, params: &BlockerParams, rng: &mut Rng) -> Position {
    let start = Position::startpos(rules);
    let g = rules.geometry();
    let mut fixed = start.pieces(crate::Side::X) | start.pieces(crate::Side::O) | start.blocked();
    if let crate::Shape::Rect { width, height } = g.shape {
        for (f, r) in [
            (0, 0),
            (width - 1, 0),
            (0, height - 1),
            (width - 1, height - 1),
        ] {
            fixed = fixed.with(g.cell(f, r).expect("corner exists"));
        }
    }
    let candidates: Vec<Square> = (g.cells & !fixed).iter().collect();
    let (lo, hi) = (params.min.min(params.max), params.max);
    for _attempt in 0..1000 {
        let target = lo + rng.below(u64::from(hi - lo) + 1) as u32;
        let mut blocked = Bitboard::EMPTY;
        let mut tries = 0;
        while blocked.len() < target && tries < 200 {
            tries += 1;
            let sq = candidates[rng.below(candidates.len() as u64) as usize];
            let add = orbit(rules, sq, params.symmetry) & !fixed;
            if (blocked | add).len() <= hi {
                blocked |= add;
            }
        }
        let pos = Position::from_parts(
            rules,
            start.pieces(crate::Side::X),
            start.pieces(crate::Side::O),
            start.blocked() | blocked,
            start.side_to_move(),
            0,
            1,
        )
        .expect("blockers avoid the pieces");
        if all_reachable(&pos) {
            return pos;
        }
    }
    start
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Variant;

    #[test]
    fn tournament_boards_parse_and_are_symmetric() {
        for fen in TOURNAMENT_BOARDS {
            let p = Position::from_fen(fen, Rules::ATAXX).unwrap();
            assert_eq!(p.fen(), fen);
            for s in p.blocked() {
                assert_eq!(
                    orbit(Rules::ATAXX, s, BlockerSymmetry::Mirror) & !p.blocked(),
                    Bitboard::EMPTY
                );
            }
            assert!(all_reachable(&p));
        }
    }

    #[test]
    fn random_boards_keep_their_promises() {
        let mut rng = Rng::new(42);
        for rules in [
            Rules::ATAXX,
            Rules::new(Variant::Thomas),
            Rules::new(Variant::Hexxagon),
        ] {
            for symmetry in [BlockerSymmetry::Point, BlockerSymmetry::Mirror] {
                let params = BlockerParams {
                    min: 4,
                    max: 10,
                    symmetry,
                };
                for _ in 0..200 {
                    let p = random_blocker_board(rules, &params, &mut rng);
                    let extra = p.blocked() & !Position::startpos(rules).blocked();
                    assert!(extra.len() <= 10, "{p:?}");
                    assert!(all_reachable(&p), "{p:?}");
                    for s in p.blocked() {
                        assert_eq!(orbit(rules, s, symmetry) & !p.blocked(), Bitboard::EMPTY);
                    }
                    if let crate::Shape::Rect { .. } = rules.geometry().shape {
                        for c in ["a1", "a7", "g1", "g7"] {
                            assert!(!p.blocked().has(rules.geometry().parse_square(c).unwrap()));
                        }
                    }
                }
            }
        }
    }
}
