//! The Winograd entry points' refusals: a panic (not an access outside the buffers) for
//! every buffer, stride or board size that the block transforms' raw reads and writes
//! would leave.

use super::*;
use crate::kernels::noise;

/// A 3×3 convolution of 5 channels to 20 (padded to 32) for `tile`.
fn conv(tile: Tile) -> Winograd {
    let packed = Packed::new(20, 5, 3, &noise(1, 20 * 5 * 9), &noise(2, 20));
    Winograd::with_tile(&packed, tile)
}

/// Applies `conv(tile)` to `n` positions of `grid`, with buffers of the given lengths,
/// for every kernel build.
fn apply(tile: Tile, grid: Grid, n: usize, (x_len, x_stride): (usize, usize), out_len: usize) {
    let wino = conv(tile);
    let x = noise(3, x_len);
    let residual = noise(4, out_len);
    let mut out = vec![0.0; out_len];
    for kernel in Kernel::available() {
        let io = Io {
            x: &x,
            x_stride,
            out: &mut out,
            residual: Some(&residual),
            relu: true,
        };
        convolve3x3(kernel, &wino, grid, n, io, &mut Scratch::default());
    }
}

const GRID: Grid = Grid {
    width: 5,
    height: 3,
};

#[test]
fn convolve3x3_runs_on_buffers_of_the_positions() {
    let g = GRID.cells();
    for tile in [Tile::F2, Tile::F4] {
        assert_eq!(conv(tile).c_pad(), 32);
        apply(tile, GRID, 2, (2 * g * 16, 16), 2 * g * 32);
    }
}

#[test]
#[should_panic(expected = "needs a 3x3 convolution")]
fn with_tile_refuses_a_1x1_convolution() {
    let packed = Packed::new(20, 5, 1, &noise(1, 100), &noise(2, 20));
    Winograd::with_tile(&packed, Tile::F4);
}

#[test]
#[should_panic(expected = "output smaller than 2 positions")]
fn convolve3x3_refuses_a_short_output() {
    let g = GRID.cells();
    apply(Tile::F4, GRID, 2, (2 * g * 16, 16), 2 * g * 32 - 1);
}

#[test]
#[should_panic(expected = "input smaller than 2 positions")]
fn convolve3x3_refuses_a_short_input() {
    let g = GRID.cells();
    apply(Tile::F2, GRID, 2, (2 * g * 16 - 1, 16), 2 * g * 32);
}

/// An input stride of 5 floats for 5 channels: the transforms read whole vectors of 16.
#[test]
#[should_panic(expected = "input stride must cover whole vectors of channels")]
fn convolve3x3_refuses_an_input_stride_below_whole_vectors() {
    let g = GRID.cells();
    apply(Tile::F4, GRID, 2, (2 * g * 16, 5), 2 * g * 32);
}

/// A board whose bordered grid has more cells than `usize` counts (its size used to
/// wrap to a small one).
#[test]
#[should_panic(expected = "board too large")]
fn convolve3x3_refuses_a_board_whose_size_overflows() {
    let grid = Grid {
        width: 1 << 40,
        height: 1 << 40,
    };
    apply(Tile::F4, grid, 1, (1 << 20, 16), 1 << 20);
}

/// The Winograd weight gradient of 5 channels over `n` positions of `GRID` with the
/// given output gradient stride, `c_pad` and `du` length.
fn gradient(n: usize, dy_stride: usize, c_pad: usize, du_len: usize) {
    let g = GRID.cells();
    let x = noise(1, n * g * 16);
    let dy = noise(2, n * g * dy_stride);
    let mut du = vec![0.0; du_len];
    for kernel in Kernel::available() {
        gradient3x3(
            kernel,
            Tile::F4,
            GRID,
            n,
            (&x, 16, 5),
            (&dy, dy_stride, c_pad),
            &mut du,
            &mut Scratch::default(),
        );
    }
}

#[test]
fn gradient3x3_runs_on_buffers_of_the_positions() {
    gradient(2, 32, 32, 36 * 5 * 32);
}

#[test]
#[should_panic(expected = "gradient columns 20 not a multiple of 16")]
fn gradient3x3_refuses_columns_off_whole_vectors() {
    gradient(2, 32, 20, 36 * 5 * 32);
}

#[test]
#[should_panic(expected = "gradient columns 32 exceed the output gradient's stride 16")]
fn gradient3x3_refuses_columns_past_the_stride() {
    gradient(2, 16, 32, 36 * 5 * 32);
}

#[test]
#[should_panic(expected = "gradient smaller than [36][5][32]")]
fn gradient3x3_refuses_a_short_gradient() {
    gradient(2, 32, 32, 36 * 5 * 32 - 1);
}

#[test]
#[should_panic(expected = "output gradient smaller than 2 positions")]
fn gradient3x3_refuses_a_short_output_gradient() {
    let g = GRID.cells();
    let x = noise(1, 2 * g * 16);
    let dy = noise(2, 2 * g * 32 - 1);
    let mut du = vec![0.0; 36 * 5 * 32];
    gradient3x3(
        Kernel::detect(),
        Tile::F4,
        GRID,
        2,
        (&x, 16, 5),
        (&dy, 32, 32),
        &mut du,
        &mut Scratch::default(),
    );
}
