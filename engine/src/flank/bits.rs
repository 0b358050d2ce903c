//! Cell sets of the outflanking boards: a 256-bit set in rows of stride 16, its shifts,
//! and the flood fills of move generation.

use std::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, BitXor, BitXorAssign, Not};

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
    pub(crate) fn step(self, d: i32) -> Bits {
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
pub(crate) fn fill<const D: i32>(own: Bits, opp: Bits, empty: Bits) -> Bits {
    let mut t = own.step(D) & opp;
    loop {
        let n = t | (t.step(D) & opp);
        if n == t {
            return t.step(D) & empty;
        }
        t = n;
    }
}

/// The eight directions as index steps: E, W, N, S, NE, NW, SE, SW.
pub const DIRECTIONS: [i32; 8] = [1, -1, 16, -16, 17, 15, -15, -17];
