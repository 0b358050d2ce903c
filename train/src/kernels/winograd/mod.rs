//! 3×3 convolutions by Winograd's minimal filtering F(m×m, 3×3): each m×m block of
//! outputs is computed from an (m+2)×(m+2) block of inputs with (m+2)² products per
//! channel pair instead of 9m². Two tilings ([`Tile`]):
//!
//! - F(2×2, 3×3): 16 products per 2×2 block; a 7×7 board (16 blocks) costs 256 products
//!   per channel pair instead of 441. Its transforms' entries are 0, ±1 and ±½, so the
//!   results stay within a few ulps of the direct convolution.
//! - F(4×4, 3×3): 36 products per 4×4 block; a 7×7 or 8×8 board (4 blocks) costs 144,
//!   and the transformed blocks take 2.25 floats per cell instead of 4, so the
//!   transforms move less memory. Its transforms (points 0, ±1, ±2) lose about 3 more
//!   bits than F(2×2, 3×3): still within 1e-5 of the direct convolution at these sizes.
//!
//! The (m+2)² products are matrix products `[blocks × c_in] · [c_in × c_out]`, run by the
//! direct-convolution kernel of [`crate::kernels`] as 1×1 convolutions.
//!
//! Transforms (Lavin & Gray, 2015): `U = G g Gᵀ` for the weights (once, when folding),
//! `V = Bᵀ d B` for each input block, `Y = Aᵀ M A` for each output block.

use crate::kernels::{GradJob, Job, Kernel, LANES, Packed, convolve, weight_gradient};

/// A board grid with a zero border: one cell on the top and left, and enough on the
/// bottom and right that every input block of either tiling lies inside (the board is
/// covered by 4×4 output blocks, which also cover it by 2×2 blocks).
#[derive(Clone, Copy, Debug)]
pub struct Grid {
    /// Board width.
    pub width: usize,
    /// Board height.
    pub height: usize,
}

impl Grid {
    /// Columns of the bordered grid.
    ///
    /// # Panics
    /// If the count overflows `usize`.
    pub fn row(self) -> usize {
        Grid::bordered(self.width)
    }

    /// Cells of one position's bordered grid.
    ///
    /// # Panics
    /// If the count overflows `usize`.
    pub fn cells(self) -> usize {
        self.row()
            .checked_mul(Grid::bordered(self.height))
            .expect("board too large")
    }

    /// A side rounded up to whole 4×4 blocks, plus the border.
    fn bordered(side: usize) -> usize {
        side.checked_next_multiple_of(4)
            .and_then(|s| s.checked_add(2))
            .expect("board too large")
    }

    /// The bordered-grid cell of board cell (x, y).
    pub fn cell(self, x: usize, y: usize) -> usize {
        (y + 1) * self.row() + x + 1
    }
}

/// A Winograd tiling: the size of the output blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tile {
    /// F(2×2, 3×3): 4×4 input blocks, 16 products.
    F2,
    /// F(4×4, 3×3): 6×6 input blocks, 36 products.
    F4,
}

impl Tile {
    /// Output block side m.
    fn m(self) -> usize {
        match self {
            Tile::F2 => 2,
            Tile::F4 => 4,
        }
    }

    /// Input block side m + 2.
    fn n(self) -> usize {
        self.m() + 2
    }

    /// Products per block and channel pair, (m + 2)².
    pub fn products(self) -> usize {
        self.n() * self.n()
    }

    /// The filter transform G, `[m + 2][3]`.
    fn g(self) -> &'static [[f64; 3]] {
        match self {
            Tile::F2 => &[
                [1.0, 0.0, 0.0],
                [0.5, 0.5, 0.5],
                [0.5, -0.5, 0.5],
                [0.0, 0.0, 1.0],
            ],
            Tile::F4 => &[
                [1.0 / 4.0, 0.0, 0.0],
                [-1.0 / 6.0, -1.0 / 6.0, -1.0 / 6.0],
                [-1.0 / 6.0, 1.0 / 6.0, -1.0 / 6.0],
                [1.0 / 24.0, 1.0 / 12.0, 1.0 / 6.0],
                [1.0 / 24.0, -1.0 / 12.0, 1.0 / 6.0],
                [0.0, 0.0, 1.0],
            ],
        }
    }
}

/// A 3×3 convolution (with bias) transformed for one tiling.
pub struct Winograd {
    tile: Tile,
    c_in: usize,
    /// `U` for each of the (m+2)² block positions, packed as 1×1 convolutions (no bias).
    u: Vec<Packed>,
    /// Bias `[c_pad]`.
    bias: Vec<f32>,
}

impl Winograd {
    /// Transforms a packed 3×3 convolution for `tile`. (`Packed` keeps its sizes
    /// consistent, so the transformed convolution's are too: every `u` packs `c_out`
    /// channels to the bias's `c_pad`, a multiple of [`LANES`].)
    ///
    /// # Panics
    /// If `conv` is not 3×3.
    pub fn with_tile(conv: &Packed, tile: Tile) -> Winograd {
        assert_eq!(
            conv.taps(),
            9,
            "Winograd F(m x m, 3x3) needs a 3x3 convolution"
        );
        let (c_in, c_out, c_pad, w) = (conv.c_in(), conv.c_out(), conv.c_pad(), conv.weights());
        let (g_mat, n) = (tile.g(), tile.n());
        // u[k][o][i], k = n·row + column of the n×n transformed filter.
        let mut u = vec![vec![0.0f32; c_out * c_in]; n * n];
        let mut gg = vec![[0.0f64; 3]; n];
        for o in 0..c_out {
            for i in 0..c_in {
                let g = |r: usize, c: usize| f64::from(w[((r * 3 + c) * c_in + i) * c_pad + o]);
                // G g: n×3, then (G g) Gᵀ: n×n, in f64 so that U is rounded once.
                for (a, row) in gg.iter_mut().enumerate() {
                    for (c, v) in row.iter_mut().enumerate() {
                        *v = (0..3).map(|r| g_mat[a][r] * g(r, c)).sum();
                    }
                }
                for a in 0..n {
                    for b in 0..n {
                        let v: f64 = (0..3).map(|c| gg[a][c] * g_mat[b][c]).sum();
                        u[a * n + b][o * c_in + i] = v as f32;
                    }
                }
            }
        }
        let zero = vec![0.0; c_out];
        Winograd {
            tile,
            c_in,
            u: u.iter()
                .map(|w| Packed::new(c_out, c_in, 1, w, &zero))
                .collect(),
            bias: conv.bias().to_vec(),
        }
    }

    /// Output floats per cell this convolution writes (`c_out` rounded up to a multiple
    /// of [`LANES`]).
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
    /// Per block position: its input cells (see `transform_inputs`).
    sources: Vec<[usize; 36]>,
    /// Per block position: its output cells and which lie on the board (see
    /// `output_cells`).
    outputs: Vec<([usize; 16], u16)>,
}

/// The m×m output cells of each block position of `grid`, as float offsets (`stride`
/// floats per cell) within a position's grid, into `out`, with a mask of those on the
/// board. Every cell lies inside the grid, which covers whole 4×4 blocks, so cells off
/// the board read the zero border.
fn output_cells(grid: Grid, m: usize, stride: usize, out: &mut Vec<([usize; 16], u16)>) {
    let (bx, by) = (grid.width.div_ceil(m), grid.height.div_ceil(m));
    out.clear();
    out.extend((0..by * bx).map(|b| {
        let (tx, ty) = (b % bx, b / bx);
        let mut cells = [0usize; 16];
        let mut on_board = 0u16;
        for (i, cell) in cells[..m * m].iter_mut().enumerate() {
            let (xx, yy) = (m * tx + i % m, m * ty + i / m);
            *cell = grid.cell(xx, yy) * stride;
            if xx < grid.width && yy < grid.height {
                on_board |= 1 << i;
            }
        }
        (cells, on_board)
    }));
}

/// Whether a buffer of `len` floats holds `a · b · c` (without overflow).
fn holds(len: usize, a: usize, b: usize, c: usize) -> bool {
    a.checked_mul(b)
        .and_then(|v| v.checked_mul(c))
        .is_some_and(|need| need <= len)
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
/// If a buffer is smaller than `n` positions of `grid` (`io.x` at `x_stride` floats per
/// cell, `out` and `residual` at [`Winograd::c_pad`]), or `x_stride` is below the input
/// channels rounded up to a multiple of [`LANES`].
pub fn convolve3x3(
    kernel: Kernel,
    conv: &Winograd,
    grid: Grid,
    n: usize,
    io: Io<'_>,
    scratch: &mut Scratch,
) {
    match conv.tile {
        Tile::F2 => run::<F2>(kernel, conv, grid, n, io, scratch),
        Tile::F4 => run::<F4>(kernel, conv, grid, n, io, scratch),
    }
}

/// Accumulates the weight gradient of a 3×3 convolution over `n` positions in the
/// Winograd domain of `tile`: `du[k][i][o] += Σ_blocks V[block][k][i] · dM[block][k][o]`,
/// with `V = Bᵀ d B` the transformed input blocks of `x` (`x_stride` floats per cell,
/// `c_in` channels) and `dM = A dY Aᵀ` the output gradient's blocks (`dy`, `dy_stride`
/// floats per cell, `c_pad` columns, zero off the board as every grid's border is). Per
/// channel pair this is (m+2)² products per block instead of 9 per output cell;
/// [`gradient_taps`] turns the sum into the gradient of the 3×3 weights.
///
/// # Panics
/// If a buffer is smaller than `n` positions of `grid`, `x_stride` is below `c_in`
/// rounded up to a multiple of [`LANES`], `c_pad` is not a multiple of [`LANES`] or
/// exceeds `dy_stride`, or `du` is smaller than `(m+2)² · c_in · c_pad`.
#[allow(clippy::too_many_arguments)]
pub fn gradient3x3(
    kernel: Kernel,
    tile: Tile,
    grid: Grid,
    n: usize,
    (x, x_stride, c_in): (&[f32], usize, usize),
    (dy, dy_stride, c_pad): (&[f32], usize, usize),
    du: &mut [f32],
    scratch: &mut Scratch,
) {
    match tile {
        Tile::F2 => gradient::<F2>(
            kernel,
            grid,
            n,
            (x, x_stride, c_in),
            (dy, dy_stride, c_pad),
            du,
            scratch,
        ),
        Tile::F4 => gradient::<F4>(
            kernel,
            grid,
            n,
            (x, x_stride, c_in),
            (dy, dy_stride, c_pad),
            du,
            scratch,
        ),
    }
}

fn gradient<T: Transforms>(
    kernel: Kernel,
    grid: Grid,
    n: usize,
    (x, x_stride, c_in): (&[f32], usize, usize),
    (dy, dy_stride, c_pad): (&[f32], usize, usize),
    du: &mut [f32],
    scratch: &mut Scratch,
) {
    let (m, nn) = (T::M, T::N);
    let k_all = nn * nn;
    let g = grid.cells();
    assert!(
        c_pad.is_multiple_of(LANES),
        "gradient columns {c_pad} not a multiple of {LANES}"
    );
    assert!(
        c_pad <= dy_stride,
        "gradient columns {c_pad} exceed the output gradient's stride {dy_stride}"
    );
    assert!(
        holds(dy.len(), n, g, dy_stride),
        "output gradient smaller than {n} positions"
    );
    assert!(
        holds(du.len(), k_all, c_in, c_pad),
        "gradient smaller than [{k_all}][{c_in}][{c_pad}]"
    );
    let lanes = transform_inputs::<T>(kernel, grid, n, (x, x_stride, c_in), scratch);
    let (bx, by) = (grid.width.div_ceil(m), grid.height.div_ceil(m));
    let blocks = n * bx * by;
    // dM[block][k][c_pad] from the m×m output cells of each block (inside the grid).
    scratch.m.resize(blocks * k_all * c_pad, 0.0);
    output_cells(grid, m, dy_stride, &mut scratch.outputs);
    for p in 0..n {
        let yp = dy[p * g * dy_stride..].as_ptr();
        for (b, (cells, _)) in scratch.outputs.iter().enumerate() {
            let block = p * bx * by + b;
            let dst = &mut scratch.m[block * k_all * c_pad..][..k_all * c_pad];
            let op = OutputGradOp::<T> {
                dy: yp,
                cells,
                c_pad,
                dst: dst.as_mut_ptr(),
                tiling: std::marker::PhantomData,
            };
            // SAFETY: `output_grad_block` reads `dy` at `yp` plus a cell's offset (`cell ·
            // dy_stride` for a cell of the block, inside the grid: `transform_inputs`
            // asserted that the grid holds every block)
            // plus a column below `c_pad <= dy_stride`, so inside the position's
            // `g · dy_stride` floats, which `dy` holds for every position below `n`
            // (checked above); it writes `dst`, N² · c_pad floats, at `k · c_pad` plus a
            // column below `c_pad`, a multiple of `LANES` (checked above).
            unsafe { dispatch(kernel, &op) };
        }
    }
    for k in 0..k_all {
        weight_gradient(
            kernel,
            GradJob {
                x: &scratch.v[k * lanes..],
                x_stride: k_all * lanes,
                c_in,
                taps: &[0],
                runs: &[(0, blocks)],
                dy: &scratch.m[k * c_pad..],
                dy_stride: k_all * c_pad,
                c_pad,
                out: &mut du[k * c_in * c_pad..][..c_in * c_pad],
            },
        );
    }
}

/// Adds to `dw` (`[tap][c_in][c_pad]`, the layout of [`Packed::weights`]) the 3×3 weight
/// gradient `Gᵀ dU G` of a gradient summed by [`gradient3x3`].
pub fn gradient_taps(tile: Tile, du: &[f32], c_in: usize, c_pad: usize, dw: &mut [f32]) {
    let (gm, nn) = (tile.g(), tile.n());
    assert!(du.len() >= nn * nn * c_in * c_pad && dw.len() >= 9 * c_in * c_pad);
    let at = |k: usize, i: usize| (k * c_in + i) * c_pad;
    // Gᵀ dU: [3][N] rows of c_pad per input channel.
    let mut half = vec![0.0f32; 3 * nn * c_pad];
    for i in 0..c_in {
        half.fill(0.0);
        for r in 0..3 {
            for b in 0..nn {
                let h = &mut half[(r * nn + b) * c_pad..][..c_pad];
                for (a, g) in gm.iter().enumerate() {
                    let w = g[r] as f32;
                    if w != 0.0 {
                        let src = &du[at(a * nn + b, i)..][..c_pad];
                        h.iter_mut().zip(src).for_each(|(h, s)| *h += w * s);
                    }
                }
            }
        }
        for r in 0..3 {
            for c in 0..3 {
                let out = &mut dw[at(r * 3 + c, i)..][..c_pad];
                for (b, g) in gm.iter().enumerate() {
                    let w = g[c] as f32;
                    if w != 0.0 {
                        let h = &half[(r * nn + b) * c_pad..][..c_pad];
                        out.iter_mut().zip(h).for_each(|(o, h)| *o += w * h);
                    }
                }
            }
        }
    }
}

/// `V = Bᵀ d B` for every input block of `n` positions of `x` (`x_stride` floats per
/// cell, `c_in` channels) into `v`, `[block][k][lanes]` with k = N·row + column; returns
/// `lanes`, `c_in` rounded up to whole vectors.
fn transform_inputs<T: Transforms>(
    kernel: Kernel,
    grid: Grid,
    n: usize,
    (x, x_stride, c_in): (&[f32], usize, usize),
    scratch: &mut Scratch,
) -> usize {
    let (m, nn) = (T::M, T::N);
    let k_all = nn * nn;
    let (g, row) = (grid.cells(), grid.row());
    assert!(
        holds(x.len(), n, g, x_stride),
        "input smaller than {n} positions"
    );
    let (bx, by) = (grid.width.div_ceil(m), grid.height.div_ceil(m));
    // The bordered grid holds every input block (see `Grid`): a block's last cell is
    // `(m · by + 1) · row + m · bx + 1`, below `g` by these.
    assert!(m * bx + 2 <= row && (m * by + 2) * row <= g);
    // Transforms run on whole vectors of 16 channels: lanes past `c_in` carry whatever the
    // input holds there and are never read by the products.
    let lanes = c_in
        .checked_next_multiple_of(LANES)
        .filter(|&lanes| lanes <= x_stride)
        .expect("input stride must cover whole vectors of channels");
    let Scratch { v, sources, .. } = scratch;
    v.resize(n * bx * by * k_all * lanes, 0.0);
    // The input cells of each block position, as float offsets within a position's grid.
    sources.clear();
    sources.extend((0..by * bx).map(|b| {
        // Top-left input cell of the block: board cell (m·tx − 1, m·ty − 1).
        let corner = m * (b / bx) * row + m * (b % bx);
        let mut src = [0usize; 36];
        for (i, s) in src[..k_all].iter_mut().enumerate() {
            *s = (corner + (i / nn) * row + i % nn) * x_stride;
        }
        src
    }));
    for p in 0..n {
        let xp = x[p * g * x_stride..].as_ptr();
        for (b, src) in sources.iter().enumerate() {
            let block = p * bx * by + b;
            let dst = &mut v[block * k_all * lanes..][..k_all * lanes];
            let op = InputOp::<T> {
                x: xp,
                src,
                lanes,
                dst: dst.as_mut_ptr(),
                tiling: std::marker::PhantomData,
            };
            // SAFETY: `input_block` reads `x` at `xp` plus a source offset (`cell ·
            // x_stride` for a cell of the block, inside the grid: checked above) plus a
            // channel below `lanes <= x_stride` (checked above), so inside the position's
            // `g · x_stride` floats, which `x` holds for every position below `n` (checked
            // above); it writes `dst`, N² · lanes floats, at `k · lanes` plus a channel
            // below `lanes`, a multiple of `LANES`.
            unsafe { dispatch(kernel, &op) };
        }
    }
    lanes
}

fn run<T: Transforms>(
    kernel: Kernel,
    conv: &Winograd,
    grid: Grid,
    n: usize,
    io: Io<'_>,
    scratch: &mut Scratch,
) {
    let (c_in, c_pad) = (conv.c_in, conv.c_pad());
    let (m, nn) = (T::M, T::N);
    let k_all = nn * nn;
    let g = grid.cells();
    assert!(
        holds(io.out.len(), n, g, c_pad),
        "output smaller than {n} positions"
    );
    if let Some(r) = io.residual {
        assert!(
            holds(r.len(), n, g, c_pad),
            "residual smaller than {n} positions"
        );
    }
    let (bx, by) = (grid.width.div_ceil(m), grid.height.div_ceil(m));
    let blocks = n * bx * by;
    let lanes = transform_inputs::<T>(kernel, grid, n, (io.x, io.x_stride, c_in), scratch);
    // M[block][k][c_pad] = V[block][k] · U[k], as N² strided 1×1 convolutions.
    scratch.m.resize(blocks * k_all * c_pad, 0.0);
    scratch.blocks.clear();
    scratch.blocks.extend(0..blocks);
    for k in 0..k_all {
        convolve(
            kernel,
            &conv.u[k],
            Job {
                x: &scratch.v[k * lanes..],
                x_stride: k_all * lanes,
                taps: &[0],
                cells: &scratch.blocks,
                out: &mut scratch.m[k * c_pad..],
                out_stride: k_all * c_pad,
                residual: None,
                relu: false,
            },
        );
    }
    // Y = Aᵀ M A, plus bias and residual, ReLU; only board cells are written.
    output_cells(grid, m, c_pad, &mut scratch.outputs);
    for p in 0..n {
        let base = p * g * c_pad;
        for (b, (cells, on_board)) in scratch.outputs.iter().enumerate() {
            let block = p * bx * by + b;
            let mb = &scratch.m[block * k_all * c_pad..][..k_all * c_pad];
            let dst = Dst {
                out: io.out.as_mut_ptr().wrapping_add(base),
                residual: io
                    .residual
                    .map_or(std::ptr::null(), |r| r.as_ptr().wrapping_add(base)),
                cells,
                on_board: *on_board,
                relu: io.relu,
            };
            let op = OutputOp::<T> {
                m: mb.as_ptr(),
                c_pad,
                bias: conv.bias.as_ptr(),
                dst: &dst,
                tiling: std::marker::PhantomData,
            };
            // SAFETY: `output_block` reads `mb`, N² · c_pad floats, at `k · c_pad` plus a
            // column below `c_pad`, and the bias, `c_pad` floats, below `c_pad`: `c_pad`
            // is the bias's length, a multiple of `LANES` (`Packed`'s invariant, kept by
            // `with_tile`). It writes `out` (and reads `residual`, unless null) at `base`
            // plus a board cell's offset (`cell · c_pad`, cell below `g`, which
            // `transform_inputs` asserted holds every block) plus a column below `c_pad`,
            // so below `(p + 1) · g · c_pad`,
            // which both hold for every position below `n` (checked above).
            unsafe { dispatch(kernel, &op) };
        }
    }
}

mod blocks;
mod transforms;

use blocks::{Dst, InputOp, OutputGradOp, OutputOp, dispatch};
use transforms::{F2, F4, Transforms};

#[cfg(test)]
mod checks;

#[cfg(test)]
mod tests;
