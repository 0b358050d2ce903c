//! Boards that fit an 8×8 box (Othello, Reversi, Annexation 32) on one `u64`: cell
//! (file, rank) is bit `rank * 8 + file`, a1 = bit 0, h8 = bit 63. The fastest known
//! routines for these boards work here:
//!
//! - **legal placements** (`moves`): Kogge–Stone fills of the opponent's lines in the
//!   four axes, both ways at once, with doubling steps (a line holds at most six enemy
//!   pieces); the AVX2 level runs the four axes in the four lanes of one vector (variable
//!   shifts), the AVX-512 level merges each fill step into one ternary-logic instruction.
//! - **flips of a placement** (`flips`): per direction, the ray of cells from the
//!   placed cell to the edge (a table of 64 × 8 masks); along a ray towards higher bits
//!   the first cell that is not the opponent's is the lowest set bit of
//!   `ray & !opp`, along a ray towards lower bits the highest one (a leading-zero
//!   count); when that cell is the mover's, the cells before it flip. The AVX2 level
//!   runs the four upward rays in one vector and the four downward ones as a parallel-
//!   prefix fill; the AVX-512 level runs the downward rays with its vector leading-zero
//!   count.
//!
//! Cells outside a board's shape are never empty or the opponent's, so lines stop there
//! by themselves, as on the 256-bit layout; the box edges are handled by the masks.
//! Every level returns the same sets (tests compare them on random boards).

use super::bits::{Bits, STRIDE};
use super::rays::RAYS;
#[cfg(target_arch = "x86_64")]
use crate::isa::{Avx2, Avx512};
use crate::isa::{Level, Portable};

/// Cell index of the 256-bit layout (`rank * 16 + file`) for bit `i` of the 8×8 layout.
#[inline(always)]
pub(crate) const fn to_wide(i: usize) -> usize {
    (i >> 3) * STRIDE + (i & 7)
}

/// Bit of the 8×8 layout for a cell index of the 256-bit layout (file and rank below 8).
#[inline(always)]
pub(crate) const fn to_narrow(i: usize) -> usize {
    (i / STRIDE) * 8 + (i % STRIDE)
}

/// Spreads the four bytes of `x` to the low bytes of four 16-bit lanes.
#[inline(always)]
const fn spread(x: u64) -> u64 {
    let x = x & 0xFFFF_FFFF;
    let x = (x | x << 16) & 0x0000_FFFF_0000_FFFF;
    (x | x << 8) & 0x00FF_00FF_00FF_00FF
}

/// Gathers the low bytes of four 16-bit lanes into four bytes (the inverse of [`spread`]).
#[inline(always)]
const fn gather(x: u64) -> u64 {
    let x = x & 0x00FF_00FF_00FF_00FF;
    let x = (x | x >> 8) & 0x0000_FFFF_0000_FFFF;
    (x | x >> 16) & 0xFFFF_FFFF
}

/// The 256-bit set of the cells of `x`.
#[inline(always)]
pub(crate) const fn widen(x: u64) -> Bits {
    Bits([spread(x), spread(x >> 32), 0, 0])
}

/// The cells of `b` that lie in the 8×8 box (the others are dropped).
#[inline(always)]
pub(crate) const fn narrow(b: Bits) -> u64 {
    gather(b.0[0]) | gather(b.0[1]) << 32
}

/// Opponent cells that can lie inside a line along each axis (E–W, N–S, and the two
/// diagonals): not on an edge the axis leaves the box through.
const INNER: [u64; 4] = [
    0x7E7E_7E7E_7E7E_7E7E,
    0x00FF_FFFF_FFFF_FF00,
    0x007E_7E7E_7E7E_7E00,
    0x007E_7E7E_7E7E_7E00,
];
/// Index steps of the four axes.
const AXES: [u32; 4] = [1, 8, 7, 9];

/// Legal placements of the mover `own` against `opp` on the empty cells `empty`: the
/// portable kernel.
#[inline(always)]
pub(crate) fn moves_portable(own: u64, opp: u64, empty: u64) -> u64 {
    let mut m = 0;
    let mut a = 0;
    while a < 4 {
        let d = AXES[a];
        let o = opp & INNER[a];
        let mut l = o & (own << d);
        let mut r = o & (own >> d);
        l |= o & (l << d);
        r |= o & (r >> d);
        let pl = o & (o << d);
        let pr = pl >> d;
        l |= pl & (l << (2 * d));
        r |= pr & (r >> (2 * d));
        l |= pl & (l << (2 * d));
        r |= pr & (r >> (2 * d));
        m |= l << d | r >> d;
        a += 1;
    }
    m & empty
}

/// The opponent pieces a placement of `own`'s side on `sq` flips: the portable kernel.
#[inline(always)]
pub(crate) fn flips_portable(sq: usize, own: u64, opp: u64) -> u64 {
    let rays = &RAYS[sq & 63];
    let mut f = 0;
    let mut d = 0;
    while d < 4 {
        // Upward: the first cell that is not the opponent's is the lowest bit.
        let ray = rays[d];
        let y = ray & !opp;
        let b = y & y.wrapping_neg();
        if b & own != 0 {
            f |= b.wrapping_sub(1) & ray;
        }
        // Downward: the highest bit. Bit 0 stands in when the ray is all opponent; it is
        // then either off the ray or an opponent piece, never the mover's on the ray.
        let ray = rays[d + 4];
        let y = ray & !opp;
        let h = (1u64 << 63) >> (y | 1).leading_zeros();
        if h & own & ray != 0 {
            f |= ray & !((h << 1).wrapping_sub(1));
        }
        d += 1;
    }
    f
}

/// The 8×8 kernels of an instruction-set level.
pub(crate) trait Grid8: Level {
    /// Legal placements of `own` against `opp` on `empty`.
    fn moves(self, own: u64, opp: u64, empty: u64) -> u64;
    /// The opponent pieces a placement of `own`'s side on `sq` flips.
    fn flips(self, sq: usize, own: u64, opp: u64) -> u64;
}

impl Grid8 for Portable {
    #[inline(always)]
    fn moves(self, own: u64, opp: u64, empty: u64) -> u64 {
        moves_portable(own, opp, empty)
    }

    #[inline(always)]
    fn flips(self, sq: usize, own: u64, opp: u64) -> u64 {
        flips_portable(sq, own, opp)
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use crate::flank::rays::RAYS;

    /// OR of the four lanes.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn or_lanes(v: __m256i) -> u64 {
        let x = _mm_or_si128(_mm256_castsi256_si128(v), _mm256_extracti128_si256::<1>(v));
        let x = _mm_or_si128(x, _mm_unpackhi_epi64(x, x));
        _mm_cvtsi128_si64(x) as u64
    }

    /// The four rays of `sq` starting at direction `first` (0 or 4).
    #[inline]
    #[target_feature(enable = "avx2")]
    fn rays(sq: usize, first: usize) -> __m256i {
        let r: &[u64; 4] = RAYS[sq & 63][first..first + 4]
            .try_into()
            .expect("four rays");
        // SAFETY: `r` is four `u64`s, 32 readable bytes; the load is unaligned.
        unsafe { _mm256_loadu_si256(r.as_ptr().cast()) }
    }

    const INNER: [i64; 4] = [
        0x7E7E_7E7E_7E7E_7E7E,
        0x00FF_FFFF_FFFF_FF00,
        0x007E_7E7E_7E7E_7E00,
        0x007E_7E7E_7E7E_7E00,
    ];

    /// [`super::moves_portable`], the four axes in the four lanes.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) fn moves_avx2(own: u64, opp: u64, empty: u64) -> u64 {
        let d = _mm256_set_epi64x(9, 7, 8, 1);
        let d2 = _mm256_add_epi64(d, d);
        let p = _mm256_set1_epi64x(own as i64);
        let o = _mm256_and_si256(
            _mm256_set1_epi64x(opp as i64),
            _mm256_set_epi64x(INNER[3], INNER[2], INNER[1], INNER[0]),
        );
        let mut l = _mm256_and_si256(o, _mm256_sllv_epi64(p, d));
        let mut r = _mm256_and_si256(o, _mm256_srlv_epi64(p, d));
        l = _mm256_or_si256(l, _mm256_and_si256(o, _mm256_sllv_epi64(l, d)));
        r = _mm256_or_si256(r, _mm256_and_si256(o, _mm256_srlv_epi64(r, d)));
        let pl = _mm256_and_si256(o, _mm256_sllv_epi64(o, d));
        let pr = _mm256_srlv_epi64(pl, d);
        l = _mm256_or_si256(l, _mm256_and_si256(pl, _mm256_sllv_epi64(l, d2)));
        r = _mm256_or_si256(r, _mm256_and_si256(pr, _mm256_srlv_epi64(r, d2)));
        l = _mm256_or_si256(l, _mm256_and_si256(pl, _mm256_sllv_epi64(l, d2)));
        r = _mm256_or_si256(r, _mm256_and_si256(pr, _mm256_srlv_epi64(r, d2)));
        let m = _mm256_or_si256(_mm256_sllv_epi64(l, d), _mm256_srlv_epi64(r, d));
        or_lanes(m) & empty
    }

    /// [`super::moves_portable`] with AVX-512's ternary logic: each fill step is one
    /// instruction (`a | (b & c)` is truth table 0xF8).
    #[inline]
    #[target_feature(enable = "avx2,avx512f,avx512vl")]
    pub(super) fn moves_avx512(own: u64, opp: u64, empty: u64) -> u64 {
        let d = _mm256_set_epi64x(9, 7, 8, 1);
        let d2 = _mm256_add_epi64(d, d);
        let p = _mm256_set1_epi64x(own as i64);
        let o = _mm256_and_si256(
            _mm256_set1_epi64x(opp as i64),
            _mm256_set_epi64x(INNER[3], INNER[2], INNER[1], INNER[0]),
        );
        let mut l = _mm256_and_si256(o, _mm256_sllv_epi64(p, d));
        let mut r = _mm256_and_si256(o, _mm256_srlv_epi64(p, d));
        l = _mm256_ternarylogic_epi64::<0xF8>(l, o, _mm256_sllv_epi64(l, d));
        r = _mm256_ternarylogic_epi64::<0xF8>(r, o, _mm256_srlv_epi64(r, d));
        let pl = _mm256_and_si256(o, _mm256_sllv_epi64(o, d));
        let pr = _mm256_srlv_epi64(pl, d);
        l = _mm256_ternarylogic_epi64::<0xF8>(l, pl, _mm256_sllv_epi64(l, d2));
        r = _mm256_ternarylogic_epi64::<0xF8>(r, pr, _mm256_srlv_epi64(r, d2));
        l = _mm256_ternarylogic_epi64::<0xF8>(l, pl, _mm256_sllv_epi64(l, d2));
        r = _mm256_ternarylogic_epi64::<0xF8>(r, pr, _mm256_srlv_epi64(r, d2));
        let m = _mm256_or_si256(_mm256_sllv_epi64(l, d), _mm256_srlv_epi64(r, d));
        or_lanes(m) & empty
    }

    /// The upward rays (E, N, NW, NE) of [`super::flips_portable`] in four lanes: the
    /// cells up to the first non-opponent one (`y ^ (y − 1)`, y = ray without the
    /// opponent's pieces) flip, that cell excluded, when it is the mover's.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn flips_up(sq: usize, p: __m256i, o: __m256i) -> __m256i {
        let ray = rays(sq, 0);
        let y = _mm256_andnot_si256(o, ray);
        let upto = _mm256_and_si256(
            _mm256_xor_si256(y, _mm256_add_epi64(y, _mm256_set1_epi64x(-1))),
            ray,
        );
        let run = _mm256_andnot_si256(p, upto);
        // Unchanged: the first non-opponent cell is not the mover's (or there is none).
        _mm256_andnot_si256(_mm256_cmpeq_epi64(run, upto), run)
    }

    /// The downward rays (W, S, SE, SW) of [`super::flips_portable`] in four lanes,
    /// without a leading-zero count: the highest non-opponent cell of the ray is the
    /// mover's exactly when the ray's mover cells, as a number, exceed its other
    /// non-opponent cells (all below bit 63, so a signed comparison is right); then the
    /// ray cells above the highest mover cell flip. (The comparison is acepck's idea,
    /// from Egaroucid.)
    #[inline]
    #[target_feature(enable = "avx2")]
    fn flips_down(sq: usize, p: __m256i, o: __m256i) -> __m256i {
        let ray = rays(sq, 4);
        let d = _mm256_set_epi64x(9, 7, 8, 1);
        let mine = _mm256_and_si256(p, ray);
        // Every ray cell at or below a mover cell (a ray holds at most seven cells).
        let mut below = _mm256_or_si256(mine, _mm256_srlv_epi64(mine, d));
        below = _mm256_or_si256(below, _mm256_srlv_epi64(below, _mm256_add_epi64(d, d)));
        below = _mm256_or_si256(below, _mm256_srlv_epi64(below, _mm256_slli_epi64::<2>(d)));
        let others = _mm256_xor_si256(_mm256_andnot_si256(o, ray), mine);
        let hit = _mm256_cmpgt_epi64(mine, others);
        _mm256_and_si256(_mm256_andnot_si256(below, ray), hit)
    }

    /// [`super::flips_portable`], the eight rays in the lanes of two vectors.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) fn flips_avx2(sq: usize, own: u64, opp: u64) -> u64 {
        let p = _mm256_set1_epi64x(own as i64);
        let o = _mm256_set1_epi64x(opp as i64);
        or_lanes(_mm256_or_si256(flips_up(sq, p, o), flips_down(sq, p, o)))
    }

    /// [`super::flips_portable`]: the downward rays by AVX-512's leading-zero count.
    #[inline]
    #[target_feature(enable = "avx2,avx512f,avx512vl,avx512cd")]
    pub(super) fn flips_avx512(sq: usize, own: u64, opp: u64) -> u64 {
        let p = _mm256_set1_epi64x(own as i64);
        let o = _mm256_set1_epi64x(opp as i64);
        let up = flips_up(sq, p, o);
        let ray = rays(sq, 4);
        let y = _mm256_or_si256(_mm256_andnot_si256(o, ray), _mm256_set1_epi64x(1));
        let h = _mm256_srlv_epi64(_mm256_set1_epi64x(i64::MIN), _mm256_lzcnt_epi64(y));
        // Where the first non-opponent cell is the mover's (on the ray), the ray cells
        // above it flip.
        let hit = _mm256_test_epi64_mask(_mm256_and_si256(h, p), ray);
        let below = _mm256_add_epi64(_mm256_add_epi64(h, h), _mm256_set1_epi64x(-1));
        let down = _mm256_maskz_andnot_epi64(hit, below, ray);
        or_lanes(_mm256_or_si256(up, down))
    }
}

#[cfg(target_arch = "x86_64")]
impl Grid8 for Avx2 {
    #[inline(always)]
    fn moves(self, own: u64, opp: u64, empty: u64) -> u64 {
        // SAFETY: an `Avx2` token exists only where the CPU runs AVX2 (see `isa`).
        unsafe { x86::moves_avx2(own, opp, empty) }
    }

    #[inline(always)]
    fn flips(self, sq: usize, own: u64, opp: u64) -> u64 {
        // SAFETY: as above.
        unsafe { x86::flips_avx2(sq, own, opp) }
    }
}

#[cfg(target_arch = "x86_64")]
impl Grid8 for Avx512 {
    #[inline(always)]
    fn moves(self, own: u64, opp: u64, empty: u64) -> u64 {
        // SAFETY: an `Avx512` token exists only where the CPU runs AVX-512 F, VL and CD
        // and AVX2 (see `isa`).
        unsafe { x86::moves_avx512(own, opp, empty) }
    }

    #[inline(always)]
    fn flips(self, sq: usize, own: u64, opp: u64) -> u64 {
        // SAFETY: as above.
        unsafe { x86::flips_avx512(sq, own, opp) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Rng;
    use crate::isa::Task;

    /// The flips by walking each direction cell by cell.
    fn flips_walk(sq: usize, own: u64, opp: u64) -> u64 {
        let (f0, r0) = ((sq % 8) as i32, (sq / 8) as i32);
        let mut all = 0;
        for (df, dr) in [
            (1, 0),
            (-1, 0),
            (0, 1),
            (0, -1),
            (1, 1),
            (1, -1),
            (-1, 1),
            (-1, -1),
        ] {
            let (mut f, mut r, mut run) = (f0 + df, r0 + dr, 0u64);
            while (0..8).contains(&f) && (0..8).contains(&r) && opp >> (r * 8 + f) & 1 != 0 {
                run |= 1 << (r * 8 + f);
                f += df;
                r += dr;
            }
            if (0..8).contains(&f) && (0..8).contains(&r) && own >> (r * 8 + f) & 1 != 0 {
                all |= run;
            }
        }
        all
    }

    fn random_board(rng: &mut Rng) -> (u64, u64) {
        let a = rng.next_u64();
        let b = rng.next_u64() & rng.next_u64().rotate_left(rng.below(64) as u32);
        let filled = a | b;
        let own = a & !b;
        (
            own & filled,
            !own & filled & rng.next_u64().rotate_left(7) | b & !a,
        )
    }

    struct Check;
    impl<L: Grid8> Task<L> for Check {
        type Output = ();
        #[inline(always)]
        fn run(self, l: L) {
            let mut rng = Rng::new(L::ISA as u64 + 11);
            for n in 0..20_000 {
                let (own, opp) = random_board(&mut rng);
                let (own, opp) = (own & !opp, opp & !own);
                let empty = !(own | opp);
                let want: u64 = (0..64)
                    .filter(|&s| empty >> s & 1 != 0 && flips_walk(s, own, opp) != 0)
                    .fold(0, |m, s| m | 1 << s);
                assert_eq!(l.moves(own, opp, empty), want, "{n}: {own:#x} {opp:#x}");
                for sq in 0..64 {
                    if own >> sq & 1 == 0 && opp >> sq & 1 == 0 {
                        assert_eq!(
                            l.flips(sq, own, opp),
                            flips_walk(sq, own, opp),
                            "{n} {sq}: {own:#x} {opp:#x}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn every_level_agrees_with_a_walk_along_the_lines() {
        for isa in crate::Isa::available() {
            crate::isa::with_level!(isa, L, l => l.run(Check));
        }
    }

    #[test]
    fn layouts_convert_both_ways() {
        let mut rng = Rng::new(3);
        for _ in 0..1000 {
            let x = rng.next_u64();
            assert_eq!(narrow(widen(x)), x);
            for i in 0..64 {
                assert_eq!(widen(x).has(to_wide(i)), x >> i & 1 != 0);
                assert_eq!(to_narrow(to_wide(i)), i);
            }
        }
    }
}
