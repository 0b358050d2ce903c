//! Memory written ahead of a search, on huge pages where the kernel gives them.
//!
//! The tree's scan and the evaluation cache's lookups miss the processor's caches at
//! most positions, and with 4 KiB pages most of those misses also miss the TLB, whose
//! page walk comes first (the cache's prefetches spent 8% of a search waiting on theirs).
//! 2 MiB pages take most walks away: a search from Ataxx's start in a tree and a cache
//! on them made 9–18% more simulations a second (docs/benchmarks.md). Linux gives them to
//! memory advised so (`MADV_HUGEPAGE`; Debian and Ubuntu ship transparent huge pages on
//! advice) when it is first written. Memory first written during a search was slower on
//! them (the kernel compacts memory at the fault: −22%, docs/benchmarks.md), so only
//! memory written ahead of a search is advised, and the advice is taken back once it is
//! written: a buffer that outgrows it during a search grows on small pages.

/// Huge pages are asked for buffers of at least this many bytes (the size of one).
#[cfg(target_os = "linux")]
const HUGE: usize = 2 << 20;

/// `n` items made by `make`, written at once, on huge pages where the kernel gives them.
pub(super) fn written<T>(n: usize, make: impl FnMut() -> T) -> Vec<T> {
    let mut v = Vec::with_capacity(n);
    advise(&v, true);
    v.extend(std::iter::repeat_with(make).take(n));
    advise(&v, false);
    v
}

/// Gives `v` room for `n` items, written ahead on huge pages where the kernel gives them,
/// and empties it; a `v` with that room already is left as it is.
pub(super) fn reserve_written<T: Copy>(v: &mut Vec<T>, n: usize, fill: T) {
    if v.capacity() >= n {
        return;
    }
    v.clear();
    v.reserve_exact(n);
    advise(v, true);
    v.resize(n, fill);
    advise(v, false);
    v.clear();
}

/// Asks the kernel for huge pages for the memory of `v`'s room (`huge`), or takes the
/// advice back; nothing for a room smaller than a huge page, or off Linux.
#[cfg_attr(not(target_os = "linux"), allow(unused_variables))]
fn advise<T>(v: &Vec<T>, huge: bool) {
    #[cfg(target_os = "linux")]
    {
        let start = v.as_ptr() as usize;
        let bytes = v.capacity() * size_of::<T>();
        if bytes < HUGE {
            return;
        }
        // SAFETY: sysconf reads a constant of the system.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(0);
        if page == 0 {
            return;
        }
        // The whole pages inside the room (madvise takes whole pages).
        let (a, b) = (start.next_multiple_of(page), (start + bytes) / page * page);
        if b <= a {
            return;
        }
        let advice = if huge {
            libc::MADV_HUGEPAGE
        } else {
            libc::MADV_NOHUGEPAGE
        };
        // SAFETY: [a, b) is whole pages inside `v`'s own allocation (start ≤ a < b ≤
        // start + bytes), and these two advices change how the kernel backs those pages,
        // never their contents nor whether they are mapped; where the kernel has no
        // transparent huge pages the call fails (EINVAL) and changes nothing, which is
        // why its result is not read.
        unsafe { libc::madvise(a as *mut libc::c_void, b - a, advice) };
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// Written memory is on huge pages where the kernel gives them on advice (this
    /// process's `AnonHugePages` grows by most of it), and holds what was written.
    #[test]
    fn written_memory_is_on_huge_pages_where_the_kernel_gives_them() {
        let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .unwrap_or_default();
        let huge_kb = || -> u64 {
            let s = std::fs::read_to_string("/proc/self/smaps_rollup").unwrap_or_default();
            s.lines()
                .find_map(|l| l.strip_prefix("AnonHugePages:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
                .unwrap_or(0)
        };
        let before = huge_kb();
        let v: Vec<u64> = written(8 << 20, || 7);
        let mut w: Vec<u32> = Vec::new();
        reserve_written(&mut w, 8 << 20, 9);
        assert!(v.iter().all(|&x| x == 7) && v.len() == 8 << 20);
        assert!(w.is_empty() && w.capacity() >= 8 << 20);
        // 96 MiB written; other tests of this process may free huge pages meanwhile.
        if thp.contains("[always]") || thp.contains("[madvise]") {
            let grew = huge_kb().saturating_sub(before);
            assert!(grew >= 64 << 10, "{grew} kB of huge pages for 96 MiB");
        }
    }
}
