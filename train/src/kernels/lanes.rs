//! The vectors of the tiles: [`LANES`] floats, the operations every build implements
//! ([`Vector`]) and the portable build of them ([`Lanes`]).

/// Output channels are padded to a multiple of this (one AVX-512 vector of `f32`).
pub const LANES: usize = 16;

/// 16 lanes of `f32` (one [`LANES`]-wide column block) in the registers of one build.
///
/// # Safety
/// Every method needs a CPU that runs the build's instructions (for the x86 builds,
/// the features named in their `target_feature`s; a [`Kernel`] of the build proves it);
/// `load` and `store` need `p` valid for reading (writing) `LANES` floats, unaligned.
///
/// [`Kernel`]: super::Kernel
pub(crate) trait Vector: Copy {
    /// The `LANES` floats at `p`.
    unsafe fn load(p: *const f32) -> Self;
    /// Writes the `LANES` floats to `p`.
    unsafe fn store(self, p: *mut f32);
    /// `a` in every lane.
    unsafe fn splat(a: f32) -> Self;
    /// `a · w + acc`.
    unsafe fn mul_add(a: Self, w: Self, acc: Self) -> Self;
    /// `self + other`.
    unsafe fn add(self, other: Self) -> Self;
    /// `self − other`.
    unsafe fn sub(self, other: Self) -> Self;
    /// `max(self, 0)`.
    unsafe fn relu(self) -> Self;
}

/// The portable vector: plain arrays the compiler vectorizes for the target.
#[derive(Clone, Copy)]
pub(crate) struct Lanes([f32; LANES]);

impl Vector for Lanes {
    #[inline(always)]
    unsafe fn load(p: *const f32) -> Self {
        // SAFETY: `p` is valid for reading `LANES` floats (the trait's contract).
        unsafe { Lanes(std::ptr::read_unaligned(p as *const [f32; LANES])) }
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut f32) {
        // SAFETY: `p` is valid for writing `LANES` floats (the trait's contract).
        unsafe { std::ptr::write_unaligned(p as *mut [f32; LANES], self.0) }
    }
    #[inline(always)]
    unsafe fn splat(a: f32) -> Self {
        Lanes([a; LANES])
    }
    #[inline(always)]
    unsafe fn mul_add(a: Self, w: Self, acc: Self) -> Self {
        // Fused where the target has it in hardware; elsewhere `mul_add` is a library call.
        let mut r = acc;
        for l in 0..LANES {
            r.0[l] = if cfg!(any(target_feature = "fma", target_arch = "aarch64")) {
                a.0[l].mul_add(w.0[l], acc.0[l])
            } else {
                acc.0[l] + a.0[l] * w.0[l]
            };
        }
        r
    }
    #[inline(always)]
    unsafe fn add(self, other: Self) -> Self {
        let mut r = self;
        for l in 0..LANES {
            r.0[l] += other.0[l];
        }
        r
    }
    #[inline(always)]
    unsafe fn sub(self, other: Self) -> Self {
        let mut r = self;
        for l in 0..LANES {
            r.0[l] -= other.0[l];
        }
        r
    }
    #[inline(always)]
    unsafe fn relu(self) -> Self {
        Lanes(self.0.map(|v| v.max(0.0)))
    }
}
