//! Long native calls that Ctrl-C stops: the work runs on a thread of its own with a
//! stop flag, while the calling thread waits with the interpreter released and checks
//! for signals between waits; a `KeyboardInterrupt` sets the flag, the work ends early,
//! and the interrupt is raised.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use pyo3::prelude::*;

/// Runs `work(stop)` until it returns, raising Python's pending signal (Ctrl-C) after
/// setting `stop` and waiting for the work to end.
pub(crate) fn interruptible<T: Send>(
    py: Python<'_>,
    work: impl FnOnce(&AtomicBool) -> T + Send,
) -> PyResult<T> {
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let handle = scope.spawn(|| work(&stop));
        let mut signal = None;
        while !handle.is_finished() {
            py.detach(|| std::thread::sleep(Duration::from_millis(20)));
            if signal.is_none()
                && let Err(e) = py.check_signals()
            {
                stop.store(true, Ordering::Relaxed);
                signal = Some(e);
            }
        }
        let out = match handle.join() {
            Ok(out) => out,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        match signal {
            Some(e) => Err(e),
            None => Ok(out),
        }
    })
}
