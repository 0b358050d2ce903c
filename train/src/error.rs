//! The error type of training, loading and export, naming the file at fault.

use std::path::{Path, PathBuf};

use crate::config::TrainConfigError;

/// Errors of training, naming the file at fault.
#[derive(Debug, thiserror::Error)]
pub enum TrainError {
    /// Invalid settings.
    #[error(transparent)]
    Config(#[from] TrainConfigError),
    /// Reading the training data failed.
    #[error(transparent)]
    Data(#[from] selfplay::data::DataError),
    /// A row does not fit the game.
    #[error(transparent)]
    Row(#[from] crate::data::RowError),
    /// No training rows.
    #[error("no training positions found in {0}")]
    NoData(String),
    /// The chosen training engine cannot run this network.
    #[error("{0}")]
    Unsupported(String),
    /// A position of another game than the network's.
    #[error("a {position} position given to a network for {network}")]
    OtherGame {
        /// The network's game.
        network: engine::Game,
        /// The position's game.
        position: engine::Game,
    },
    /// A checkpoint or model file is unreadable or does not match.
    #[error("{path}: {message}")]
    Checkpoint {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// File system error.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

pub(crate) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> TrainError + '_ {
    move |source| TrainError::Io {
        path: path.to_path_buf(),
        source,
    }
}
