//! The rules engine of flipzero: the Ataxx family of games (standard Ataxx, misère,
//! Assimilation, Thomas, Hexxagon) with the board geometry as data, and the outflanking
//! games (Othello, Reversi, Annexation; module [`flank`]), both behind one interface
//! ([`Game`], [`State`]).
//!
//! Ataxx-family boards are at most 64 cells, so a set of cells is one `u64`
//! ([`Bitboard`]). Each rule set precomputes per-cell clone, jump and flip masks
//! ([`Geometry`]); move generation and make-move are bit operations on those masks, or on
//! shifts derived from them on the rectangular boards. A [`Position`] is small and
//! `Copy`.
//!
//! Making a move reports what changed on the board, for evaluators that update
//! incrementally (NNUE-style accumulators): [`State::make`] returns a [`StateUndo`]
//! whose [`Change`] names the cell that got the mover's piece, the cell a jump emptied and
//! the flipped cells, and [`State::unmake`] takes the move back ([`Position::make`] and
//! [`flank::FlankPosition::make`] do the same per family).
//!
//! Move generation, perft and the search are compiled once per instruction-set level and
//! run at the best one the CPU has ([`Isa`]: AVX-512, AVX2 or portable).
//!
//! ```
//! use engine::{perft, Position, Rules};
//! let rules: Rules = "ataxx".parse().unwrap();
//! let pos = Position::from_fen("x5o/7/7/7/7/7/o5x x 0 1", rules).unwrap();
//! assert_eq!(perft(&pos, 2), 256);
//! ```

#![warn(missing_docs)]

pub mod bench;
mod bitboard;
pub mod boards;
pub mod clock;
mod fastmod;
mod fen;
pub mod flank;
mod game;
pub mod geometry;
mod isa;
mod movegen;
mod outcome;
mod perft;
mod position;
mod prefetch;
mod rng;
mod rules;
pub mod search;
pub mod uai;
mod zobrist;

pub use bitboard::{BitIter, Bitboard};
pub use fastmod::{fastmod, fastmod_magic};
pub use fen::{FenError, MoveError, shown};
pub use game::{
    CellSet, Change, GAME_NAMES, Game, GameMoveError, PositionError, State, StateUndo, Symmetry,
    UnknownGameName,
};
pub use geometry::{Geometry, Reach, Shape};
pub use isa::Isa;
pub use outcome::{EndReason, GameResult, Side};
pub use perft::{
    divide, perft, perft_make_all, perft_make_all_hashed, perft_make_all_with, perft_parallel,
    perft_with,
};
pub use position::{
    IllegalMove, MAX_MOVES, Move, MoveDelta, MoveDisplay, MoveKind, MoveList, Position, Undo,
};
pub use prefetch::prefetch;
pub use rng::{Rng, fnv1a, splitmix64};
pub use rules::{DEFAULT_HALFMOVE_LIMIT, Rules, UnknownGame, Variant};

/// A cell of a board, by index in its [`Geometry`] (names such as `g7` depend on the
/// board: see [`Geometry::square_name`]). Ataxx-family cells are below 64; outflanking
/// boards number their cells `rank * 16 + file`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Square(u8);

impl Square {
    /// The cell with index `i`.
    #[inline]
    pub const fn new(i: u8) -> Square {
        Square(i)
    }

    /// The index.
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}
