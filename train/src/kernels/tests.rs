//! The kernel builds against plain sums: the convolution and the weight gradient.

use super::*;

/// Every kernel build against a plain convolution with zero padding, for odd channel
/// counts (padding columns), 1×1 and 3×3, with and without residual and ReLU.
#[test]
fn kernels_match_a_plain_convolution() {
    let (w, h, n) = (5usize, 4usize, 3usize);
    let g = (w + 2) * (h + 2);
    for (c_in, c_out, k) in [(7, 64, 3), (64, 17, 1), (5, 40, 3), (33, 128, 3), (3, 3, 1)] {
        let weights = noise(1, c_out * c_in * k * k);
        let bias = noise(2, c_out);
        let conv = Packed::new(c_out, c_in, k, &weights, &bias);
        let x_stride = c_in + 1;
        // Input: interior cells random, border zero.
        let raw = noise(3, n * h * w * c_in);
        let mut x = vec![0.0; n * g * x_stride];
        let mut cells = Vec::new();
        for p in 0..n {
            for y in 0..h {
                for xx in 0..w {
                    let cell = p * g + (y + 1) * (w + 2) + xx + 1;
                    cells.push(cell);
                    for c in 0..c_in {
                        x[cell * x_stride + c] = raw[((p * h + y) * w + xx) * c_in + c];
                    }
                }
            }
        }
        let residual = noise(4, n * g * conv.c_pad());
        let taps: Vec<isize> = if k == 1 {
            vec![0]
        } else {
            (-1..=1)
                .flat_map(|dy| (-1..=1).map(move |dx| dy * (w as isize + 2) + dx))
                .collect()
        };
        for kernel in Kernel::available() {
            for (with_residual, relu) in [(false, false), (true, true)] {
                let mut out = vec![f32::NAN; n * g * conv.c_pad()];
                convolve(
                    kernel,
                    &conv,
                    Job {
                        x: &x,
                        x_stride,
                        taps: &taps,
                        cells: &cells,
                        out: &mut out,
                        out_stride: conv.c_pad(),
                        residual: with_residual.then_some(&residual[..]),
                        relu,
                    },
                );
                for &cell in &cells {
                    for o in 0..c_out {
                        let mut want = bias[o];
                        for (t, &off) in taps.iter().enumerate() {
                            let src = (cell as isize + off) as usize;
                            for c in 0..c_in {
                                want += weights[(o * c_in + c) * k * k + t] * x[src * x_stride + c];
                            }
                        }
                        if with_residual {
                            want += residual[cell * conv.c_pad() + o];
                        }
                        if relu {
                            want = want.max(0.0);
                        }
                        let got = out[cell * conv.c_pad() + o];
                        assert!(
                            (got - want).abs() < 1e-4,
                            "{kernel:?} {c_in}->{c_out} k{k}: cell {cell} channel {o}: {got} vs {want}"
                        );
                    }
                }
                // Border cells are never written.
                let written = out.iter().filter(|v| !v.is_nan()).count();
                assert_eq!(written, cells.len() * conv.c_pad(), "{kernel:?}");
            }
        }
    }
}

/// The weight-gradient tile against a plain sum, for 1×1 and 3×3 taps and channel
/// counts that exercise the padding and the repeated last channel group.
#[test]
fn weight_gradients_match_a_plain_sum() {
    let (w, h, n) = (5usize, 4usize, 3usize);
    let g = (w + 2) * (h + 2);
    let positions = n * g;
    for (c_in, c_out, k) in [(7usize, 64usize, 3usize), (64, 17, 1), (33, 128, 3)] {
        let c_pad = c_out.next_multiple_of(LANES);
        let x_stride = c_in + 3;
        let mut x = noise(5, positions * x_stride);
        let mut dy = noise(6, positions * c_pad);
        let mut runs = Vec::new();
        for p in 0..n {
            for y in 0..h {
                runs.push((p * g + (y + 1) * (w + 2) + 1, w));
            }
        }
        // Zero borders, and zero padding columns of dy.
        let interior = |q: usize| runs.iter().any(|&(f, c)| (f..f + c).contains(&q));
        for q in 0..positions {
            for c in 0..c_in {
                if !interior(q) {
                    x[q * x_stride + c] = 0.0;
                }
            }
            for o in c_out..c_pad {
                dy[q * c_pad + o] = 0.0;
            }
        }
        let taps: Vec<isize> = if k == 1 {
            vec![0]
        } else {
            (-1..=1)
                .flat_map(|dy| (-1..=1).map(move |dx| dy * (w as isize + 2) + dx))
                .collect()
        };
        let start = noise(7, taps.len() * c_in * c_pad);
        for kernel in Kernel::available() {
            let mut out = start.clone();
            weight_gradient(
                kernel,
                GradJob {
                    x: &x,
                    x_stride,
                    c_in,
                    taps: &taps,
                    runs: &runs,
                    dy: &dy,
                    dy_stride: c_pad,
                    c_pad,
                    out: &mut out,
                },
            );
            for (t, &off) in taps.iter().enumerate() {
                for i in 0..c_in {
                    for o in 0..c_pad {
                        let at = (t * c_in + i) * c_pad + o;
                        let mut want = start[at];
                        for &(f, c) in &runs {
                            for q in f..f + c {
                                let s = (q as isize + off) as usize;
                                want += x[s * x_stride + i] * dy[q * c_pad + o];
                            }
                        }
                        assert!(
                            (out[at] - want).abs() < 1e-3,
                            "{kernel:?} {c_in}->{c_out} k{k}: tap {t} [{i}][{o}]: {} vs {want}",
                            out[at]
                        );
                    }
                }
            }
        }
    }
}
