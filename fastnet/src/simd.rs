//! The kernels of the quantised net (the value's integers, the policy's floats), one body
//! each, built for the portable target and again for AVX2 and AVX-512 (chosen at run time
//! by [`engine::Isa::current`], so `FLIPZERO_ISA=portable|avx2|avx512` picks one). Every
//! build computes the same integers and the same floats' bits: the tests compare each
//! with the scalar reference. Private to the crate: a level is taken only from a net,
//! which holds a supported one, so no safe caller can run an instruction set the CPU
//! lacks.

use engine::Isa;

/// Adds the byte row `w` to `acc` lane by lane, each byte widened to i16 (wrapping, as
/// the quantisation keeps sums in range).
#[inline]
pub fn add_i8(isa: Isa, acc: &mut [i16], w: &[i8]) {
    assert_eq!(acc.len(), w.len());
    match isa {
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => {
            // SAFETY: this module is private to the crate, and its callers pass the level
            // of a `QuantNet`, which comes from `Isa::current` or `QuantNet::with_isa`
            // (which asserts `is_supported`): Avx512 only when the CPU reports AVX-512
            // F/BW/VL and AVX2.
            unsafe { add_i8_avx512(acc, w) }
        }
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => {
            // SAFETY: as above, Avx2 only when the CPU reports AVX2.
            unsafe { add_i8_avx2(acc, w) }
        }
        _ => add_i8_body(acc, w),
    }
}

/// Subtracts the byte row `w` from `acc` lane by lane (wrapping).
#[inline]
pub fn sub_i8(isa: Isa, acc: &mut [i16], w: &[i8]) {
    assert_eq!(acc.len(), w.len());
    match isa {
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => {
            // SAFETY: see `add_i8`.
            unsafe { sub_i8_avx512(acc, w) }
        }
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => {
            // SAFETY: see `add_i8`.
            unsafe { sub_i8_avx2(acc, w) }
        }
        _ => sub_i8_body(acc, w),
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
            // SAFETY: see `add_i8`; the lengths are equal multiples of 32 (checked above).
            unsafe { screlu_dot_avx512(acc, w, qa) }
        }
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => {
            // SAFETY: see `add_i8`; the lengths are equal multiples of 32 (checked above).
            unsafe { screlu_dot_avx2(acc, w, qa) }
        }
        _ => screlu_dot_scalar(acc, w, qa),
    }
}

/// Adds rows `features` of the row-major byte matrix `w` (rows of `acc.len()`) to `acc`,
/// each byte widened to i16: the accumulator refresh, in one call so that the loop runs
/// inside one kernel build.
#[inline]
pub fn add_rows_i8(isa: Isa, acc: &mut [i16], w: &[i8], features: &[u32]) {
    let h = acc.len();
    assert!(features.iter().all(|&f| (f as usize + 1) * h <= w.len()));
    match isa {
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => {
            // SAFETY: see `add_i8`; every row lies inside `w` (checked above).
            unsafe { add_rows_i8_avx512(acc, w, features) }
        }
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => {
            // SAFETY: see `add_i8`; every row lies inside `w` (checked above).
            unsafe { add_rows_i8_avx2(acc, w, features) }
        }
        _ => add_rows_i8_body(acc, w, features),
    }
}

#[inline(always)]
fn add_rows_i8_body(acc: &mut [i16], w: &[i8], features: &[u32]) {
    let h = acc.len();
    for &f in features {
        add_i8_body(acc, &w[f as usize * h..(f as usize + 1) * h]);
    }
}

/// The x86 builds of the row sums ([`add_rows_i8_body`], [`add_rows_f32_body`]), with
/// intrinsics: up to `K` vectors of `$w` lanes of the accumulator stay in registers while
/// every row (of `$wel`, read by `$loadw` as a vector of `$el`) is added to them (the
/// compiler's own build loaded and stored the accumulator at every row: 9% of a search's
/// time for the board policy's rows); the lanes short of a vector at the end by the
/// body's step `$step`. The same additions in the same order in
/// every lane: the same integers, the same floats' bits.
macro_rules! add_rows_x86 {
    ($name:ident, $feat:literal, $el:ty, $wel:ty, $ix:ty, $w:literal, $load:ident,
     $loadw:path, $add:ident, $store:ident, $step:path) => {
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = $feat)]
        fn $name(acc: &mut [$el], w: &[$wel], features: &[$ix]) {
            use std::arch::x86_64::*;
            const K: usize = 8;
            let h = acc.len();
            assert!(features.iter().all(|&f| (f as usize + 1) * h <= w.len()));
            let mut j = 0;
            while j + $w <= h {
                // As many whole vectors as are left, up to K.
                let k_here = ((h - j) / $w).min(K);
                // SAFETY: j + (k + 1)·$w <= j + k_here·$w <= h = acc.len() for k < k_here.
                let mut v = [unsafe { $load(acc.as_ptr().add(j).cast()) }; K];
                for (k, v) in v.iter_mut().enumerate().take(k_here).skip(1) {
                    // SAFETY: as above.
                    *v = unsafe { $load(acc.as_ptr().add(j + k * $w).cast()) };
                }
                for &f in features {
                    let row = f as usize * h + j;
                    for (k, v) in v.iter_mut().enumerate().take(k_here) {
                        // SAFETY: (f + 1)·h <= w.len() (asserted) and j + (k + 1)·$w <= h.
                        *v = $add(*v, unsafe { $loadw(w.as_ptr().add(row + k * $w).cast()) });
                    }
                }
                for (k, v) in v.iter().enumerate().take(k_here) {
                    // SAFETY: as the loads from `acc`.
                    unsafe { $store(acc.as_mut_ptr().add(j + k * $w).cast(), *v) };
                }
                j += k_here * $w;
            }
            if j < h {
                for &f in features {
                    let row = f as usize * h;
                    $step(&mut acc[j..], &w[row + j..row + h]);
                }
            }
        }
    };
}

/// 16 bytes widened to 16 i16 lanes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn widen_avx2(p: *const std::arch::x86_64::__m128i) -> std::arch::x86_64::__m256i {
    use std::arch::x86_64::*;
    // SAFETY: the caller reads 16 bytes at `p` (unaligned load).
    _mm256_cvtepi8_epi16(unsafe { _mm_loadu_si128(p) })
}

/// 32 bytes widened to 32 i16 lanes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2")]
#[inline]
unsafe fn widen_avx512(p: *const std::arch::x86_64::__m256i) -> std::arch::x86_64::__m512i {
    use std::arch::x86_64::*;
    // SAFETY: the caller reads 32 bytes at `p` (unaligned load).
    _mm512_cvtepi8_epi16(unsafe { _mm256_loadu_si256(p) })
}

add_rows_x86!(
    add_rows_i8_avx2,
    "avx2",
    i16,
    i8,
    u32,
    16,
    _mm256_loadu_si256,
    widen_avx2,
    _mm256_add_epi16,
    _mm256_storeu_si256,
    add_i8_body
);
add_rows_x86!(
    add_rows_i8_avx512,
    "avx512f,avx512bw,avx512vl,avx2",
    i16,
    i8,
    u32,
    32,
    _mm512_loadu_si512,
    widen_avx512,
    _mm512_add_epi16,
    _mm512_storeu_si512,
    add_i8_body
);

/// Adds rows `features` of the row-major f32 matrix `w` (rows of `acc.len()`) to `acc`,
/// row after row: the board policy's subnet outputs. Each lane's sum is the same
/// additions in the same order in every build (no lane meets another): the same bits.
#[inline]
pub fn add_rows_f32(isa: Isa, acc: &mut [f32], w: &[f32], features: &[u16]) {
    let h = acc.len();
    assert!(
        features
            .iter()
            .all(|&f| (usize::from(f) + 1) * h <= w.len())
    );
    match isa {
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => {
            // SAFETY: see `add_i8`; every row lies inside `w` (checked above).
            unsafe { add_rows_f32_avx512(acc, w, features) }
        }
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => {
            // SAFETY: see `add_i8`; every row lies inside `w` (checked above).
            unsafe { add_rows_f32_avx2(acc, w, features) }
        }
        _ => add_rows_f32_body(acc, w, features),
    }
}

#[inline(always)]
fn add_rows_f32_body(acc: &mut [f32], w: &[f32], features: &[u16]) {
    let h = acc.len();
    for &f in features {
        add_f32_body(acc, &w[usize::from(f) * h..(usize::from(f) + 1) * h]);
    }
}

#[inline(always)]
fn add_f32_body(acc: &mut [f32], w: &[f32]) {
    for (a, b) in acc.iter_mut().zip(w) {
        *a += b;
    }
}

add_rows_x86!(
    add_rows_f32_avx2,
    "avx2",
    f32,
    f32,
    u16,
    8,
    _mm256_loadu_ps,
    _mm256_loadu_ps,
    _mm256_add_ps,
    _mm256_storeu_ps,
    add_f32_body
);
add_rows_x86!(
    add_rows_f32_avx512,
    "avx512f,avx512bw,avx512vl,avx2",
    f32,
    f32,
    u16,
    16,
    _mm512_loadu_ps,
    _mm512_loadu_ps,
    _mm512_add_ps,
    _mm512_storeu_ps,
    add_f32_body
);

#[inline(always)]
fn add_i8_body(acc: &mut [i16], w: &[i8]) {
    for (a, b) in acc.iter_mut().zip(w) {
        *a = a.wrapping_add(i16::from(*b));
    }
}

#[inline(always)]
fn sub_i8_body(acc: &mut [i16], w: &[i8]) {
    for (a, b) in acc.iter_mut().zip(w) {
        *a = a.wrapping_sub(i16::from(*b));
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
fn add_i8_avx2(acc: &mut [i16], w: &[i8]) {
    add_i8_body(acc, w)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2")]
fn add_i8_avx512(acc: &mut [i16], w: &[i8]) {
    add_i8_body(acc, w)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn sub_i8_avx2(acc: &mut [i16], w: &[i8]) {
    sub_i8_body(acc, w)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2")]
fn sub_i8_avx512(acc: &mut [i16], w: &[i8]) {
    sub_i8_body(acc, w)
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

/// Lanes of the blocks [`columns`] works in: the outputs a block keeps in registers
/// while it runs through the columns (`y.len()` is a multiple of it).
pub const BLOCK: usize = 32;

/// y += Σ x_c · col_c over the columns `c` listed in `list` (`cols` holds `x.len()`
/// columns of `y.len()` floats one after another; `y.len()` a multiple of [`BLOCK`]):
/// the policy's projections, column by column, so that only the listed (nonzero)
/// inputs cost anything. The listed columns are summed in four interleaved partial sums
/// (the `i`-th listed column into partial `i mod 4`, each in list order), added to `y`
/// as `y + ((s₀ + s₁) + (s₂ + s₃))`; each product a multiply then an add, never fused.
/// The order is part of the definition: every build and the WebAssembly player
/// compute the same bits.
#[inline]
pub fn columns(isa: Isa, x: &[f32], list: &[u16], cols: &[f32], y: &mut [f32]) {
    assert_eq!(cols.len(), x.len() * y.len());
    assert!(y.len().is_multiple_of(BLOCK));
    assert!(list.iter().all(|&c| usize::from(c) < x.len()));
    match isa {
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => {
            // SAFETY: see `add_i8`.
            unsafe { columns_avx512(x, list, cols, y) }
        }
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => {
            // SAFETY: see `add_i8`.
            unsafe { columns_avx2(x, list, cols, y) }
        }
        _ => columns_body(x, list, cols, y),
    }
}

#[inline(always)]
fn add_column(part: &mut [f32; BLOCK], a: f32, col: &[f32]) {
    for (o, &w) in part.iter_mut().zip(&col[..BLOCK]) {
        *o += a * w;
    }
}

#[inline(always)]
fn columns_body(x: &[f32], list: &[u16], cols: &[f32], y: &mut [f32]) {
    let n = y.len();
    let col = |c: u16, b: usize| &cols[usize::from(c) * n + b * BLOCK..];
    for (b, out) in y.chunks_exact_mut(BLOCK).enumerate() {
        let [mut s0, mut s1, mut s2, mut s3] = [[0f32; BLOCK]; 4];
        let quads = list.chunks_exact(4);
        let rest = quads.remainder();
        for q in quads {
            add_column(&mut s0, x[usize::from(q[0])], col(q[0], b));
            add_column(&mut s1, x[usize::from(q[1])], col(q[1], b));
            add_column(&mut s2, x[usize::from(q[2])], col(q[2], b));
            add_column(&mut s3, x[usize::from(q[3])], col(q[3], b));
        }
        if let Some(&c) = rest.first() {
            add_column(&mut s0, x[usize::from(c)], col(c, b));
        }
        if let Some(&c) = rest.get(1) {
            add_column(&mut s1, x[usize::from(c)], col(c, b));
        }
        if let Some(&c) = rest.get(2) {
            add_column(&mut s2, x[usize::from(c)], col(c, b));
        }
        for (j, o) in out.iter_mut().enumerate() {
            *o += (s0[j] + s1[j]) + (s2[j] + s3[j]);
        }
    }
}

/// The x86 builds of [`columns_body`], written with intrinsics: left to the compiler,
/// the same body was vectorised in one build profile and spilled its partial sums to
/// memory, or was not vectorised at all, in another. One vector of `$w` lanes at a time,
/// its four partial sums in registers; per lane, the same operations in the same order
/// as the body (a multiply then an add, never fused), so the same bits.
macro_rules! columns_x86 {
    ($name:ident, $feat:literal, $w:literal, $zero:ident, $load:ident, $set1:ident,
     $mul:ident, $add:ident, $store:ident) => {
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = $feat)]
        fn $name(x: &[f32], list: &[u16], cols: &[f32], y: &mut [f32]) {
            use std::arch::x86_64::*;
            let n = y.len();
            assert!(n.is_multiple_of($w) && cols.len() == x.len() * n);
            assert!(list.iter().all(|&c| usize::from(c) < x.len()));
            let quads = list.chunks_exact(4);
            let rest = quads.remainder();
            for j in (0..n).step_by($w) {
                // One column into a partial sum.
                macro_rules! step {
                    ($s:ident, $c:expr) => {{
                        let c = usize::from($c);
                        // SAFETY: c < x.len() and j + $w <= n (asserted above), so
                        // c·n + j + $w <= x.len()·n = cols.len(): in bounds.
                        let w = unsafe { $load(cols.as_ptr().add(c * n + j)) };
                        $s = $add($s, $mul($set1(x[c]), w));
                    }};
                }
                let (mut s0, mut s1, mut s2, mut s3) = ($zero(), $zero(), $zero(), $zero());
                for q in quads.clone() {
                    step!(s0, q[0]);
                    step!(s1, q[1]);
                    step!(s2, q[2]);
                    step!(s3, q[3]);
                }
                if let Some(&c) = rest.first() {
                    step!(s0, c);
                }
                if let Some(&c) = rest.get(1) {
                    step!(s1, c);
                }
                if let Some(&c) = rest.get(2) {
                    step!(s2, c);
                }
                let sum = $add($add(s0, s1), $add(s2, s3));
                // SAFETY: j + $w <= n = y.len().
                unsafe {
                    let p = y.as_mut_ptr().add(j);
                    $store(p, $add($load(p), sum));
                }
            }
        }
    };
}

columns_x86!(
    columns_avx2,
    "avx2",
    8,
    _mm256_setzero_ps,
    _mm256_loadu_ps,
    _mm256_set1_ps,
    _mm256_mul_ps,
    _mm256_add_ps,
    _mm256_storeu_ps
);
columns_x86!(
    columns_avx512,
    "avx512f,avx512bw,avx512vl,avx2",
    16,
    _mm512_setzero_ps,
    _mm512_loadu_ps,
    _mm512_set1_ps,
    _mm512_mul_ps,
    _mm512_add_ps,
    _mm512_storeu_ps
);

/// clamp(v, 0, qa) / qa of each lane, into `out` (as `v as f32 * (1 / qa)`, the same
/// in every build), and the indices of the lanes where it is not 0 into `list` (in
/// order): the activations the policy reads, and the columns [`columns`] needs.
#[inline]
pub fn activations(isa: Isa, lanes: &[i16], qa: i16, out: &mut [f32], list: &mut Vec<u16>) {
    assert_eq!(lanes.len(), out.len());
    assert!(lanes.len() <= usize::from(u16::MAX));
    list.clear();
    list.resize(lanes.len(), 0);
    let n = match isa {
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => {
            // SAFETY: see `add_i8`.
            unsafe { activations_avx512(lanes, qa, out, list) }
        }
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => {
            // SAFETY: see `add_i8`.
            unsafe { activations_avx2(lanes, qa, out, list) }
        }
        _ => activations_body(lanes, qa, out, list),
    };
    list.truncate(n);
}

/// Returns how many of `list` it filled. Two loops without a branch on the data: the
/// first vectorises, the second writes every index and keeps the nonzero ones (signs
/// of a trained net's lanes are close to random: a branch would mispredict half the
/// time).
#[inline(always)]
fn activations_body(lanes: &[i16], qa: i16, out: &mut [f32], list: &mut [u16]) -> usize {
    let inv = 1.0 / f32::from(qa);
    for (o, &v) in out.iter_mut().zip(lanes) {
        *o = f32::from(v.max(0).min(qa)) * inv;
    }
    nonzero_lanes(lanes, list)
}

/// Writes the indices of the positive lanes into `list` (as long as `lanes`) and returns
/// how many: every index is written, and kept when its lane is positive.
#[inline(always)]
fn nonzero_lanes(lanes: &[i16], list: &mut [u16]) -> usize {
    let mut n = 0;
    for (i, &v) in lanes.iter().enumerate() {
        list[n] = i as u16;
        n += usize::from(v > 0);
    }
    n
}

/// The x86 builds of [`activations_body`]'s first loop, with intrinsics (left to the
/// compiler it was neither vectorised nor free of a branch on the lanes): clamp as i16,
/// widen to i32, convert (exact) and multiply, the same bits; the list as the body.
macro_rules! activations_x86 {
    ($name:ident, $feat:literal, $w:literal, $load:ident, $max:ident, $min:ident,
     $set1_16:ident, $widen:ident, $cvt:ident, $set1:ident, $mul:ident, $store:ident) => {
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = $feat)]
        fn $name(lanes: &[i16], qa: i16, out: &mut [f32], list: &mut [u16]) -> usize {
            use std::arch::x86_64::*;
            let len = lanes.len().min(out.len());
            let whole = len - len % $w;
            let inv = 1.0 / f32::from(qa);
            let (zero, top, scale) = ($set1_16(0), $set1_16(qa), $set1(inv));
            for j in (0..whole).step_by($w) {
                // SAFETY: j + $w <= len <= lanes.len(), out.len(); unaligned accesses.
                unsafe {
                    let v = $min($max($load(lanes.as_ptr().add(j).cast()), zero), top);
                    $store(out.as_mut_ptr().add(j), $mul($cvt($widen(v)), scale));
                }
            }
            for j in whole..len {
                out[j] = f32::from(lanes[j].max(0).min(qa)) * inv;
            }
            nonzero_lanes(lanes, list)
        }
    };
}

activations_x86!(
    activations_avx2,
    "avx2",
    8,
    _mm_loadu_si128,
    _mm_max_epi16,
    _mm_min_epi16,
    _mm_set1_epi16,
    _mm256_cvtepi16_epi32,
    _mm256_cvtepi32_ps,
    _mm256_set1_ps,
    _mm256_mul_ps,
    _mm256_storeu_ps
);
activations_x86!(
    activations_avx512,
    "avx512f,avx512bw,avx512vl,avx2",
    16,
    _mm256_loadu_si256,
    _mm256_max_epi16,
    _mm256_min_epi16,
    _mm256_set1_epi16,
    _mm512_cvtepi16_epi32,
    _mm512_cvtepi32_ps,
    _mm512_set1_ps,
    _mm512_mul_ps,
    _mm512_storeu_ps
);

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
        // 40 and 72: rows whose end is short of a vector (the kernels' tails).
        for n in [32, 40, 72, 256, 1024] {
            let acc = noise(n, 1, -400, 700);
            let w = noise(n, 2, -127, 127);
            let want = screlu_dot_scalar(&acc, &w, 255);
            let bytes: Vec<i8> = noise(n, 3, -128, 127).iter().map(|&b| b as i8).collect();
            let wide: Vec<i16> = bytes.iter().map(|&b| i16::from(b)).collect();
            let added: Vec<i16> = acc
                .iter()
                .zip(&wide)
                .map(|(a, b)| a.wrapping_add(*b))
                .collect();
            let taken: Vec<i16> = acc
                .iter()
                .zip(&wide)
                .map(|(a, b)| a.wrapping_sub(*b))
                .collect();
            for isa in Isa::available() {
                if n % 32 == 0 {
                    assert_eq!(screlu_dot(isa, &acc, &w, 255), want, "{isa:?} n={n}");
                }
                let mut a = acc.clone();
                add_i8(isa, &mut a, &bytes);
                assert_eq!(a, added, "{isa:?}");
                sub_i8(isa, &mut a, &bytes);
                assert_eq!(a, acc, "{isa:?}");
                let mut s = acc.clone();
                sub_i8(isa, &mut s, &bytes);
                assert_eq!(s, taken, "{isa:?}");
                // Rows 1, 0, 1 of [bytes; -bytes] from a saturated start: the sums wrap
                // as the i16 ones do.
                let start = vec![i16::MAX; n];
                let neg: Vec<i8> = bytes.iter().map(|b| b.wrapping_neg()).collect();
                let two = [bytes.clone(), neg.clone()].concat();
                let mut rows = start.clone();
                add_rows_i8(isa, &mut rows, &two, &[1, 0, 1]);
                let want_rows: Vec<i16> = start
                    .iter()
                    .enumerate()
                    .map(|(i, &s)| {
                        [neg[i], bytes[i], neg[i]]
                            .iter()
                            .fold(s, |s, &b| s.wrapping_add(i16::from(b)))
                    })
                    .collect();
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
    fn column_builds_compute_the_same_bits() {
        let mut r = engine::Rng::new(3);
        let mut f = || (r.next_u64() % 2_000_001) as f32 / 1e6 - 1.0;
        for (n, m) in [(32, 1), (32, 256), (416, 32), (1024, 7)] {
            let cols: Vec<f32> = (0..n * m).map(|_| f()).collect();
            let x: Vec<f32> = (0..m).map(|_| f()).collect();
            let y0: Vec<f32> = (0..n).map(|_| f()).collect();
            // Every column, and every column but each third one.
            let all: Vec<u16> = (0..m as u16).collect();
            let some: Vec<u16> = (0..m as u16).filter(|c| c % 3 != 1).collect();
            for list in [all, some] {
                // The definition: partial sum i mod 4 in list order, then (s0+s1)+(s2+s3).
                let mut parts = vec![vec![0f32; n]; 4];
                for (i, &c) in list.iter().enumerate() {
                    for (j, o) in parts[i % 4].iter_mut().enumerate() {
                        *o += x[usize::from(c)] * cols[usize::from(c) * n + j];
                    }
                }
                let want: Vec<u32> = (0..n)
                    .map(|j| {
                        (y0[j] + ((parts[0][j] + parts[1][j]) + (parts[2][j] + parts[3][j])))
                            .to_bits()
                    })
                    .collect();
                for isa in Isa::available() {
                    let mut y = y0.clone();
                    columns(isa, &x, &list, &cols, &mut y);
                    let got: Vec<u32> = y.iter().map(|v| v.to_bits()).collect();
                    assert_eq!(got, want, "{isa:?} n={n} m={m} {} listed", list.len());
                }
            }
        }
    }

    #[test]
    fn f32_row_builds_compute_the_same_bits() {
        let mut r = engine::Rng::new(4);
        let mut f = || (r.next_u64() % 2_000_001) as f32 / 1e3 - 1e3;
        // Whole blocks of registers, a part of one, and a scalar remainder.
        for h in [16, 396, 400, 1000] {
            let w: Vec<f32> = (0..h * 98).map(|_| f()).collect();
            let acc0: Vec<f32> = (0..h).map(|_| f()).collect();
            for features in [vec![], vec![3u16], vec![97, 0, 5, 5, 60, 1, 2, 40, 41, 42]] {
                let mut want = acc0.clone();
                for &c in &features {
                    for (j, o) in want.iter_mut().enumerate() {
                        *o += w[usize::from(c) * h + j];
                    }
                }
                let want: Vec<u32> = want.iter().map(|v| v.to_bits()).collect();
                for isa in Isa::available() {
                    let mut acc = acc0.clone();
                    add_rows_f32(isa, &mut acc, &w, &features);
                    let got: Vec<u32> = acc.iter().map(|v| v.to_bits()).collect();
                    assert_eq!(got, want, "{isa:?} h={h} {features:?}");
                }
            }
        }
    }

    #[test]
    fn activations_list_the_nonzero_lanes() {
        let lanes = [-5i16, 0, 1, 255, 300, 0, 128];
        let mut out = [0f32; 7];
        let mut list = Vec::new();
        for isa in Isa::available() {
            activations(isa, &lanes, 255, &mut out, &mut list);
            assert_eq!(list, [2, 3, 4, 6], "{isa:?}");
            assert_eq!(out, [0.0, 0.0, 1.0 / 255.0, 1.0, 1.0, 0.0, 128.0 / 255.0]);
        }
    }
}
