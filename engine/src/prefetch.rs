//! A hint to the CPU to bring memory into its caches ahead of a read: hash tables and
//! search trees larger than the caches meet a miss at every probe, and a probe whose
//! address is known early can overlap it with other work.

/// Asks the CPU to bring the cache lines holding `item` (a value or a slice) into its
/// caches (nothing where the target has no such hint).
#[inline(always)]
pub fn prefetch<T: ?Sized>(item: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        const LINE: usize = 64;
        let start: *const u8 = (item as *const T).cast();
        let size = size_of_val(item);
        let lines = (start as usize % LINE + size.max(1)).div_ceil(LINE);
        for k in 0..lines {
            // SAFETY: a prefetch reads nothing the program sees and never faults, whatever
            // the address (`wrapping_add` makes it without claiming it valid); these are
            // the bytes of a live reference anyway.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(start.wrapping_add(k * LINE).cast()) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = item;
}
