//! Outflanking games: Othello, Reversi and Annexation on every board, each also misère.
//!
//! Cells live in a 256-bit set laid out in rows of stride 16 (cell index =
//! `rank * 16 + file`), so boards up to 15 files by 16 ranks fit and every direction is a
//! fixed shift (±1, ±15, ±16, ±17). Cells outside a board's shape (padding columns,
//! missing corners) are never "enemy" or "empty", so a line of flips stops there by
//! itself. Move generation is Kogge–Stone style flood fill over the eight directions.
//!
//! # Position text
//! `<board> <ranks> <side> <phase> <supply x> <supply o> <passes>`, for example
//! `othello 8/8/8/3ox3/3xo3/8/8/8 x play - - 0`:
//! - `<board>`: the board's name (optional on input; checked against the game);
//! - `<ranks>`: ranks from the top down separated by `/`, each listing only the cells
//!   that exist on that rank, from the left: `x`, `o`, or a number of empty cells
//!   (numbers may have two digits);
//! - `<side>`: `x` (Black, first player) or `o`;
//! - `<phase>`: `place` (the opening placements on the four central cells, no flips)
//!   or `play`;
//! - `<supply x> <supply o>`: pieces each player has left to place, or `-` for no limit;
//! - `<passes>`: passes played in a row just before this position (optional on input,
//!   default 0).

use std::fmt::Write;
use std::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, BitXor, BitXorAssign, Not};
use std::sync::LazyLock;

use crate::position::{EndReason, GameResult, Side};
use crate::rng::splitmix64;

/// Row stride of the cell layout.
pub const STRIDE: usize = 16;

/// A set of cells of an outflanking board (256 bits, rows of stride 16).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, Debug)]
pub struct Bits(pub [u64; 4]);

impl Bits {
    /// The empty set.
    pub const EMPTY: Bits = Bits([0; 4]);

    /// The set holding only cell `i`.
    #[inline]
    pub const fn single(i: usize) -> Bits {
        let mut b = [0u64; 4];
        b[i / 64] = 1u64 << (i % 64);
        Bits(b)
    }

    /// Whether cell `i` is in the set.
    #[inline]
    pub const fn has(self, i: usize) -> bool {
        i < 256 && self.0[i / 64] >> (i % 64) & 1 != 0
    }

    /// Number of cells in the set.
    #[inline]
    pub const fn len(self) -> u32 {
        self.0[0].count_ones()
            + self.0[1].count_ones()
            + self.0[2].count_ones()
            + self.0[3].count_ones()
    }

    /// Whether the set is empty.
    #[inline]
    pub const fn is_empty(self) -> bool {
        (self.0[0] | self.0[1] | self.0[2] | self.0[3]) == 0
    }

    /// Shifts every cell up by `k` indices (0 < k < 64); bits past 255 are dropped.
    #[inline(always)]
    fn shl(self, k: u32) -> Bits {
        let a = self.0;
        Bits([
            a[0] << k,
            (a[1] << k) | (a[0] >> (64 - k)),
            (a[2] << k) | (a[1] >> (64 - k)),
            (a[3] << k) | (a[2] >> (64 - k)),
        ])
    }

    /// Shifts every cell down by `k` indices (0 < k < 64).
    #[inline(always)]
    fn shr(self, k: u32) -> Bits {
        let a = self.0;
        Bits([
            (a[0] >> k) | (a[1] << (64 - k)),
            (a[1] >> k) | (a[2] << (64 - k)),
            (a[2] >> k) | (a[3] << (64 - k)),
            a[3] >> k,
        ])
    }

    /// Shifts every cell one step in direction `d` (see [`DIRECTIONS`]).
    #[inline(always)]
    fn step(self, d: i32) -> Bits {
        if d > 0 {
            self.shl(d as u32)
        } else {
            self.shr((-d) as u32)
        }
    }

    /// Iterates over the cell indices in increasing order.
    pub fn iter(self) -> impl Iterator<Item = usize> {
        (0..4).flat_map(move |w| {
            let mut x = self.0[w];
            std::iter::from_fn(move || {
                if x == 0 {
                    return None;
                }
                let i = x.trailing_zeros() as usize;
                x &= x - 1;
                Some(w * 64 + i)
            })
        })
    }
}

macro_rules! bitsop {
    ($tr:ident, $f:ident, $tra:ident, $fa:ident, $op:tt) => {
        impl $tr for Bits {
            type Output = Bits;
            #[inline(always)]
            fn $f(self, r: Bits) -> Bits {
                Bits([self.0[0] $op r.0[0], self.0[1] $op r.0[1], self.0[2] $op r.0[2], self.0[3] $op r.0[3]])
            }
        }
        impl $tra for Bits {
            #[inline(always)]
            fn $fa(&mut self, r: Bits) {
                *self = *self $op r;
            }
        }
    };
}
bitsop!(BitAnd, bitand, BitAndAssign, bitand_assign, &);
bitsop!(BitOr, bitor, BitOrAssign, bitor_assign, |);
bitsop!(BitXor, bitxor, BitXorAssign, bitxor_assign, ^);

impl Not for Bits {
    type Output = Bits;
    #[inline(always)]
    fn not(self) -> Bits {
        Bits([!self.0[0], !self.0[1], !self.0[2], !self.0[3]])
    }
}

/// Empty cells reached from `own` through a contiguous line of `opp` in direction `D`.
#[inline(always)]
fn fill<const D: i32>(own: Bits, opp: Bits, empty: Bits) -> Bits {
    let mut t = own.step(D) & opp;
    loop {
        let n = t | (t.step(D) & opp);
        if n == t {
            return t.step(D) & empty;
        }
        t = n;
    }
}

#[inline(always)]
fn to_u128(b: Bits) -> u128 {
    (b.0[1] as u128) << 64 | b.0[0] as u128
}

/// [`fill`] for boards of at most 8×8, whose cells lie in the low 128 bits: native
/// 128-bit shifts and a fixed number of steps (a line holds at most 6 enemy pieces).
#[inline(always)]
fn fill128<const D: i32>(own: u128, opp: u128, empty: u128) -> u128 {
    let step = |x: u128| if D > 0 { x << D } else { x >> -D };
    let mut t = step(own) & opp;
    for _ in 0..5 {
        t |= step(t) & opp;
    }
    step(t) & empty
}

/// The eight directions as index steps: E, W, N, S, NE, NW, SE, SW.
pub const DIRECTIONS: [i32; 8] = [1, -1, 16, -16, 17, 15, -15, -17];

/// The outflanking boards.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum BoardId {
    /// Othello: 8×8, pre-placed start, unlimited pieces.
    Othello,
    /// Reversi (historical): 8×8, empty start, four opening placements.
    Reversi,
    /// Annexation 64 (reconstructed): cross in 10×10, supply 32, opening placements.
    Annexation64,
    /// Annexation 132 (reconstructed): cross in 14×14, supply 66, opening placements.
    Annexation132,
    /// Annexation 76 (reconstructed), cross setup: staircase-cut 10×10, supply 38.
    Annexation76Cross,
    /// Annexation 76 (reconstructed), parallel setup.
    Annexation76Parallel,
    /// Annexation 32 (reconstructed): 6×6 without corners, supply 16, opening placements.
    Annexation32,
    /// Annexation 80 (historical shape, reconstructed rules): cross in 12×12, supply 32.
    Annexation80,
}

impl BoardId {
    /// Every board.
    pub const ALL: [BoardId; 8] = [
        BoardId::Othello,
        BoardId::Reversi,
        BoardId::Annexation64,
        BoardId::Annexation132,
        BoardId::Annexation76Cross,
        BoardId::Annexation76Parallel,
        BoardId::Annexation32,
        BoardId::Annexation80,
    ];

    /// The board's data.
    #[inline]
    pub fn board(self) -> &'static FlankBoard {
        &BOARDS[self as usize]
    }

    /// The game name of the board (`othello`, `annexation76-cross`, …).
    pub const fn name(self) -> &'static str {
        match self {
            BoardId::Othello => "othello",
            BoardId::Reversi => "reversi",
            BoardId::Annexation64 => "annexation64",
            BoardId::Annexation132 => "annexation132",
            BoardId::Annexation76Cross => "annexation76-cross",
            BoardId::Annexation76Parallel => "annexation76-parallel",
            BoardId::Annexation32 => "annexation32",
            BoardId::Annexation80 => "annexation80",
        }
    }
}

/// A board shape and its starting rules, as data.
#[derive(Debug)]
pub struct FlankBoard {
    /// Which board.
    pub id: BoardId,
    /// Files of the bounding box.
    pub width: u8,
    /// Ranks of the bounding box.
    pub height: u8,
    /// The cells that exist.
    pub cells: Bits,
    /// The four central cells of the opening placements.
    pub centre: Bits,
    /// Whether the game opens with four free placements on the centre (no flips).
    pub placement_phase: bool,
    /// Pre-placed pieces `[x, o]`.
    pub setup: [Bits; 2],
    /// Pieces each player may place, or `None` for no limit.
    pub supply: Option<u16>,
    /// Whether the board is at most 8×8 (its cells lie in the low 128 bits), which
    /// selects the 128-bit move generator.
    pub fits_u128: bool,
    /// Cells no line can pass through in any of the four directions (a piece there can
    /// never be flipped): the corners, including those of the arms of a cross.
    pub corners: Bits,
}

impl FlankBoard {
    /// Cell index of (file, rank), from 0, if the cell exists.
    pub fn cell(&self, file: u8, rank: u8) -> Option<usize> {
        let i = rank as usize * STRIDE + file as usize;
        (file < self.width && rank < self.height && self.cells.has(i)).then_some(i)
    }

    /// The cell's name (`e5`).
    pub fn square_name(&self, i: usize) -> String {
        format!("{}{}", (b'a' + (i % STRIDE) as u8) as char, i / STRIDE + 1)
    }

    /// Parses a cell name; `None` if it names no cell of this board.
    pub fn parse_square(&self, s: &str) -> Option<usize> {
        let b = s.as_bytes();
        if b.len() < 2 || b.len() > 3 || !b[0].is_ascii_lowercase() || b[1] == b'0' {
            return None;
        }
        if !b[1..].iter().all(u8::is_ascii_digit) {
            return None;
        }
        let rank: u8 = s[1..].parse().ok()?;
        self.cell(b[0] - b'a', rank.checked_sub(1)?)
    }

    /// Number of cells.
    pub fn num_cells(&self) -> u32 {
        self.cells.len()
    }

    /// The existing cells of rank `r`, left to right.
    fn rank_cells(&self, r: u8) -> impl Iterator<Item = usize> + '_ {
        (0..self.width).filter_map(move |f| self.cell(f, r))
    }
}

/// Builds a board from the first and last file (from 0) of each rank, bottom up.
fn build(
    id: BoardId,
    size: u8,
    rows: &[(u8, u8)],
    centre: [(u8, u8); 4],
    setup: [&[(u8, u8)]; 2],
    placement_phase: bool,
    supply: Option<u16>,
) -> FlankBoard {
    assert_eq!(rows.len(), size as usize);
    let at = |(f, r): (u8, u8)| Bits::single(r as usize * STRIDE + f as usize);
    let mut cells = Bits::EMPTY;
    for (r, &(a, b)) in rows.iter().enumerate() {
        for f in a..=b {
            cells |= at((f, r as u8));
        }
    }
    let set = |v: &[(u8, u8)]| v.iter().fold(Bits::EMPTY, |acc, &c| acc | at(c));
    let exists = |i: i32| (0..256).contains(&i) && cells.has(i as usize);
    let corners = cells
        .iter()
        .filter(|&i| {
            let i = i as i32;
            [1, 16, 17, 15]
                .iter()
                .all(|&d| !exists(i + d) || !exists(i - d))
        })
        .fold(Bits::EMPTY, |acc, i| acc | Bits::single(i));
    FlankBoard {
        id,
        width: size,
        height: size,
        cells,
        centre: set(&centre),
        placement_phase,
        setup: [set(setup[0]), set(setup[1])],
        supply,
        fits_u128: size <= 8,
        corners,
    }
}

/// Row ranges of a cross in an `n`×`n` box with arms `w` wide and `l` long.
fn cross(n: u8, w: u8, l: u8) -> Vec<(u8, u8)> {
    let a = (n - w) / 2;
    (0..n)
        .map(|r| {
            if r < l || r >= n - l {
                (a, a + w - 1)
            } else {
                (0, n - 1)
            }
        })
        .collect()
}

static BOARDS: LazyLock<[FlankBoard; 8]> = LazyLock::new(|| {
    let full8 = vec![(0, 7); 8];
    // Files and ranks from 0: d4 = (3, 3).
    let c8 = [(3, 3), (4, 3), (3, 4), (4, 4)];
    let c10 = [(4, 4), (5, 4), (4, 5), (5, 5)];
    let stair: Vec<(u8, u8)> = [3, 2, 1, 0, 0, 0, 0, 1, 2, 3]
        .iter()
        .map(|&a| (a, 9 - a))
        .collect();
    let no_corners = vec![(1, 4), (0, 5), (0, 5), (0, 5), (0, 5), (1, 4)];
    [
        build(
            BoardId::Othello,
            8,
            &full8,
            c8,
            [&[(3, 3), (4, 4)], &[(3, 4), (4, 3)]],
            false,
            None,
        ),
        build(BoardId::Reversi, 8, &full8, c8, [&[], &[]], true, None),
        build(
            BoardId::Annexation64,
            10,
            &cross(10, 4, 3),
            c10,
            [&[], &[]],
            true,
            Some(32),
        ),
        build(
            BoardId::Annexation132,
            14,
            &cross(14, 6, 4),
            [(6, 6), (7, 6), (6, 7), (7, 7)],
            [&[], &[]],
            true,
            Some(66),
        ),
        build(
            BoardId::Annexation76Cross,
            10,
            &stair,
            c10,
            [&[(4, 4), (5, 5)], &[(5, 4), (4, 5)]],
            false,
            Some(38),
        ),
        build(
            BoardId::Annexation76Parallel,
            10,
            &stair,
            c10,
            [&[(4, 4), (4, 5)], &[(5, 4), (5, 5)]],
            false,
            Some(38),
        ),
        build(
            BoardId::Annexation32,
            6,
            &no_corners,
            [(2, 2), (3, 2), (2, 3), (3, 3)],
            [&[], &[]],
            true,
            Some(16),
        ),
        build(
            BoardId::Annexation80,
            12,
            &cross(12, 4, 4),
            [(5, 5), (6, 5), (5, 6), (6, 6)],
            [&[], &[]],
            true,
            Some(32),
        ),
    ]
});

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
const UNLIMITED: u16 = u16::MAX;

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

static KEYS: ([[u64; 256]; 2], u64, u64) = flank_keys();

#[inline]
fn supply_key(side: usize, supply: u16) -> u64 {
    splitmix64(0x5u64 << 60 ^ (side as u64) << 32 ^ supply as u64).1
}

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
    pieces: [Bits; 2],
    hash: u64,
    supply: [u16; 2],
    side: Side,
    phase: Phase,
    passes: u8,
    rules: FlankRules,
}

/// A move of an outflanking game: a cell index, or the pass.
pub type FlankMove = Option<usize>;

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

    fn from_parts(
        rules: FlankRules,
        pieces: [Bits; 2],
        side: Side,
        phase: Phase,
        supply: [u16; 2],
        passes: u8,
    ) -> FlankPosition {
        let mut p = FlankPosition {
            pieces,
            hash: 0,
            supply,
            side,
            phase,
            passes,
            rules,
        };
        p.hash = p.compute_hash();
        p
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
        self.pieces[side.index()]
    }

    /// Side to move.
    #[inline]
    pub fn side_to_move(&self) -> Side {
        self.side
    }

    /// The phase.
    #[inline]
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Pieces `side` may still place (`None`: no limit).
    #[inline]
    pub fn supply(&self, side: Side) -> Option<u16> {
        let s = self.supply[side.index()];
        (s != UNLIMITED).then_some(s)
    }

    /// Consecutive passes just played.
    #[inline]
    pub fn passes(&self) -> u8 {
        self.passes
    }

    /// Empty cells.
    #[inline]
    pub fn empty(&self) -> Bits {
        self.board().cells & !(self.pieces[0] | self.pieces[1])
    }

    /// The Zobrist hash (incremental; equals [`FlankPosition::compute_hash`]).
    #[inline]
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// The hash from scratch: pieces, side, phase and supplies.
    pub fn compute_hash(&self) -> u64 {
        let mut h = 0;
        for s in 0..2 {
            for i in self.pieces[s].iter() {
                h ^= KEYS.0[s][i];
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

    /// The cells where `side` may place now (the pass aside).
    #[inline]
    pub fn placements(&self, side: Side) -> Bits {
        if self.supply[side.index()] == 0 {
            return Bits::EMPTY;
        }
        let empty = self.empty();
        if self.phase == Phase::Place {
            return self.board().centre & empty;
        }
        let own = self.pieces[side.index()];
        let opp = self.pieces[side.other().index()];
        if self.board().fits_u128 {
            let (o, p, e) = (to_u128(own), to_u128(opp), to_u128(empty));
            let m = fill128::<1>(o, p, e)
                | fill128::<-1>(o, p, e)
                | fill128::<16>(o, p, e)
                | fill128::<-16>(o, p, e)
                | fill128::<17>(o, p, e)
                | fill128::<15>(o, p, e)
                | fill128::<-15>(o, p, e)
                | fill128::<-17>(o, p, e);
            return Bits([m as u64, (m >> 64) as u64, 0, 0]);
        }
        fill::<1>(own, opp, empty)
            | fill::<-1>(own, opp, empty)
            | fill::<16>(own, opp, empty)
            | fill::<-16>(own, opp, empty)
            | fill::<17>(own, opp, empty)
            | fill::<15>(own, opp, empty)
            | fill::<-15>(own, opp, empty)
            | fill::<-17>(own, opp, empty)
    }

    /// Whether the game is over: the board is full, or neither side can place.
    #[inline]
    pub fn is_game_over(&self) -> bool {
        self.empty().is_empty()
            || (self.placements(self.side).is_empty()
                && self.placements(self.side.other()).is_empty())
    }

    /// Legal moves: empty when the game is over; `[None]` (the pass) when the side to
    /// move cannot place; otherwise the placement cells in increasing index order.
    pub fn legal_moves(&self) -> Vec<FlankMove> {
        let own = self.placements(self.side);
        if !own.is_empty() {
            return own.iter().map(Some).collect();
        }
        if self.empty().is_empty() || self.placements(self.side.other()).is_empty() {
            Vec::new()
        } else {
            vec![None]
        }
    }

    /// Number of legal moves (bulk counting; equals `legal_moves().len()`).
    #[inline]
    pub fn count_moves(&self) -> u64 {
        let n = self.placements(self.side).len() as u64;
        if n > 0 {
            n
        } else {
            u64::from(!self.empty().is_empty() && !self.placements(self.side.other()).is_empty())
        }
    }

    /// Whether `mv` is legal.
    pub fn is_legal(&self, mv: FlankMove) -> bool {
        match mv {
            Some(i) => self.placements(self.side).has(i),
            None => self.legal_moves() == [None],
        }
    }

    /// Plays `mv` (which must be legal).
    pub fn play(&mut self, mv: FlankMove) {
        debug_assert!(self.is_legal(mv), "illegal {mv:?} in {}", self.text());
        let us = self.side.index();
        match mv {
            None => self.passes = self.passes.saturating_add(1),
            Some(i) => {
                self.passes = 0;
                let flips = if self.phase == Phase::Play {
                    self.flips(i)
                } else {
                    Bits::EMPTY
                };
                self.pieces[us] |= Bits::single(i) | flips;
                self.pieces[us ^ 1] ^= flips;
                self.hash ^= KEYS.0[us][i];
                for f in flips.iter() {
                    self.hash ^= KEYS.0[0][f] ^ KEYS.0[1][f];
                }
                let s = self.supply[us];
                if s != UNLIMITED {
                    self.hash ^= supply_key(us, s) ^ supply_key(us, s - 1);
                    self.supply[us] = s - 1;
                }
                if self.phase == Phase::Place && (self.board().centre & self.empty()).is_empty() {
                    self.phase = Phase::Play;
                    self.hash ^= KEYS.2;
                }
            }
        }
        self.side = self.side.other();
        self.hash ^= KEYS.1;
    }

    /// The image of the position under a permutation of cell indices (a board symmetry).
    pub fn transformed(&self, map: &[u8]) -> FlankPosition {
        let m = |b: Bits| {
            b.iter()
                .fold(Bits::EMPTY, |acc, i| acc | Bits::single(map[i] as usize))
        };
        let pieces = [m(self.pieces[0]), m(self.pieces[1])];
        Self::from_parts(
            self.rules,
            pieces,
            self.side,
            self.phase,
            self.supply,
            self.passes,
        )
    }

    /// The enemy pieces a placement on `i` flips (play phase).
    pub fn flips(&self, i: usize) -> Bits {
        let own = self.pieces[self.side.index()];
        let opp = self.pieces[self.side.other().index()];
        if self.board().fits_u128 {
            let (own, opp) = (to_u128(own), to_u128(opp));
            let mut flips = 0u128;
            for d in DIRECTIONS {
                let step = |x: u128| if d > 0 { x << d } else { x >> -d };
                let mut run = 0u128;
                let mut x = step(1u128 << i);
                while x & opp != 0 {
                    run |= x;
                    x = step(x);
                }
                if x & own != 0 {
                    flips |= run;
                }
            }
            return Bits([flips as u64, (flips >> 64) as u64, 0, 0]);
        }
        let mut flips = Bits::EMPTY;
        for d in DIRECTIONS {
            let mut run = Bits::EMPTY;
            let mut x = Bits::single(i).step(d);
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

    /// The result if the game is over.
    pub fn result(&self) -> Option<GameResult> {
        if !self.is_game_over() {
            return None;
        }
        let counts = [self.pieces[0].len(), self.pieces[1].len()];
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

    /// The position text (see the module docs).
    pub fn text(&self) -> String {
        let b = self.board();
        let mut s = String::from(b.id.name());
        s.push(' ');
        for r in (0..b.height).rev() {
            let cells = b.rank_cells(r).map(|i| {
                if self.pieces[0].has(i) {
                    Some('x')
                } else if self.pieces[1].has(i) {
                    Some('o')
                } else {
                    None
                }
            });
            crate::fen::write_run_length(&mut s, cells);
            if r > 0 {
                s.push('/');
            }
        }
        let sup = |v: u16| {
            if v == UNLIMITED {
                "-".to_string()
            } else {
                v.to_string()
            }
        };
        let phase = if self.phase == Phase::Place {
            "place"
        } else {
            "play"
        };
        write!(
            s,
            " {} {phase} {} {} {}",
            self.side.char(),
            sup(self.supply[0]),
            sup(self.supply[1]),
            self.passes
        )
        .unwrap();
        s
    }

    /// Parses a position text (see the module docs), or `startpos`.
    pub fn from_text(text: &str, rules: FlankRules) -> Result<FlankPosition, FlankTextError> {
        use FlankTextError as E;
        let b = rules.board.board();
        let text = text.trim_ascii();
        if text.is_empty() {
            return Err(E::Empty);
        }
        if text == "startpos" {
            return Ok(FlankPosition::startpos(rules));
        }
        let mut fields: Vec<&str> = text.split_ascii_whitespace().collect();
        // Every board has several ranks, so the ranks field has a `/` and a name has none.
        if fields.len() > 1 && !fields[0].contains('/') {
            if fields[0] != b.id.name() {
                return Err(E::WrongBoard {
                    found: crate::fen::shown(fields[0]),
                    expected: b.id.name(),
                });
            }
            fields.remove(0);
        }
        if fields.len() != 5 && fields.len() != 6 {
            return Err(E::FieldCount(fields.len()));
        }
        let passes = match fields.get(5) {
            None => 0,
            Some(f) => f
                .parse::<u8>()
                .ok()
                .filter(|&p| p <= 2 && f.bytes().all(|b| b.is_ascii_digit()))
                .ok_or_else(|| E::BadPasses(crate::fen::shown(f)))?,
        };
        let ranks: Vec<&str> = fields[0].split('/').collect();
        if ranks.len() != b.height as usize {
            return Err(E::RankCount {
                found: ranks.len(),
                expected: b.height as usize,
            });
        }
        let mut pieces = [Bits::EMPTY; 2];
        for (k, rank_text) in ranks.iter().enumerate() {
            let r = b.height - 1 - k as u8;
            let cells: Vec<usize> = b.rank_cells(r).collect();
            let mut i = 0usize;
            let mut chars = rank_text.chars().peekable();
            while let Some(ch) = chars.next() {
                match ch {
                    'x' | 'o' => {
                        if let Some(&c) = cells.get(i) {
                            pieces[(ch == 'o') as usize] |= Bits::single(c);
                        }
                        i += 1;
                    }
                    '1'..='9' => {
                        let mut n = ch as usize - '0' as usize;
                        if let Some(&d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                            n = n * 10 + (d as usize - '0' as usize);
                            chars.next();
                        }
                        i += n;
                    }
                    _ => return Err(E::BadChar { rank: r + 1, ch }),
                }
            }
            if i != cells.len() {
                return Err(E::RankLength {
                    rank: r + 1,
                    found: i,
                    expected: cells.len(),
                });
            }
        }
        let side = match fields[1] {
            "x" => Side::X,
            "o" => Side::O,
            s => return Err(E::BadSide(crate::fen::shown(s))),
        };
        let phase = match fields[2] {
            "place" if b.placement_phase => Phase::Place,
            "play" => Phase::Play,
            s => return Err(E::BadPhase(crate::fen::shown(s))),
        };
        if phase == Phase::Place && !((pieces[0] | pieces[1]) & !b.centre).is_empty() {
            return Err(E::PiecesOutsideCentre);
        }
        let mut supply = [0u16; 2];
        for s in 0..2 {
            let f = fields[3 + s];
            supply[s] = match (f, b.supply) {
                ("-", None) => UNLIMITED,
                (_, Some(max)) => match crate::fen::counter(f) {
                    Some(v) if v <= max => v,
                    _ => {
                        return Err(E::BadSupply {
                            field: crate::fen::shown(f),
                            max: Some(max),
                        });
                    }
                },
                _ => {
                    return Err(E::BadSupply {
                        field: crate::fen::shown(f),
                        max: None,
                    });
                }
            };
        }
        Ok(FlankPosition::from_parts(
            rules, pieces, side, phase, supply, passes,
        ))
    }

    /// Parses a move (`e5`, or `0000` for the pass) and checks that it is legal.
    pub fn parse_move(&self, text: &str) -> Result<FlankMove, FlankMoveError> {
        let t = text.trim().to_ascii_lowercase();
        let mv = if t == "0000" {
            None
        } else {
            Some(
                self.board()
                    .parse_square(&t)
                    .ok_or_else(|| FlankMoveError::NoSuchSquare {
                        text: text.to_string(),
                    })?,
            )
        };
        if self.is_legal(mv) {
            Ok(mv)
        } else {
            Err(FlankMoveError::Illegal {
                text: text.to_string(),
            })
        }
    }

    /// A move in notation.
    pub fn move_to_string(&self, mv: FlankMove) -> String {
        match mv {
            None => "0000".into(),
            Some(i) => self.board().square_name(i),
        }
    }
}

/// What is wrong with an outflanking position text.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FlankTextError {
    /// Nothing given.
    #[error("empty position text")]
    Empty,
    /// Wrong number of fields.
    #[error(
        "expected the fields [board] ranks side phase supply-x supply-o [passes], found {0} fields after the board name"
    )]
    FieldCount(usize),
    /// The pass count is not 0, 1 or 2.
    #[error("pass count `{0}` is not 0, 1 or 2")]
    BadPasses(String),
    /// The text names another board.
    #[error("the text is for board `{found}`, but the game is played on `{expected}`")]
    WrongBoard {
        /// Name in the text.
        found: String,
        /// Name of the game's board.
        expected: &'static str,
    },
    /// Wrong number of ranks.
    #[error("found {found} ranks separated by `/`, expected {expected}")]
    RankCount {
        /// Found.
        found: usize,
        /// Expected.
        expected: usize,
    },
    /// A rank describes the wrong number of cells.
    #[error("rank {rank} describes {found} cells, but it has {expected} on this board")]
    RankLength {
        /// Rank number from 1.
        rank: u8,
        /// Described.
        found: usize,
        /// Existing.
        expected: usize,
    },
    /// An unexpected character.
    #[error("rank {rank}: unexpected character `{}` (expected x, o or a number)", .ch.escape_debug())]
    BadChar {
        /// Rank number from 1.
        rank: u8,
        /// The character.
        ch: char,
    },
    /// Side is not `x` or `o`.
    #[error("side to move `{0}` is not `x` or `o`")]
    BadSide(String),
    /// Phase is not `place` or `play` (or `place` on a board without a placement phase).
    #[error(
        "phase `{0}` is not valid here (expected `play`, or `place` on boards with an opening placement phase)"
    )]
    BadPhase(String),
    /// Placement phase with pieces off the centre.
    #[error("in the placement phase, pieces may only stand on the four central cells")]
    PiecesOutsideCentre,
    /// A supply out of range.
    #[error("supply `{field}` is invalid (expected {})", match .max { Some(m) => format!("a number 0..={m}"), None => "`-` (no limit on this board)".into() })]
    BadSupply {
        /// The field.
        field: String,
        /// The board's supply.
        max: Option<u16>,
    },
}

/// What is wrong with an outflanking move.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FlankMoveError {
    /// Not a cell of this board.
    #[error("`{text}` is not a cell of this board (expected a cell like e5, or 0000)")]
    NoSuchSquare {
        /// Text given.
        text: String,
    },
    /// Not legal here.
    #[error("`{text}` is not legal here")]
    Illegal {
        /// Text given.
        text: String,
    },
}

/// Perft for outflanking games (pass = one move, finished game = no children; bulk
/// counting at the last ply).
pub fn flank_perft(pos: &FlankPosition, depth: u32) -> u64 {
    if depth <= 1 {
        return if depth == 0 { 1 } else { pos.count_moves() };
    }
    let own = pos.placements(pos.side);
    if own.is_empty() {
        if pos.empty().is_empty() || pos.placements(pos.side.other()).is_empty() {
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
