//! The convolution tile and the gradient tile, generic over the [`Vector`] of a build:
//! the raw pointers and strides of a job, and the drivers that every build runs.

use super::lanes::{LANES, Vector};

/// Raw pointers and strides of one weight gradient.
pub(super) struct GradCtx {
    pub(super) x: *const f32,
    pub(super) x_stride: usize,
    pub(super) c_in: usize,
    pub(super) dy: *const f32,
    pub(super) dy_stride: usize,
    pub(super) c_pad: usize,
    pub(super) out: *mut f32,
}

/// Runs the gradient tile for every tap, group of 6 input channels (the last group
/// repeats its last channel: both copies compute the same sum from the same start, so
/// the repeated store is harmless) and block of at most `MAX_NV` vectors of columns.
///
/// # Safety
/// The bounds `weight_gradient` checks hold for `g`, `taps` and `runs`, and the CPU can
/// run `V`.
#[inline(always)]
pub(super) unsafe fn grad_drive<V: Vector, const MAX_NV: usize>(
    g: &GradCtx,
    taps: &[isize],
    runs: &[(usize, usize)],
) {
    let vectors = g.c_pad / LANES;
    for (t, &off) in taps.iter().enumerate() {
        for i0 in (0..g.c_in).step_by(6) {
            let ids: [usize; 6] = std::array::from_fn(|r| (i0 + r).min(g.c_in - 1));
            let mut v0 = 0;
            while v0 < vectors {
                let nv = (vectors - v0).min(MAX_NV);
                // SAFETY: `t` is a tap, `ids` channels below `c_in` and `v0 + nv` at most
                // `c_pad / LANES`, as `grad_tile6` requires; the rest is this function's
                // contract.
                unsafe {
                    match nv {
                        1 => grad_tile6::<V, 1>(g, t, off, &ids, v0, runs),
                        2 => grad_tile6::<V, 2>(g, t, off, &ids, v0, runs),
                        3 => grad_tile6::<V, 3>(g, t, off, &ids, v0, runs),
                        _ => grad_tile6::<V, 4>(g, t, off, &ids, v0, runs),
                    }
                }
                v0 += nv;
            }
        }
    }
}

/// 6 input channels × `NV` vectors of output channels of tap `t` (offset `off`
/// positions), summed over the runs.
///
/// # Safety
/// As [`grad_drive`], with `t` below the tap count, `ids` below `c_in` and
/// `v0 + NV <= c_pad / LANES`.
#[inline(always)]
unsafe fn grad_tile6<V: Vector, const NV: usize>(
    g: &GradCtx,
    t: usize,
    off: isize,
    ids: &[usize; 6],
    v0: usize,
    runs: &[(usize, usize)],
) {
    let col = v0 * LANES;
    // SAFETY: tap `t`, channel `ids[r]` and columns `col..col + NV · LANES` lie in the
    // gradient, `[taps][c_in][c_pad]`, which `out` holds (`weight_gradient`'s check).
    let dst = |r: usize| unsafe { g.out.add((t * g.c_in + ids[r]) * g.c_pad + col) };
    // SAFETY: as for `dst`; the CPU runs `V` (the caller's contract).
    let load = |r: usize| -> [V; NV] {
        std::array::from_fn(|v| unsafe { V::load(dst(r).add(v * LANES)) })
    };
    let (mut a0, mut a1, mut a2, mut a3, mut a4, mut a5) =
        (load(0), load(1), load(2), load(3), load(4), load(5));
    for &(first, count) in runs {
        if count == 0 {
            // Unchecked (`weight_gradient` skips empty runs): form no pointer from it.
            continue;
        }
        // SAFETY: the run is not empty, so `weight_gradient` checked that its positions
        // plus `off` lie in `x` (channels below `c_in`, `ids` among them) and its
        // positions in `dy` (columns below `c_pad`); `first + off` is the first such row
        // and so fits. Each step moves both pointers one row on with `wrapping_add`, as
        // the step after the last row may leave the buffers; they are read only while
        // on a position of the run.
        unsafe {
            let mut xp = g.x.add(first.wrapping_add_signed(off) * g.x_stride);
            let mut dp = g.dy.add(first * g.dy_stride + col);
            for _ in 0..count {
                let w: [V; NV] = std::array::from_fn(|v| V::load(dp.add(v * LANES)));
                // The 6 channels of a position are adjacent: one cache line serves the
                // broadcasts.
                fma_row(*xp.add(ids[0]), &w, &mut a0);
                fma_row(*xp.add(ids[1]), &w, &mut a1);
                fma_row(*xp.add(ids[2]), &w, &mut a2);
                fma_row(*xp.add(ids[3]), &w, &mut a3);
                fma_row(*xp.add(ids[4]), &w, &mut a4);
                fma_row(*xp.add(ids[5]), &w, &mut a5);
                xp = xp.wrapping_add(g.x_stride);
                dp = dp.wrapping_add(g.dy_stride);
            }
        }
    }
    for (r, acc) in [a0, a1, a2, a3, a4, a5].iter().enumerate() {
        for (v, a) in acc.iter().enumerate() {
            // SAFETY: as for `load`.
            unsafe { a.store(dst(r).add(v * LANES)) };
        }
    }
}

/// Raw pointers and strides of one convolution, shared by the tile builds.
pub(super) struct Ctx<'a> {
    pub(super) x: *const f32,
    pub(super) x_stride: usize,
    /// Tap offsets in floats.
    pub(super) taps: &'a [isize],
    pub(super) c_in: usize,
    pub(super) w: *const f32,
    pub(super) w_stride: usize,
    pub(super) bias: *const f32,
    pub(super) out: *mut f32,
    pub(super) out_stride: usize,
    pub(super) residual: *const f32,
    pub(super) relu: bool,
}

/// Runs the tile over `cells` for every block of at most `MAX_NV` vectors of output
/// channels: cells in groups of 6 (the last group repeats its last cell, which is
/// harmless as every write of a cell writes the same values), channel blocks innermost
/// so that a group's inputs stay in L1.
///
/// # Safety
/// The bounds `convolve` checks hold for `ctx` and `cells`, and the CPU can run `V`.
#[inline(always)]
pub(super) unsafe fn drive<V: Vector, const MAX_NV: usize>(ctx: &Ctx, cells: &[usize]) {
    let vectors = ctx.w_stride / LANES;
    for group in cells.chunks(6) {
        let mut ids = [group[group.len() - 1]; 6];
        ids[..group.len()].copy_from_slice(group);
        let mut v0 = 0;
        while v0 < vectors {
            let nv = (vectors - v0).min(MAX_NV);
            // SAFETY: `ids` are listed cells and `v0 + nv` at most `c_pad / LANES`, as
            // `tile6` requires; the rest is this function's contract.
            unsafe {
                match nv {
                    1 => tile6::<V, 1>(ctx, &ids, v0),
                    2 => tile6::<V, 2>(ctx, &ids, v0),
                    3 => tile6::<V, 3>(ctx, &ids, v0),
                    _ => tile6::<V, 4>(ctx, &ids, v0),
                }
            }
            v0 += nv;
        }
    }
}

/// `acc[v] += a · w[v]` for one cell's row of accumulators.
///
/// # Safety
/// The CPU can run `V`.
#[inline(always)]
unsafe fn fma_row<V: Vector, const NV: usize>(a: f32, w: &[V; NV], acc: &mut [V; NV]) {
    // SAFETY: the caller's contract (no memory is accessed).
    unsafe {
        let a = V::splat(a);
        for v in 0..NV {
            acc[v] = V::mul_add(a, w[v], acc[v]);
        }
    }
}

/// Adds the residual, applies the ReLU and stores one cell's row.
///
/// # Safety
/// As [`tile6`], with `id` one of its cells and `col` its first column.
#[inline(always)]
unsafe fn store_row<V: Vector, const NV: usize>(ctx: &Ctx, id: usize, col: usize, acc: &[V; NV]) {
    let o = id * ctx.out_stride + col;
    for (v, &a) in acc.iter().enumerate() {
        let i = o + v * LANES;
        // SAFETY: `id` is a listed cell and `col + NV · LANES <= c_pad`, so `i..i + LANES`
        // lies in the cell's row of `out` (`convolve` checked the largest cell's, which
        // ends after every other's) and of `residual` (unless null), at least as long; the CPU
        // runs `V` (the caller's contract).
        unsafe {
            let mut y = a;
            if !ctx.residual.is_null() {
                y = y.add(V::load(ctx.residual.add(i)));
            }
            if ctx.relu {
                y = y.relu();
            }
            y.store(ctx.out.add(i));
        }
    }
}

/// 6 cells × `NV` vectors of output channels starting at vector `v0`. The six rows
/// of accumulators are separate arrays (not one 2-D array) so that the compiler keeps
/// them all in registers.
///
/// # Safety
/// As [`drive`], with `ids` listed cells and `v0 + NV <= c_pad / LANES`.
#[inline(always)]
unsafe fn tile6<V: Vector, const NV: usize>(ctx: &Ctx, ids: &[usize; 6], v0: usize) {
    let col = v0 * LANES;
    // SAFETY: `col + NV · LANES <= c_pad`, the bias's length (`Packed`'s invariant); the
    // CPU runs `V` (the caller's contract).
    let b: [V; NV] = std::array::from_fn(|v| unsafe { V::load(ctx.bias.add(col + v * LANES)) });
    let (mut a0, mut a1, mut a2, mut a3, mut a4, mut a5) = (b, b, b, b, b, b);
    for (t, &off) in ctx.taps.iter().enumerate() {
        // The start of cell `ids[r]` plus the tap in floats, `(ids[r] + tap) · x_stride`:
        // `convolve`'s checks of the smallest and largest cells put it (with `c_in` more
        // floats) in `x`, so the wrapping sum of the two products is exact.
        let row = |r: usize| ids[r].wrapping_mul(ctx.x_stride).wrapping_add_signed(off);
        // SAFETY: the rows lie in `x` with their first `c_in` channels (see `row`). The weight pointer steps a row of `w_stride` floats per
        // input channel, with `wrapping_add` as the start of the tap (when `c_in` is 0)
        // and the step after the last channel may leave `w`; it is read only at channel
        // `c < c_in`, at `(t · c_in + c) · c_pad + col + v · LANES`, which with its
        // `LANES` floats lies below `taps · c_in · c_pad` (`Packed`'s invariant). The CPU
        // runs `V` (the caller's contract).
        unsafe {
            let (s0, s1, s2) = (ctx.x.add(row(0)), ctx.x.add(row(1)), ctx.x.add(row(2)));
            let (s3, s4, s5) = (ctx.x.add(row(3)), ctx.x.add(row(4)), ctx.x.add(row(5)));
            let mut wp = ctx.w.wrapping_add(t * ctx.c_in * ctx.w_stride + col);
            for c in 0..ctx.c_in {
                let w: [V; NV] = std::array::from_fn(|v| V::load(wp.add(v * LANES)));
                fma_row(*s0.add(c), &w, &mut a0);
                fma_row(*s1.add(c), &w, &mut a1);
                fma_row(*s2.add(c), &w, &mut a2);
                fma_row(*s3.add(c), &w, &mut a3);
                fma_row(*s4.add(c), &w, &mut a4);
                fma_row(*s5.add(c), &w, &mut a5);
                wp = wp.wrapping_add(ctx.w_stride);
            }
        }
    }
    // SAFETY: `ids` are listed cells and `col` the first column of this tile's vectors;
    // the rest is this function's contract.
    unsafe {
        store_row(ctx, ids[0], col, &a0);
        store_row(ctx, ids[1], col, &a1);
        store_row(ctx, ids[2], col, &a2);
        store_row(ctx, ids[3], col, &a3);
        store_row(ctx, ids[4], col, &a4);
        store_row(ctx, ids[5], col, &a5);
    }
}
