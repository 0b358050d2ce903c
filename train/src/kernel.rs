//! The convolution kernel of the fast path: a direct convolution over channel-last
//! activations with a zero border, so that every tap of a 3×3 convolution is a fixed
//! offset and no im2col matrix is built.
//!
//! A tile computes `MR` output cells × `NV · 16` output channels held in registers: for
//! every tap and input channel it broadcasts one input value per cell and multiplies it
//! into `NV` vectors of weights. With AVX-512 (`MR` = 6, `NV` = 4) that is 24
//! accumulators, 4 weight loads and 6 broadcasts per 24 fused multiply-adds.
//! The tile is written once, generic over a 16-lane vector type, and built three times:
//! with AVX-512F intrinsics, with AVX2 + FMA intrinsics (two registers per vector), and
//! with plain arrays for any target. The fastest build the CPU supports is chosen at
//! run time.

/// Output channels are padded to a multiple of this (one AVX-512 vector of `f32`).
pub const LANES: usize = 16;

/// Which build of the convolution tile runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    /// AVX-512F intrinsics: 6 cells × 64 channels per tile.
    Avx512,
    /// AVX2 + FMA intrinsics: 6 cells × 16 channels per tile.
    Avx2,
    /// Plain arrays the compiler vectorizes for the target (any CPU).
    Portable,
}

impl Kernel {
    /// Whether this CPU can run the kernel.
    pub fn is_supported(self) -> bool {
        match self {
            Kernel::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => std::arch::is_x86_feature_detected!("avx512f"),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => {
                std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("fma")
            }
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// The fastest kernel this CPU supports.
    pub fn detect() -> Kernel {
        Kernel::available()[0]
    }

    /// Every kernel this CPU can run, fastest first (for tests that check each one).
    pub fn available() -> Vec<Kernel> {
        [Kernel::Avx512, Kernel::Avx2, Kernel::Portable]
            .into_iter()
            .filter(|k| k.is_supported())
            .collect()
    }
}

/// A convolution (or a dense layer: one tap) packed for the kernel.
pub struct Packed {
    /// Input channels read.
    pub c_in: usize,
    /// Output channels.
    pub c_out: usize,
    /// `c_out` rounded up to a multiple of [`LANES`]: the row length of `w` and `bias`.
    pub c_pad: usize,
    /// Taps (1 or k·k).
    pub taps: usize,
    /// Weights `[tap][c_in][c_pad]`, zero in the padding columns.
    pub w: Vec<f32>,
    /// Bias `[c_pad]`.
    pub bias: Vec<f32>,
}

impl Packed {
    /// Packs weights given as `[c_out][c_in][k][k]` (PyTorch order) with a bias.
    pub fn new(c_out: usize, c_in: usize, k: usize, w: &[f32], bias: &[f32]) -> Packed {
        let c_pad = c_out.div_ceil(LANES) * LANES;
        let taps = k * k;
        let mut pw = vec![0.0; taps * c_in * c_pad];
        for o in 0..c_out {
            for i in 0..c_in {
                for t in 0..taps {
                    pw[(t * c_in + i) * c_pad + o] = w[(o * c_in + i) * taps + t];
                }
            }
        }
        let mut pb = vec![0.0; c_pad];
        pb[..c_out].copy_from_slice(&bias[..c_out]);
        Packed {
            c_in,
            c_out,
            c_pad,
            taps,
            w: pw,
            bias: pb,
        }
    }
}

/// Where a convolution reads and writes: channel-last buffers, offsets in `f32`s.
pub struct Job<'a> {
    /// Input activations.
    pub x: &'a [f32],
    /// Input floats per cell.
    pub x_stride: usize,
    /// Offset of each tap relative to the centre cell, in cells.
    pub taps: &'a [isize],
    /// Output cells (cell indices, valid in `x`, `out` and `residual` alike).
    pub cells: &'a [usize],
    /// Output activations, `out_stride` floats per cell (at least the conv's `c_pad`).
    pub out: &'a mut [f32],
    /// Output floats per cell.
    pub out_stride: usize,
    /// Added before the ReLU, same layout as `out`.
    pub residual: Option<&'a [f32]>,
    /// Whether to apply a ReLU.
    pub relu: bool,
}

/// Applies `conv` to `job`'s cells with `kernel`.
///
/// # Panics
/// If the CPU cannot run `kernel`, if a tap of a listed cell falls outside `x`, or a
/// cell outside `out`.
pub fn convolve(kernel: Kernel, conv: &Packed, job: Job<'_>) {
    assert!(
        kernel.is_supported(),
        "this CPU cannot run the {kernel:?} kernel"
    );
    assert_eq!(conv.taps, job.taps.len(), "tap count");
    assert!(conv.c_in <= job.x_stride && conv.c_pad <= job.out_stride);
    // `Packed`'s fields are public: check that they agree before any raw read.
    assert!(
        conv.c_pad.is_multiple_of(LANES)
            && conv.w.len() >= conv.taps * conv.c_in * conv.c_pad
            && conv.bias.len() >= conv.c_pad,
        "packed convolution with inconsistent sizes"
    );
    // Exact bounds: a cell's row may be followed by other data (interleaved layouts).
    for &c in job.cells {
        assert!(
            c * job.out_stride + conv.c_pad <= job.out.len(),
            "output cell {c} out of range"
        );
        for &t in job.taps {
            let s = c as isize + t;
            assert!(
                s >= 0 && s as usize * job.x_stride + conv.c_in <= job.x.len(),
                "tap of cell {c} out of range"
            );
        }
    }
    if let Some(r) = job.residual {
        assert!(r.len() >= job.out.len(), "residual smaller than the output");
    }
    let taps: Vec<isize> = job
        .taps
        .iter()
        .map(|&t| t * job.x_stride as isize)
        .collect();
    let ctx = Ctx {
        x: job.x.as_ptr(),
        x_stride: job.x_stride,
        taps: &taps,
        c_in: conv.c_in,
        w: conv.w.as_ptr(),
        w_stride: conv.c_pad,
        bias: conv.bias.as_ptr(),
        out: job.out.as_mut_ptr(),
        out_stride: job.out_stride,
        residual: job.residual.map_or(std::ptr::null(), |r| r.as_ptr()),
        relu: job.relu,
    };
    // SAFETY: every pointer the tiles form is a listed cell (checked above to lie in
    // `out`) plus a column below `c_pad`, or a cell plus a tap (checked to lie in `x`)
    // plus a column below `c_in`; the CPU features of each build were detected.
    unsafe {
        match kernel {
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => x86::run_avx512(&ctx, job.cells),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => x86::run_avx2(&ctx, job.cells),
            _ => run_portable(&ctx, job.cells),
        }
    }
}

/// Where the weight gradient of a convolution reads and writes (the training engine's
/// backward pass): `out[t][i][o] += Σ_p x[(p + taps[t]) · x_stride + i] · dy[p · dy_stride + o]`
/// over the positions p of `runs`.
pub struct GradJob<'a> {
    /// The layer's input, channel-last, zero at border positions.
    pub x: &'a [f32],
    /// Floats per position of `x`.
    pub x_stride: usize,
    /// Input channels.
    pub c_in: usize,
    /// Offset of each tap relative to the output position, in positions.
    pub taps: &'a [isize],
    /// Output positions as runs `(first, count)` of consecutive positions.
    pub runs: &'a [(usize, usize)],
    /// Gradient of the layer's output, channel-last, `dy_stride` floats per position.
    pub dy: &'a [f32],
    /// Floats per position of `dy`.
    pub dy_stride: usize,
    /// Output channels rounded up to a multiple of [`LANES`]: columns read from `dy` and
    /// written to `out`.
    pub c_pad: usize,
    /// The gradient, `[tap][c_in][c_pad]` (the layout of [`Packed::w`]), accumulated into.
    pub out: &'a mut [f32],
}

/// Accumulates a convolution's weight gradient (see [`GradJob`]) with `kernel`: the
/// convolution tile with the roles of cells and channels swapped, 6 input channels ×
/// `NV · 16` output channels in registers while the positions stream by.
///
/// # Panics
/// If the CPU cannot run `kernel`, or a position of a run (or a tap of it) falls outside
/// the buffers.
pub fn weight_gradient(kernel: Kernel, job: GradJob<'_>) {
    assert!(
        kernel.is_supported(),
        "this CPU cannot run the {kernel:?} kernel"
    );
    assert!(job.c_pad.is_multiple_of(LANES) && job.c_pad <= job.dy_stride);
    assert!(job.out.len() >= job.taps.len() * job.c_in * job.c_pad);
    assert!(job.c_in <= job.x_stride);
    for &(first, count) in job.runs {
        if count == 0 {
            continue;
        }
        let last = first + count - 1;
        assert!(
            last * job.dy_stride + job.c_pad <= job.dy.len(),
            "run at {first} out of range"
        );
        for &t in job.taps {
            assert!(
                first as isize + t >= 0
                    && (last as isize + t) as usize * job.x_stride + job.c_in <= job.x.len(),
                "tap of run at {first} out of range"
            );
        }
    }
    let g = GradCtx {
        x: job.x.as_ptr(),
        x_stride: job.x_stride,
        c_in: job.c_in,
        dy: job.dy.as_ptr(),
        dy_stride: job.dy_stride,
        c_pad: job.c_pad,
        out: job.out.as_mut_ptr(),
    };
    // SAFETY: every position read is a run's position (checked to lie in `dy`, and with
    // each tap in `xt`'s rows), every write a tap, channel and column below the sizes
    // checked for `out`; the CPU features of each build were detected.
    unsafe {
        match kernel {
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => x86::grad_avx512(&g, job.taps, job.runs),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => x86::grad_avx2(&g, job.taps, job.runs),
            _ => grad_drive::<Lanes, 1>(&g, job.taps, job.runs),
        }
    }
}

/// Raw pointers and strides of one weight gradient.
struct GradCtx {
    x: *const f32,
    x_stride: usize,
    c_in: usize,
    dy: *const f32,
    dy_stride: usize,
    c_pad: usize,
    out: *mut f32,
}

/// Runs the gradient tile for every tap, group of 6 input channels (the last group
/// repeats its last channel: both copies compute the same sum from the same start, so
/// the repeated store is harmless) and block of at most `MAX_NV` vectors of columns.
#[inline(always)]
unsafe fn grad_drive<V: Vector, const MAX_NV: usize>(
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
                // SAFETY: as for `weight_gradient`.
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

/// 6 input channels × `NV` vectors of output channels of tap `t`, summed over the runs.
#[inline(always)]
unsafe fn grad_tile6<V: Vector, const NV: usize>(
    g: &GradCtx,
    t: usize,
    off: isize,
    ids: &[usize; 6],
    v0: usize,
    runs: &[(usize, usize)],
) {
    unsafe {
        let col = v0 * LANES;
        let dst = |r: usize| g.out.add((t * g.c_in + ids[r]) * g.c_pad + col);
        let load =
            |r: usize| -> [V; NV] { std::array::from_fn(|v| V::load(dst(r).add(v * LANES))) };
        let (mut a0, mut a1, mut a2, mut a3, mut a4, mut a5) =
            (load(0), load(1), load(2), load(3), load(4), load(5));
        // The 6 channels of a position are adjacent: one cache line serves the broadcasts.
        let src = |r: usize| g.x.offset(off * g.x_stride as isize + ids[r] as isize);
        let (s0, s1, s2, s3, s4, s5) = (src(0), src(1), src(2), src(3), src(4), src(5));
        for &(first, count) in runs {
            let mut dp = g.dy.add(first * g.dy_stride + col);
            for p in first..first + count {
                let w: [V; NV] = std::array::from_fn(|v| V::load(dp.add(v * LANES)));
                let q = p * g.x_stride;
                fma_row(*s0.add(q), &w, &mut a0);
                fma_row(*s1.add(q), &w, &mut a1);
                fma_row(*s2.add(q), &w, &mut a2);
                fma_row(*s3.add(q), &w, &mut a3);
                fma_row(*s4.add(q), &w, &mut a4);
                fma_row(*s5.add(q), &w, &mut a5);
                dp = dp.add(g.dy_stride);
            }
        }
        for (r, acc) in [a0, a1, a2, a3, a4, a5].iter().enumerate() {
            for (v, a) in acc.iter().enumerate() {
                a.store(dst(r).add(v * LANES));
            }
        }
    }
}

/// Raw pointers and strides of one convolution, shared by the tile builds.
struct Ctx<'a> {
    x: *const f32,
    x_stride: usize,
    /// Tap offsets in floats.
    taps: &'a [isize],
    c_in: usize,
    w: *const f32,
    w_stride: usize,
    bias: *const f32,
    out: *mut f32,
    out_stride: usize,
    residual: *const f32,
    relu: bool,
}

/// 16 lanes of `f32` (one [`LANES`]-wide column block) in the registers of one build.
pub(crate) trait Vector: Copy {
    unsafe fn load(p: *const f32) -> Self;
    unsafe fn store(self, p: *mut f32);
    unsafe fn splat(a: f32) -> Self;
    /// `a · w + acc`.
    unsafe fn mul_add(a: Self, w: Self, acc: Self) -> Self;
    unsafe fn add(self, other: Self) -> Self;
    unsafe fn sub(self, other: Self) -> Self;
    unsafe fn relu(self) -> Self;
}

/// The portable vector: plain arrays the compiler vectorizes for the target.
#[derive(Clone, Copy)]
pub(crate) struct Lanes([f32; LANES]);

impl Vector for Lanes {
    #[inline(always)]
    unsafe fn load(p: *const f32) -> Self {
        unsafe { Lanes(std::ptr::read_unaligned(p as *const [f32; LANES])) }
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut f32) {
        unsafe { std::ptr::write_unaligned(p as *mut [f32; LANES], self.0) }
    }
    #[inline(always)]
    unsafe fn splat(a: f32) -> Self {
        Lanes([a; LANES])
    }
    #[inline(always)]
    unsafe fn mul_add(a: Self, w: Self, acc: Self) -> Self {
        // Fused where the target has it in hardware; elsewhere `mul_add` is a library call.
        let mut r = acc;
        for l in 0..LANES {
            r.0[l] = if cfg!(any(target_feature = "fma", target_arch = "aarch64")) {
                a.0[l].mul_add(w.0[l], acc.0[l])
            } else {
                acc.0[l] + a.0[l] * w.0[l]
            };
        }
        r
    }
    #[inline(always)]
    unsafe fn add(self, other: Self) -> Self {
        let mut r = self;
        for l in 0..LANES {
            r.0[l] += other.0[l];
        }
        r
    }
    #[inline(always)]
    unsafe fn sub(self, other: Self) -> Self {
        let mut r = self;
        for l in 0..LANES {
            r.0[l] -= other.0[l];
        }
        r
    }
    #[inline(always)]
    unsafe fn relu(self) -> Self {
        Lanes(self.0.map(|v| v.max(0.0)))
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) mod x86;

unsafe fn run_portable(ctx: &Ctx, cells: &[usize]) {
    unsafe { drive::<Lanes, 1>(ctx, cells) }
}

/// Runs the tile over `cells` for every block of at most `MAX_NV` vectors of output
/// channels: cells in groups of 6 (the last group repeats its last cell, which is
/// harmless as every write of a cell writes the same values), channel blocks innermost
/// so that a group's inputs stay in L1.
#[inline(always)]
unsafe fn drive<V: Vector, const MAX_NV: usize>(ctx: &Ctx, cells: &[usize]) {
    let vectors = ctx.w_stride / LANES;
    for group in cells.chunks(6) {
        let mut ids = [group[group.len() - 1]; 6];
        ids[..group.len()].copy_from_slice(group);
        let mut v0 = 0;
        while v0 < vectors {
            let nv = (vectors - v0).min(MAX_NV);
            // SAFETY: as for `convolve`.
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
#[inline(always)]
unsafe fn fma_row<V: Vector, const NV: usize>(a: f32, w: &[V; NV], acc: &mut [V; NV]) {
    unsafe {
        let a = V::splat(a);
        for v in 0..NV {
            acc[v] = V::mul_add(a, w[v], acc[v]);
        }
    }
}

/// Adds the residual, applies the ReLU and stores one cell's row.
#[inline(always)]
unsafe fn store_row<V: Vector, const NV: usize>(ctx: &Ctx, id: usize, col: usize, acc: &[V; NV]) {
    unsafe {
        let o = id * ctx.out_stride + col;
        for (v, &a) in acc.iter().enumerate() {
            let i = o + v * LANES;
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
#[inline(always)]
unsafe fn tile6<V: Vector, const NV: usize>(ctx: &Ctx, ids: &[usize; 6], v0: usize) {
    unsafe {
        let col = v0 * LANES;
        let b: [V; NV] = std::array::from_fn(|v| V::load(ctx.bias.add(col + v * LANES)));
        let (mut a0, mut a1, mut a2, mut a3, mut a4, mut a5) = (b, b, b, b, b, b);
        for (t, &off) in ctx.taps.iter().enumerate() {
            let mut wp = ctx.w.add(t * ctx.c_in * ctx.w_stride + col);
            let src = |r: usize| ctx.x.offset((ids[r] * ctx.x_stride) as isize + off);
            let (s0, s1, s2, s3, s4, s5) = (src(0), src(1), src(2), src(3), src(4), src(5));
            for c in 0..ctx.c_in {
                let w: [V; NV] = std::array::from_fn(|v| V::load(wp.add(v * LANES)));
                fma_row(*s0.add(c), &w, &mut a0);
                fma_row(*s1.add(c), &w, &mut a1);
                fma_row(*s2.add(c), &w, &mut a2);
                fma_row(*s3.add(c), &w, &mut a3);
                fma_row(*s4.add(c), &w, &mut a4);
                fma_row(*s5.add(c), &w, &mut a5);
                wp = wp.add(ctx.w_stride);
            }
        }
        store_row(ctx, ids[0], col, &a0);
        store_row(ctx, ids[1], col, &a1);
        store_row(ctx, ids[2], col, &a2);
        store_row(ctx, ids[3], col, &a3);
        store_row(ctx, ids[4], col, &a4);
        store_row(ctx, ids[5], col, &a5);
    }
}

/// A reproducible stream of values in [-1, 1), for the kernel tests.
#[cfg(test)]
pub(crate) fn noise(seed: u64, len: usize) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        })
        .collect()
}

#[cfg(test)]
mod tests;
