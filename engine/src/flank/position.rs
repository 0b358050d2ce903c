//! Positions of the outflanking games: rules, Zobrist keys, move generation, make-move
//! and the result.
//!
//! A position keeps its pieces in the layout of its board: boards that fit the 8×8 box
//! on one `u64` ([`grid8`]), those that fit the 10×10 box on 128 bits
//! ([`grid10`]), the others on the 256-bit set ([`Bits`]). The rules are
//! written once over every layout (the crate-internal `Cells` trait and `Core` state);
//! the public interface speaks the 256-bit numbering (`rank * 16 + file`) whatever the
//! layout, and the hash of a position is the same in every layout.

use std::ops::{BitAnd, BitOr, BitXor, Not};

use super::bits::{Bits, DIRECTIONS, fill};
use super::boards::{BoardId, FlankBoard, Layout};
use super::grid8::{self, Grid8};
use super::grid10::{self, Grid10};
use crate::isa::with_level;
use crate::rng::splitmix64;
use crate::{EndReason, GameResult, Isa, Side};

/// The opening phase of the game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    /// Free placements on the four central cells, no flips.
    Place,
    /// Outflanking play.
    Play,
}

/// Rules of an outflanking game: the board and whether fewest pieces wins.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FlankRules {
    /// The board (shape, setup, supplies).
    pub board: BoardId,
    /// Misère: fewest pieces wins.
    pub misere: bool,
}

/// Supply value meaning "no limit".
pub(crate) const UNLIMITED: u16 = u16::MAX;

const fn flank_keys() -> ([[u64; 256]; 2], u64, u64) {
    let mut k = [[0u64; 256]; 2];
    let mut st = 0xF1A2_C0DE_0BAD_5EEDu64;
    let mut i = 0;
    while i < 256 {
        let (s, a) = splitmix64(st);
        let (s, b) = splitmix64(s);
        k[0][i] = a;
        k[1][i] = b;
        st = s;
        i += 1;
    }
    let (s, side) = splitmix64(st);
    let (_, phase) = splitmix64(s);
    (k, side, phase)
}

/// Piece keys by side and cell (256-bit numbering), the side key, the phase key.
static KEYS: ([[u64; 256]; 2], u64, u64) = flank_keys();

/// `KEYS[x][i] ^ KEYS[o][i]`: the hash change of a piece that flips.
static FLIP_KEYS: [u64; 256] = {
    let mut k = [0u64; 256];
    let mut i = 0;
    while i < 256 {
        k[i] = KEYS.0[0][i] ^ KEYS.0[1][i];
        i += 1;
    }
    k
};

/// The piece keys of the 8×8 layout: the same values as [`KEYS`] for the same cell.
static KEYS8: [[u64; 64]; 2] = {
    let mut k = [[0u64; 64]; 2];
    let mut i = 0;
    while i < 64 {
        k[0][i] = KEYS.0[0][grid8::to_wide(i)];
        k[1][i] = KEYS.0[1][grid8::to_wide(i)];
        i += 1;
    }
    k
};

/// The piece keys of the 10×10 layout (the same values as [`KEYS`] for the same cell;
/// padding bits get keys of cells outside the box, never used).
static KEYS10: [[u64; 128]; 2] = {
    let mut k = [[0u64; 128]; 2];
    let mut i = 0;
    while i < 128 {
        let w = grid10::to_wide(i);
        if w < 256 {
            k[0][i] = KEYS.0[0][w];
            k[1][i] = KEYS.0[1][w];
        }
        i += 1;
    }
    k
};

/// [`FLIP_KEYS`] in the 10×10 layout.
static FLIP_KEYS10: [u64; 128] = {
    let mut k = [0u64; 128];
    let mut i = 0;
    while i < 128 {
        k[i] = KEYS10[0][i] ^ KEYS10[1][i];
        i += 1;
    }
    k
};

/// [`FLIP_KEYS`] in the 8×8 layout.
static FLIP_KEYS8: [u64; 64] = {
    let mut k = [0u64; 64];
    let mut i = 0;
    while i < 64 {
        k[i] = KEYS8[0][i] ^ KEYS8[1][i];
        i += 1;
    }
    k
};

#[inline]
fn supply_key(side: usize, supply: u16) -> u64 {
    splitmix64(0x5u64 << 60 ^ (side as u64) << 32 ^ supply as u64).1
}

/// A set of cells in one of the layouts: what move generation and make-move are written
/// once for. Indices are the layout's own; [`Cells::public`] gives the game's cell
/// index (`rank * 16 + file`).
pub(crate) trait Cells:
    Copy
    + Eq
    + std::fmt::Debug
    + BitAnd<Output = Self>
    + BitOr<Output = Self>
    + BitXor<Output = Self>
    + Not<Output = Self>
{
    /// The empty set.
    const NONE: Self;
    /// The set of cell `i` alone.
    fn single(i: usize) -> Self;
    /// Number of cells.
    fn count(self) -> u32;
    /// Whether the set is empty.
    fn none(self) -> bool;
    /// Whether cell `i` is in the set.
    fn has(self, i: usize) -> bool;
    /// Removes and returns the lowest cell.
    fn pop(&mut self) -> Option<usize>;
    /// The piece key of `side` on cell `i`.
    fn key(side: usize, i: usize) -> u64;
    /// XOR of the flip keys of the cells.
    fn flip_hash(self) -> u64;
    /// The set in the 256-bit layout.
    fn widen(self) -> Bits;
    /// The set of the 256-bit set's cells that the layout holds.
    fn from_wide(b: Bits) -> Self;
    /// The game's cell index of cell `i`.
    fn public(i: usize) -> usize;
    /// The layout's index of the game's cell `i` (a cell of the board).
    fn internal(i: usize) -> usize;
    /// The board's cells, centre and corners in the layout.
    fn shape(b: &FlankBoard) -> [Self; 3];
    /// Legal placements of `own` against `opp` on `empty` (play phase).
    fn moves<L: Grid8>(l: L, own: Self, opp: Self, empty: Self) -> Self;
    /// The pieces of `opp` that a placement of `own`'s side on `i` flips.
    fn flips<L: Grid8>(l: L, i: usize, own: Self, opp: Self) -> Self;
}

impl Cells for u64 {
    const NONE: u64 = 0;

    #[inline(always)]
    fn single(i: usize) -> u64 {
        1 << (i & 63)
    }

    #[inline(always)]
    fn count(self) -> u32 {
        self.count_ones()
    }

    #[inline(always)]
    fn none(self) -> bool {
        self == 0
    }

    #[inline(always)]
    fn has(self, i: usize) -> bool {
        i < 64 && self >> i & 1 != 0
    }

    #[inline(always)]
    fn pop(&mut self) -> Option<usize> {
        if *self == 0 {
            return None;
        }
        let i = self.trailing_zeros() as usize;
        *self &= *self - 1;
        Some(i)
    }

    #[inline(always)]
    fn key(side: usize, i: usize) -> u64 {
        KEYS8[side & 1][i & 63]
    }

    #[inline(always)]
    fn flip_hash(mut self) -> u64 {
        let mut h = 0;
        while self != 0 {
            h ^= FLIP_KEYS8[self.trailing_zeros() as usize];
            self &= self - 1;
        }
        h
    }

    #[inline(always)]
    fn widen(self) -> Bits {
        grid8::widen(self)
    }

    #[inline(always)]
    fn from_wide(b: Bits) -> u64 {
        grid8::narrow(b)
    }

    #[inline(always)]
    fn public(i: usize) -> usize {
        grid8::to_wide(i)
    }

    #[inline(always)]
    fn internal(i: usize) -> usize {
        grid8::to_narrow(i)
    }

    #[inline(always)]
    fn shape(b: &FlankBoard) -> [u64; 3] {
        b.narrow
    }

    #[inline(always)]
    fn moves<L: Grid8>(l: L, own: u64, opp: u64, empty: u64) -> u64 {
        l.moves(own, opp, empty)
    }

    #[inline(always)]
    fn flips<L: Grid8>(l: L, i: usize, own: u64, opp: u64) -> u64 {
        l.flips(i, own, opp)
    }
}

impl Cells for Grid10 {
    const NONE: Grid10 = Grid10::new(0);

    #[inline(always)]
    fn single(i: usize) -> Grid10 {
        Grid10::new(1 << (i & 127))
    }

    #[inline(always)]
    fn count(self) -> u32 {
        self.get().count_ones()
    }

    #[inline(always)]
    fn none(self) -> bool {
        self.get() == 0
    }

    #[inline(always)]
    fn has(self, i: usize) -> bool {
        i < 128 && self.get() >> i & 1 != 0
    }

    #[inline(always)]
    fn pop(&mut self) -> Option<usize> {
        let x = self.get();
        if x == 0 {
            return None;
        }
        *self = Grid10::new(x & (x - 1));
        Some(x.trailing_zeros() as usize)
    }

    #[inline(always)]
    fn key(side: usize, i: usize) -> u64 {
        KEYS10[side & 1][i & 127]
    }

    #[inline(always)]
    fn flip_hash(mut self) -> u64 {
        let mut h = 0;
        while let Some(i) = self.pop() {
            h ^= FLIP_KEYS10[i & 127];
        }
        h
    }

    #[inline(always)]
    fn widen(self) -> Bits {
        grid10::widen(self)
    }

    #[inline(always)]
    fn from_wide(b: Bits) -> Grid10 {
        grid10::from_wide(b)
    }

    #[inline(always)]
    fn public(i: usize) -> usize {
        grid10::to_wide(i)
    }

    #[inline(always)]
    fn internal(i: usize) -> usize {
        grid10::to_mid(i)
    }

    #[inline(always)]
    fn shape(b: &FlankBoard) -> [Grid10; 3] {
        b.mid
    }

    #[inline(always)]
    fn moves<L: Grid8>(_: L, own: Grid10, opp: Grid10, empty: Grid10) -> Grid10 {
        grid10::moves(own, opp, empty)
    }

    #[inline(always)]
    fn flips<L: Grid8>(_: L, i: usize, own: Grid10, opp: Grid10) -> Grid10 {
        grid10::flips(i, own, opp)
    }
}

impl Cells for Bits {
    const NONE: Bits = Bits::EMPTY;

    #[inline(always)]
    fn single(i: usize) -> Bits {
        Bits::single(i & 255)
    }

    #[inline(always)]
    fn count(self) -> u32 {
        self.len()
    }

    #[inline(always)]
    fn none(self) -> bool {
        self.is_empty()
    }

    #[inline(always)]
    fn has(self, i: usize) -> bool {
        Bits::has(self, i)
    }

    #[inline(always)]
    fn pop(&mut self) -> Option<usize> {
        for w in 0..4 {
            let x = self.0[w];
            if x != 0 {
                self.0[w] = x & (x - 1);
                return Some(w * 64 + x.trailing_zeros() as usize);
            }
        }
        None
    }

    #[inline(always)]
    fn key(side: usize, i: usize) -> u64 {
        KEYS.0[side & 1][i & 255]
    }

    #[inline(always)]
    fn flip_hash(mut self) -> u64 {
        let mut h = 0;
        while let Some(i) = self.pop() {
            h ^= FLIP_KEYS[i & 255];
        }
        h
    }

    #[inline(always)]
    fn widen(self) -> Bits {
        self
    }

    #[inline(always)]
    fn from_wide(b: Bits) -> Bits {
        b
    }

    #[inline(always)]
    fn public(i: usize) -> usize {
        i
    }

    #[inline(always)]
    fn internal(i: usize) -> usize {
        i
    }

    #[inline(always)]
    fn shape(b: &FlankBoard) -> [Bits; 3] {
        [b.cells, b.centre, b.corners]
    }

    #[inline(always)]
    fn moves<L: Grid8>(_: L, own: Bits, opp: Bits, empty: Bits) -> Bits {
        fill::<1>(own, opp, empty)
            | fill::<-1>(own, opp, empty)
            | fill::<16>(own, opp, empty)
            | fill::<-16>(own, opp, empty)
            | fill::<17>(own, opp, empty)
            | fill::<15>(own, opp, empty)
            | fill::<-15>(own, opp, empty)
            | fill::<-17>(own, opp, empty)
    }

    #[inline(always)]
    fn flips<L: Grid8>(_: L, i: usize, own: Bits, opp: Bits) -> Bits {
        let mut flips = Bits::EMPTY;
        for d in DIRECTIONS {
            let mut run = Bits::EMPTY;
            let mut x = Bits::single(i & 255).step(d);
            while !(x & opp).is_empty() {
                run |= x;
                x = x.step(d);
            }
            if !(x & own).is_empty() {
                flips |= run;
            }
        }
        flips
    }
}

/// The state of a position in layout `C` (everything but the rules).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Core<C> {
    pub(crate) pieces: [C; 2],
    pub(crate) hash: u64,
    pub(crate) supply: [u16; 2],
    pub(crate) side: Side,
    pub(crate) phase: Phase,
    pub(crate) passes: u8,
}

impl<C: Cells> Core<C> {
    /// The empty cells of a board whose cells are `cells`.
    #[inline(always)]
    pub(crate) fn empty(&self, cells: C) -> C {
        cells & !(self.pieces[0] | self.pieces[1])
    }

    /// The cells where `side` may place now (the pass aside).
    #[inline(always)]
    pub(crate) fn placements<L: Grid8>(&self, l: L, shape: &[C; 3], side: Side) -> C {
        if self.supply[side.index()] == 0 {
            return C::NONE;
        }
        let empty = self.empty(shape[0]);
        if self.phase == Phase::Place {
            return shape[1] & empty;
        }
        let s = side.index();
        C::moves(l, self.pieces[s], self.pieces[s ^ 1], empty)
    }

    /// Whether the game is over: the board is full, or neither side can place.
    #[inline(always)]
    pub(crate) fn is_game_over<L: Grid8>(&self, l: L, shape: &[C; 3]) -> bool {
        self.empty(shape[0]).none()
            || (self.placements(l, shape, self.side).none()
                && self.placements(l, shape, self.side.other()).none())
    }

    /// The number of legal moves (a forced pass is one).
    #[inline(always)]
    pub(crate) fn count_moves<L: Grid8>(&self, l: L, shape: &[C; 3]) -> u64 {
        let n = self.placements(l, shape, self.side).count();
        if n > 0 {
            u64::from(n)
        } else {
            u64::from(
                !self.empty(shape[0]).none()
                    && !self.placements(l, shape, self.side.other()).none(),
            )
        }
    }

    /// The pieces a placement on `i` flips (none in the placement phase).
    #[inline(always)]
    pub(crate) fn flips<L: Grid8>(&self, l: L, i: usize) -> C {
        if self.phase == Phase::Place {
            return C::NONE;
        }
        let s = self.side.index();
        C::flips(l, i, self.pieces[s], self.pieces[s ^ 1])
    }

    /// Make-move: a placement on cell `i` of the layout, or the pass (`None`). Returns
    /// the flipped pieces. `HASH = false` skips the hash update (perft).
    #[inline(always)]
    pub(crate) fn play<const HASH: bool, L: Grid8>(
        &mut self,
        l: L,
        shape: &[C; 3],
        mv: Option<usize>,
    ) -> C {
        let us = self.side.index();
        let mut flips = C::NONE;
        match mv {
            None => self.passes = self.passes.saturating_add(1),
            Some(i) => {
                self.passes = 0;
                flips = self.flips(l, i);
                self.pieces[us] = self.pieces[us] | C::single(i) | flips;
                self.pieces[us ^ 1] = self.pieces[us ^ 1] ^ flips;
                if HASH {
                    self.hash ^= C::key(us, i) ^ flips.flip_hash();
                }
                let s = self.supply[us];
                if s != UNLIMITED {
                    if HASH {
                        self.hash ^= supply_key(us, s) ^ supply_key(us, s - 1);
                    }
                    self.supply[us] = s - 1;
                }
                if self.phase == Phase::Place && (shape[1] & self.empty(shape[0])).none() {
                    self.phase = Phase::Play;
                    if HASH {
                        self.hash ^= KEYS.2;
                    }
                }
            }
        }
        self.side = self.side.other();
        if HASH {
            self.hash ^= KEYS.1;
        }
        flips
    }

    /// The hash from scratch: pieces, side, phase and supplies.
    pub(crate) fn compute_hash(&self) -> u64 {
        let mut h = 0;
        for s in 0..2 {
            let mut p = self.pieces[s];
            while let Some(i) = p.pop() {
                h ^= C::key(s, i);
            }
            h ^= supply_key(s, self.supply[s]);
        }
        if self.side == Side::O {
            h ^= KEYS.1;
        }
        if self.phase == Phase::Place {
            h ^= KEYS.2;
        }
        h
    }
}

/// A position's state in its board's layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Repr {
    /// Boards in the 8×8 box.
    Narrow(Core<u64>),
    /// Boards in the 10×10 box.
    Mid(Core<Grid10>),
    /// Every other board.
    Wide(Core<Bits>),
}

/// Runs `$body` with `$c` bound to the position's [`Core`] (by reference, or by mutable
/// reference with `mut`) and `$C` its layout type.
macro_rules! with_core {
    ($pos:expr, $C:ident, $c:ident => $body:expr) => {
        match &$pos.repr {
            Repr::Narrow($c) => {
                #[allow(dead_code)]
                type $C = u64;
                $body
            }
            Repr::Mid($c) => {
                #[allow(dead_code)]
                type $C = $crate::flank::grid10::Grid10;
                $body
            }
            Repr::Wide($c) => {
                #[allow(dead_code)]
                type $C = $crate::flank::Bits;
                $body
            }
        }
    };
    ($pos:expr, $C:ident, mut $c:ident => $body:expr) => {
        match &mut $pos.repr {
            Repr::Narrow($c) => {
                #[allow(dead_code)]
                type $C = u64;
                $body
            }
            Repr::Mid($c) => {
                #[allow(dead_code)]
                type $C = $crate::flank::grid10::Grid10;
                $body
            }
            Repr::Wide($c) => {
                #[allow(dead_code)]
                type $C = $crate::flank::Bits;
                $body
            }
        }
    };
}
pub(crate) use with_core;

/// A position of an outflanking game.
///
/// ```
/// use engine::flank::{BoardId, FlankPosition, FlankRules};
/// let rules = FlankRules { board: BoardId::Othello, misere: false };
/// let p = FlankPosition::startpos(rules);
/// assert_eq!(p.legal_moves().len(), 4);
/// assert_eq!(p.text(), "othello 8/8/8/3ox3/3xo3/8/8/8 x play - - 0");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FlankPosition {
    pub(crate) repr: Repr,
    pub(crate) rules: FlankRules,
}

/// A move of an outflanking game: a cell index, or the pass.
pub type FlankMove = Option<usize>;

/// What a move changed on the board (see [`crate::MoveDelta`] for the Ataxx family): a
/// placement puts a piece of `mover` on `placed` and turns every cell of `flipped` from
/// the opponent's to the mover's; a pass changes nothing. Cells in the game's numbering.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FlankDelta {
    /// The side that moved.
    pub mover: Side,
    /// The cell placed on; `None` for the pass.
    pub placed: Option<usize>,
    /// The pieces that flipped to the mover.
    pub flipped: Bits,
}

/// What [`FlankPosition::unmake`] needs to take a move back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FlankUndo {
    before: Repr,
    delta: FlankDelta,
}

impl FlankUndo {
    /// What the move changed on the board.
    #[inline]
    pub fn delta(&self) -> &FlankDelta {
        &self.delta
    }
}

impl FlankPosition {
    /// The standard start of the board.
    pub fn startpos(rules: FlankRules) -> FlankPosition {
        let b = rules.board.board();
        let s = b.supply.unwrap_or(UNLIMITED);
        let phase = if b.placement_phase {
            Phase::Place
        } else {
            Phase::Play
        };
        Self::from_parts(rules, b.setup, Side::X, phase, [s, s], 0)
    }

    /// A position from its parts (pieces in the game's numbering), with its hash.
    pub(crate) fn from_parts(
        rules: FlankRules,
        pieces: [Bits; 2],
        side: Side,
        phase: Phase,
        supply: [u16; 2],
        passes: u8,
    ) -> FlankPosition {
        fn core<C: Cells>(
            pieces: [Bits; 2],
            side: Side,
            phase: Phase,
            supply: [u16; 2],
            passes: u8,
        ) -> Core<C> {
            let mut c = Core {
                pieces: [C::from_wide(pieces[0]), C::from_wide(pieces[1])],
                hash: 0,
                supply,
                side,
                phase,
                passes,
            };
            c.hash = c.compute_hash();
            c
        }
        let repr = match rules.board.board().layout {
            Layout::Grid8 => Repr::Narrow(core(pieces, side, phase, supply, passes)),
            Layout::Grid10 => Repr::Mid(core(pieces, side, phase, supply, passes)),
            Layout::Wide => Repr::Wide(core(pieces, side, phase, supply, passes)),
        };
        FlankPosition { repr, rules }
    }

    /// The rules.
    #[inline]
    pub fn rules(&self) -> FlankRules {
        self.rules
    }

    /// The board data.
    #[inline]
    pub fn board(&self) -> &'static FlankBoard {
        self.rules.board.board()
    }

    /// Pieces of `side`.
    #[inline]
    pub fn pieces(&self, side: Side) -> Bits {
        with_core!(self, C, c => c.pieces[side.index()].widen())
    }

    /// Number of pieces of `side`.
    #[inline]
    pub fn count(&self, side: Side) -> u32 {
        with_core!(self, C, c => c.pieces[side.index()].count())
    }

    /// Number of pieces of `side` on the board's corners ([`FlankBoard::corners`]).
    #[inline]
    pub fn corner_count(&self, side: Side) -> u32 {
        let b = self.board();
        with_core!(self, C, c => (c.pieces[side.index()] & C::shape(b)[2]).count())
    }

    /// What stands on cell `i`: `Some(side)`, or `None` (empty, or no cell).
    #[inline]
    pub fn piece_at(&self, i: usize) -> Option<Side> {
        let b = self.board();
        if !b.cells.has(i) {
            return None;
        }
        with_core!(self, C, c => {
            let j = C::internal(i);
            Side::BOTH.into_iter().find(|s| c.pieces[s.index()].has(j))
        })
    }

    #[inline(always)]
    fn core_side(&self) -> Side {
        with_core!(self, C, c => c.side)
    }

    /// Side to move.
    #[inline]
    pub fn side_to_move(&self) -> Side {
        self.core_side()
    }

    /// The phase.
    #[inline]
    pub fn phase(&self) -> Phase {
        with_core!(self, C, c => c.phase)
    }

    /// Pieces `side` may still place (`None`: no limit).
    #[inline]
    pub fn supply(&self, side: Side) -> Option<u16> {
        let s = with_core!(self, C, c => c.supply[side.index()]);
        (s != UNLIMITED).then_some(s)
    }

    /// Consecutive passes just played.
    #[inline]
    pub fn passes(&self) -> u8 {
        with_core!(self, C, c => c.passes)
    }

    /// Empty cells.
    #[inline]
    pub fn empty(&self) -> Bits {
        let b = self.board();
        with_core!(self, C, c => c.empty(C::shape(b)[0]).widen())
    }

    /// The Zobrist hash (incremental; equals [`FlankPosition::compute_hash`]).
    #[inline]
    pub fn hash(&self) -> u64 {
        with_core!(self, C, c => c.hash)
    }

    /// The hash from scratch: pieces, side, phase and supplies (the same in every layout).
    pub fn compute_hash(&self) -> u64 {
        with_core!(self, C, c => c.compute_hash())
    }

    /// The cells where `side` may place now (the pass aside).
    #[inline]
    pub fn placements(&self, side: Side) -> Bits {
        let b = self.board();
        with_core!(self, C, c => with_level!(Isa::current(), L, l => {
            c.placements(l, &C::shape(b), side).widen()
        }))
    }

    /// The number of cells where `side` may place now (the pass aside).
    #[inline]
    pub fn mobility(&self, side: Side) -> u32 {
        let b = self.board();
        with_core!(self, C, c => with_level!(Isa::current(), L, l => {
            c.placements(l, &C::shape(b), side).count()
        }))
    }

    /// Whether the game is over: the board is full, or neither side can place.
    #[inline]
    pub fn is_game_over(&self) -> bool {
        let b = self.board();
        with_core!(self, C, c => with_level!(Isa::current(), L, l => {
            c.is_game_over(l, &C::shape(b))
        }))
    }

    /// Calls `f` for every legal move, in the order of [`FlankPosition::legal_moves`];
    /// no list is built.
    #[inline]
    pub fn for_each_legal(&self, mut f: impl FnMut(FlankMove)) {
        let b = self.board();
        with_core!(self, C, c => with_level!(Isa::current(), L, l => {
            let shape = C::shape(b);
            let mut own = c.placements(l, &shape, c.side);
            if !own.none() {
                while let Some(i) = own.pop() {
                    f(Some(C::public(i)));
                }
            } else if !c.empty(shape[0]).none()
                && !c.placements(l, &shape, c.side.other()).none()
            {
                f(None);
            }
        }))
    }

    /// Legal moves: empty when the game is over; `[None]` (the pass) when the side to
    /// move cannot place; otherwise the placement cells in increasing index order.
    pub fn legal_moves(&self) -> Vec<FlankMove> {
        let mut v = Vec::new();
        self.for_each_legal(|m| v.push(m));
        v
    }

    /// Number of legal moves (bulk counting; equals `legal_moves().len()`).
    #[inline]
    pub fn count_moves(&self) -> u64 {
        let b = self.board();
        with_core!(self, C, c => with_level!(Isa::current(), L, l => {
            c.count_moves(l, &C::shape(b))
        }))
    }

    /// Whether `mv` is legal.
    pub fn is_legal(&self, mv: FlankMove) -> bool {
        match mv {
            Some(i) => self.board().cells.has(i) && self.placements(self.side_to_move()).has(i),
            None => self.count_moves() == 1 && self.mobility(self.side_to_move()) == 0,
        }
    }

    /// Plays `mv` (which must be legal).
    #[inline]
    pub fn play(&mut self, mv: FlankMove) {
        debug_assert!(self.is_legal(mv), "illegal {mv:?} in {}", self.text());
        self.play_flipped(mv);
    }

    /// Plays `mv` (which must be legal); returns the flipped pieces in the layout.
    #[inline(always)]
    fn play_flipped(&mut self, mv: FlankMove) -> Bits {
        let b = self.board();
        with_core!(self, C, mut c => with_level!(Isa::current(), L, l => {
            c.play::<true, L>(l, &C::shape(b), mv.map(C::internal)).widen()
        }))
    }

    /// Plays `mv` (which must be legal, checked only in debug builds) and returns what
    /// [`FlankPosition::unmake`] needs to take it back, with what changed on the board.
    ///
    /// ```
    /// use engine::flank::{BoardId, FlankPosition, FlankRules};
    /// let mut p = FlankPosition::startpos(FlankRules { board: BoardId::Othello, misere: false });
    /// let before = p;
    /// let undo = p.make(p.parse_move("d6").unwrap());
    /// assert_eq!(undo.delta().flipped.len(), 1); // d5
    /// p.unmake(&undo);
    /// assert_eq!(p, before);
    /// ```
    #[inline]
    pub fn make(&mut self, mv: FlankMove) -> FlankUndo {
        debug_assert!(self.is_legal(mv), "illegal {mv:?} in {}", self.text());
        let before = self.repr;
        let mover = self.side_to_move();
        let flipped = self.play_flipped(mv);
        FlankUndo {
            before,
            delta: FlankDelta {
                mover,
                placed: mv,
                flipped,
            },
        }
    }

    /// Takes back the move that [`FlankPosition::make`] played and returned `undo` for.
    #[inline]
    pub fn unmake(&mut self, undo: &FlankUndo) {
        self.repr = undo.before;
    }

    /// The image of the position under a permutation of cell indices (a board symmetry).
    pub fn transformed(&self, map: &[u8]) -> FlankPosition {
        let m = |b: Bits| {
            b.iter()
                .fold(Bits::EMPTY, |acc, i| acc | Bits::single(map[i] as usize))
        };
        let pieces = [m(self.pieces(Side::X)), m(self.pieces(Side::O))];
        let supply = |s| self.supply(s).unwrap_or(UNLIMITED);
        Self::from_parts(
            self.rules,
            pieces,
            self.side_to_move(),
            self.phase(),
            [supply(Side::X), supply(Side::O)],
            self.passes(),
        )
    }

    /// The enemy pieces a placement on `i` flips (play phase).
    pub fn flips(&self, i: usize) -> Bits {
        with_core!(self, C, c => with_level!(Isa::current(), L, l => {
            let s = c.side.index();
            C::flips(l, C::internal(i), c.pieces[s], c.pieces[s ^ 1]).widen()
        }))
    }

    /// The number of enemy pieces a placement on `i` flips (play phase).
    pub fn flip_count(&self, i: usize) -> u32 {
        with_core!(self, C, c => with_level!(Isa::current(), L, l => {
            let s = c.side.index();
            C::flips(l, C::internal(i), c.pieces[s], c.pieces[s ^ 1]).count()
        }))
    }

    /// The result if the game is over.
    pub fn result(&self) -> Option<GameResult> {
        if !self.is_game_over() {
            return None;
        }
        let counts = [self.count(Side::X), self.count(Side::O)];
        let reason = if (counts[0] == 0) != (counts[1] == 0) {
            EndReason::WipeOut
        } else if self.empty().is_empty() {
            EndReason::FullBoard
        } else {
            EndReason::NoMoves
        };
        Some(GameResult::scored(
            counts,
            reason,
            self.board().num_cells(),
            self.rules.misere,
        ))
    }
}
