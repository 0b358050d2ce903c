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
//! written: a buffer that outgrows it during a search grows on small pages. Memory the
//! allocator had mapped before (small pages the advice does not change) is collapsed
//! onto huge pages once written ([`written`]).

/// Huge pages are asked for buffers of at least this many bytes (the size of one).
const HUGE: usize = 2 << 20;

/// `n` items made by `make`, written at once, on huge pages where the kernel gives them.
///
/// A table of a few megabytes may come from memory the allocator had handed out and
/// taken back, its small pages already mapped: the advice does not change those, so the
/// table is collapsed into huge pages once written (`MADV_COLLAPSE`). Only whole huge
/// pages inside the buffer can be, so the buffer has a huge page's worth of room more
/// than its items: all of the table but what lies before its first 2 MiB boundary is
/// then on huge pages. (The evaluation cache's 4 MiB of slots sat on small pages, and
/// every leaf's lookup took a page walk: collapsing half of them gave 2% more nodes a
/// second, docs/benchmarks.md.)
pub(super) fn written<T>(n: usize, make: impl FnMut() -> T) -> Vec<T> {
    let spare = if cfg!(target_os = "linux") && n * size_of::<T>() >= HUGE {
        HUGE / size_of::<T>().max(1)
    } else {
        0
    };
    let mut v = Vec::with_capacity(n + spare);
    advise(&v, true);
    v.extend(std::iter::repeat_with(make).take(n));
    collapse(&v);
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
        if v.capacity() * size_of::<T>() < HUGE {
            return;
        }
        // SAFETY: sysconf reads a constant of the system.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(0);
        // madvise takes whole pages.
        let Some((a, b)) = whole_pages(v, page) else {
            return;
        };
        let advice = if huge {
            libc::MADV_HUGEPAGE
        } else {
            libc::MADV_NOHUGEPAGE
        };
        // SAFETY: [a, b) is whole pages inside `v`'s own allocation (`whole_pages`),
        // and these two advices change how the kernel backs those pages,
        // never their contents nor whether they are mapped; where the kernel has no
        // transparent huge pages the call fails (EINVAL) and changes nothing, which is
        // why its result is not read.
        unsafe { libc::madvise(a as *mut libc::c_void, b - a, advice) };
    }
}

/// Has the kernel move the whole huge pages inside `v`'s room onto huge pages now
/// (`MADV_COLLAPSE`, Linux 6.1), its small pages already mapped among them; nothing off
/// Linux, or where the kernel cannot (the call then fails and changes nothing).
#[cfg_attr(not(target_os = "linux"), allow(unused_variables))]
fn collapse<T>(v: &Vec<T>) {
    #[cfg(target_os = "linux")]
    {
        // The value of Linux's UAPI (the libc crate names it for glibc targets alone).
        const MADV_COLLAPSE: libc::c_int = 25;
        let Some((a, b)) = whole_pages(v, HUGE) else {
            return;
        };
        // SAFETY: [a, b) is whole huge pages inside `v`'s own allocation
        // (`whole_pages`); a collapse copies those pages' contents into huge pages and
        // maps them in their place, never changing what the memory holds nor whether it
        // is mapped; where it cannot, it fails and leaves the pages as they were, which
        // is why its result is not read.
        unsafe { libc::madvise(a as *mut libc::c_void, b - a, MADV_COLLAPSE) };
    }
}

/// The addresses [a, b) of the whole pages of `page` bytes inside `v`'s room (start ≤ a
/// < b ≤ start + capacity in bytes); none where there is none, or for a page size of 0.
#[cfg(target_os = "linux")]
fn whole_pages<T>(v: &Vec<T>, page: usize) -> Option<(usize, usize)> {
    let start = v.as_ptr() as usize;
    let end = start + v.capacity() * size_of::<T>();
    let (a, b) = (
        start.checked_next_multiple_of(page)?,
        end.checked_div(page)? * page,
    );
    (a < b).then_some((a, b))
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// Written memory is on huge pages where the kernel gives them on advice (this
    /// process's `AnonHugePages` grows by most of it), and holds what was written.
    #[test]
    fn written_memory_is_on_huge_pages_where_the_kernel_gives_them() {
        let huge_kb = || {
            let s = std::fs::read_to_string("/proc/self/smaps_rollup").unwrap_or_default();
            s.lines().find_map(anon_huge_kb).unwrap_or(0)
        };
        let before = huge_kb();
        let v: Vec<u64> = written(8 << 20, || 7);
        let mut w: Vec<u32> = Vec::new();
        reserve_written(&mut w, 8 << 20, 9);
        assert!(v.iter().all(|&x| x == 7) && v.len() == 8 << 20);
        assert!(w.is_empty() && w.capacity() >= 8 << 20);
        // 96 MiB written; other tests of this process may free huge pages meanwhile.
        if thp_on() {
            let grew = huge_kb().saturating_sub(before);
            assert!(grew >= 64 << 10, "{grew} kB of huge pages for 96 MiB");
        }
    }

    /// Memory mapped on small pages before (written without the advice) is moved onto
    /// huge pages by `collapse` where the kernel can (Linux 6.1 on, transparent huge
    /// pages on advice or always), its contents kept.
    #[test]
    fn memory_mapped_on_small_pages_is_collapsed() {
        let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
        let mut version = release
            .split(|c: char| !c.is_ascii_digit())
            .filter_map(|x| x.parse::<u32>().ok());
        let (major, minor) = (version.next().unwrap_or(0), version.next().unwrap_or(0));
        // 8 MiB: at least three whole huge pages inside, wherever it starts.
        let mut v: Vec<u64> = Vec::with_capacity(1 << 20);
        v.extend((0..1u64 << 20).map(|i| i ^ 0x5a5a));
        let before = huge_kb_at(v.as_ptr() as usize);
        collapse(&v);
        assert!(v.iter().enumerate().all(|(i, &x)| x == i as u64 ^ 0x5a5a));
        let after = huge_kb_at(v.as_ptr() as usize);
        if (major, minor) >= (6, 1) && thp_on() {
            assert!(
                after >= 6 << 10,
                "{before} kB, then {after} kB of huge pages for 8 MiB"
            );
        }
    }

    /// The huge pages of the mapping that holds address `at`, in kB (this process's
    /// `smaps`).
    fn huge_kb_at(at: usize) -> u64 {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap_or_default();
        let mut inside = false;
        for line in smaps.lines() {
            let range = line.split(' ').next().and_then(|r| r.split_once('-'));
            if let Some((a, b)) = range
                && let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16))
            {
                inside = (a..b).contains(&at);
            } else if inside && let Some(kb) = anon_huge_kb(line) {
                return kb;
            }
        }
        0
    }

    /// Whether the kernel gives transparent huge pages (always, or on advice).
    fn thp_on() -> bool {
        let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .unwrap_or_default();
        thp.contains("[always]") || thp.contains("[madvise]")
    }

    /// The kB of an `AnonHugePages:` line of `smaps` or `smaps_rollup`.
    fn anon_huge_kb(line: &str) -> Option<u64> {
        let kb = line.strip_prefix("AnonHugePages:")?;
        kb.trim().trim_end_matches("kB").trim().parse().ok()
    }
}
