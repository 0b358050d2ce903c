//! The Zobrist keys of the Ataxx family's positions, which the position's hash and the
//! move generator's precombined flip keys both read.

use crate::geometry::MAX_CELLS;
use crate::rng::splitmix64;

/// Zobrist keys: pieces by side and cell, blocked cells, and the side to move.
pub(crate) struct Zobrist {
    pub(crate) pieces: [[u64; MAX_CELLS]; 2],
    pub(crate) blocked: [u64; MAX_CELLS],
    pub(crate) side: u64,
}

const fn zobrist_keys() -> Zobrist {
    let mut z = Zobrist {
        pieces: [[0; MAX_CELLS]; 2],
        blocked: [0; MAX_CELLS],
        side: 0,
    };
    let mut st = 0x5EED_A7A7_F11F_2E80u64;
    let mut i = 0;
    while i < MAX_CELLS {
        let (s, a) = splitmix64(st);
        let (s, b) = splitmix64(s);
        let (s, c) = splitmix64(s);
        z.pieces[0][i] = a;
        z.pieces[1][i] = b;
        z.blocked[i] = c;
        st = s;
        i += 1;
    }
    z.side = splitmix64(st).1;
    z
}

pub(crate) static ZOBRIST: Zobrist = zobrist_keys();
