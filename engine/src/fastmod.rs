//! `a % d` for a divisor known ahead, by multiplications: hash tables index their slots
//! by a remainder at every probe, and a 64-bit division takes tens of cycles.

/// The constant of [`fastmod`] for divisor `d` (> 0): ⌈2¹²⁸ / d⌉ (mod 2¹²⁸).
pub fn fastmod_magic(d: u64) -> u128 {
    (u128::MAX / u128::from(d)).wrapping_add(1)
}

/// `a % d` by multiplications (Lemire, Kaser and Kurz, "Faster remainder by direct
/// computation", 2019: exact for every 64-bit `a` and `d` with a 128-bit constant).
#[inline(always)]
pub fn fastmod(a: u64, magic: u128, d: u64) -> u64 {
    let low = magic.wrapping_mul(u128::from(a));
    let bottom = ((low & u128::from(u64::MAX)) * u128::from(d)) >> 64;
    let top = (low >> 64) * u128::from(d);
    ((bottom + top) >> 64) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fastmod_is_the_remainder() {
        let mut rng = crate::Rng::new(1);
        for d in [
            1,
            2,
            3,
            7,
            1024,
            699_050,
            u32::MAX as u64,
            u64::MAX - 1,
            u64::MAX,
        ] {
            let m = fastmod_magic(d);
            for a in [0, 1, d - 1, d, d.wrapping_add(1), u64::MAX, u64::MAX - 1] {
                assert_eq!(fastmod(a, m, d), a % d, "{a} % {d}");
            }
            for _ in 0..10_000 {
                let a = rng.next_u64();
                assert_eq!(fastmod(a, m, d), a % d, "{a} % {d}");
            }
        }
    }
}
