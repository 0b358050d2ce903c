//! The first layer's weights as the searchers read them: a byte a weight, and for the few
//! weights a byte cannot hold, the rest beside. A leaf's refresh adds one row per tuple,
//! and at 1,024 hidden those rows are 18 MiB of i16, read from the last-level cache: a
//! byte a weight halves what a refresh reads. The sums are the i16 weights' own (integer
//! addition wraps the same in any order), so the searches are the same bits.

use engine::Isa;

use crate::simd;

/// A weight past the byte's range: its lane, and what the byte leaves over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Rest {
    lane: u32,
    rest: i16,
}

/// Rows of `hidden` i16 weights stored a byte each (clamped to [−128, 127]), the
/// remainders of the clamped ones listed by row.
#[derive(Clone, Debug)]
pub(crate) struct Rows {
    hidden: usize,
    bytes: Vec<i8>,
    /// Row `f`'s remainders are `rests[rest_at[f]..rest_at[f + 1]]`.
    rest_at: Vec<u32>,
    rests: Vec<Rest>,
}

impl Rows {
    /// `w`: rows of `hidden` weights, row major.
    pub fn new(w: &[i16], hidden: usize) -> Rows {
        assert!(hidden > 0 && w.len().is_multiple_of(hidden));
        let mut bytes = Vec::with_capacity(w.len());
        let mut rest_at = Vec::with_capacity(w.len() / hidden + 1);
        let mut rests = Vec::new();
        for row in w.chunks_exact(hidden) {
            rest_at.push(rests.len() as u32);
            for (lane, &x) in row.iter().enumerate() {
                let b = x.clamp(-128, 127) as i8;
                bytes.push(b);
                if i16::from(b) != x {
                    rests.push(Rest {
                        lane: lane as u32,
                        rest: x.wrapping_sub(i16::from(b)),
                    });
                }
            }
        }
        rest_at.push(rests.len() as u32);
        Rows {
            hidden,
            bytes,
            rest_at,
            rests,
        }
    }

    /// The i16 weights again, row major.
    pub fn to_i16(&self) -> Vec<i16> {
        let mut w: Vec<i16> = self.bytes.iter().map(|&b| i16::from(b)).collect();
        for f in 0..self.rest_at.len() - 1 {
            for r in self.rests_of(f) {
                let x = &mut w[f * self.hidden + r.lane as usize];
                *x = x.wrapping_add(r.rest);
            }
        }
        w
    }

    fn rests_of(&self, f: usize) -> &[Rest] {
        &self.rests[self.rest_at[f] as usize..self.rest_at[f + 1] as usize]
    }

    fn row(&self, f: usize) -> &[i8] {
        &self.bytes[f * self.hidden..(f + 1) * self.hidden]
    }

    /// `acc` += row `f`.
    pub fn add(&self, isa: Isa, acc: &mut [i16], f: usize) {
        simd::add_i8(isa, acc, self.row(f));
        for r in self.rests_of(f) {
            acc[r.lane as usize] = acc[r.lane as usize].wrapping_add(r.rest);
        }
    }

    /// `acc` −= row `f`.
    pub fn sub(&self, isa: Isa, acc: &mut [i16], f: usize) {
        simd::sub_i8(isa, acc, self.row(f));
        for r in self.rests_of(f) {
            acc[r.lane as usize] = acc[r.lane as usize].wrapping_sub(r.rest);
        }
    }

    /// `acc` += the rows `features`, in one kernel call.
    pub fn add_rows(&self, isa: Isa, acc: &mut [i16], features: &[u32]) {
        simd::add_rows_i8(isa, acc, &self.bytes, features);
        if !self.rests.is_empty() {
            for &f in features {
                for r in self.rests_of(f as usize) {
                    acc[r.lane as usize] = acc[r.lane as usize].wrapping_add(r.rest);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_give_back_the_i16_weights_and_their_sums() {
        // Rows of 40 lanes with weights across the whole i16 range, most within a byte.
        let mut r = engine::Rng::new(7);
        let hidden = 40;
        let w: Vec<i16> = (0..hidden * 9)
            .map(|i| match i % 13 {
                0 => r.next_u64() as i16,
                1 => [i16::MIN + 1, i16::MAX, -129, 128, -128, 127][i % 6],
                _ => (r.next_u64() % 256) as i16 - 128,
            })
            .collect();
        let rows = Rows::new(&w, hidden);
        assert_eq!(rows.to_i16(), w);
        let wide = w.iter().filter(|&&x| !(-128..=127).contains(&x)).count();
        assert_eq!(rows.rests.len(), wide);
        assert!(wide > 20, "{wide}");
        let start: Vec<i16> = (0..hidden as i16).map(|i| i * 700 - 9000).collect();
        let feats = [3u32, 0, 8, 3];
        let mut want = start.clone();
        for &f in &feats {
            for (a, x) in want.iter_mut().zip(&w[f as usize * hidden..]) {
                *a = a.wrapping_add(*x);
            }
        }
        for isa in Isa::available() {
            let mut acc = start.clone();
            rows.add_rows(isa, &mut acc, &feats);
            assert_eq!(acc, want, "{isa:?}");
            let mut one = start.clone();
            for &f in &feats {
                rows.add(isa, &mut one, f as usize);
            }
            assert_eq!(one, want, "{isa:?}");
            for &f in &feats {
                rows.sub(isa, &mut one, f as usize);
            }
            assert_eq!(one, start, "{isa:?}");
        }
    }
}
