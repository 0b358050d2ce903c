//! Both tilings against the direct kernel: the convolution and the weight gradient.

use super::*;
use crate::kernels::noise;

/// Both tilings against the direct kernel on odd and even boards, with a narrow
/// input (stride padded to whole vectors), output channels padded, residual and
/// ReLU, for every kernel build.
#[test]
fn winograd_matches_the_direct_convolution() {
    let cases = [
        (5, 3, 7, 20),
        (5, 3, 7, 64),
        (7, 7, 32, 32),
        (8, 6, 64, 48),
        (9, 9, 64, 64),
    ];
    for ((width, height, c_in, c_out), tile) in cases
        .into_iter()
        .flat_map(|c| [(c, Tile::F2), (c, Tile::F4)])
    {
        let grid = Grid { width, height };
        let n = 3;
        let g = grid.cells();
        let weights = noise(1, c_out * c_in * 9);
        let bias = noise(2, c_out);
        let conv = Packed::new(c_out, c_in, 3, &weights, &bias);
        let wino = Winograd::with_tile(&conv, tile);
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
        let residual = noise(4, n * g * conv.c_pad());
        // Outputs here have a spread of about 8 (up to 576 products of uniform
        // [-1, 1] noise); F(4×4, 3×3) measured up to 1.8e-4 off, F(2×2, 3×3) 3e-5.
        let tolerance = match tile {
            Tile::F2 => 1e-4,
            Tile::F4 => 5e-4,
        };
        for kernel in Kernel::available() {
            let mut want = vec![0.0; n * g * conv.c_pad()];
            convolve(
                kernel,
                &conv,
                Job {
                    x: &x,
                    x_stride: stride,
                    taps: &taps,
                    cells: &cells,
                    out: &mut want,
                    out_stride: conv.c_pad(),
                    residual: Some(&residual),
                    relu: true,
                },
            );
            let mut got = vec![0.0; n * g * conv.c_pad()];
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
                    (a - b).abs() < tolerance,
                    "{tile:?} {kernel:?} {width}x{height} {c_in}->{c_out}: float {i}: {a} vs {b}"
                );
            }
        }
    }
}

/// The weight gradient in the Winograd domain, brought back to the 3×3 taps, against
/// the direct weight gradient, for both tilings, odd and even boards and every kernel
/// build.
#[test]
fn winograd_weight_gradient_matches_the_direct_one() {
    for (width, height, c_in, c_out) in [(5, 3, 7, 64), (7, 7, 32, 32), (8, 8, 64usize, 48usize)] {
        let grid = Grid { width, height };
        let (n, g, row) = (3, grid.cells(), grid.row());
        let xs = c_in.next_multiple_of(LANES);
        let c_pad = c_out.next_multiple_of(LANES);
        let (mut x, mut dy) = (vec![0.0; n * g * xs], vec![0.0; n * g * c_pad]);
        let (rx, ry) = (noise(5, n * g * xs), noise(6, n * g * c_pad));
        let mut runs = Vec::new();
        for p in 0..n {
            for y in 0..height {
                runs.push((p * g + grid.cell(0, y), width));
                for xx in 0..width {
                    let cell = p * g + grid.cell(xx, y);
                    x[cell * xs..][..c_in].copy_from_slice(&rx[cell * xs..][..c_in]);
                    dy[cell * c_pad..][..c_out].copy_from_slice(&ry[cell * c_pad..][..c_out]);
                }
            }
        }
        let taps: Vec<isize> = (-1..=1)
            .flat_map(|dy| (-1..=1).map(move |dx| dy * row as isize + dx))
            .collect();
        for kernel in Kernel::available() {
            let mut want = vec![0.0; 9 * c_in * c_pad];
            weight_gradient(
                kernel,
                GradJob {
                    x: &x,
                    x_stride: xs,
                    c_in,
                    taps: &taps,
                    runs: &runs,
                    dy: &dy,
                    dy_stride: c_pad,
                    c_pad,
                    out: &mut want,
                },
            );
            for tile in [Tile::F2, Tile::F4] {
                let k_all = tile.n() * tile.n();
                let mut du = vec![0.0; k_all * c_in * c_pad];
                let mut scratch = Scratch::default();
                let (xi, yi) = ((&x[..], xs, c_in), (&dy[..], c_pad, c_pad));
                gradient3x3(kernel, tile, grid, n, xi, yi, &mut du, &mut scratch);
                let mut got = vec![0.0; 9 * c_in * c_pad];
                gradient_taps(tile, &du, c_in, c_pad, &mut got);
                // Sums of up to 3 · 35 products of uniform [-1, 1] noise.
                for (i, (a, b)) in got.iter().zip(&want).enumerate() {
                    assert!(
                        (a - b).abs() < 1e-3,
                        "{tile:?} {kernel:?} {width}x{height} {c_in}->{c_out}: float {i}: {a} vs {b}"
                    );
                }
            }
        }
    }
}
