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

#[cfg(target_arch = "x86_64")]
use crate::kernels::x86::{Avx2, Avx512};
use crate::kernels::{
    GradJob, Isa, Job, Kernel, LANES, Lanes, Packed, Vector, convolve, weight_gradient,
};

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

/// The one-dimensional transforms of a tiling, on vectors of 16 channels. Arrays are
/// sized for the largest tiling; entries past `N` (or `M`) are unused.
///
/// # Safety
/// The transforms touch no memory; they need only a CPU that runs `V`.
trait Transforms {
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
struct F2;

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
struct F4;

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

/// `dM = A dY Aᵀ` for one block, 16 channels at a time: `cells[i]` is the offset of
/// output cell i (row-major in the block), `dst` receives `[k][c_pad]`.
///
/// # Safety
/// `c_pad` is a multiple of [`LANES`]; `dy + cells[i]` is valid for reading `c_pad`
/// floats for the M² cells of the block; `dst` is valid for writing N² · `c_pad`; the CPU
/// runs `V`.
#[inline(always)]
unsafe fn output_grad_block<T: Transforms, V: Vector>(
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

/// Where one output block goes: its cells at `out + cells[i]` (and its residual at
/// `residual + cells[i]`, unless null) for the cells i set in `on_board`.
struct Dst<'a> {
    out: *mut f32,
    residual: *const f32,
    cells: &'a [usize; 16],
    on_board: u16,
    relu: bool,
}

/// `V = Bᵀ d B` for one input block, 16 channels at a time: `src[i]` is the offset of
/// input cell i (row-major in the block), `dst` receives `[k][lanes]`.
///
/// # Safety
/// `lanes` is a multiple of [`LANES`]; `x + src[i]` is valid for reading `lanes` floats
/// for the N² cells of the block; `dst` is valid for writing N² · `lanes`; the CPU runs
/// `V`.
#[inline(always)]
unsafe fn input_block<T: Transforms, V: Vector>(
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
unsafe fn output_block<T: Transforms, V: Vector>(
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
trait BlockOp {
    /// Runs the transform.
    ///
    /// # Safety
    /// As the transform's function: its pointers valid for what it reads and writes,
    /// and the CPU able to run `V`.
    unsafe fn run<V: Vector>(&self);
}

/// [`input_block`] as a [`BlockOp`].
struct InputOp<'a, T> {
    x: *const f32,
    src: &'a [usize; 36],
    lanes: usize,
    dst: *mut f32,
    tiling: std::marker::PhantomData<T>,
}

impl<T: Transforms> BlockOp for InputOp<'_, T> {
    #[inline(always)]
    unsafe fn run<V: Vector>(&self) {
        // SAFETY: `run`'s contract is the transform's.
        unsafe { input_block::<T, V>(self.x, self.src, self.lanes, self.dst) }
    }
}

/// [`output_block`] as a [`BlockOp`].
struct OutputOp<'a, T> {
    m: *const f32,
    c_pad: usize,
    bias: *const f32,
    dst: &'a Dst<'a>,
    tiling: std::marker::PhantomData<T>,
}

impl<T: Transforms> BlockOp for OutputOp<'_, T> {
    #[inline(always)]
    unsafe fn run<V: Vector>(&self) {
        // SAFETY: `run`'s contract is the transform's.
        unsafe { output_block::<T, V>(self.m, self.c_pad, self.bias, self.dst) }
    }
}

/// [`output_grad_block`] as a [`BlockOp`].
struct OutputGradOp<'a, T> {
    dy: *const f32,
    cells: &'a [usize; 16],
    c_pad: usize,
    dst: *mut f32,
    tiling: std::marker::PhantomData<T>,
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
unsafe fn dispatch<O: BlockOp>(kernel: Kernel, op: &O) {
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
unsafe fn on_avx512<O: BlockOp>(op: &O) {
    // SAFETY: the caller's contract, which includes the CPU features `Avx512` needs.
    unsafe { op.run::<Avx512>() }
}

/// `op` with AVX2 vectors.
///
/// # Safety
/// As [`BlockOp::run`]; the CPU has AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn on_avx2<O: BlockOp>(op: &O) {
    // SAFETY: the caller's contract, which includes the CPU features `Avx2` needs.
    unsafe { op.run::<Avx2>() }
}

#[cfg(test)]
mod checks;

#[cfg(test)]
mod tests;
