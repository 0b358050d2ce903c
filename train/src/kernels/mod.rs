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
//!
//! Soundness: a [`Kernel`] value exists only for a build whose CPU features were
//! detected, so the entry points need no feature check of their own; [`Packed`] keeps
//! its sizes consistent (private fields, checked constructors); and every entry point
//! checks, with overflow-checked arithmetic and before any raw access, that each
//! position it reads or writes lies in its buffers. The tiles then form only in-bounds
//! pointers (strides past the last row use `wrapping_add`).

use std::fmt;

mod lanes;
mod tile;

pub use lanes::LANES;
use lanes::Lanes;
use tile::{Ctx, GradCtx, drive, grad_drive};

/// The instruction sets the convolution tile is built for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Isa {
    /// AVX-512F intrinsics: 6 cells × 64 channels per tile.
    Avx512,
    /// AVX2 + FMA intrinsics: 6 cells × 16 channels per tile.
    Avx2,
    /// Plain arrays the compiler vectorizes for the target (any CPU).
    Portable,
}

impl Isa {
    /// Every build, fastest first.
    pub const ALL: [Isa; 3] = [Isa::Avx512, Isa::Avx2, Isa::Portable];

    /// Whether this CPU can run the build (detected at run time).
    pub fn is_supported(self) -> bool {
        match self {
            Isa::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => std::arch::is_x86_feature_detected!("avx512f"),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => {
                std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("fma")
            }
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }
}

/// A build of the convolution tile that this CPU can run: a value exists only once the
/// CPU features of its [`Isa`] were detected ([`Kernel::new`], [`Kernel::detect`],
/// [`Kernel::available`] are the only ways to get one), and the kernels' safe entry
/// points rely on that to run its instructions.
///
/// ```compile_fail
/// // No `Kernel` without the run-time check: the field is private.
/// let _ = train::kernels::Kernel(train::kernels::Isa::Avx512);
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Kernel(Isa);

impl fmt::Debug for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl Kernel {
    /// The build for `isa`, if this CPU can run it.
    ///
    /// ```
    /// use train::kernels::{Isa, Kernel};
    /// assert!(Kernel::new(Isa::Portable).is_some());
    /// ```
    pub fn new(isa: Isa) -> Option<Kernel> {
        Kernel::made(isa, |_| true)
    }

    /// The one place a `Kernel` is made: `isa` if the CPU supports it and `allowed`
    /// agrees. `allowed` can only withhold a build (the tests use it to stand for a CPU
    /// with fewer features), never skip the detection.
    fn made(isa: Isa, allowed: impl Fn(Isa) -> bool) -> Option<Kernel> {
        (isa.is_supported() && allowed(isa)).then_some(Kernel(isa))
    }

    /// The fastest kernel this CPU supports.
    pub fn detect() -> Kernel {
        Kernel::available()[0]
    }

    /// Every kernel this CPU can run, fastest first (for tests that check each one);
    /// [`Isa::Portable`] always.
    pub fn available() -> Vec<Kernel> {
        Kernel::available_where(|_| true)
    }

    /// [`Kernel::available`] with the builds `allowed` refuses withheld.
    fn available_where(allowed: impl Fn(Isa) -> bool) -> Vec<Kernel> {
        Isa::ALL
            .into_iter()
            .filter_map(|isa| Kernel::made(isa, &allowed))
            .collect()
    }

    /// The instruction set of this build.
    pub fn isa(self) -> Isa {
        self.0
    }
}

/// `rows · stride + width`, the end of the last of `rows + 1` rows, or `None` on
/// overflow (for bounds checks that a huge index cannot wrap past).
pub(crate) fn row_end(rows: usize, stride: usize, width: usize) -> Option<usize> {
    rows.checked_mul(stride)?.checked_add(width)
}

mod packed;
pub mod winograd;
pub use packed::Packed;

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
/// If `job.taps` does not have `conv`'s tap count, a stride is below the channels read
/// or written per cell, a tap of a listed cell falls outside `x` or a cell outside
/// `out`, or `residual` is shorter than `out`.
pub fn convolve(kernel: Kernel, conv: &Packed, job: Job<'_>) {
    assert_eq!(conv.taps(), job.taps.len(), "tap count of the convolution");
    assert!(
        conv.c_in() <= job.x_stride,
        "input stride {} below the {} input channels",
        job.x_stride,
        conv.c_in()
    );
    assert!(
        conv.c_pad() <= job.out_stride,
        "output stride {} below the {} padded output channels",
        job.out_stride,
        conv.c_pad()
    );
    // Rows grow with the cell, so the smallest and largest cells bound every row read or
    // written. Exact bounds (a cell's row may be followed by other data: interleaved
    // layouts), in overflow-checked arithmetic so that no huge index wraps into range.
    let (lo, hi) = job
        .cells
        .iter()
        .fold((usize::MAX, 0), |(lo, hi), &c| (lo.min(c), hi.max(c)));
    if !job.cells.is_empty() {
        assert!(
            row_end(hi, job.out_stride, conv.c_pad()).is_some_and(|end| end <= job.out.len()),
            "output cell {hi} out of range"
        );
        for &t in job.taps {
            assert!(
                lo.checked_add_signed(t).is_some(),
                "tap {t} of cell {lo} out of range"
            );
            assert!(
                hi.checked_add_signed(t)
                    .and_then(|s| row_end(s, job.x_stride, conv.c_in()))
                    .is_some_and(|end| end <= job.x.len()),
                "tap {t} of cell {hi} out of range"
            );
        }
    }
    if let Some(r) = job.residual {
        assert!(r.len() >= job.out.len(), "residual smaller than the output");
    }
    // Offsets in floats; wrapping, as the tiles add them to a cell's (wrapping) row start
    // and only the sum, checked above, must be exact.
    let taps: Vec<isize> = job
        .taps
        .iter()
        .map(|&t| t.wrapping_mul(job.x_stride as isize))
        .collect();
    let ctx = Ctx {
        x: job.x.as_ptr(),
        x_stride: job.x_stride,
        taps: &taps,
        c_in: conv.c_in(),
        w: conv.weights().as_ptr(),
        w_stride: conv.c_pad(),
        bias: conv.bias().as_ptr(),
        out: job.out.as_mut_ptr(),
        out_stride: job.out_stride,
        residual: job.residual.map_or(std::ptr::null(), |r| r.as_ptr()),
        relu: job.relu,
    };
    // SAFETY: the tiles read and write only (see `tile6`, `store_row`):
    // - `out` and `residual` at a listed cell's row, columns below `c_pad`: checked above
    //   for the largest cell to lie in `out`, and `residual` is at least as long;
    // - `x` at a listed cell plus a tap, columns below `c_in`: checked above for the
    //   smallest cell (not before `x`) and the largest (not past it);
    // - `w` below `taps · c_in · c_pad` and `bias` below `c_pad`: `Packed`'s invariant,
    //   with `c_pad` a multiple of `LANES` so that whole vectors stay inside.
    // `kernel` exists only if the CPU has its features.
    unsafe {
        match kernel.isa() {
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => x86::run_avx512(&ctx, job.cells),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => x86::run_avx2(&ctx, job.cells),
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
    /// The gradient, `[tap][c_in][c_pad]` (the layout of [`Packed::weights`]), accumulated into.
    pub out: &'a mut [f32],
}

/// Accumulates a convolution's weight gradient (see [`GradJob`]) with `kernel`: the
/// convolution tile with the roles of cells and channels swapped, 6 input channels ×
/// `NV · 16` output channels in registers while the positions stream by.
///
/// # Panics
/// If `c_pad` is not a multiple of [`LANES`] or exceeds `dy_stride`, `c_in` exceeds
/// `x_stride`, `out` is shorter than `taps · c_in · c_pad`, or a position of a run (or a
/// tap of it) falls outside the buffers. Empty runs are ignored wherever they start.
pub fn weight_gradient(kernel: Kernel, job: GradJob<'_>) {
    assert!(
        job.c_pad.is_multiple_of(LANES),
        "gradient columns {} not a multiple of {LANES}",
        job.c_pad
    );
    assert!(
        job.c_pad <= job.dy_stride,
        "gradient columns {} exceed the output gradient's stride {}",
        job.c_pad,
        job.dy_stride
    );
    assert!(
        job.c_in <= job.x_stride,
        "input stride {} below the {} input channels",
        job.x_stride,
        job.c_in
    );
    assert!(
        job.taps
            .len()
            .checked_mul(job.c_in)
            .and_then(|v| v.checked_mul(job.c_pad))
            .is_some_and(|need| need <= job.out.len()),
        "weight gradient smaller than [{}][{}][{}]",
        job.taps.len(),
        job.c_in,
        job.c_pad
    );
    // The rows of a run are consecutive, so its first and last positions bound them all
    // (overflow-checked arithmetic: no huge index wraps into range).
    for &(first, count) in job.runs {
        if count == 0 {
            continue;
        }
        let last = first.checked_add(count - 1);
        assert!(
            last.and_then(|l| row_end(l, job.dy_stride, job.c_pad))
                .is_some_and(|end| end <= job.dy.len()),
            "run of {count} at {first} out of range"
        );
        for &t in job.taps {
            assert!(
                first.checked_add_signed(t).is_some()
                    && last
                        .and_then(|l| l.checked_add_signed(t))
                        .and_then(|s| row_end(s, job.x_stride, job.c_in))
                        .is_some_and(|end| end <= job.x.len()),
                "tap {t} of the run of {count} at {first} out of range"
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
    // SAFETY: the tiles (see `grad_tile6`) skip empty runs and read and write only:
    // - `dy` at a run's positions, columns below `c_pad`: checked above for the run's
    //   last position, and `c_pad <= dy_stride` puts the earlier ones below it;
    // - `x` at a run's positions plus a tap, channels below `c_in`: checked above for the
    //   first (not before `x`) and the last (not past it);
    // - `out` below `taps · c_in · c_pad`: checked above, with `c_pad` a multiple of
    //   `LANES` so that whole vectors stay inside.
    // `kernel` exists only if the CPU has its features.
    unsafe {
        match kernel.isa() {
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => x86::grad_avx512(&g, job.taps, job.runs),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => x86::grad_avx2(&g, job.taps, job.runs),
            _ => grad_drive::<Lanes, 1>(&g, job.taps, job.runs),
        }
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) mod x86;

/// The portable build of the tile.
///
/// # Safety
/// As [`drive`].
unsafe fn run_portable(ctx: &Ctx, cells: &[usize]) {
    // SAFETY: the caller's contract; `Lanes` runs on any CPU.
    unsafe { drive::<Lanes, 1>(ctx, cells) }
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
mod checks;

#[cfg(test)]
mod tests;
