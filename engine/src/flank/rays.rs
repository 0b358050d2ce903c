//! The lines of the 8×8 board, which the portable and the SIMD flip kernels of
//! [`super::grid8`] both walk.

/// For each cell and direction, the cells from the cell (excluded) to the box edge:
/// directions 0–3 go towards higher bits (E, N, NW, NE: +1, +8, +7, +9), 4–7 towards
/// lower bits (W, S, SE, SW: −1, −8, −7, −9).
pub(crate) static RAYS: [[u64; 8]; 64] = {
    let mut t = [[0u64; 8]; 64];
    let steps: [(i32, i32); 8] = [
        (1, 0),
        (0, 1),
        (-1, 1),
        (1, 1),
        (-1, 0),
        (0, -1),
        (1, -1),
        (-1, -1),
    ];
    let mut sq = 0;
    while sq < 64 {
        let mut d = 0;
        while d < 8 {
            let (df, dr) = steps[d];
            let (mut f, mut r) = ((sq % 8) as i32 + df, (sq / 8) as i32 + dr);
            let mut ray = 0u64;
            while f >= 0 && f < 8 && r >= 0 && r < 8 {
                ray |= 1 << (r * 8 + f);
                f += df;
                r += dr;
            }
            t[sq][d] = ray;
            d += 1;
        }
        sq += 1;
    }
    t
};
