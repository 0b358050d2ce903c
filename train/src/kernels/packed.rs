//! [`Packed`]: a convolution's weights in the kernel's layout, with sizes that agree.
//! Its fields are private to this module, so only its checked constructors make one.

use super::lanes::LANES;

/// A convolution (or a dense layer: one tap) packed for the kernel. Its sizes always
/// agree (the constructors check them): `c_pad` is `c_out` rounded up to a multiple of
/// [`LANES`], the weights hold `taps · c_in · c_pad` floats and the bias `c_pad`.
pub struct Packed {
    c_in: usize,
    c_out: usize,
    c_pad: usize,
    taps: usize,
    w: Vec<f32>,
    bias: Vec<f32>,
}

impl Packed {
    /// Packs weights given as `[c_out][c_in][k][k]` (PyTorch order) with a bias of
    /// `c_out` values.
    ///
    /// # Panics
    /// If `w` or `bias` does not hold that many values.
    pub fn new(c_out: usize, c_in: usize, k: usize, w: &[f32], bias: &[f32]) -> Packed {
        let taps = k * k;
        assert_eq!(
            Some(w.len()),
            c_out.checked_mul(c_in).and_then(|v| v.checked_mul(taps)),
            "weights of a {c_out}x{c_in}x{k}x{k} convolution"
        );
        assert_eq!(
            bias.len(),
            c_out,
            "bias of a convolution to {c_out} channels"
        );
        let c_pad = c_out.next_multiple_of(LANES);
        let mut pw = vec![0.0; taps * c_in * c_pad];
        for o in 0..c_out {
            for i in 0..c_in {
                for t in 0..taps {
                    pw[(t * c_in + i) * c_pad + o] = w[(o * c_in + i) * taps + t];
                }
            }
        }
        let mut pb = vec![0.0; c_pad];
        pb[..c_out].copy_from_slice(bias);
        Packed {
            c_in,
            c_out,
            c_pad,
            taps,
            w: pw,
            bias: pb,
        }
    }

    /// Weights already packed, `[tap][c_in][c_pad]` with `c_pad` = `c_out` rounded up to
    /// a multiple of [`LANES`], and a bias of `c_pad` values. Padding columns should be
    /// zero: they only feed the padding channels of the output.
    ///
    /// # Panics
    /// If `w` or `bias` does not hold that many values.
    pub fn from_packed(
        c_in: usize,
        c_out: usize,
        taps: usize,
        w: Vec<f32>,
        bias: Vec<f32>,
    ) -> Packed {
        let c_pad = c_out.next_multiple_of(LANES);
        assert_eq!(
            Some(w.len()),
            taps.checked_mul(c_in).and_then(|v| v.checked_mul(c_pad)),
            "packed weights [{taps}][{c_in}][{c_pad}]"
        );
        assert_eq!(bias.len(), c_pad, "packed bias [{c_pad}]");
        Packed {
            c_in,
            c_out,
            c_pad,
            taps,
            w,
            bias,
        }
    }

    /// Input channels read.
    pub fn c_in(&self) -> usize {
        self.c_in
    }

    /// Output channels.
    pub fn c_out(&self) -> usize {
        self.c_out
    }

    /// `c_out` rounded up to a multiple of [`LANES`]: the row length of the weights and
    /// the bias, and the floats written per output cell.
    pub fn c_pad(&self) -> usize {
        self.c_pad
    }

    /// Taps (1 or k·k).
    pub fn taps(&self) -> usize {
        self.taps
    }

    /// Weights `[tap][c_in][c_pad]`, zero in the padding columns.
    pub fn weights(&self) -> &[f32] {
        &self.w
    }

    /// Bias `[c_pad]`.
    pub fn bias(&self) -> &[f32] {
        &self.bias
    }

    /// The weights, `[tap][c_in][c_pad]`, without a copy.
    pub fn into_weights(self) -> Vec<f32> {
        self.w
    }
}
