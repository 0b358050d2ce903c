//! 3×3 convolutions by Winograd's minimal filtering F(2×2, 3×3): each 2×2 block of
//! outputs is computed from a 4×4 block of inputs with 16 products per channel pair
//! instead of 36, so a 7×7 board (16 blocks) costs 256 products per channel pair instead
//! of 441. The 16 products are 16 matrix products `[blocks × c_in] · [c_in × c_out]`, run
//! by the direct-convolution kernel of [`crate::kernel`] as 1×1 convolutions.
//!
//! Transforms (Lavin & Gray, 2015): `U = G g Gᵀ` for the weights (once, when folding),
//! `V = Bᵀ d B` for each input block, `Y = Aᵀ M A` for each output block. Their entries
//! are 0, ±1 and ±½, so the results stay within a few ulps of the direct convolution.

#[cfg(target_arch = "x86_64")]
use crate::kernel::x86::{Avx2, Avx512};
use crate::kernel::{Job, Kernel, LANES, Lanes, Packed, Vector, convolve};

/// A board grid with a zero border: one cell on the top and left, and enough on the
/// bottom and right that every 4×4 input block lies inside.
#[derive(Clone, Copy, Debug)]
pub struct Grid {
    /// Board width.
    pub width: usize,
    /// Board height.
    pub height: usize,
}

impl Grid {
    /// 2×2 output blocks per row.
    fn blocks_x(self) -> usize {
        self.width.div_ceil(2)
    }

    /// 2×2 output blocks per column.
    fn blocks_y(self) -> usize {
        self.height.div_ceil(2)
    }

    /// Columns of the bordered grid.
    pub fn row(self) -> usize {
        2 * self.blocks_x() + 2
    }

    /// Cells of one position's bordered grid.
    pub fn cells(self) -> usize {
        self.row() * (2 * self.blocks_y() + 2)
    }

    /// The bordered-grid cell of board cell (x, y).
    pub fn cell(self, x: usize, y: usize) -> usize {
        (y + 1) * self.row() + x + 1
    }
}

/// A 3×3 convolution (with bias) transformed for F(2×2, 3×3).
pub struct Winograd {
    c_in: usize,
    /// `U` for each of the 16 block positions, packed as 1×1 convolutions (no bias).
    u: Vec<Packed>,
    /// Bias `[c_pad]`.
    bias: Vec<f32>,
}

impl Winograd {
    /// Transforms a packed 3×3 convolution.
    ///
    /// # Panics
    /// If `conv` is not 3×3.
    pub fn new(conv: &Packed) -> Winograd {
        assert_eq!(conv.taps, 9, "Winograd F(2x2, 3x3) needs a 3x3 convolution");
        let (c_in, c_out) = (conv.c_in, conv.c_out);
        const G: [[f32; 3]; 4] = [
            [1.0, 0.0, 0.0],
            [0.5, 0.5, 0.5],
            [0.5, -0.5, 0.5],
            [0.0, 0.0, 1.0],
        ];
        // u[k][o][i], k = 4·row + column of the 4×4 transformed filter.
        let mut u = vec![vec![0.0f32; c_out * c_in]; 16];
        for o in 0..c_out {
            for i in 0..c_in {
                let g = |r: usize, c: usize| conv.w[((r * 3 + c) * c_in + i) * conv.c_pad + o];
                // G g: 4×3, then (G g) Gᵀ: 4×4.
                let mut gg = [[0.0f32; 3]; 4];
                for (a, row) in gg.iter_mut().enumerate() {
                    for (c, v) in row.iter_mut().enumerate() {
                        *v = (0..3).map(|r| G[a][r] * g(r, c)).sum();
                    }
                }
                for a in 0..4 {
                    for b in 0..4 {
                        u[a * 4 + b][o * c_in + i] = (0..3).map(|c| gg[a][c] * G[b][c]).sum();
                    }
                }
            }
        }
        let zero = vec![0.0; c_out];
        Winograd {
            c_in,
            u: u.iter()
                .map(|w| Packed::new(c_out, c_in, 1, w, &zero))
                .collect(),
            bias: conv.bias.clone(),
        }
    }

    /// Output floats per cell this convolution writes (`c_out` rounded up).
    pub fn c_pad(&self) -> usize {
        self.bias.len()
    }
}

/// Scratch space for the transformed blocks, reused between calls.
#[derive(Default)]
pub struct Scratch {
    v: Vec<f32>,
    m: Vec<f32>,
    blocks: Vec<usize>,
}

/// Where a Winograd convolution reads and writes (channel-last bordered grids).
pub struct Io<'a> {
    /// Input activations, `x_stride` floats per cell; border cells zero.
    pub x: &'a [f32],
    /// Input floats per cell.
    pub x_stride: usize,
    /// Output activations, [`Winograd::c_pad`] floats per cell; only board cells are
    /// written.
    pub out: &'a mut [f32],
    /// Added before the ReLU, same layout as `out`.
    pub residual: Option<&'a [f32]>,
    /// Whether to apply a ReLU.
    pub relu: bool,
}

/// Applies `conv` to `n` positions on `grid`.
///
/// # Panics
/// If a buffer is smaller than `n` positions of `grid`, or `kernel` cannot run here.
pub fn convolve3x3(
    kernel: Kernel,
    conv: &Winograd,
    grid: Grid,
    n: usize,
    io: Io<'_>,
    scratch: &mut Scratch,
) {
    let (c_in, c_pad) = (conv.c_in, conv.c_pad());
    let g = grid.cells();
    let row = grid.row();
    assert!(io.x.len() >= n * g * io.x_stride && c_in <= io.x_stride);
    assert!(io.out.len() >= n * g * c_pad);
    if let Some(r) = io.residual {
        assert!(r.len() >= n * g * c_pad);
    }
    let (bx, by) = (grid.blocks_x(), grid.blocks_y());
    let blocks = n * bx * by;
    // Transforms run on whole vectors of 16 channels: lanes past `c_in` carry whatever the
    // input holds there and are never read by the products.
    let lanes = c_in.next_multiple_of(LANES);
    assert!(
        lanes <= io.x_stride,
        "input stride must cover whole vectors of channels"
    );
    // V[block][k][lanes]: the transformed input blocks (k = 4·row + column).
    scratch.v.resize(blocks * 16 * lanes, 0.0);
    for p in 0..n {
        for ty in 0..by {
            for tx in 0..bx {
                let block = (p * by + ty) * bx + tx;
                // Top-left input cell of the 4×4 block: board cell (2tx − 1, 2ty − 1).
                let base = p * g + 2 * ty * row + 2 * tx;
                let src: [usize; 16] =
                    std::array::from_fn(|i| (base + (i / 4) * row + i % 4) * io.x_stride);
                let dst = &mut scratch.v[block * 16 * lanes..][..16 * lanes];
                // SAFETY: every source offset plus `lanes` lies in `x` (asserted sizes:
                // the 4×4 block lies inside the bordered grid), `dst` holds 16 · lanes.
                unsafe { dispatch_input(kernel, io.x.as_ptr(), &src, lanes, dst.as_mut_ptr()) };
            }
        }
    }
    // M[block][k][c_pad] = V[block][k] · U[k], as 16 strided 1×1 convolutions.
    scratch.m.resize(blocks * 16 * c_pad, 0.0);
    scratch.blocks.clear();
    scratch.blocks.extend(0..blocks);
    for k in 0..16 {
        convolve(
            kernel,
            &conv.u[k],
            Job {
                x: &scratch.v[k * lanes..],
                x_stride: 16 * lanes,
                taps: &[0],
                cells: &scratch.blocks,
                out: &mut scratch.m[k * c_pad..],
                out_stride: 16 * c_pad,
                residual: None,
                relu: false,
            },
        );
    }
    // Y = Aᵀ M A, plus bias and residual, ReLU; only board cells are written.
    for p in 0..n {
        for ty in 0..by {
            for tx in 0..bx {
                let block = (p * by + ty) * bx + tx;
                let cells: [Option<usize>; 4] = std::array::from_fn(|i| {
                    let (xx, yy) = (2 * tx + i % 2, 2 * ty + i / 2);
                    (xx < grid.width && yy < grid.height).then(|| p * g + grid.cell(xx, yy))
                });
                let out = io.out.as_mut_ptr();
                let outs = cells.map(|c| c.map(|c| out.wrapping_add(c * c_pad)));
                let res = cells.map(|c| {
                    c.zip(io.residual)
                        .map(|(c, r)| r.as_ptr().wrapping_add(c * c_pad))
                });
                let m = &scratch.m[block * 16 * c_pad..][..16 * c_pad];
                // SAFETY: the output cells lie in `out` and `residual` (asserted sizes),
                // `m` holds 16 · c_pad, the bias c_pad.
                unsafe {
                    dispatch_output(
                        kernel,
                        m.as_ptr(),
                        c_pad,
                        conv.bias.as_ptr(),
                        &outs,
                        &res,
                        io.relu,
                    )
                };
            }
        }
    }
}

/// `V = Bᵀ d B` for one 4×4 block, 16 channels at a time: `src[i]` is the offset of
/// input cell i (row-major in the block), `dst` receives `[k][lanes]`.
#[inline(always)]
unsafe fn input_block<V: Vector>(x: *const f32, src: &[usize; 16], lanes: usize, dst: *mut f32) {
    unsafe {
        for ch in (0..lanes).step_by(LANES) {
            let d: [V; 16] = std::array::from_fn(|i| V::load(x.add(src[i] + ch)));
            let mut t = [d[0]; 16];
            for c in 0..4 {
                t[c] = d[c].sub(d[8 + c]);
                t[4 + c] = d[4 + c].add(d[8 + c]);
                t[8 + c] = d[8 + c].sub(d[4 + c]);
                t[12 + c] = d[4 + c].sub(d[12 + c]);
            }
            for r in 0..4 {
                let o = dst.add(r * 4 * lanes + ch);
                let t = &t[r * 4..r * 4 + 4];
                t[0].sub(t[2]).store(o);
                t[1].add(t[2]).store(o.add(lanes));
                t[2].sub(t[1]).store(o.add(2 * lanes));
                t[1].sub(t[3]).store(o.add(3 * lanes));
            }
        }
    }
}

/// `Y = Aᵀ M A` for one block, plus bias, residual and ReLU, stored to the block's board
/// cells (`None`: off the board).
#[inline(always)]
unsafe fn output_block<V: Vector>(
    m: *const f32,
    c_pad: usize,
    bias: *const f32,
    outs: &[Option<*mut f32>; 4],
    res: &[Option<*const f32>; 4],
    relu: bool,
) {
    unsafe {
        for ch in (0..c_pad).step_by(LANES) {
            let m: [V; 16] = std::array::from_fn(|k| V::load(m.add(k * c_pad + ch)));
            let mut t = [m[0]; 8];
            for c in 0..4 {
                t[c] = m[c].add(m[4 + c]).add(m[8 + c]);
                t[4 + c] = m[4 + c].sub(m[8 + c]).sub(m[12 + c]);
            }
            let b = V::load(bias.add(ch));
            let y = [
                t[0].add(t[1]).add(t[2]).add(b),
                t[1].sub(t[2]).sub(t[3]).add(b),
                t[4].add(t[5]).add(t[6]).add(b),
                t[5].sub(t[6]).sub(t[7]).add(b),
            ];
            for i in 0..4 {
                if let Some(o) = outs[i] {
                    let mut v = y[i];
                    if let Some(r) = res[i] {
                        v = v.add(V::load(r.add(ch)));
                    }
                    if relu {
                        v = v.relu();
                    }
                    v.store(o.add(ch));
                }
            }
        }
    }
}

unsafe fn dispatch_input(
    kernel: Kernel,
    x: *const f32,
    src: &[usize; 16],
    lanes: usize,
    dst: *mut f32,
) {
    unsafe {
        match kernel {
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => input_avx512(x, src, lanes, dst),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => input_avx2(x, src, lanes, dst),
            _ => input_block::<Lanes>(x, src, lanes, dst),
        }
    }
}

unsafe fn dispatch_output(
    kernel: Kernel,
    m: *const f32,
    c_pad: usize,
    bias: *const f32,
    outs: &[Option<*mut f32>; 4],
    res: &[Option<*const f32>; 4],
    relu: bool,
) {
    unsafe {
        match kernel {
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => output_avx512(m, c_pad, bias, outs, res, relu),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => output_avx2(m, c_pad, bias, outs, res, relu),
            _ => output_block::<Lanes>(m, c_pad, bias, outs, res, relu),
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn input_avx512(x: *const f32, src: &[usize; 16], lanes: usize, dst: *mut f32) {
    unsafe { input_block::<Avx512>(x, src, lanes, dst) }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn input_avx2(x: *const f32, src: &[usize; 16], lanes: usize, dst: *mut f32) {
    unsafe { input_block::<Avx2>(x, src, lanes, dst) }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn output_avx512(
    m: *const f32,
    c_pad: usize,
    bias: *const f32,
    outs: &[Option<*mut f32>; 4],
    res: &[Option<*const f32>; 4],
    relu: bool,
) {
    unsafe { output_block::<Avx512>(m, c_pad, bias, outs, res, relu) }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn output_avx2(
    m: *const f32,
    c_pad: usize,
    bias: *const f32,
    outs: &[Option<*mut f32>; 4],
    res: &[Option<*const f32>; 4],
    relu: bool,
) {
    unsafe { output_block::<Avx2>(m, c_pad, bias, outs, res, relu) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::noise;

    /// F(2×2, 3×3) against the direct kernel on odd and even boards, with a narrow
    /// input (stride padded to whole vectors), residual and ReLU, for every kernel build.
    #[test]
    fn winograd_matches_the_direct_convolution() {
        for (width, height, c_in, c_out) in [(5, 3, 7, 64), (7, 7, 32, 32), (8, 6, 64, 48)] {
            let grid = Grid { width, height };
            let n = 3;
            let g = grid.cells();
            let weights = noise(1, c_out * c_in * 9);
            let bias = noise(2, c_out);
            let conv = Packed::new(c_out, c_in, 3, &weights, &bias);
            let wino = Winograd::new(&conv);
            let stride = c_in.next_multiple_of(LANES);
            let raw = noise(3, n * g * stride);
            let mut x = vec![0.0; n * g * stride];
            let mut cells = Vec::new();
            for p in 0..n {
                for y in 0..height {
                    for xx in 0..width {
                        let cell = p * g + grid.cell(xx, y);
                        cells.push(cell);
                        x[cell * stride..cell * stride + c_in]
                            .copy_from_slice(&raw[cell * stride..cell * stride + c_in]);
                    }
                }
            }
            let row = grid.row() as isize;
            let taps: Vec<isize> = (-1..=1)
                .flat_map(|dy| (-1..=1).map(move |dx| dy * row + dx))
                .collect();
            let residual = noise(4, n * g * conv.c_pad);
            for kernel in Kernel::available() {
                let mut want = vec![0.0; n * g * conv.c_pad];
                convolve(
                    kernel,
                    &conv,
                    Job {
                        x: &x,
                        x_stride: stride,
                        taps: &taps,
                        cells: &cells,
                        out: &mut want,
                        out_stride: conv.c_pad,
                        residual: Some(&residual),
                        relu: true,
                    },
                );
                let mut got = vec![0.0; n * g * conv.c_pad];
                let io = Io {
                    x: &x,
                    x_stride: stride,
                    out: &mut got,
                    residual: Some(&residual),
                    relu: true,
                };
                convolve3x3(kernel, &wino, grid, n, io, &mut Scratch::default());
                for (i, (a, b)) in got.iter().zip(&want).enumerate() {
                    assert!(
                        (a - b).abs() < 1e-4,
                        "{kernel:?} {width}x{height} {c_in}->{c_out}: float {i}: {a} vs {b}"
                    );
                }
            }
        }
    }
}
