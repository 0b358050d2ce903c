//! Outflanking games: Othello, Reversi and Annexation on every board, each also misère.
//!
//! Cells are numbered `rank * 16 + file` everywhere in the interface. Boards that fit
//! the 8×8 box (Othello, Reversi, Annexation 32) keep their positions on one `u64` with
//! the fastest known 8×8 routines, at the best instruction-set level of the CPU
//! ([`grid8`]); boards that fit the 10×10 box (Annexation 64 and 76) on 128 bits
//! ([`grid10`]); the others (Annexation 80 and 132) on a 256-bit set laid out in rows of
//! stride 16, so boards up to 15 files by 16 ranks fit and every direction is a fixed
//! shift (±1, ±15, ±16, ±17). Cells outside a board's shape (padding columns, missing corners) are never
//! "enemy" or "empty", so a line of flips stops there by itself. Move generation is
//! Kogge–Stone style flood fill over the eight directions in both layouts.
//!
//! The module is split by concept: [`bits`] (the 256-bit cell set and its flood fills), [`grid8`] (the 8×8 layout and its kernels), [`grid10`] (the 10×10 layout), [`boards`]
//! (the board shapes as data), [`position`] (rules, Zobrist keys, move generation and
//! make-move), [`text`] (the position text, documented there, and its errors) and [`perft`].

pub mod bits;
pub mod boards;
pub mod grid10;
pub mod grid8;
pub mod perft;
pub mod position;
mod rays;
pub mod text;

pub use bits::{Bits, DIRECTIONS, STRIDE};
pub use boards::{BoardId, FlankBoard};
pub use perft::{flank_perft, flank_perft_with};
pub use position::{FlankDelta, FlankMove, FlankPosition, FlankRules, FlankUndo, Phase};
pub use text::{FlankMoveError, FlankTextError};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Side;

    fn rules(board: BoardId) -> FlankRules {
        FlankRules {
            board,
            misere: false,
        }
    }

    #[test]
    fn board_sizes() {
        let want = [64, 64, 64, 132, 76, 76, 32, 80];
        for (id, n) in BoardId::ALL.into_iter().zip(want) {
            assert_eq!(id.board().num_cells(), n, "{id:?}");
            assert_eq!(id.board().centre.len(), 4);
        }
    }

    #[test]
    fn corners() {
        let names = |id: BoardId| {
            let b = id.board();
            b.corners
                .iter()
                .map(|i| b.square_name(i))
                .collect::<Vec<_>>()
        };
        assert_eq!(names(BoardId::Othello), ["a1", "h1", "a8", "h8"]);
        // The two end cells of each arm of the cross; inner angles have lines through them.
        assert_eq!(names(BoardId::Annexation64).len(), 8);
    }

    #[test]
    fn othello_perft() {
        let p = FlankPosition::startpos(rules(BoardId::Othello));
        let want = [1, 4, 12, 56, 244, 1396, 8200, 55092, 390216];
        for (d, &n) in want.iter().enumerate() {
            assert_eq!(flank_perft(&p, d as u32), n, "depth {d}");
        }
    }

    #[test]
    fn text_round_trips_at_start() {
        for id in BoardId::ALL {
            let p = FlankPosition::startpos(rules(id));
            assert_eq!(
                FlankPosition::from_text(&p.text(), rules(id)),
                Ok(p),
                "{}",
                p.text()
            );
        }
    }

    /// The position on the 256-bit layout, whatever its board.
    fn wide(p: &FlankPosition) -> FlankPosition {
        use position::{Core, Repr, UNLIMITED};
        let supply = |s| p.supply(s).unwrap_or(UNLIMITED);
        let mut core = Core {
            pieces: [p.pieces(Side::X), p.pieces(Side::O)],
            hash: 0,
            supply: [supply(Side::X), supply(Side::O)],
            side: p.side_to_move(),
            phase: p.phase(),
            passes: p.passes(),
        };
        core.hash = core.compute_hash();
        FlankPosition {
            repr: Repr::Wide(core),
            rules: p.rules(),
        }
    }

    #[test]
    fn the_8x8_and_10x10_layouts_agree_with_the_256_bit_one_over_random_games() {
        let mut rng = crate::Rng::new(17);
        let mut plies = 0;
        let small = BoardId::ALL
            .into_iter()
            .filter(|b| b.board().layout != boards::Layout::Wide);
        assert_eq!(small.clone().count(), 6);
        for board in small {
            for misere in [false, true] {
                for _ in 0..60 {
                    let mut p = FlankPosition::startpos(FlankRules { board, misere });
                    let mut w = wide(&p);
                    loop {
                        assert!(!matches!(p.repr, position::Repr::Wide(_)));
                        assert!(matches!(w.repr, position::Repr::Wide(_)));
                        let moves = p.legal_moves();
                        assert_eq!(moves, w.legal_moves(), "{}", p.text());
                        assert_eq!(p.hash(), w.hash());
                        assert_eq!(p.hash(), p.compute_hash());
                        assert_eq!(p.text(), w.text());
                        assert_eq!(p.count_moves(), w.count_moves());
                        assert_eq!(p.is_game_over(), w.is_game_over());
                        assert_eq!(p.result(), w.result());
                        assert_eq!(p.empty(), w.empty());
                        for side in Side::BOTH {
                            assert_eq!(p.pieces(side), w.pieces(side));
                            assert_eq!(p.placements(side), w.placements(side));
                            assert_eq!(p.mobility(side), w.mobility(side));
                            assert_eq!(p.corner_count(side), w.corner_count(side));
                        }
                        for i in p.board().cells.iter() {
                            assert_eq!(p.piece_at(i), w.piece_at(i));
                        }
                        if p.phase() == Phase::Play {
                            for &m in &moves {
                                if let Some(i) = m {
                                    assert_eq!(p.flips(i), w.flips(i));
                                    assert_eq!(p.flip_count(i), w.flip_count(i));
                                }
                            }
                        }
                        assert_eq!(flank_perft(&p, 2), flank_perft(&w, 2));
                        if moves.is_empty() {
                            break;
                        }
                        let mv = moves[rng.below(moves.len() as u64) as usize];
                        let (before_p, before_w) = (p, w);
                        let (up, uw) = (p.make(mv), w.make(mv));
                        assert_eq!(up.delta(), uw.delta());
                        assert_eq!(p.hash(), w.hash());
                        p.unmake(&up);
                        w.unmake(&uw);
                        assert_eq!((p, w), (before_p, before_w));
                        p.play(mv);
                        w.play(mv);
                        plies += 1;
                    }
                }
            }
        }
        assert!(plies > 15_000, "{plies}");
    }
}
