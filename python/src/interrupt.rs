//! Long native calls that Ctrl-C stops: the work runs on a thread of its own with a
//! stop flag, while the calling thread waits with the interpreter released and checks
//! for signals between waits; a `KeyboardInterrupt` sets the flag, the work ends early,
//! and the interrupt is raised.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use pyo3::prelude::*;

/// Runs `work(stop)` until it returns, raising Python's pending signal (Ctrl-C) after
/// setting `stop` and waiting for the work to end.
pub(crate) fn interruptible<T: Send>(
    py: Python<'_>,
    work: impl FnOnce(&AtomicBool) -> T + Send,
) -> PyResult<T> {
    let stop = AtomicBool::new(false);
    let (done, mut finished) = mpsc::channel::<()>();
    std::thread::scope(|scope| {
        let stop = &stop;
        let handle = scope.spawn(move || {
            let out = work(stop);
            // The waiting thread wakes at once (not at its next poll).
            let _ = done.send(());
            out
        });
        let mut signal = None;
        loop {
            // (The receiver moves into the released section and back: it is not Sync.)
            let (receiver, waited) = py.detach(move || {
                let waited = finished.recv_timeout(Duration::from_millis(20));
                (finished, waited)
            });
            finished = receiver;
            match waited {
                // Finished, or the work panicked (its sender dropped): join it.
                Ok(()) | Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => {}
            }
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
