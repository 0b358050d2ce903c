//! Instruction-set levels: the engine's hot loops are compiled once per level and the
//! level is chosen at run time, so one portable binary runs the AVX2 or AVX-512 kernels on
//! the CPUs that have them.
//!
//! - [`Isa::Portable`]: whatever the build targets (plain x86-64 by default: no POPCNT).
//! - [`Isa::Avx2`]: x86-64-v3 (AVX2, BMI1, BMI2, LZCNT, POPCNT).
//! - [`Isa::Avx512`]: x86-64-v3 plus AVX-512 F, BW, CD, DQ, VL and VPOPCNTDQ (Ice Lake,
//!   Zen 4 and later).
//!
//! The best level the CPU runs is used, capped by the environment variable
//! `FLIPZERO_ISA` (`portable`, `avx2` or `avx512`; read once), which benchmarks and tests
//! use to measure and check every level on one machine.
//!
//! Inside the crate a level is a zero-sized token type ([`Level`]); a token of an x86
//! level can only be obtained where the CPU was found to run it, which is what makes the
//! calls into its `#[target_feature]` functions sound.

use std::sync::atomic::{AtomicU8, Ordering};

/// An instruction-set level of the engine's kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Isa {
    /// No instruction beyond the build's target.
    Portable,
    /// x86-64-v3: AVX2, BMI1, BMI2, LZCNT, POPCNT.
    Avx2,
    /// x86-64-v3 plus AVX-512 F, BW, CD, DQ, VL and VPOPCNTDQ.
    Avx512,
}

impl Isa {
    /// Every level, portable first.
    pub const ALL: [Isa; 3] = [Isa::Portable, Isa::Avx2, Isa::Avx512];

    /// The level's name (`portable`, `avx2`, `avx512`), as `FLIPZERO_ISA` takes it.
    pub const fn name(self) -> &'static str {
        match self {
            Isa::Portable => "portable",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
        }
    }

    /// Whether this CPU runs the level's kernels (detected once).
    #[inline]
    pub fn is_supported(self) -> bool {
        static SUPPORTED: AtomicU8 = AtomicU8::new(0);
        let mut mask = SUPPORTED.load(Ordering::Relaxed);
        if mask == 0 {
            mask = 1 | Isa::detect(Isa::Avx2) << 1 | Isa::detect(Isa::Avx512) << 2;
            SUPPORTED.store(mask, Ordering::Relaxed);
        }
        mask >> self as u8 & 1 != 0
    }

    /// Whether the CPU has every feature of an x86 level.
    fn detect(self) -> u8 {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            let avx2 =
                has!("avx2") && has!("bmi1") && has!("bmi2") && has!("lzcnt") && has!("popcnt");
            let ok = match self {
                Isa::Portable => true,
                Isa::Avx2 => avx2,
                Isa::Avx512 => {
                    avx2 && has!("avx512f")
                        && has!("avx512bw")
                        && has!("avx512cd")
                        && has!("avx512dq")
                        && has!("avx512vl")
                        && has!("avx512vpopcntdq")
                }
            };
            u8::from(ok)
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            u8::from(self == Isa::Portable)
        }
    }

    /// Every level this CPU runs, portable first.
    pub fn available() -> Vec<Isa> {
        Isa::ALL.into_iter().filter(|i| i.is_supported()).collect()
    }

    /// The level the engine runs: the best one this CPU supports, capped by
    /// `FLIPZERO_ISA` when it names a level (an unknown value is ignored). Detected once.
    pub fn current() -> Isa {
        static CURRENT: AtomicU8 = AtomicU8::new(u8::MAX);
        match CURRENT.load(Ordering::Relaxed) {
            0 => Isa::Portable,
            1 => Isa::Avx2,
            2 => Isa::Avx512,
            _ => {
                let cap = std::env::var("FLIPZERO_ISA")
                    .ok()
                    .and_then(|v| Isa::ALL.into_iter().find(|i| i.name() == v.trim()))
                    .unwrap_or(Isa::Avx512);
                let isa = Isa::available()
                    .into_iter()
                    .filter(|&i| i <= cap)
                    .max()
                    .unwrap_or(Isa::Portable);
                CURRENT.store(isa as u8, Ordering::Relaxed);
                isa
            }
        }
    }
}

impl std::fmt::Display for Isa {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Work that runs compiled for a [`Level`]: [`Level::run`] calls [`Task::run`] from a
/// function compiled with the level's target features. `Task::run` must be
/// `#[inline(always)]`, so that it (and what it inlines) is compiled for the level; a
/// recursive algorithm recurses through [`Level::run`] again.
pub(crate) trait Task<L> {
    /// What the work returns.
    type Output;
    /// Does the work.
    fn run(self, level: L) -> Self::Output;
}

/// An instruction-set level as a token type (see the module docs).
pub(crate) trait Level: Copy {
    /// The level.
    #[allow(dead_code)]
    const ISA: Isa;

    /// Runs `task` compiled for this level.
    fn run<T: Task<Self>>(self, task: T) -> T::Output;
}

/// The portable level.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Portable;

fn run_portable<T: Task<Portable>>(level: Portable, task: T) -> T::Output {
    task.run(level)
}

impl Level for Portable {
    const ISA: Isa = Isa::Portable;

    #[inline(always)]
    fn run<T: Task<Self>>(self, task: T) -> T::Output {
        run_portable(self, task)
    }
}

/// The AVX2 level; a value exists only where [`Isa::Avx2`] is supported.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug)]
pub(crate) struct Avx2 {
    _checked: (),
}

#[cfg(target_arch = "x86_64")]
impl Avx2 {
    /// The token, if this CPU runs the level.
    #[inline]
    pub(crate) fn new() -> Option<Avx2> {
        Isa::Avx2.is_supported().then_some(Avx2 { _checked: () })
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt")]
fn run_avx2<T: Task<Avx2>>(level: Avx2, task: T) -> T::Output {
    task.run(level)
}

#[cfg(target_arch = "x86_64")]
impl Level for Avx2 {
    const ISA: Isa = Isa::Avx2;

    #[inline(always)]
    fn run<T: Task<Self>>(self, task: T) -> T::Output {
        // SAFETY: an `Avx2` value is only made by `Avx2::new`, after the CPU was found to
        // support every feature `run_avx2` enables.
        unsafe { run_avx2(self, task) }
    }
}

/// The AVX-512 level; a value exists only where [`Isa::Avx512`] is supported.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug)]
pub(crate) struct Avx512 {
    _checked: (),
}

#[cfg(target_arch = "x86_64")]
impl Avx512 {
    /// The token, if this CPU runs the level.
    #[inline]
    pub(crate) fn new() -> Option<Avx512> {
        Isa::Avx512
            .is_supported()
            .then_some(Avx512 { _checked: () })
    }

    /// The AVX2 token: every CPU of this level runs AVX2.
    #[inline(always)]
    #[allow(dead_code)]
    pub(crate) fn avx2(self) -> Avx2 {
        Avx2 { _checked: () }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(
    enable = "avx2,bmi1,bmi2,lzcnt,popcnt,avx512f,avx512bw,avx512cd,avx512dq,avx512vl,avx512vpopcntdq"
)]
fn run_avx512<T: Task<Avx512>>(level: Avx512, task: T) -> T::Output {
    task.run(level)
}

#[cfg(target_arch = "x86_64")]
impl Level for Avx512 {
    const ISA: Isa = Isa::Avx512;

    #[inline(always)]
    fn run<T: Task<Self>>(self, task: T) -> T::Output {
        // SAFETY: an `Avx512` value is only made by `Avx512::new`, after the CPU was found
        // to support every feature `run_avx512` enables.
        unsafe { run_avx512(self, task) }
    }
}

/// Runs `$body` with `$l` a token of level `$isa` (an [`Isa`] value this CPU supports; an
/// unsupported one runs the portable code) and `$L` its type.
macro_rules! with_level {
    ($isa:expr, $L:ident, $l:ident => $body:expr) => {{
        let isa: $crate::Isa = $isa;
        #[cfg(target_arch = "x86_64")]
        {
            if let (true, Some($l)) = (isa == $crate::Isa::Avx512, $crate::isa::Avx512::new()) {
                #[allow(dead_code)]
                type $L = $crate::isa::Avx512;
                $body
            } else if let (true, Some($l)) = (isa >= $crate::Isa::Avx2, $crate::isa::Avx2::new()) {
                #[allow(dead_code)]
                type $L = $crate::isa::Avx2;
                $body
            } else {
                let $l = $crate::isa::Portable;
                #[allow(dead_code)]
                type $L = $crate::isa::Portable;
                $body
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = isa;
            let $l = $crate::isa::Portable;
            #[allow(dead_code)]
            type $L = $crate::isa::Portable;
            $body
        }
    }};
}
pub(crate) use with_level;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn current_is_supported_and_portable_always_is() {
        assert!(Isa::Portable.is_supported());
        assert!(Isa::current().is_supported());
        assert_eq!(Isa::available()[0], Isa::Portable);
    }
}
