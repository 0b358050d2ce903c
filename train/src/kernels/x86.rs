//! The x86-64 builds: the tile's [`Vector`] with AVX2 + FMA and with AVX-512F
//! intrinsics, and the entry points compiled for each.

use super::lanes::Vector;
use super::tile::{Ctx, GradCtx, drive, grad_drive};
use std::arch::x86_64::*;

/// Two AVX2 registers.
#[derive(Clone, Copy)]
pub(crate) struct Avx2(__m256, __m256);

impl Vector for Avx2 {
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn load(p: *const f32) -> Self {
        // SAFETY: `p` is valid for reading 16 floats (the trait's contract).
        unsafe { Avx2(_mm256_loadu_ps(p), _mm256_loadu_ps(p.add(8))) }
    }
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn store(self, p: *mut f32) {
        // SAFETY: `p` is valid for writing 16 floats (the trait's contract).
        unsafe {
            _mm256_storeu_ps(p, self.0);
            _mm256_storeu_ps(p.add(8), self.1);
        }
    }
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn splat(a: f32) -> Self {
        let v = _mm256_set1_ps(a);
        Avx2(v, v)
    }
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn mul_add(a: Self, w: Self, acc: Self) -> Self {
        Avx2(
            _mm256_fmadd_ps(a.0, w.0, acc.0),
            _mm256_fmadd_ps(a.1, w.1, acc.1),
        )
    }
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn add(self, other: Self) -> Self {
        Avx2(
            _mm256_add_ps(self.0, other.0),
            _mm256_add_ps(self.1, other.1),
        )
    }
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn sub(self, other: Self) -> Self {
        Avx2(
            _mm256_sub_ps(self.0, other.0),
            _mm256_sub_ps(self.1, other.1),
        )
    }
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn relu(self) -> Self {
        let z = _mm256_setzero_ps();
        Avx2(_mm256_max_ps(self.0, z), _mm256_max_ps(self.1, z))
    }
}

/// One AVX-512 register.
#[derive(Clone, Copy)]
pub(crate) struct Avx512(__m512);

impl Vector for Avx512 {
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn load(p: *const f32) -> Self {
        // SAFETY: `p` is valid for reading 16 floats (the trait's contract).
        unsafe { Avx512(_mm512_loadu_ps(p)) }
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn store(self, p: *mut f32) {
        // SAFETY: `p` is valid for writing 16 floats (the trait's contract).
        unsafe { _mm512_storeu_ps(p, self.0) }
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn splat(a: f32) -> Self {
        Avx512(_mm512_set1_ps(a))
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn mul_add(a: Self, w: Self, acc: Self) -> Self {
        Avx512(_mm512_fmadd_ps(a.0, w.0, acc.0))
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn add(self, other: Self) -> Self {
        Avx512(_mm512_add_ps(self.0, other.0))
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn sub(self, other: Self) -> Self {
        Avx512(_mm512_sub_ps(self.0, other.0))
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn relu(self) -> Self {
        Avx512(_mm512_max_ps(self.0, _mm512_setzero_ps()))
    }
}

/// The AVX-512 build of the convolution tile.
///
/// # Safety
/// As [`drive`]; the CPU has AVX-512F.
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn run_avx512(ctx: &Ctx, cells: &[usize]) {
    // 6 cells × 4 vectors = 24 accumulators, + 4 weights + 1 broadcast of 32 registers.
    // SAFETY: the caller's contract, which includes the CPU features `Avx512` needs.
    unsafe { drive::<Avx512, 4>(ctx, cells) }
}

/// The AVX2 build of the convolution tile.
///
/// # Safety
/// As [`drive`]; the CPU has AVX2 and FMA.
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn run_avx2(ctx: &Ctx, cells: &[usize]) {
    // 6 cells × 2 registers = 12 accumulators, + 2 weights + 1 broadcast of 16.
    // SAFETY: the caller's contract, which includes the CPU features `Avx2` needs.
    unsafe { drive::<Avx2, 1>(ctx, cells) }
}

/// The AVX-512 build of the gradient tile.
///
/// # Safety
/// As [`grad_drive`]; the CPU has AVX-512F.
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn grad_avx512(g: &GradCtx, taps: &[isize], runs: &[(usize, usize)]) {
    // SAFETY: the caller's contract, which includes the CPU features `Avx512` needs.
    unsafe { grad_drive::<Avx512, 4>(g, taps, runs) }
}

/// The AVX2 build of the gradient tile.
///
/// # Safety
/// As [`grad_drive`]; the CPU has AVX2 and FMA.
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn grad_avx2(g: &GradCtx, taps: &[isize], runs: &[(usize, usize)]) {
    // SAFETY: the caller's contract, which includes the CPU features `Avx2` needs.
    unsafe { grad_drive::<Avx2, 1>(g, taps, runs) }
}
