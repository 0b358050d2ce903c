//! The hidden units a quantised net's value never reads, left out of its lanes.
//!
//! A unit whose output weight rounds to 0 (|w₂| < 1 / (2 qb): 234 of `board1024`'s 1,024
//! units, 43 of `board256`'s 256) adds `screlu(h)² · 0` to the value whatever its
//! accumulator lane holds. Where nothing else reads the lanes (a `board` policy reads the
//! cells), such units are dropped from W₁, b₁ and w₂: each leaf then sums rows of fewer
//! lanes (the row sums are most of a value's cost, and their bytes its bound at 1,024
//! hidden), and the value is the same integer sum with its zero terms left out: the same
//! bits. The lanes kept are padded with zeros to a multiple of 32 (what the kernels
//! take); a zero lane with a zero weight adds nothing either. The dropped columns are
//! kept apart, so that the net's tensors can be given back whole ([`Pruned::restore`]).

/// What [`prune`] left out, to give the tensors back.
#[derive(Clone, Debug)]
pub(crate) struct Pruned {
    /// The unit of each kept lane, in order (the padding lanes after them are none).
    kept: Vec<u32>,
    /// The units left out, in order, with their W₁ columns (row major: a row of W₁ is
    /// `dropped.len()` weights here) and their biases; their output weights are 0.
    dropped: Vec<u32>,
    dropped_w: Vec<i16>,
    dropped_b: Vec<i16>,
}

/// W₁ (row major), b₁ and w₂, quantised.
pub(crate) type Tensors = (Vec<i16>, Vec<i16>, Vec<i16>);

/// The lanes a kernel takes: a multiple of 32, at least 32.
fn padded(n: usize) -> usize {
    n.div_ceil(32).max(1) * 32
}

/// W₁ (`w`: rows of `b.len()`), b₁ and w₂ without the units whose output weight is 0,
/// padded ([`padded`]), and what was left out; `None` where that saves no lane.
pub(crate) fn prune(w: &[i16], b: &[i16], v: &[i16]) -> Option<(Tensors, Pruned)> {
    let hidden = b.len();
    assert!(hidden > 0 && v.len() == hidden && w.len().is_multiple_of(hidden));
    let (kept, dropped): (Vec<u32>, Vec<u32>) =
        (0..hidden as u32).partition(|&u| v[u as usize] != 0);
    let width = padded(kept.len());
    if width >= hidden {
        return None;
    }
    let pick = |row: &[i16], units: &[u32], out: &mut Vec<i16>| {
        out.extend(units.iter().map(|&u| row[u as usize]));
    };
    let rows = w.len() / hidden;
    let (mut w_kept, mut dropped_w) = (
        Vec::with_capacity(rows * width),
        Vec::with_capacity(rows * dropped.len()),
    );
    for row in w.chunks_exact(hidden) {
        pick(row, &kept, &mut w_kept);
        w_kept.resize(w_kept.len() + width - kept.len(), 0);
        pick(row, &dropped, &mut dropped_w);
    }
    let (mut b_kept, mut v_kept, mut dropped_b) = (Vec::new(), Vec::new(), Vec::new());
    pick(b, &kept, &mut b_kept);
    pick(v, &kept, &mut v_kept);
    pick(b, &dropped, &mut dropped_b);
    b_kept.resize(width, 0);
    v_kept.resize(width, 0);
    Some((
        (w_kept, b_kept, v_kept),
        Pruned {
            kept,
            dropped,
            dropped_w,
            dropped_b,
        },
    ))
}

impl Pruned {
    /// The net's W₁, b₁ and w₂ from the pruned ones ([`prune`]'s first three).
    pub(crate) fn restore(
        &self,
        w: &[i16],
        b: &[i16],
        v: &[i16],
    ) -> (Vec<i16>, Vec<i16>, Vec<i16>) {
        let width = b.len();
        // Every unit is kept or dropped.
        let h = self.kept.len() + self.dropped.len();
        let rows = w.len() / width;
        let mut full_w = vec![0; rows * h];
        let mut full_b = vec![0; h];
        let mut full_v = vec![0; h];
        for (lane, &u) in self.kept.iter().enumerate() {
            let u = u as usize;
            (full_b[u], full_v[u]) = (b[lane], v[lane]);
            for r in 0..rows {
                full_w[r * h + u] = w[r * width + lane];
            }
        }
        let d = self.dropped.len();
        for (k, &u) in self.dropped.iter().enumerate() {
            let u = u as usize;
            full_b[u] = self.dropped_b[k];
            for r in 0..rows {
                full_w[r * h + u] = self.dropped_w[r * d + k];
            }
        }
        (full_w, full_b, full_v)
    }
}

#[cfg(test)]
mod tests {
    use engine::Rng;

    use super::*;

    fn random(rng: &mut Rng, n: usize, zero_one_in: u64) -> Vec<i16> {
        (0..n)
            .map(|_| {
                if zero_one_in > 0 && rng.next_u64().is_multiple_of(zero_one_in) {
                    0
                } else {
                    (rng.next_u64() % 2001) as i16 - 1000
                }
            })
            .collect()
    }

    /// The pruned tensors keep the units of nonzero output weight, in order, padded with
    /// zeros to a multiple of 32, and give the whole tensors back; a net where that
    /// saves no lane is left as it is.
    #[test]
    fn pruning_keeps_the_read_units_and_gives_the_tensors_back() {
        let mut rng = Rng::new(3);
        for (hidden, zero_one_in, saves) in [
            (256, 4, true),
            (1024, 3, true),
            (64, 0, false),
            (64, 1, true),
        ] {
            let rows = 40;
            let w = random(&mut rng, rows * hidden, 0);
            let b = random(&mut rng, hidden, 0);
            let v = random(&mut rng, hidden, zero_one_in);
            let read = v.iter().filter(|&&x| x != 0).count();
            let Some(((pw, pb, pv), pruned)) = prune(&w, &b, &v) else {
                assert!(!saves, "hidden {hidden}: {read} read units, not pruned");
                assert!(padded(read) >= hidden);
                continue;
            };
            assert!(saves, "hidden {hidden}");
            let width = padded(read);
            assert!(width < hidden && width.is_multiple_of(32));
            assert_eq!((pb.len(), pv.len(), pw.len()), (width, width, rows * width));
            // Every read unit's column, bias and weight, in order; zeros after them.
            let units: Vec<usize> = (0..hidden).filter(|&u| v[u] != 0).collect();
            for (lane, &u) in units.iter().enumerate() {
                assert_eq!((pb[lane], pv[lane]), (b[u], v[u]));
                assert!((0..rows).all(|r| pw[r * width + lane] == w[r * hidden + u]));
            }
            for lane in read..width {
                assert_eq!((pb[lane], pv[lane]), (0, 0));
                assert!((0..rows).all(|r| pw[r * width + lane] == 0));
            }
            assert_eq!(pruned.restore(&pw, &pb, &pv), (w, b, v), "hidden {hidden}");
        }
    }
}
