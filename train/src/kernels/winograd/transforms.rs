//! The one-dimensional Winograd transforms of each tiling.

use crate::kernels::lanes::Vector;

/// The one-dimensional transforms of a tiling, on vectors of 16 channels. Arrays are
/// sized for the largest tiling; entries past `N` (or `M`) are unused.
///
/// # Safety
/// The transforms touch no memory; they need only a CPU that runs `V`.
pub(super) trait Transforms {
    /// Output block side.
    const M: usize;
    /// Input block side.
    const N: usize;
    /// `Bᵀ d`.
    unsafe fn input<V: Vector>(d: [V; 6]) -> [V; 6];
    /// `Aᵀ m`.
    unsafe fn output<V: Vector>(m: [V; 6]) -> [V; 4];
    /// `A y`: the transpose of [`Transforms::output`], for gradients.
    unsafe fn output_grad<V: Vector>(y: [V; 4]) -> [V; 6];
}

/// F(2×2, 3×3).
pub(super) struct F2;

impl Transforms for F2 {
    const M: usize = 2;
    const N: usize = 4;

    #[inline(always)]
    unsafe fn input<V: Vector>(d: [V; 6]) -> [V; 6] {
        // SAFETY: vector arithmetic only; the CPU runs `V` (the caller's contract).
        unsafe {
            [
                d[0].sub(d[2]),
                d[1].add(d[2]),
                d[2].sub(d[1]),
                d[1].sub(d[3]),
                d[4],
                d[5],
            ]
        }
    }

    #[inline(always)]
    unsafe fn output<V: Vector>(m: [V; 6]) -> [V; 4] {
        // SAFETY: vector arithmetic only; the CPU runs `V` (the caller's contract).
        unsafe {
            [
                m[0].add(m[1]).add(m[2]),
                m[1].sub(m[2]).sub(m[3]),
                m[4],
                m[5],
            ]
        }
    }

    #[inline(always)]
    unsafe fn output_grad<V: Vector>(y: [V; 4]) -> [V; 6] {
        // SAFETY: vector arithmetic only; the CPU runs `V` (the caller's contract).
        unsafe {
            // A = Aᵀ transposed: rows [1 0], [1 1], [1 −1], [0 −1].
            let zero = V::splat(0.0);
            [
                y[0],
                y[0].add(y[1]),
                y[0].sub(y[1]),
                zero.sub(y[1]),
                zero,
                zero,
            ]
        }
    }
}

/// F(4×4, 3×3), points 0, ±1, ±2.
pub(super) struct F4;

impl Transforms for F4 {
    const M: usize = 4;
    const N: usize = 6;

    #[inline(always)]
    unsafe fn input<V: Vector>(d: [V; 6]) -> [V; 6] {
        // SAFETY: vector arithmetic only; the CPU runs `V` (the caller's contract).
        unsafe {
            let (four, five) = (V::splat(4.0), V::splat(-5.0));
            let m4 = V::splat(-4.0);
            // Bᵀ = [4 0 −5 0 1 0; 0 −4 −4 1 1 0; 0 4 −4 −1 1 0;
            //       0 −2 −1 2 1 0; 0 2 −1 −2 1 0; 0 4 0 −5 0 1].
            let t1 = V::mul_add(d[2], m4, d[4]);
            let t2 = V::mul_add(d[1], m4, d[3]);
            let t3 = d[4].sub(d[2]);
            let t4 = d[3].sub(d[1]).add(d[3].sub(d[1]));
            [
                V::mul_add(d[0], four, V::mul_add(d[2], five, d[4])),
                t1.add(t2),
                t1.sub(t2),
                t3.add(t4),
                t3.sub(t4),
                V::mul_add(d[1], four, V::mul_add(d[3], five, d[5])),
            ]
        }
    }

    #[inline(always)]
    unsafe fn output<V: Vector>(m: [V; 6]) -> [V; 4] {
        // SAFETY: vector arithmetic only; the CPU runs `V` (the caller's contract).
        unsafe {
            // Aᵀ = [1 1 1 1 1 0; 0 1 −1 2 −2 0; 0 1 1 4 4 0; 0 1 −1 8 −8 1].
            let (a, b) = (m[1].add(m[2]), m[1].sub(m[2]));
            let (c, d) = (m[3].add(m[4]), m[3].sub(m[4]));
            [
                m[0].add(a).add(c),
                V::mul_add(d, V::splat(2.0), b),
                V::mul_add(c, V::splat(4.0), a),
                V::mul_add(d, V::splat(8.0), b).add(m[5]),
            ]
        }
    }

    #[inline(always)]
    unsafe fn output_grad<V: Vector>(y: [V; 4]) -> [V; 6] {
        // SAFETY: vector arithmetic only; the CPU runs `V` (the caller's contract).
        unsafe {
            // A = Aᵀ transposed: rows [1 0 0 0], [1 1 1 1], [1 −1 1 −1], [1 2 4 8],
            // [1 −2 4 −8], [0 0 0 1].
            let (e, o) = (y[0].add(y[2]), y[1].add(y[3]));
            let e2 = V::mul_add(y[2], V::splat(4.0), y[0]);
            let o2 = V::mul_add(y[3], V::splat(8.0), y[1].add(y[1]));
            [y[0], e.add(o), e.sub(o), e2.add(o2), e2.sub(o2), y[3]]
        }
    }
}
