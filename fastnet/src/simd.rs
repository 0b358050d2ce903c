//! The integer kernels of the quantised value net, one body each, built for the portable
//! target and again for AVX2 and AVX-512 (chosen at run time by [`engine::Isa::current`],
//! so `FLIPZERO_ISA=portable|avx2|avx512` picks one). Every build computes the same
//! integers: the tests compare each with the scalar reference.

use engine::Isa;

/// Adds `w` to `acc` lane by lane (wrapping, as the quantisation keeps sums in range).
#[inline]
pub fn add(isa: Isa, acc: &mut [i16], w: &[i16]) {
    assert_eq!(acc.len(), w.len());
    match isa {
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => {
            // SAFETY: `Isa::current` (the only source of the level a net is built with)
            // returns Avx512 only when the CPU reports AVX-512 F/BW/VL and AVX2.
            unsafe { add_avx512(acc, w) }
        }
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => {
            // SAFETY: as above, Avx2 only when the CPU reports AVX2.
            unsafe { add_avx2(acc, w) }
        }
        _ => add_body(acc, w),
    }
}

/// Subtracts `w` from `acc` lane by lane (wrapping).
#[inline]
pub fn sub(isa: Isa, acc: &mut [i16], w: &[i16]) {
    assert_eq!(acc.len(), w.len());
    match isa {
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => {
            // SAFETY: see `add`.
            unsafe { sub_avx512(acc, w) }
        }
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => {
            // SAFETY: see `add`.
            unsafe { sub_avx2(acc, w) }
        }
        _ => sub_body(acc, w),
    }
}

/// Σ clamp(acc, 0, qa)² · w, exact (i64; the SIMD builds sum i32 lanes, each of at most
/// len/8 products of at most 255 · 255 · 127: no overflow for `acc.len()` ≤ 2,048 with
/// |w| ≤ 127 and qa ≤ 255).
#[inline]
pub fn screlu_dot(isa: Isa, acc: &[i16], w: &[i16], qa: i16) -> i64 {
    assert_eq!(acc.len(), w.len());
    assert!(acc.len() <= 2048 && acc.len().is_multiple_of(32) && (0..=255).contains(&qa));
    match isa {
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => {
            // SAFETY: see `add`; the lengths are equal multiples of 32 (checked above).
            unsafe { screlu_dot_avx512(acc, w, qa) }
        }
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => {
            // SAFETY: see `add`; the lengths are equal multiples of 32 (checked above).
            unsafe { screlu_dot_avx2(acc, w, qa) }
        }
        _ => screlu_dot_scalar(acc, w, qa),
    }
}

/// Adds rows `features` of the row-major matrix `w` (rows of `acc.len()`) to `acc`: the
/// accumulator refresh, in one call so that the loop runs inside one kernel build.
#[inline]
pub fn add_rows(isa: Isa, acc: &mut [i16], w: &[i16], features: &[u32]) {
    let h = acc.len();
    assert!(features.iter().all(|&f| (f as usize + 1) * h <= w.len()));
    match isa {
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => {
            // SAFETY: see `add`; every row lies inside `w` (checked above).
            unsafe { add_rows_avx512(acc, w, features) }
        }
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => {
            // SAFETY: see `add`; every row lies inside `w` (checked above).
            unsafe { add_rows_avx2(acc, w, features) }
        }
        _ => add_rows_body(acc, w, features),
    }
}

#[inline(always)]
fn add_rows_body(acc: &mut [i16], w: &[i16], features: &[u32]) {
    let h = acc.len();
    for &f in features {
        add_body(acc, &w[f as usize * h..(f as usize + 1) * h]);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn add_rows_avx2(acc: &mut [i16], w: &[i16], features: &[u32]) {
    add_rows_body(acc, w, features)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2")]
fn add_rows_avx512(acc: &mut [i16], w: &[i16], features: &[u32]) {
    add_rows_body(acc, w, features)
}

#[inline(always)]
fn add_body(acc: &mut [i16], w: &[i16]) {
    for (a, b) in acc.iter_mut().zip(w) {
        *a = a.wrapping_add(*b);
    }
}

#[inline(always)]
fn sub_body(acc: &mut [i16], w: &[i16]) {
    for (a, b) in acc.iter_mut().zip(w) {
        *a = a.wrapping_sub(*b);
    }
}

/// The reference of [`screlu_dot`].
pub fn screlu_dot_scalar(acc: &[i16], w: &[i16], qa: i16) -> i64 {
    acc.iter()
        .zip(w)
        .map(|(&a, &w)| {
            let v = i64::from(a.clamp(0, qa));
            v * v * i64::from(w)
        })
        .sum()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn add_avx2(acc: &mut [i16], w: &[i16]) {
    add_body(acc, w)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2")]
fn add_avx512(acc: &mut [i16], w: &[i16]) {
    add_body(acc, w)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn sub_avx2(acc: &mut [i16], w: &[i16]) {
    sub_body(acc, w)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2")]
fn sub_avx512(acc: &mut [i16], w: &[i16]) {
    sub_body(acc, w)
}

/// v = clamp(acc, 0, qa); (v·w as i16) madd v: v·w fits an i16 (255 · 127 < 2¹⁵), and
/// each of the 8 i32 lanes sums len/8 products of at most 255 · 32,385.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn screlu_dot_avx2(acc: &[i16], w: &[i16], qa: i16) -> i64 {
    use std::arch::x86_64::*;
    let zero = _mm256_setzero_si256();
    let top = _mm256_set1_epi16(qa);
    let mut sum = _mm256_setzero_si256();
    for (a, b) in acc.chunks_exact(16).zip(w.chunks_exact(16)) {
        // SAFETY: each chunk holds 16 i16 = 32 bytes; unaligned loads.
        let (va, vw) = unsafe {
            (
                _mm256_loadu_si256(a.as_ptr().cast()),
                _mm256_loadu_si256(b.as_ptr().cast()),
            )
        };
        let v = _mm256_min_epi16(_mm256_max_epi16(va, zero), top);
        let vw = _mm256_mullo_epi16(v, vw);
        sum = _mm256_add_epi32(sum, _mm256_madd_epi16(vw, v));
    }
    let mut lanes = [0i32; 8];
    // SAFETY: `lanes` is 32 bytes.
    unsafe { _mm256_storeu_si256(lanes.as_mut_ptr().cast(), sum) };
    lanes.iter().map(|&x| i64::from(x)).sum()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2")]
fn screlu_dot_avx512(acc: &[i16], w: &[i16], qa: i16) -> i64 {
    use std::arch::x86_64::*;
    let zero = _mm512_setzero_si512();
    let top = _mm512_set1_epi16(qa);
    let mut sum = _mm512_setzero_si512();
    for (a, b) in acc.chunks_exact(32).zip(w.chunks_exact(32)) {
        // SAFETY: each chunk holds 32 i16 = 64 bytes; unaligned loads.
        let (va, vw) = unsafe {
            (
                _mm512_loadu_si512(a.as_ptr().cast()),
                _mm512_loadu_si512(b.as_ptr().cast()),
            )
        };
        let v = _mm512_min_epi16(_mm512_max_epi16(va, zero), top);
        let vw = _mm512_mullo_epi16(v, vw);
        sum = _mm512_add_epi32(sum, _mm512_madd_epi16(vw, v));
    }
    let mut lanes = [0i32; 16];
    // SAFETY: `lanes` is 64 bytes.
    unsafe { _mm512_storeu_si512(lanes.as_mut_ptr().cast(), sum) };
    lanes.iter().map(|&x| i64::from(x)).sum()
}

/// y += Wᵀx for a row-major `rows × n` matrix `w` (f32): the policy's projections.
#[inline]
pub fn matvec(isa: Isa, w: &[f32], x: &[f32], y: &mut [f32]) {
    assert_eq!(w.len(), x.len() * y.len());
    match isa {
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 | Isa::Avx2 => {
            // SAFETY: see `add` (both levels include AVX2 and FMA).
            unsafe { matvec_avx2(w, x, y) }
        }
        _ => matvec_body(w, x, y),
    }
}

#[inline(always)]
fn matvec_body(w: &[f32], x: &[f32], y: &mut [f32]) {
    let n = x.len();
    for (r, out) in y.iter_mut().enumerate() {
        let row = &w[r * n..(r + 1) * n];
        // Eight partial sums, so that the loop vectorises (f32 addition is not
        // associative: the order is fixed, the same in every build).
        let mut part = [0f32; 8];
        for (c, (a, b)) in row.chunks_exact(8).zip(x.chunks_exact(8)).enumerate() {
            let _ = c;
            for k in 0..8 {
                part[k] += a[k] * b[k];
            }
        }
        let tail: f32 = row[n - n % 8..]
            .iter()
            .zip(&x[n - n % 8..])
            .map(|(a, b)| a * b)
            .sum();
        *out += part.iter().sum::<f32>() + tail;
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn matvec_avx2(w: &[f32], x: &[f32], y: &mut [f32]) {
    matvec_body(w, x, y)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noise(n: usize, seed: u64, lo: i32, hi: i32) -> Vec<i16> {
        let mut r = engine::Rng::new(seed);
        (0..n)
            .map(|_| (lo + (r.next_u64() % (hi - lo + 1) as u64) as i32) as i16)
            .collect()
    }

    #[test]
    fn every_kernel_build_equals_the_scalar_one() {
        for n in [32, 256, 1024] {
            let acc = noise(n, 1, -400, 700);
            let w = noise(n, 2, -127, 127);
            let want = screlu_dot_scalar(&acc, &w, 255);
            let mut added = acc.clone();
            add_body(&mut added, &w);
            let mut taken = acc.clone();
            sub_body(&mut taken, &w);
            for isa in Isa::available() {
                assert_eq!(screlu_dot(isa, &acc, &w, 255), want, "{isa:?} n={n}");
                let mut a = acc.clone();
                add(isa, &mut a, &w);
                assert_eq!(a, added, "{isa:?}");
                sub(isa, &mut a, &w);
                assert_eq!(a, acc, "{isa:?}");
                let mut s = acc.clone();
                sub(isa, &mut s, &w);
                assert_eq!(s, taken, "{isa:?}");
                let mut rows = acc.clone();
                let two = [w.clone(), acc.clone()].concat();
                add_rows(isa, &mut rows, &two, &[1, 0, 1]);
                let mut want_rows = acc.clone();
                for r in [&acc, &w, &acc] {
                    add_body(&mut want_rows, r);
                }
                assert_eq!(rows, want_rows, "{isa:?}");
            }
        }
        // Saturated inputs and the largest weights: no lane overflows.
        let acc = vec![i16::MAX; 2048];
        let w = vec![127i16; 2048];
        for isa in Isa::available() {
            assert_eq!(
                screlu_dot(isa, &acc, &w, 255),
                2048 * 255 * 255 * 127,
                "{isa:?}"
            );
        }
    }

    #[test]
    fn matvec_builds_agree_to_rounding() {
        let mut r = engine::Rng::new(3);
        let mut f = || (r.next_u64() % 2001) as f32 / 1000.0 - 1.0;
        let (rows, n) = (12, 260);
        let w: Vec<f32> = (0..rows * n).map(|_| f()).collect();
        let x: Vec<f32> = (0..n).map(|_| f()).collect();
        let mut want = vec![0f32; rows];
        for (r, o) in want.iter_mut().enumerate() {
            *o = (0..n)
                .map(|c| f64::from(w[r * n + c]) * f64::from(x[c]))
                .sum::<f64>() as f32;
        }
        for isa in Isa::available() {
            let mut y = vec![0f32; rows];
            matvec(isa, &w, &x, &mut y);
            for (a, b) in y.iter().zip(&want) {
                assert!((a - b).abs() < 1e-4, "{isa:?}: {a} vs {b}");
            }
        }
    }
}
