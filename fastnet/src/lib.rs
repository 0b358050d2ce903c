//! Networks built for the CPU (issue #29): a sparse-input net whose first layer is an
//! accumulator that follows make/unmake, integer-quantised with AVX2 and AVX-512 kernels,
//! with a value head and a Monty-style per-move policy head, trained from the pipeline's
//! self-play shards.
//!
//! - [`features`]: the input (2×2 tuples of cells, per perspective);
//! - [`net`]: the description ([`FastNetConfig`]) and the float weights;
//! - [`quant`]: the quantised net and its incremental [`Accumulator`]; [`rows`]: its first
//!   layer a byte a weight;
//! - [`simd`]: the integer kernels, one body per instruction-set level; [`slots`]: the
//!   policy subnets' outputs a position needs;
//! - [`data`], [`train`]: examples from shards, the trainer;
//! - [`io`]: the model folder and its files, [`check`]: the outputs checked as it is
//!   read; [`evaluator`]: the tree search's evaluator.

pub mod check;
#[cfg(feature = "train")]
pub mod data;
pub mod evaluator;
pub mod features;
pub mod io;
pub mod net;
pub(crate) mod prune;
pub mod quant;
pub(crate) mod rows;
pub(crate) mod simd;
pub(crate) mod slots;
#[cfg(feature = "train")]
pub mod train;

use std::path::PathBuf;

pub use evaluator::{FastEvaluator, FastValue};
pub use net::{FastNetConfig, FloatNet};
pub use quant::{Accumulator, QuantNet};

/// What can go wrong loading, saving or training a fast net.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A description or file that this build cannot use, and why.
    #[error("{0}")]
    Format(String),
}

impl Error {
    #[cfg(feature = "train")]
    fn io(path: &std::path::Path, source: std::io::Error) -> Error {
        Error::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}
