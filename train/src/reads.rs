//! Reads of device data back to the host, counted. On a GPU each read waits for the
//! device to finish everything queued before it (a host synchronisation): the per-step
//! and per-batch overhead that leaves a GPU idle. A training step reads once (its
//! metrics, gathered on the device, and only on the steps that write a metrics row), an
//! inference batch once (its policy, win/draw/loss and score in one tensor); the tests
//! hold them to that through [`host_reads`].

use burn::prelude::*;

thread_local! {
    static HOST_READS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How many times this thread has read device data back to the host.
pub fn host_reads() -> u64 {
    HOST_READS.with(|c| c.get())
}

/// The values of `t` on the host, in row-major order (one host read).
pub(crate) fn read<const D: usize>(t: Tensor<D>) -> Vec<f32> {
    HOST_READS.with(|c| c.set(c.get() + 1));
    t.into_data().try_to_vec::<f32>().expect("f32 data")
}
