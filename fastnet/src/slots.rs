//! The policy subnets' outputs `relu(c + W z)` for the slots a position's moves use, and
//! for those alone (a move is scored by its from-slot's and to-slot's outputs; a
//! position's moves use a part of the 2·cells + 1 slots, and a search expands many
//! positions).
//!
//! Per output, the same operations in the same order as [`crate::simd::columns`] over
//! the whole of W (a multiply then an add, never fused; the rank index `k` into partial
//! sum `k mod 4`; then `c + ((s0 + s1) + (s2 + s3))`): the same bits in every build, so
//! the outputs do not depend on which slots a position needs.

use engine::Isa;

/// W stored for [`outputs`]: a slot's `rank × dim` weights contiguous, rank major, the
/// rank padded with zeros to a multiple of 4 (`p_w` is `slots·dim × rank`, row major).
pub fn by_slot(p_w: &[f32], slots: usize, dim: usize, rank: usize) -> Vec<f32> {
    assert_eq!(p_w.len(), slots * dim * rank);
    let r4 = padded_rank(rank);
    let mut w = vec![0.0; slots * r4 * dim];
    for s in 0..slots {
        for j in 0..dim {
            for k in 0..rank {
                w[s * r4 * dim + k * dim + j] = p_w[(s * dim + j) * rank + k];
            }
        }
    }
    w
}

/// `rank` rounded up to a multiple of 4 (the length `z` has in [`outputs`]).
pub fn padded_rank(rank: usize) -> usize {
    rank.div_ceil(4) * 4
}

/// `out[s·dim + j] = max(0, c[s·dim + j] + Σₖ z[k]·w[s][k][j])` for each slot `s` of
/// `slots` (other entries of `out` are left as they are). `z` is the projection padded
/// with zeros to [`padded_rank`], `w` from [`by_slot`].
pub fn outputs(
    isa: Isa,
    z: &[f32],
    w: &[f32],
    c: &[f32],
    dim: usize,
    slots: &[u16],
    out: &mut [f32],
) {
    assert!(z.len().is_multiple_of(4) && dim > 0);
    let block = z.len() * dim;
    assert_eq!(w.len() % block, 0);
    let count = w.len() / block;
    assert!(c.len() == count * dim && out.len() >= c.len());
    assert!(slots.iter().all(|&s| usize::from(s) < count));
    match isa {
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 if dim == 4 && z.len() <= MAX_RANK => {
            // SAFETY: this module is private to the crate, and its callers pass the
            // level of a `QuantNet`, which holds a supported one (see `simd::add_i8`): Avx512
            // only when the CPU reports AVX-512 F/BW/VL and AVX2. Bounds asserted above.
            unsafe { outputs4_avx512(z, w, c, slots, out) }
        }
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 if dim == 4 && z.len() <= MAX_RANK => {
            // SAFETY: as above; Avx2 only when the CPU reports AVX2.
            unsafe { outputs4_avx2(z, w, c, slots, out) }
        }
        _ => outputs_body(z, w, c, dim, slots, out),
    }
}

/// The largest (padded) rank the x86 kernels take; larger ones, which no net uses, go
/// through the body.
#[cfg(target_arch = "x86_64")]
const MAX_RANK: usize = 64;

/// `z[k]` in each of the 4 lanes of rank `k` (`z.len() <= MAX_RANK`), the first
/// `4·z.len()` entries: a vector of it multiplies 4 outputs of consecutive ranks.
#[cfg(target_arch = "x86_64")]
fn replicated(z: &[f32]) -> [f32; 4 * MAX_RANK] {
    let mut zz = [0f32; 4 * MAX_RANK];
    for (k, &zk) in z.iter().enumerate() {
        zz[4 * k..4 * k + 4].fill(zk);
    }
    zz
}

/// The end of an x86 kernel for slot `s`: the four partial sums `p` of its 4 outputs
/// added as the body adds them, then `c`, then the clamp, stored into `out`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn finish(p: [std::arch::x86_64::__m128; 4], c: &[f32], out: &mut [f32], s: usize) {
    use std::arch::x86_64::*;
    assert!(4 * s + 4 <= c.len().min(out.len()));
    // SAFETY: SSE is part of x86_64; 4·s + 4 <= c.len() and out.len() (asserted).
    unsafe {
        let t = _mm_add_ps(_mm_add_ps(p[0], p[1]), _mm_add_ps(p[2], p[3]));
        let v = _mm_add_ps(_mm_loadu_ps(c.as_ptr().add(4 * s)), t);
        _mm_storeu_ps(out.as_mut_ptr().add(4 * s), _mm_max_ps(v, _mm_setzero_ps()));
    }
}

#[inline(always)]
fn outputs_body(z: &[f32], w: &[f32], c: &[f32], dim: usize, slots: &[u16], out: &mut [f32]) {
    let block = z.len() * dim;
    for &s in slots {
        let s = usize::from(s);
        let ws = &w[s * block..(s + 1) * block];
        for j in 0..dim {
            let mut p = [0f32; 4];
            for (q, zq) in z.chunks_exact(4).enumerate() {
                for (g, (p, &zk)) in p.iter_mut().zip(zq).enumerate() {
                    *p += zk * ws[(4 * q + g) * dim + j];
                }
            }
            out[s * dim + j] = (c[s * dim + j] + ((p[0] + p[1]) + (p[2] + p[3]))).max(0.0);
        }
    }
}

/// [`outputs_body`] for 4 outputs a slot with AVX2: a vector holds 2 ranks × the 4
/// outputs, the ranks `k` with `k mod 4` in {0, 1} summed in one vector and those in
/// {2, 3} in another, so the lanes of the two are the four partial sums of the body;
/// two slots at a time.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn outputs4_avx2(z: &[f32], w: &[f32], c: &[f32], slots: &[u16], out: &mut [f32]) {
    use std::arch::x86_64::*;
    assert!(z.len() <= MAX_RANK);
    let block = z.len() * 4;
    let zz = replicated(z);
    macro_rules! reduce_store {
        ($lo:expr, $hi:expr, $s:expr) => {{
            let (lo, hi) = ($lo, $hi);
            let p = [
                _mm256_castps256_ps128(lo),
                _mm256_extractf128_ps::<1>(lo),
                _mm256_castps256_ps128(hi),
                _mm256_extractf128_ps::<1>(hi),
            ];
            finish(p, c, out, usize::from($s));
        }};
    }
    let pairs = slots.chunks_exact(2);
    let rest = pairs.remainder();
    for q in pairs {
        let [a, b] = [q[0], q[1]].map(|s| usize::from(s) * block);
        let (mut a_lo, mut a_hi, mut b_lo, mut b_hi) = (
            _mm256_setzero_ps(),
            _mm256_setzero_ps(),
            _mm256_setzero_ps(),
            _mm256_setzero_ps(),
        );
        for m in (0..block).step_by(16) {
            // SAFETY: block is a multiple of 16 (4 ranks × 4 outputs), so m + 16 <=
            // block = 4·z.len() <= zz.len() (z.len() <= MAX_RANK, asserted); each slot's
            // start + block <= w.len() (slots asserted below the count by `outputs`).
            unsafe {
                let z0 = _mm256_loadu_ps(zz.as_ptr().add(m));
                let z1 = _mm256_loadu_ps(zz.as_ptr().add(m + 8));
                let wp = w.as_ptr().add(m);
                a_lo = _mm256_add_ps(a_lo, _mm256_mul_ps(z0, _mm256_loadu_ps(wp.add(a))));
                b_lo = _mm256_add_ps(b_lo, _mm256_mul_ps(z0, _mm256_loadu_ps(wp.add(b))));
                a_hi = _mm256_add_ps(a_hi, _mm256_mul_ps(z1, _mm256_loadu_ps(wp.add(a + 8))));
                b_hi = _mm256_add_ps(b_hi, _mm256_mul_ps(z1, _mm256_loadu_ps(wp.add(b + 8))));
            }
        }
        reduce_store!(a_lo, a_hi, q[0]);
        reduce_store!(b_lo, b_hi, q[1]);
    }
    for &s in rest {
        let start = usize::from(s) * block;
        let (mut lo, mut hi) = (_mm256_setzero_ps(), _mm256_setzero_ps());
        for m in (0..block).step_by(16) {
            // SAFETY: as above.
            unsafe {
                let wp = w.as_ptr().add(start + m);
                lo = _mm256_add_ps(
                    lo,
                    _mm256_mul_ps(_mm256_loadu_ps(zz.as_ptr().add(m)), _mm256_loadu_ps(wp)),
                );
                hi = _mm256_add_ps(
                    hi,
                    _mm256_mul_ps(
                        _mm256_loadu_ps(zz.as_ptr().add(m + 8)),
                        _mm256_loadu_ps(wp.add(8)),
                    ),
                );
            }
        }
        reduce_store!(lo, hi, s);
    }
}

/// [`outputs_body`] for 4 outputs a slot, with intrinsics: a vector holds 4 ranks × the 4
/// outputs, so lane `4g + j` of a slot's sum is partial sum `g` of output `j`; four slots
/// at a time, their sums independent.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2")]
fn outputs4_avx512(z: &[f32], w: &[f32], c: &[f32], slots: &[u16], out: &mut [f32]) {
    use std::arch::x86_64::*;
    assert!(z.len() <= MAX_RANK);
    let block = z.len() * 4;
    let zz = replicated(z);
    macro_rules! reduce_store {
        ($sum:expr, $s:expr) => {{
            let sum = $sum;
            let p = [
                _mm512_extractf32x4_ps::<0>(sum),
                _mm512_extractf32x4_ps::<1>(sum),
                _mm512_extractf32x4_ps::<2>(sum),
                _mm512_extractf32x4_ps::<3>(sum),
            ];
            finish(p, c, out, usize::from($s));
        }};
    }
    let quads = slots.chunks_exact(4);
    let rest = quads.remainder();
    for q in quads {
        let [a, b, cc, d] = [q[0], q[1], q[2], q[3]].map(|s| usize::from(s) * block);
        let (mut sa, mut sb, mut sc, mut sd) = (
            _mm512_setzero_ps(),
            _mm512_setzero_ps(),
            _mm512_setzero_ps(),
            _mm512_setzero_ps(),
        );
        for m in (0..block).step_by(16) {
            // SAFETY: m + 16 <= block = 4·z.len() <= zz.len() (z.len() <= MAX_RANK,
            // asserted); each slot's start + block <= w.len() (slots asserted below the
            // count by `outputs`).
            unsafe {
                let zv = _mm512_loadu_ps(zz.as_ptr().add(m));
                let wp = w.as_ptr().add(m);
                sa = _mm512_add_ps(sa, _mm512_mul_ps(zv, _mm512_loadu_ps(wp.add(a))));
                sb = _mm512_add_ps(sb, _mm512_mul_ps(zv, _mm512_loadu_ps(wp.add(b))));
                sc = _mm512_add_ps(sc, _mm512_mul_ps(zv, _mm512_loadu_ps(wp.add(cc))));
                sd = _mm512_add_ps(sd, _mm512_mul_ps(zv, _mm512_loadu_ps(wp.add(d))));
            }
        }
        reduce_store!(sa, q[0]);
        reduce_store!(sb, q[1]);
        reduce_store!(sc, q[2]);
        reduce_store!(sd, q[3]);
    }
    for &s in rest {
        let start = usize::from(s) * block;
        let mut sum = _mm512_setzero_ps();
        for m in (0..block).step_by(16) {
            // SAFETY: as above.
            unsafe {
                let zv = _mm512_loadu_ps(zz.as_ptr().add(m));
                sum = _mm512_add_ps(
                    sum,
                    _mm512_mul_ps(zv, _mm512_loadu_ps(w.as_ptr().add(start + m))),
                );
            }
        }
        reduce_store!(sum, s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simd;

    /// The whole of W through `simd::columns`, as the policy computed it before.
    fn by_columns(isa: Isa, z: &[f32], p_w: &[f32], c: &[f32], rank: usize) -> Vec<f32> {
        let n = c.len().div_ceil(simd::BLOCK) * simd::BLOCK;
        let mut cols = vec![0.0; n * rank];
        for o in 0..c.len() {
            for k in 0..rank {
                cols[k * n + o] = p_w[o * rank + k];
            }
        }
        let mut y = c.to_vec();
        y.resize(n, 0.0);
        let list: Vec<u16> = (0..rank as u16).collect();
        simd::columns(isa, &z[..rank], &list, &cols, &mut y);
        y.truncate(c.len());
        y.iter().map(|v| v.max(0.0)).collect()
    }

    #[test]
    fn the_slots_outputs_are_the_whole_products_bits_in_every_build() {
        let mut rng = engine::Rng::new(3);
        let mut f = || (rng.below(2001) as f32 - 1000.0) / 997.0;
        for (slots, dim, rank) in [
            (99, 4, 32),
            (99, 4, 30),
            (129, 4, 16),
            (99, 3, 32),
            (7, 2, 5),
        ] {
            let p_w: Vec<f32> = (0..slots * dim * rank).map(|_| f()).collect();
            let c: Vec<f32> = (0..slots * dim).map(|_| f() * 0.1).collect();
            let mut z: Vec<f32> = (0..rank).map(|_| f().max(0.0) * 3.0).collect();
            let want = by_columns(Isa::Portable, &z, &p_w, &c, rank);
            z.resize(padded_rank(rank), 0.0);
            let w = by_slot(&p_w, slots, dim, rank);
            // Every slot, and a few out of order (the rest must stay untouched).
            let all: Vec<u16> = (0..slots as u16).collect();
            let some: Vec<u16> = [5u16, 1, 6, 3, 2]
                .into_iter()
                .filter(|&s| usize::from(s) < slots)
                .collect();
            for isa in Isa::available() {
                let mut out = vec![f32::NAN; slots * dim];
                outputs(isa, &z, &w, &c, dim, &all, &mut out);
                let same = out
                    .iter()
                    .zip(&want)
                    .all(|(a, b)| a.to_bits() == b.to_bits());
                assert!(
                    same,
                    "{isa:?} {slots}×{dim}×{rank}: {:?} against {:?}",
                    &out[..8],
                    &want[..8]
                );
                assert_eq!(
                    want,
                    by_columns(isa, &z, &p_w, &c, rank),
                    "columns in {isa:?}"
                );
                let mut out = vec![f32::NAN; slots * dim];
                outputs(isa, &z, &w, &c, dim, &some, &mut out);
                for s in 0..slots {
                    let picked = some.contains(&(s as u16));
                    for j in 0..dim {
                        let (o, x) = (out[s * dim + j], want[s * dim + j]);
                        assert!(if picked {
                            o.to_bits() == x.to_bits()
                        } else {
                            o.is_nan()
                        });
                    }
                }
            }
        }
    }
}
