//! The wall clock, where the target has one: WebAssembly without an operating system
//! (`wasm32-unknown-unknown`, the browser player) has none (`Instant::now` panics
//! there), and its searches stop by counts (nodes, simulations) only.

use std::time::{Duration, Instant};

/// The time now; `None` on a target without a clock.
pub fn now() -> Option<Instant> {
    #[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
    return None;
    #[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
    return Some(Instant::now());
}

/// The time since `t` (zero without a clock).
pub fn since(t: Option<Instant>) -> Duration {
    t.map_or(Duration::ZERO, |t| t.elapsed())
}
