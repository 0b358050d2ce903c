//! Boards that fit the 10×10 box (Annexation 64 and both Annexation 76 setups) on 128
//! bits: cell (file, rank) is bit `rank * 11 + file`. File 10 of every rank is padding
//! that is never a cell, so, as on the 256-bit layout, a line stops at the box's side by
//! itself and every direction is a plain shift (±1, ±10, ±11, ±12) of half the width.
//! (Annexation 64 has 64 cells, but its cross spans a 10×10 box: the lines of its arms
//! cannot be shifts of a 64-bit word.)

use std::ops::{BitAnd, BitOr, BitXor, Not};

use super::bits::{Bits, STRIDE};

/// Bits per rank of the layout (ten files and a padding one).
const ROW: usize = 11;

/// The ten files of a rank.
const RANK: u128 = 0x3FF;

/// A set of cells of the 10×10 layout, as two words so that a position keeps the
/// alignment of `u64`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, Debug)]
pub(crate) struct Grid10 {
    lo: u64,
    hi: u64,
}

impl Grid10 {
    /// The set as one integer.
    #[inline(always)]
    pub(crate) const fn get(self) -> u128 {
        (self.hi as u128) << 64 | self.lo as u128
    }

    /// The set of the bits of `x`.
    #[inline(always)]
    pub(crate) const fn new(x: u128) -> Grid10 {
        Grid10 {
            lo: x as u64,
            hi: (x >> 64) as u64,
        }
    }
}

macro_rules! grid10_op {
    ($tr:ident, $f:ident, $op:tt) => {
        impl $tr for Grid10 {
            type Output = Grid10;
            #[inline(always)]
            fn $f(self, r: Grid10) -> Grid10 {
                Grid10 { lo: self.lo $op r.lo, hi: self.hi $op r.hi }
            }
        }
    };
}
grid10_op!(BitAnd, bitand, &);
grid10_op!(BitOr, bitor, |);
grid10_op!(BitXor, bitxor, ^);

impl Not for Grid10 {
    type Output = Grid10;
    #[inline(always)]
    fn not(self) -> Grid10 {
        Grid10 {
            lo: !self.lo,
            hi: !self.hi,
        }
    }
}

/// Cell index of the 256-bit layout (`rank * 16 + file`) for bit `i` of this layout.
#[inline(always)]
pub(crate) const fn to_wide(i: usize) -> usize {
    (i / ROW) * STRIDE + i % ROW
}

/// Bit of this layout for a cell index of the 256-bit layout (file and rank below 10).
#[inline(always)]
pub(crate) const fn to_mid(i: usize) -> usize {
    (i / STRIDE) * ROW + i % STRIDE
}

/// The 256-bit set of the cells of `x`.
pub(crate) const fn widen(x: Grid10) -> Bits {
    let x = x.get();
    let mut b = [0u64; 4];
    let mut r = 0;
    while r < 10 {
        let row = (x >> (r * ROW)) & RANK;
        b[r / 4] |= (row as u64) << ((r % 4) * 16);
        r += 1;
    }
    Bits(b)
}

/// The cells of `b` that lie in the 10×10 box (the others are dropped).
pub(crate) const fn from_wide(b: Bits) -> Grid10 {
    let mut x = 0u128;
    let mut r = 0;
    while r < 10 {
        let row = (b.0[r / 4] >> ((r % 4) * 16)) as u128 & RANK;
        x |= row << (r * ROW);
        r += 1;
    }
    Grid10::new(x)
}

/// `x` moved `d` cells along the index (towards higher bits when positive).
#[inline(always)]
const fn shift(x: u128, d: i32) -> u128 {
    if d > 0 { x << d } else { x >> -d }
}

/// The eight directions as index steps: E, W, N, S, NE, NW, SE, SW.
const DIRECTIONS: [i32; 8] = [1, -1, 11, -11, 12, 10, -10, -12];

/// Empty cells reached from `own` through a contiguous line of `opp` in direction `d`:
/// Kogge–Stone with doubling steps (a line of the 10×10 box holds at most eight enemy
/// pieces: steps of 1, 1, 2 and 4).
#[inline(always)]
const fn fill(own: u128, opp: u128, empty: u128, d: i32) -> u128 {
    let mut t = shift(own, d) & opp;
    t |= shift(t, d) & opp;
    let pairs = opp & shift(opp, d);
    t |= shift(t, 2 * d) & pairs;
    let quads = pairs & shift(pairs, 2 * d);
    t |= shift(t, 4 * d) & quads;
    shift(t, d) & empty
}

/// Legal placements of `own` against `opp` on `empty`.
#[inline(always)]
pub(crate) const fn moves(own: Grid10, opp: Grid10, empty: Grid10) -> Grid10 {
    let (p, o, e) = (own.get(), opp.get(), empty.get());
    let mut m = 0;
    let mut k = 0;
    while k < 8 {
        m |= fill(p, o, e, DIRECTIONS[k]);
        k += 1;
    }
    Grid10::new(m)
}

/// The pieces of `opp` that a placement of `own`'s side on cell `i` flips.
#[inline(always)]
pub(crate) const fn flips(i: usize, own: Grid10, opp: Grid10) -> Grid10 {
    let (p, o) = (own.get(), opp.get());
    let start = 1u128 << (i & 127);
    let mut f = 0;
    let mut k = 0;
    while k < 8 {
        let d = DIRECTIONS[k];
        let mut run = 0;
        let mut x = shift(start, d);
        while x & o != 0 {
            run |= x;
            x = shift(x, d);
        }
        if x & p != 0 {
            f |= run;
        }
        k += 1;
    }
    Grid10::new(f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Rng;

    #[test]
    fn layouts_convert_both_ways() {
        let mut rng = Rng::new(4);
        let cells = (0..10).fold(0u128, |m, r| m | RANK << (r * ROW));
        for _ in 0..1000 {
            let x = Grid10::new(((rng.next_u64() as u128) << 64 | rng.next_u64() as u128) & cells);
            assert_eq!(from_wide(widen(x)), x);
            for i in (0..110).filter(|i| i % ROW < 10) {
                assert_eq!(widen(x).has(to_wide(i)), x.get() >> i & 1 != 0);
                assert_eq!(to_mid(to_wide(i)), i);
            }
        }
    }
}
