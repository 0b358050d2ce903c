//! Move-generation kernels of the Ataxx family: for each board and rule set, the few set
//! operations that move generation, bulk counting, make-move and the hash update are made
//! of, specialised at compile time.
//!
//! The geometry stays data ([`Geometry`]): on the rectangular boards every clone, jump or
//! flip displacement `(dx, dy)` of a [`Reach`] is a shift of the cell index by
//! `dy * width + dx`, applied to the cells whose image stays on the board
//! ([`Shifts`], computed from the reach at compile time). So "every clone target of these
//! pieces" is eight shifts instead of a loop over the pieces. The hexagonal board has no
//! fixed shift per displacement (its columns differ in length) and keeps the per-cell
//! masks of its [`Geometry`].
//!
//! A kernel is chosen once per call from the rule set's [`Variant`] (see
//! [`with_kernel!`](crate::with_kernel)); perft and the search's hot loops run inside one
//! kernel, without dispatching again.

use crate::geometry::{
    ASSIMILATION_7X7, ATAXX_7X7, Geometry, HEXXAGON, MAX_CELLS, Reach, THOMAS_7X7,
};
use crate::zobrist::ZOBRIST;

/// The displacements of a [`Reach`] on a `width`×`height` board as shifts of the cell index
/// (`dy * width + dx`), each with the cells whose image lies on the board.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Shifts {
    n: usize,
    amount: [i8; 16],
    from: [u64; 16],
}

impl Shifts {
    /// The shifts of `reach` on a `width`×`height` rectangle.
    pub(crate) const fn of(width: u8, height: u8, reach: Reach) -> Shifts {
        let (w, h) = (width as i32, height as i32);
        let mut s = Shifts {
            n: 0,
            amount: [0; 16],
            from: [0; 16],
        };
        let mut dy = -2;
        while dy <= 2 {
            let mut dx = -2;
            while dx <= 2 {
                if reach.contains(dx, dy) {
                    let mut from = 0u64;
                    let mut y = 0;
                    while y < h {
                        let mut x = 0;
                        while x < w {
                            let (tx, ty) = (x + dx, y + dy);
                            if tx >= 0 && tx < w && ty >= 0 && ty < h {
                                from |= 1 << (y * w + x);
                            }
                            x += 1;
                        }
                        y += 1;
                    }
                    s.amount[s.n] = (dy * w + dx) as i8;
                    s.from[s.n] = from;
                    s.n += 1;
                }
                dx += 1;
            }
            dy += 1;
        }
        s
    }

    /// The image of `cells` under displacement `i`.
    #[inline(always)]
    const fn image(&self, i: usize, cells: u64) -> u64 {
        let a = self.amount[i];
        let c = cells & self.from[i];
        if a >= 0 { c << a } else { c >> -a }
    }

    /// Every cell reached from `cells` by one of the displacements.
    #[inline(always)]
    pub(crate) const fn targets(&self, cells: u64) -> u64 {
        let mut t = 0;
        let mut i = 0;
        while i < self.n {
            t |= self.image(i, cells);
            i += 1;
        }
        t
    }

    /// The number of (cell of `cells`, target in `empty`) pairs.
    #[inline(always)]
    pub(crate) const fn pairs(&self, cells: u64, empty: u64) -> u32 {
        let mut n = 0;
        let mut i = 0;
        while i < self.n {
            n += (self.image(i, cells) & empty).count_ones();
            i += 1;
        }
        n
    }
}

/// `Z[x][s] ^ Z[o][s]` for every cell: the hash change of a piece that flips.
static FLIP_KEYS: [u64; MAX_CELLS] = {
    let mut k = [0u64; MAX_CELLS];
    let mut i = 0;
    while i < MAX_CELLS {
        k[i] = ZOBRIST.pieces[0][i] ^ ZOBRIST.pieces[1][i];
        i += 1;
    }
    k
};

/// The flip-hash of the 3×3 block around each cell of a 7-wide board, by rows: entry
/// `[t][r][m]` is the XOR of [`FLIP_KEYS`] over the cells `t + 7(r − 1) − 1 + k`
/// (k = 0, 1, 2) whose bit `k` is set in `m`, so the hash change of any flips around `t`
/// is three look-ups.
static FLIP_KEYS3: [[[u64; 8]; 3]; 64] = {
    let mut t = [[[0u64; 8]; 3]; 64];
    let mut to = 0;
    while to < 64 {
        let mut r = 0;
        while r < 3 {
            let mut m = 0;
            while m < 8 {
                let mut h = 0;
                let mut k = 0;
                while k < 3 {
                    let cell = to as i32 + 7 * (r as i32 - 1) - 1 + k;
                    if m >> k & 1 != 0 && cell >= 0 && cell < MAX_CELLS as i32 {
                        h ^= FLIP_KEYS[cell as usize];
                    }
                    k += 1;
                }
                t[to][r][m] = h;
                m += 1;
            }
            r += 1;
        }
        to += 1;
    }
    t
};

/// XOR of [`FLIP_KEYS`] over `cells`, one look-up per cell.
#[inline(always)]
fn flip_keys_loop(mut cells: u64) -> u64 {
    let mut h = 0;
    while cells != 0 {
        h ^= FLIP_KEYS[cells.trailing_zeros() as usize];
        cells &= cells - 1;
    }
    h
}

/// XOR of [`FLIP_KEYS`] over `cells`, which lie in the 3×3 block around `to` on a 7-wide
/// board: three table look-ups, no loop.
#[inline(always)]
fn flip_keys_block7(to: usize, cells: u64) -> u64 {
    // Row r of the block starts at bit `to + 7(r − 1) − 1` of `cells`, bit `to + 7r` of
    // `c` (cells < 2^49, so no bit is lost). `to` < 49: the mask only drops a bounds check.
    let rows = &FLIP_KEYS3[to & 63];
    let c = cells << 8;
    rows[0][(c >> to) as usize & 7]
        ^ rows[1][(c >> (to + 7)) as usize & 7]
        ^ rows[2][(c >> (to + 14)) as usize & 7]
}

/// The set operations of one board and rule set of the Ataxx family.
pub(crate) trait Kernel {
    /// The board and its per-cell masks.
    const GEOMETRY: &'static Geometry;

    /// Every cell a clone of one of `own` lands on (empty or not).
    fn clone_targets(own: u64) -> u64;

    /// The number of jumps from a cell of `own` to a cell of `empty`.
    fn jump_count(own: u64, empty: u64) -> u32;

    /// Every cell a clone or a jump from one of `own` lands on (empty or not).
    fn reach(own: u64) -> u64;

    /// Every cell whose enemy piece flips when a piece lands on one of `cells`.
    fn flip_targets(cells: u64) -> u64;

    /// The cells whose enemy pieces flip when a piece lands on `to`.
    #[inline(always)]
    fn flip_mask(to: usize) -> u64 {
        Self::GEOMETRY.flip[to & 63].0
    }

    /// XOR of the flip keys (`Z[x][s] ^ Z[o][s]`) of `flipped`, all flip neighbours of `to`.
    #[inline(always)]
    fn flip_hash(_to: usize, flipped: u64) -> u64 {
        flip_keys_loop(flipped)
    }

    /// The number of legal moves other than the pass of a side with pieces `own`.
    #[inline(always)]
    fn count(own: u64, empty: u64) -> u32 {
        (Self::clone_targets(own) & empty).count_ones() + Self::jump_count(own, empty)
    }

    /// Whether a side with pieces `own` has a move other than the pass.
    #[inline(always)]
    fn can_move(own: u64, empty: u64) -> bool {
        Self::reach(own) & empty != 0
    }
}

/// Pieces above this count take the per-displacement jump count; at or below it, the
/// per-piece one (each is faster on its side, measured on perft and search).
const JUMP_LOOP_MAX: u32 = 6;

/// The jump count of a rectangular board: per piece through the masks when the pieces are
/// few, per displacement through the shifts otherwise.
#[inline(always)]
fn rect_jump_count(g: &Geometry, jumps: &Shifts, own: u64, empty: u64) -> u32 {
    if own.count_ones() <= JUMP_LOOP_MAX {
        let mut n = 0;
        let mut p = own;
        while p != 0 {
            n += (g.jump[p.trailing_zeros() as usize].0 & empty).count_ones();
            p &= p - 1;
        }
        n
    } else {
        jumps.pairs(own, empty)
    }
}

macro_rules! rect_kernel {
    ($(#[$doc:meta])* $name:ident, $geometry:expr, $clone:expr, $jump:expr, $flip:expr, $block_flips:expr) => {
        $(#[$doc])*
        pub(crate) struct $name;

        impl $name {
            const CLONES: Shifts = Shifts::of(7, 7, $clone);
            const JUMPS: Shifts = Shifts::of(7, 7, $jump);
            const FLIPS: Shifts = Shifts::of(7, 7, $flip);
        }

        impl Kernel for $name {
            const GEOMETRY: &'static Geometry = &$geometry;

            #[inline(always)]
            fn clone_targets(own: u64) -> u64 {
                Self::CLONES.targets(own)
            }

            #[inline(always)]
            fn jump_count(own: u64, empty: u64) -> u32 {
                rect_jump_count(Self::GEOMETRY, &Self::JUMPS, own, empty)
            }

            #[inline(always)]
            fn reach(own: u64) -> u64 {
                Self::CLONES.targets(own) | Self::JUMPS.targets(own)
            }

            #[inline(always)]
            fn flip_targets(cells: u64) -> u64 {
                Self::FLIPS.targets(cells)
            }

            #[inline(always)]
            fn flip_hash(to: usize, flipped: u64) -> u64 {
                if $block_flips {
                    flip_keys_block7(to, flipped)
                } else {
                    flip_keys_loop(flipped)
                }
            }
        }
    };
}

rect_kernel!(
    /// Standard Ataxx, 7×7.
    AtaxxKernel,
    ATAXX_7X7,
    Reach::King,
    Reach::Ring2,
    Reach::King,
    true
);
rect_kernel!(
    /// Assimilation, 7×7.
    AssimilationKernel,
    ASSIMILATION_7X7,
    Reach::King,
    Reach::Straight2,
    Reach::King,
    true
);
rect_kernel!(
    /// Thomas, 7×7 (orthogonal flips lie in the 3×3 block too).
    ThomasKernel,
    THOMAS_7X7,
    Reach::Orthogonal,
    Reach::Orthogonal2,
    Reach::Orthogonal,
    true
);

/// Hexxagon: the per-cell masks of the geometry.
pub(crate) struct HexKernel;

impl Kernel for HexKernel {
    const GEOMETRY: &'static Geometry = &HEXXAGON;

    #[inline(always)]
    fn clone_targets(own: u64) -> u64 {
        let g = Self::GEOMETRY;
        let (mut t, mut p) = (0, own);
        while p != 0 {
            t |= g.clone[p.trailing_zeros() as usize].0;
            p &= p - 1;
        }
        t
    }

    #[inline(always)]
    fn jump_count(own: u64, empty: u64) -> u32 {
        let g = Self::GEOMETRY;
        let (mut n, mut p) = (0, own);
        while p != 0 {
            n += (g.jump[p.trailing_zeros() as usize].0 & empty).count_ones();
            p &= p - 1;
        }
        n
    }

    #[inline(always)]
    fn reach(own: u64) -> u64 {
        let g = Self::GEOMETRY;
        let (mut t, mut p) = (0, own);
        while p != 0 {
            let s = p.trailing_zeros() as usize;
            t |= g.clone[s].0 | g.jump[s].0;
            p &= p - 1;
        }
        t
    }

    #[inline(always)]
    fn flip_targets(cells: u64) -> u64 {
        let g = Self::GEOMETRY;
        let (mut t, mut p) = (0, cells);
        while p != 0 {
            t |= g.flip[p.trailing_zeros() as usize].0;
            p &= p - 1;
        }
        t
    }

    #[inline(always)]
    fn count(own: u64, empty: u64) -> u32 {
        let g = Self::GEOMETRY;
        let (mut clones, mut n, mut p) = (0, 0, own);
        while p != 0 {
            let s = p.trailing_zeros() as usize;
            clones |= g.clone[s].0;
            n += (g.jump[s].0 & empty).count_ones();
            p &= p - 1;
        }
        n + (clones & empty).count_ones()
    }
}

/// Runs `$body` with the type alias `$k` naming the [`Kernel`] of `$variant`.
macro_rules! with_kernel {
    ($variant:expr, $k:ident => $body:expr) => {
        match $variant {
            $crate::Variant::Ataxx => {
                type $k = $crate::movegen::AtaxxKernel;
                $body
            }
            $crate::Variant::Assimilation => {
                type $k = $crate::movegen::AssimilationKernel;
                $body
            }
            $crate::Variant::Thomas => {
                type $k = $crate::movegen::ThomasKernel;
                $body
            }
            $crate::Variant::Hexxagon => {
                type $k = $crate::movegen::HexKernel;
                $body
            }
        }
    };
}
pub(crate) use with_kernel;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Rng, Variant};

    fn check<K: Kernel>(rng: &mut Rng) {
        let g = K::GEOMETRY;
        for _ in 0..2000 {
            let own = rng.next_u64() & rng.next_u64() & g.cells.0;
            let empty = rng.next_u64() & g.cells.0 & !own;
            let (mut clones, mut reach, mut jumps, mut flips) = (0, 0, 0, 0);
            for s in crate::Bitboard(empty) {
                flips |= g.flip[s.index()].0;
            }
            assert_eq!(K::flip_targets(empty), flips);
            for s in crate::Bitboard(own) {
                clones |= g.clone[s.index()].0;
                reach |= g.clone[s.index()].0 | g.jump[s.index()].0;
                jumps += (g.jump[s.index()].0 & empty).count_ones();
            }
            assert_eq!(K::clone_targets(own), clones);
            assert_eq!(K::reach(own), reach);
            assert_eq!(K::jump_count(own, empty), jumps);
            assert_eq!(K::count(own, empty), jumps + (clones & empty).count_ones());
            let to = rng.below(g.num_cells as u64) as usize;
            let flipped = K::flip_mask(to) & rng.next_u64();
            assert_eq!(K::flip_hash(to, flipped), flip_keys_loop(flipped));
        }
    }

    #[test]
    fn kernels_agree_with_the_per_cell_masks() {
        let mut rng = Rng::new(7);
        for v in Variant::ALL {
            with_kernel!(v, K => check::<K>(&mut rng));
        }
    }
}
