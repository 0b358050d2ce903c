//! Boards as data: which cells exist, how they are named, and which cells are the clone,
//! jump and flip neighbours of each cell under a rule set.
//!
//! Everything here is computed at compile time into plain tables, so that move
//! generation and make-move are a few bit operations on per-cell masks.

use crate::{Bitboard, Square};

/// Largest number of cells a board of the Ataxx family may have (one `u64`).
pub const MAX_CELLS: usize = 64;

/// The shape of a board, which fixes how cells are indexed and named.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Shape {
    /// A rectangle of `width` files (a, b, …) by `height` ranks (1, 2, …), a1 bottom-left.
    /// Cell index = `rank * width + file`.
    Rect {
        /// Number of files.
        width: u8,
        /// Number of ranks.
        height: u8,
    },
    /// The hexagonal board of side 5: columns a–i of 5,6,7,8,9,8,7,6,5 cells, cell 1 at
    /// the bottom of each column. Cell index = cells of the columns to the left + row − 1.
    Hex5,
}

/// The cells a piece reaches (for clones and jumps) or affects (for flips), as a rule
/// of displacement on the board's own coordinates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reach {
    /// The 8 cells at Chebyshev distance 1 (square boards).
    King,
    /// The 4 orthogonal neighbours (square boards).
    Orthogonal,
    /// The 16 cells at Chebyshev distance exactly 2 (square boards).
    Ring2,
    /// The 8 cells two steps away in a straight line: (±2,0), (0,±2), (±2,±2).
    Straight2,
    /// The 4 cells two steps away orthogonally: (±2,0), (0,±2).
    Orthogonal2,
    /// The 6 neighbours on the hexagonal board.
    Hex1,
    /// The 12 cells at hexagonal distance exactly 2.
    Hex2,
}

impl Reach {
    /// Whether displacement `(dx, dy)` (in the shape's grid coordinates) is reached.
    pub(crate) const fn contains(self, dx: i32, dy: i32) -> bool {
        let (ax, ay) = (dx.abs(), dy.abs());
        let cheb = if ax > ay { ax } else { ay };
        // Axial hex coordinates (see `Geometry::coords`): distance = max(|dq|, |dr|, |dq-dr|).
        let hex = {
            let d = (dx - dy).abs();
            let m = if ax > ay { ax } else { ay };
            if m > d { m } else { d }
        };
        match self {
            Reach::King => cheb == 1,
            Reach::Orthogonal => ax + ay == 1,
            Reach::Ring2 => cheb == 2,
            Reach::Straight2 => cheb == 2 && (ax == 0 || ay == 0 || ax == ay),
            Reach::Orthogonal2 => cheb == 2 && (ax == 0 || ay == 0),
            Reach::Hex1 => hex == 1,
            Reach::Hex2 => hex == 2,
        }
    }

    /// Number of displacements in the set (the size of the reach on an infinite board).
    pub const fn size(self) -> usize {
        match self {
            Reach::King | Reach::Straight2 => 8,
            Reach::Orthogonal | Reach::Orthogonal2 => 4,
            Reach::Ring2 => 16,
            Reach::Hex1 => 6,
            Reach::Hex2 => 12,
        }
    }

    /// The displacements `(dx, dy)` of the set in a fixed order (row-major from
    /// `(-2,-2)`), used to give every jump direction a stable slot number.
    pub fn offsets(self) -> Vec<(i8, i8)> {
        let mut v = Vec::new();
        for dy in -2..=2 {
            for dx in -2..=2 {
                if self.contains(dx, dy) {
                    v.push((dx as i8, dy as i8));
                }
            }
        }
        v
    }
}

const fn min(a: i32, b: i32) -> i32 {
    if a < b { a } else { b }
}

const fn max(a: i32, b: i32) -> i32 {
    if a > b { a } else { b }
}

/// Column heights of the Hexxagon board, columns a–i.
const HEX_COLUMNS: [u8; 9] = [5, 6, 7, 8, 9, 8, 7, 6, 5];

/// A board shape together with a rule set's clone, jump and flip neighbourhoods,
/// precomputed per cell.
#[derive(Debug)]
pub struct Geometry {
    /// The board shape.
    pub shape: Shape,
    /// Every cell of the board (blocked or not).
    pub cells: Bitboard,
    /// Number of cells.
    pub num_cells: u8,
    /// Clone targets of each cell.
    pub clone: [Bitboard; MAX_CELLS],
    /// Jump targets of each cell.
    pub jump: [Bitboard; MAX_CELLS],
    /// Cells whose enemy pieces flip when a piece lands on the cell.
    pub flip: [Bitboard; MAX_CELLS],
    /// The rule of the clone neighbourhood.
    pub clone_reach: Reach,
    /// The rule of the jump neighbourhood.
    pub jump_reach: Reach,
    /// The rule of the flip neighbourhood.
    pub flip_reach: Reach,
    /// Grid coordinates (x, y) of each cell: (file, rank) from 0 on square boards,
    /// axial (column, column + row − 1 − 4 clamped, see [`Geometry::coords`]) on the hex board.
    coords: [(i8, i8); MAX_CELLS],
    /// Naming coordinates (column, row), both from 0.
    names: [(u8, u8); MAX_CELLS],
    /// The cells of each class of [`Geometry::CLASSES`]: on rectangles by the distances
    /// (a, b), a ≤ b, to the nearest edges of the two axes, each at most 3 (corner (0,0),
    /// edge (0,1)…(0,3), and so on inward); on the hex board by the distance d to its rim
    /// (at most 3), as (d, d). The evaluation's piece-square terms read them.
    pub classes: [Bitboard; Geometry::CLASSES],
}

impl Geometry {
    /// Number of cell classes ([`Geometry::classes`]): the pairs (a, b), 0 ≤ a ≤ b ≤ 3,
    /// numbered (0,0), (0,1), (0,2), (0,3), (1,1), (1,2), (1,3), (2,2), (2,3), (3,3).
    pub const CLASSES: usize = 10;

    /// The class number of the distances (a, b), each clamped to 3.
    const fn class_of(a: i32, b: i32) -> usize {
        let (a, b) = if a < b { (a, b) } else { (b, a) };
        let (a, b) = (if a > 3 { 3 } else { a }, if b > 3 { 3 } else { b });
        // Rows of the triangle: 4, 3, 2, 1 classes for a = 0, 1, 2, 3.
        let start = [0, 4, 7, 9][a as usize];
        start + (b - a) as usize
    }

    /// Builds a rectangular board.
    pub const fn rect(width: u8, height: u8, clone: Reach, jump: Reach, flip: Reach) -> Self {
        assert!((width as usize) * (height as usize) <= MAX_CELLS);
        assert!(width as usize <= 26);
        let mut coords = [(0i8, 0i8); MAX_CELLS];
        let mut names = [(0u8, 0u8); MAX_CELLS];
        let n = width as usize * height as usize;
        let mut i = 0;
        while i < n {
            let x = (i % width as usize) as u8;
            let y = (i / width as usize) as u8;
            coords[i] = (x as i8, y as i8);
            names[i] = (x, y);
            i += 1;
        }
        Self::build(
            Shape::Rect { width, height },
            n,
            coords,
            names,
            clone,
            jump,
            flip,
        )
    }

    /// Builds the Hexxagon board (side 5, 61 cells).
    pub const fn hex5(clone: Reach, jump: Reach, flip: Reach) -> Self {
        let mut coords = [(0i8, 0i8); MAX_CELLS];
        let mut names = [(0u8, 0u8); MAX_CELLS];
        let mut i = 0;
        let mut c = 0;
        while c < 9 {
            let mut k = 0;
            while k < HEX_COLUMNS[c] {
                // Axial coordinates: q = column, r = row + max(0, column − 4). With these,
                // the neighbours of RULES.md are the displacements (0,±1), (1,0), (1,1),
                // (−1,0), (−1,−1) in every column.
                let r = k as i32 + if c > 4 { c as i32 - 4 } else { 0 };
                coords[i] = (c as i8, r as i8);
                names[i] = (c as u8, k);
                i += 1;
                k += 1;
            }
            c += 1;
        }
        Self::build(Shape::Hex5, i, coords, names, clone, jump, flip)
    }

    const fn build(
        shape: Shape,
        n: usize,
        coords: [(i8, i8); MAX_CELLS],
        names: [(u8, u8); MAX_CELLS],
        clone_reach: Reach,
        jump_reach: Reach,
        flip_reach: Reach,
    ) -> Self {
        let mut clone = [Bitboard::EMPTY; MAX_CELLS];
        let mut jump = [Bitboard::EMPTY; MAX_CELLS];
        let mut flip = [Bitboard::EMPTY; MAX_CELLS];
        let mut a = 0;
        while a < n {
            let mut b = 0;
            while b < n {
                let dx = coords[b].0 as i32 - coords[a].0 as i32;
                let dy = coords[b].1 as i32 - coords[a].1 as i32;
                let bit = 1u64 << b;
                if clone_reach.contains(dx, dy) {
                    clone[a].0 |= bit;
                }
                if jump_reach.contains(dx, dy) {
                    jump[a].0 |= bit;
                }
                if flip_reach.contains(dx, dy) {
                    flip[a].0 |= bit;
                }
                b += 1;
            }
            a += 1;
        }
        let cells = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
        let mut classes = [Bitboard::EMPTY; Geometry::CLASSES];
        let mut i = 0;
        while i < n {
            let (x, y) = (coords[i].0 as i32, coords[i].1 as i32);
            let class = match shape {
                Shape::Rect { width, height } => {
                    let a = min(x, width as i32 - 1 - x);
                    let b = min(y, height as i32 - 1 - y);
                    Geometry::class_of(a, b)
                }
                Shape::Hex5 => {
                    // Hex distance from the centre (4, 4) in these axial coordinates.
                    let (dq, dr) = (x - 4, y - 4);
                    let d = max(max(dq.abs(), dr.abs()), (dq - dr).abs());
                    Geometry::class_of(4 - d, 4 - d)
                }
            };
            classes[class].0 |= 1u64 << i;
            i += 1;
        }
        Geometry {
            classes,
            shape,
            cells: Bitboard(cells),
            num_cells: n as u8,
            clone,
            jump,
            flip,
            clone_reach,
            jump_reach,
            flip_reach,
            coords,
            names,
        }
    }

    /// Grid coordinates of a cell: (file, rank) from 0 on square boards; on the hex board
    /// axial coordinates (q, r) with q the column and r = row − 1 + max(0, q − 4), in which
    /// the six neighbours are the displacements (0,±1), (±1,0), (1,1), (−1,−1).
    #[inline]
    pub fn coords(&self, sq: Square) -> (i8, i8) {
        self.coords[sq.index()]
    }

    /// The cell at grid coordinates `(x, y)`, if the board has one.
    pub fn at_coords(&self, x: i32, y: i32) -> Option<Square> {
        let (x, y) = (i8::try_from(x).ok()?, i8::try_from(y).ok()?);
        (0..self.num_cells)
            .map(Square::new)
            .find(|&s| self.coords[s.index()] == (x, y))
    }

    /// Number of columns (files) of the board.
    pub fn columns(&self) -> u8 {
        match self.shape {
            Shape::Rect { width, .. } => width,
            Shape::Hex5 => 9,
        }
    }

    /// Number of cells in column `col` (from 0).
    pub fn column_len(&self, col: u8) -> u8 {
        match self.shape {
            Shape::Rect { height, .. } => height,
            Shape::Hex5 => HEX_COLUMNS[col as usize],
        }
    }

    /// The cell in column `col` at row `row` (both from 0), if it exists.
    pub fn cell(&self, col: u8, row: u8) -> Option<Square> {
        if col >= self.columns() || row >= self.column_len(col) {
            return None;
        }
        let i = match self.shape {
            Shape::Rect { width, .. } => row as usize * width as usize + col as usize,
            Shape::Hex5 => {
                HEX_COLUMNS[..col as usize]
                    .iter()
                    .map(|&h| h as usize)
                    .sum::<usize>()
                    + row as usize
            }
        };
        Some(Square::new(i as u8))
    }

    /// (column, row) of a cell, both from 0.
    #[inline]
    pub fn column_row(&self, sq: Square) -> (u8, u8) {
        self.names[sq.index()]
    }

    /// The name of a cell: column letter then row number from 1 (`a1`, `e9`).
    pub fn square_name(&self, sq: Square) -> String {
        let (c, r) = self.names[sq.index()];
        format!("{}{}", (b'a' + c) as char, r + 1)
    }

    /// Parses a cell name such as `g7`; `None` if it names no cell of this board.
    pub fn parse_square(&self, s: &str) -> Option<Square> {
        let b = s.as_bytes();
        if b.len() < 2 || !b[0].is_ascii_lowercase() || !b[1..].iter().all(u8::is_ascii_digit) {
            return None;
        }
        if b.len() > 3 || b[1] == b'0' {
            return None;
        }
        let col = b[0] - b'a';
        let row: u8 = s[1..].parse().ok()?;
        self.cell(col, row.checked_sub(1)?)
    }
}

/// Standard Ataxx on 7×7: clone to the 8 neighbours, jump to the 16 cells at distance 2.
pub static ATAXX_7X7: Geometry = Geometry::rect(7, 7, Reach::King, Reach::Ring2, Reach::King);
/// Assimilation on 7×7: straight-line jumps only.
pub static ASSIMILATION_7X7: Geometry =
    Geometry::rect(7, 7, Reach::King, Reach::Straight2, Reach::King);
/// Thomas / Nutsy Ataxx on 7×7 (reconstructed rules): orthogonal clones, jumps and flips.
pub static THOMAS_7X7: Geometry = Geometry::rect(
    7,
    7,
    Reach::Orthogonal,
    Reach::Orthogonal2,
    Reach::Orthogonal,
);
/// Hexxagon on the hexagonal board of side 5.
pub static HEXXAGON: Geometry = Geometry::hex5(Reach::Hex1, Reach::Hex2, Reach::Hex1);

#[cfg(test)]
mod tests {
    use super::*;

    fn names(g: &Geometry, b: Bitboard) -> Vec<String> {
        let mut v: Vec<String> = b.iter().map(|s| g.square_name(s)).collect();
        v.sort();
        v
    }

    #[test]
    fn hex_centre_neighbours_match_rules() {
        let g = &HEXXAGON;
        assert_eq!(g.num_cells, 61);
        let e5 = g.parse_square("e5").unwrap();
        assert_eq!(
            names(g, g.clone[e5.index()]),
            ["d4", "d5", "e4", "e6", "f4", "f5"]
        );
        assert_eq!(g.jump[e5.index()].len(), 12);
    }

    #[test]
    fn hex_neighbour_rule_holds_for_every_cell() {
        // RULES.md's column-by-column neighbour rule, checked against the axial tables.
        let g = &HEXXAGON;
        for sq in g.cells {
            let (c, k) = g.column_row(sq);
            let (c, k) = (c as i32, k as i32);
            let mut want = vec![(c, k - 1), (c, k + 1)];
            if c < 4 {
                want.extend([(c + 1, k + 1), (c + 1, k)]);
            } else {
                want.extend([(c + 1, k), (c + 1, k - 1)]);
            }
            if (1..=4).contains(&c) {
                want.extend([(c - 1, k), (c - 1, k - 1)]);
            } else if c >= 5 {
                want.extend([(c - 1, k + 1), (c - 1, k)]);
            }
            let want: Bitboard = want
                .into_iter()
                .filter(|&(c, k)| c >= 0 && k >= 0)
                .filter_map(|(c, k)| g.cell(c as u8, k as u8))
                .fold(Bitboard::EMPTY, |b, s| b.with(s));
            assert_eq!(g.clone[sq.index()], want, "cell {}", g.square_name(sq));
        }
    }

    #[test]
    fn square_reach_sizes() {
        let d4 = ATAXX_7X7.parse_square("d4").unwrap().index();
        assert_eq!(ATAXX_7X7.clone[d4].len(), 8);
        assert_eq!(ATAXX_7X7.jump[d4].len(), 16);
        assert_eq!(ASSIMILATION_7X7.jump[d4].len(), 8);
        assert_eq!(THOMAS_7X7.clone[d4].len(), 4);
        assert_eq!(THOMAS_7X7.jump[d4].len(), 4);
        let a1 = ATAXX_7X7.parse_square("a1").unwrap().index();
        assert_eq!(names(&ATAXX_7X7, ATAXX_7X7.clone[a1]), ["a2", "b1", "b2"]);
    }

    #[test]
    fn square_names_round_trip() {
        for g in [&ATAXX_7X7, &HEXXAGON] {
            for sq in g.cells {
                assert_eq!(g.parse_square(&g.square_name(sq)), Some(sq));
            }
        }
        assert_eq!(ATAXX_7X7.parse_square("h1"), None);
        assert_eq!(ATAXX_7X7.parse_square("a8"), None);
        assert_eq!(ATAXX_7X7.parse_square("a0"), None);
        assert_eq!(HEXXAGON.parse_square("a6"), None);
        assert_eq!(HEXXAGON.parse_square("e9").map(|s| s.index()), Some(34));
    }
}
