//! Outflanking games: Othello, Reversi and Annexation on every board, each also misère.
//!
//! Cells live in a 256-bit set laid out in rows of stride 16 (cell index =
//! `rank * 16 + file`), so boards up to 15 files by 16 ranks fit and every direction is a
//! fixed shift (±1, ±15, ±16, ±17). Cells outside a board's shape (padding columns,
//! missing corners) are never "enemy" or "empty", so a line of flips stops there by
//! itself. Move generation is Kogge–Stone style flood fill over the eight directions.
//!
//! The module is split by concept: [`bits`] (cell sets and flood fills), [`boards`]
//! (the board shapes as data), [`position`] (rules, Zobrist keys, move generation and
//! make-move), [`text`] (the position text, documented there, and its errors) and [`perft`].

pub mod bits;
pub mod boards;
pub mod perft;
pub mod position;
pub mod text;

pub use bits::{Bits, DIRECTIONS, STRIDE};
pub use boards::{BoardId, FlankBoard};
pub use perft::flank_perft;
pub use position::{FlankMove, FlankPosition, FlankRules, Phase};
pub use text::{FlankMoveError, FlankTextError};

#[cfg(test)]
mod tests {
    use super::*;

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
}
