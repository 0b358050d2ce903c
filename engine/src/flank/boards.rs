//! The outflanking boards as data: shapes, centres, setups and supplies.

use std::sync::LazyLock;

use super::bits::{Bits, STRIDE};
use super::grid10::Grid10;

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

/// How a board's positions keep their pieces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Layout {
    /// The 8×8 box on one `u64` ([`grid8`](super::grid8)).
    Grid8,
    /// The 10×10 box on 128 bits ([`grid10`](super::grid10)).
    Grid10,
    /// The 256-bit set.
    Wide,
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
    /// Whether the board fits the 8×8 box, which puts its positions on one `u64`
    /// (module [`grid8`](super::grid8)) instead of the 256-bit set.
    pub fits_u64: bool,
    /// Cells no line can pass through in any of the four directions (a piece there can
    /// never be flipped): the corners, including those of the arms of a cross.
    pub corners: Bits,
    /// The layout of its positions.
    pub(crate) layout: Layout,
    /// `cells`, `centre` and `corners` in the 8×8 layout (boards that fit it).
    pub(crate) narrow: [u64; 3],
    /// `cells`, `centre` and `corners` in the 10×10 layout (boards that fit it).
    pub(crate) mid: [Grid10; 3],
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
    pub(crate) fn rank_cells(&self, r: u8) -> impl Iterator<Item = usize> + '_ {
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
        fits_u64: size <= 8,
        corners,
        layout: match size {
            0..=8 => Layout::Grid8,
            9..=10 => Layout::Grid10,
            _ => Layout::Wide,
        },
        narrow: [cells, set(&centre), corners].map(super::grid8::narrow),
        mid: [cells, set(&centre), corners].map(super::grid10::from_wide),
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
