//! The kernel's refusals: no [`Kernel`] for a build the CPU lacks, no [`Packed`] with
//! inconsistent sizes, and a panic (not an access outside the buffers) for every job
//! whose cells, taps or runs leave them, including indices whose bounds would wrap.

use super::*;

/// `Kernel` values exist exactly for the detected builds, and a CPU with fewer features
/// (stood for by withholding builds) gets no value of the missing ones: detection falls
/// to the next build.
#[test]
fn kernels_exist_only_for_detected_builds() {
    for isa in Isa::ALL {
        assert_eq!(
            Kernel::new(isa).map(Kernel::isa),
            isa.is_supported().then_some(isa),
            "{isa:?}"
        );
    }
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        assert_eq!(Kernel::new(Isa::Avx512).is_some(), has!("avx512f"));
        assert_eq!(
            Kernel::new(Isa::Avx2).is_some(),
            has!("avx2") && has!("fma")
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    assert_eq!(Kernel::available(), [Kernel::new(Isa::Portable).unwrap()]);
    assert_eq!(
        Kernel::available().last().map(|k| k.isa()),
        Some(Isa::Portable)
    );

    // No AVX-512: no such value, and AVX2 (where the CPU has it) is the fastest left.
    assert_eq!(Kernel::made(Isa::Avx512, |isa| isa != Isa::Avx512), None);
    let rest = Kernel::available_where(|isa| isa != Isa::Avx512);
    let want = if Isa::Avx2.is_supported() {
        vec![Isa::Avx2, Isa::Portable]
    } else {
        vec![Isa::Portable]
    };
    assert_eq!(rest.iter().map(|k| k.isa()).collect::<Vec<_>>(), want);
    // Neither SIMD build: the portable one alone.
    let plain = Kernel::available_where(|isa| isa == Isa::Portable);
    assert_eq!(
        plain.iter().map(|k| k.isa()).collect::<Vec<_>>(),
        [Isa::Portable]
    );
}

/// `from_packed` derives `c_pad` from `c_out` (so it is always a multiple of `LANES`).
#[test]
fn packed_sizes_follow_from_the_channels() {
    let p = Packed::from_packed(3, 20, 9, vec![0.0; 9 * 3 * 32], vec![0.0; 32]);
    assert_eq!((p.c_in(), p.c_out(), p.c_pad(), p.taps()), (3, 20, 32, 9));
    let q = Packed::new(20, 3, 3, &noise(1, 20 * 3 * 9), &noise(2, 20));
    assert_eq!(
        (q.c_pad(), q.weights().len(), q.bias().len()),
        (32, 9 * 3 * 32, 32)
    );
}

/// Weights laid out with an unpadded row (the `c_pad` of 20 that used to reach the
/// tiles through a public field) are refused.
#[test]
#[should_panic(expected = "packed weights [9][3][32]")]
fn packed_weights_with_an_unpadded_row_are_refused() {
    Packed::from_packed(3, 20, 9, vec![0.0; 9 * 3 * 20], vec![0.0; 32]);
}

#[test]
#[should_panic(expected = "packed bias [32]")]
fn a_packed_bias_shorter_than_c_pad_is_refused() {
    Packed::from_packed(3, 20, 9, vec![0.0; 9 * 3 * 32], vec![0.0; 20]);
}

#[test]
#[should_panic(expected = "weights of a 20x3x3x3 convolution")]
fn short_pytorch_weights_are_refused() {
    Packed::new(20, 3, 3, &[0.0; 20 * 3 * 9 - 1], &[0.0; 20]);
}

#[test]
#[should_panic(expected = "bias of a convolution to 20 channels")]
fn a_short_pytorch_bias_is_refused() {
    Packed::new(20, 3, 3, &[0.0; 20 * 3 * 9], &[0.0; 19]);
}

/// A 1×1 convolution of 4 channels to 16 over `cells` of a buffer of 4 cells, with
/// `taps`.
fn convolve_cells(cells: &[usize], taps: &[isize], out_len: usize) {
    let conv = Packed::new(16, 4, 1, &noise(1, 64), &noise(2, 16));
    let conv = if taps.len() == 1 {
        conv
    } else {
        let w = noise(3, taps.len() * 4 * 16);
        Packed::from_packed(4, 16, taps.len(), w, vec![0.0; 16])
    };
    let x = noise(4, 4 * 4);
    let mut out = vec![0.0; out_len];
    for kernel in Kernel::available() {
        convolve(
            kernel,
            &conv,
            Job {
                x: &x,
                x_stride: 4,
                taps,
                cells,
                out: &mut out,
                out_stride: 16,
                residual: None,
                relu: false,
            },
        );
    }
}

#[test]
fn convolve_runs_on_cells_inside_the_buffers() {
    convolve_cells(&[0, 3], &[0], 4 * 16);
    convolve_cells(&[1, 2], &[-1, 0, 1], 4 * 16);
}

/// `1 << 60` cells of 16 floats end at 2⁶⁴ + 16, which wraps to 16: inside a buffer of
/// one cell, were the bound not computed without overflow.
#[test]
#[should_panic(expected = "output cell 1152921504606846976 out of range")]
fn convolve_refuses_an_output_cell_whose_bound_wraps() {
    convolve_cells(&[1 << 60], &[-(1 << 60)], 16);
}

#[test]
#[should_panic(expected = "output cell 4 out of range")]
fn convolve_refuses_an_output_cell_past_the_buffer() {
    convolve_cells(&[4], &[-1], 4 * 16 + 15);
}

#[test]
#[should_panic(expected = "tap -1 of cell 0 out of range")]
fn convolve_refuses_a_tap_before_the_input() {
    convolve_cells(&[1, 0], &[-1, 0, 1], 4 * 16);
}

#[test]
#[should_panic(expected = "tap 1 of cell 3 out of range")]
fn convolve_refuses_a_tap_past_the_input() {
    convolve_cells(&[3], &[-1, 0, 1], 4 * 16);
}

/// A 1×1 convolution of 4 channels to 16 over one cell into a 64-float output, with
/// `out_stride` floats per output cell and an optional residual.
fn convolve_one_cell(residual: Option<&[f32]>, out_stride: usize) {
    let conv = Packed::new(16, 4, 1, &noise(1, 64), &noise(2, 16));
    let (x, mut out) = (noise(3, 16), vec![0.0; 64]);
    convolve(
        Kernel::detect(),
        &conv,
        Job {
            x: &x,
            x_stride: 4,
            taps: &[0],
            cells: &[0],
            out: &mut out,
            out_stride,
            residual,
            relu: false,
        },
    );
}

#[test]
#[should_panic(expected = "residual smaller than the output")]
fn convolve_refuses_a_short_residual() {
    convolve_one_cell(Some(&[0.0; 63]), 16);
}

#[test]
#[should_panic(expected = "output stride 8 below the 16 padded output channels")]
fn convolve_refuses_an_output_stride_below_c_pad() {
    convolve_one_cell(None, 8);
}

/// The weight gradient of 4 channels to 16 over `runs` of a buffer of 4 positions, with
/// `taps` and `c_pad` columns, for every build; returns the gradients.
fn gradient_runs(runs: &[(usize, usize)], taps: &[isize], c_pad: usize) -> Vec<Vec<f32>> {
    let (x, dy) = (noise(1, 4 * 4), noise(2, 4 * 16));
    Kernel::available()
        .into_iter()
        .map(|kernel| {
            let mut out = vec![0.0; taps.len() * 4 * 16];
            weight_gradient(
                kernel,
                GradJob {
                    x: &x,
                    x_stride: 4,
                    c_in: 4,
                    taps,
                    runs,
                    dy: &dy,
                    dy_stride: 16,
                    c_pad,
                    out: &mut out,
                },
            );
            out
        })
        .collect()
}

/// Empty runs are ignored wherever they start (the tile forms no pointer from them).
#[test]
fn weight_gradient_ignores_empty_runs_anywhere() {
    let want = gradient_runs(&[(1, 2)], &[-1, 0, 1], 16);
    let got = gradient_runs(&[(usize::MAX, 0), (1, 2), (1 << 60, 0)], &[-1, 0, 1], 16);
    assert_eq!(got, want);
    assert!(want.iter().all(|g| g.iter().any(|&v| v != 0.0)));
}

/// A run ending past `usize::MAX`: its last position cannot be formed.
#[test]
#[should_panic(expected = "run of 2 at 18446744073709551615 out of range")]
fn weight_gradient_refuses_a_run_whose_end_overflows() {
    gradient_runs(&[(usize::MAX, 2)], &[0], 16);
}

#[test]
#[should_panic(expected = "run of 2 at 3 out of range")]
fn weight_gradient_refuses_a_run_past_the_output_gradient() {
    gradient_runs(&[(3, 2)], &[-1], 16);
}

/// Tap −1 of a run starting at position 0: the grad tile's first row would be before
/// `x` (the pointer it used to form with `offset`).
#[test]
#[should_panic(expected = "tap -1 of the run of 2 at 0 out of range")]
fn weight_gradient_refuses_a_tap_before_the_input() {
    gradient_runs(&[(0, 2)], &[-1, 0, 1], 16);
}

#[test]
#[should_panic(expected = "tap 1 of the run of 2 at 2 out of range")]
fn weight_gradient_refuses_a_tap_past_the_input() {
    gradient_runs(&[(2, 2)], &[-1, 0, 1], 16);
}

#[test]
#[should_panic(expected = "gradient columns 8 not a multiple of 16")]
fn weight_gradient_refuses_columns_off_whole_vectors() {
    gradient_runs(&[(0, 2)], &[0], 8);
}

#[test]
#[should_panic(expected = "weight gradient smaller than [1][4][16]")]
fn weight_gradient_refuses_a_short_output() {
    let (x, dy) = (noise(1, 16), noise(2, 64));
    let mut out = vec![0.0; 4 * 16 - 1];
    weight_gradient(
        Kernel::detect(),
        GradJob {
            x: &x,
            x_stride: 4,
            c_in: 4,
            taps: &[0],
            runs: &[(0, 4)],
            dy: &dy,
            dy_stride: 16,
            c_pad: 16,
            out: &mut out,
        },
    );
}
