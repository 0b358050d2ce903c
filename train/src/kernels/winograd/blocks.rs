//! Block transforms (input, output, output gradient) on the vectors of each kernel
//! build, and the dispatch that runs them.

use super::transforms::Transforms;
use crate::kernels::lanes::{LANES, Lanes, Vector};
#[cfg(target_arch = "x86_64")]
use crate::kernels::x86::{Avx2, Avx512};
use crate::kernels::{Isa, Kernel};

/// `dM = A dY Aᵀ` for one block, 16 channels at a time: `cells[i]` is the offset of
/// output cell i (row-major in the block), `dst` receives `[k][c_pad]`.
///
/// # Safety
/// `c_pad` is a multiple of [`LANES`]; `dy + cells[i]` is valid for reading `c_pad`
/// floats for the M² cells of the block; `dst` is valid for writing N² · `c_pad`; the CPU
/// runs `V`.
#[inline(always)]
pub(super) unsafe fn output_grad_block<T: Transforms, V: Vector>(
    dy: *const f32,
    cells: &[usize; 16],
    c_pad: usize,
    dst: *mut f32,
) {
    let (mo, nn) = (T::M, T::N);
    // SAFETY: reads at `cells[r · M + c] + ch` for r, c < M and writes at
    // `k · c_pad + ch`, k < N², each of `LANES` floats with `ch + LANES <= c_pad`: the
    // function's contract.
    unsafe {
        let zero = V::splat(0.0);
        for ch in (0..c_pad).step_by(LANES) {
            // Rows first: t[r][b] = (dY A^T)[r][b].
            let mut t = [[zero; 6]; 4];
            for (r, t) in t.iter_mut().enumerate().take(mo) {
                let y: [V; 4] = std::array::from_fn(|c| {
                    if c < mo {
                        V::load(dy.add(cells[r * mo + c] + ch))
                    } else {
                        zero
                    }
                });
                *t = T::output_grad(y);
            }
            // Then columns: dM[a][b] = (A t)[a][b].
            let cols: [[V; 4]; 6] = std::array::from_fn(|b| std::array::from_fn(|r| t[r][b]));
            for (b, col) in cols.iter().enumerate().take(nn) {
                let d = T::output_grad(*col);
                for (a, d) in d.iter().enumerate().take(nn) {
                    d.store(dst.add((a * nn + b) * c_pad + ch));
                }
            }
        }
    }
}

/// Where one output block goes: its cells at `out + cells[i]` (and its residual at
/// `residual + cells[i]`, unless null) for the cells i set in `on_board`.
pub(super) struct Dst<'a> {
    pub(super) out: *mut f32,
    pub(super) residual: *const f32,
    pub(super) cells: &'a [usize; 16],
    pub(super) on_board: u16,
    pub(super) relu: bool,
}

/// `V = Bᵀ d B` for one input block, 16 channels at a time: `src[i]` is the offset of
/// input cell i (row-major in the block), `dst` receives `[k][lanes]`.
///
/// # Safety
/// `lanes` is a multiple of [`LANES`]; `x + src[i]` is valid for reading `lanes` floats
/// for the N² cells of the block; `dst` is valid for writing N² · `lanes`; the CPU runs
/// `V`.
#[inline(always)]
pub(super) unsafe fn input_block<T: Transforms, V: Vector>(
    x: *const f32,
    src: &[usize; 36],
    lanes: usize,
    dst: *mut f32,
) {
    let nn = T::N;
    // SAFETY: reads at `src[r · N + c] + ch` for r, c < N and writes at `k · lanes + ch`,
    // k < N², each of `LANES` floats with `ch + LANES <= lanes`: the function's contract.
    unsafe {
        let zero = V::splat(0.0);
        for ch in (0..lanes).step_by(LANES) {
            // Columns first: t[r][c] = (Bᵀ d)[r][c].
            let mut t = [[zero; 6]; 6];
            for c in 0..nn {
                let col: [V; 6] = std::array::from_fn(|r| {
                    if r < nn {
                        V::load(x.add(src[r * nn + c] + ch))
                    } else {
                        zero
                    }
                });
                let v = T::input(col);
                for (t, v) in t.iter_mut().zip(v).take(nn) {
                    t[c] = v;
                }
            }
            // Then rows: V[r][·] = Bᵀ t[r].
            for (r, t) in t.iter().enumerate().take(nn) {
                let v = T::input(*t);
                for (c, v) in v.iter().enumerate().take(nn) {
                    v.store(dst.add((r * nn + c) * lanes + ch));
                }
            }
        }
    }
}

/// `Y = Aᵀ M A` for one block, plus bias, residual and ReLU, stored to the block's board
/// cells.
///
/// # Safety
/// `c_pad` is a multiple of [`LANES`]; `m` is valid for reading N² · `c_pad` floats and
/// `bias` `c_pad`; for each cell i set in `dst.on_board`, `dst.out + dst.cells[i]` is
/// valid for writing `c_pad` floats (and `dst.residual + dst.cells[i]`, unless null, for
/// reading them); the CPU runs `V`.
#[inline(always)]
pub(super) unsafe fn output_block<T: Transforms, V: Vector>(
    m: *const f32,
    c_pad: usize,
    bias: *const f32,
    dst: &Dst<'_>,
) {
    let (mo, nn) = (T::M, T::N);
    // SAFETY: reads `m` at `k · c_pad + ch`, k < N², and `bias` at `ch`; reads `residual`
    // and writes `out` at `cells[i] + ch` for board cells i only; each of `LANES` floats
    // with `ch + LANES <= c_pad`: the function's contract.
    unsafe {
        let zero = V::splat(0.0);
        for ch in (0..c_pad).step_by(LANES) {
            // Columns first: t[r][c] = (Aᵀ M)[r][c].
            let mut t = [[zero; 6]; 4];
            for c in 0..nn {
                let col: [V; 6] = std::array::from_fn(|r| {
                    if r < nn {
                        V::load(m.add((r * nn + c) * c_pad + ch))
                    } else {
                        zero
                    }
                });
                let y = T::output(col);
                for (t, y) in t.iter_mut().zip(y).take(mo) {
                    t[c] = y;
                }
            }
            let b = V::load(bias.add(ch));
            for (r, t) in t.iter().enumerate().take(mo) {
                let y = T::output(*t);
                for (c, y) in y.iter().enumerate().take(mo) {
                    let i = r * mo + c;
                    if dst.on_board & (1 << i) == 0 {
                        continue;
                    }
                    let at = dst.cells[i] + ch;
                    let mut v = y.add(b);
                    if !dst.residual.is_null() {
                        v = v.add(V::load(dst.residual.add(at)));
                    }
                    if dst.relu {
                        v = v.relu();
                    }
                    v.store(dst.out.add(at));
                }
            }
        }
    }
}

/// A block transform, run with the vectors of one kernel build.
pub(super) trait BlockOp {
    /// Runs the transform.
    ///
    /// # Safety
    /// As the transform's function: its pointers valid for what it reads and writes,
    /// and the CPU able to run `V`.
    unsafe fn run<V: Vector>(&self);
}

/// [`input_block`] as a [`BlockOp`].
pub(super) struct InputOp<'a, T> {
    pub(super) x: *const f32,
    pub(super) src: &'a [usize; 36],
    pub(super) lanes: usize,
    pub(super) dst: *mut f32,
    pub(super) tiling: std::marker::PhantomData<T>,
}

impl<T: Transforms> BlockOp for InputOp<'_, T> {
    #[inline(always)]
    unsafe fn run<V: Vector>(&self) {
        // SAFETY: `run`'s contract is the transform's.
        unsafe { input_block::<T, V>(self.x, self.src, self.lanes, self.dst) }
    }
}

/// [`output_block`] as a [`BlockOp`].
pub(super) struct OutputOp<'a, T> {
    pub(super) m: *const f32,
    pub(super) c_pad: usize,
    pub(super) bias: *const f32,
    pub(super) dst: &'a Dst<'a>,
    pub(super) tiling: std::marker::PhantomData<T>,
}

impl<T: Transforms> BlockOp for OutputOp<'_, T> {
    #[inline(always)]
    unsafe fn run<V: Vector>(&self) {
        // SAFETY: `run`'s contract is the transform's.
        unsafe { output_block::<T, V>(self.m, self.c_pad, self.bias, self.dst) }
    }
}

/// [`output_grad_block`] as a [`BlockOp`].
pub(super) struct OutputGradOp<'a, T> {
    pub(super) dy: *const f32,
    pub(super) cells: &'a [usize; 16],
    pub(super) c_pad: usize,
    pub(super) dst: *mut f32,
    pub(super) tiling: std::marker::PhantomData<T>,
}

impl<T: Transforms> BlockOp for OutputGradOp<'_, T> {
    #[inline(always)]
    unsafe fn run<V: Vector>(&self) {
        // SAFETY: `run`'s contract is the transform's.
        unsafe { output_grad_block::<T, V>(self.dy, self.cells, self.c_pad, self.dst) }
    }
}

/// Runs `op` with the vectors of `kernel`, compiled for its instruction set.
///
/// # Safety
/// As [`BlockOp::run`], less the CPU's features: `kernel` proves them.
pub(super) unsafe fn dispatch<O: BlockOp>(kernel: Kernel, op: &O) {
    // SAFETY: `op`'s pointers are the caller's contract; a `Kernel` of an instruction set
    // exists only on a CPU that has its features, and `Lanes` runs on any.
    unsafe {
        match kernel.isa() {
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => on_avx512(op),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => on_avx2(op),
            _ => op.run::<Lanes>(),
        }
    }
}

/// `op` with AVX-512 vectors.
///
/// # Safety
/// As [`BlockOp::run`]; the CPU has AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn on_avx512<O: BlockOp>(op: &O) {
    // SAFETY: the caller's contract, which includes the CPU features `Avx512` needs.
    unsafe { op.run::<Avx512>() }
}

/// `op` with AVX2 vectors.
///
/// # Safety
/// As [`BlockOp::run`]; the CPU has AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn on_avx2<O: BlockOp>(op: &O) {
    // SAFETY: the caller's contract, which includes the CPU features `Avx2` needs.
    unsafe { op.run::<Avx2>() }
}
