//! A hint to the CPU to bring memory into its caches ahead of a read: hash tables and
//! search trees larger than the caches meet a miss at every probe, and a probe whose
//! address is known early can overlap it with other work.

/// Asks the CPU to bring the cache line holding the start of `item` into its caches
/// (nothing where the target has no such hint).
#[inline(always)]
pub fn prefetch<T>(item: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let p: *const T = item;
        // SAFETY: a prefetch reads nothing the program sees and never faults; the address
        // is that of a live reference anyway.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p.cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = item;
}
