//! The pipeline's error: what went wrong, typed by where it came from, with the context
//! that names the file, the generation or the setting (`Error::Context` layers, as the
//! caller's messages add them).

use std::path::PathBuf;

/// Why a pipeline call failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A refusal or a check that failed, in words (a bad setting, a run held by
    /// another process, a config that differs from the run's).
    #[error("{0}")]
    Invalid(String),
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// An input/output error whose file the context names.
    #[error(transparent)]
    Os(#[from] std::io::Error),
    /// What was being done when `source` happened.
    #[error("{context}")]
    Context {
        /// What was being done.
        context: String,
        /// What happened.
        #[source]
        source: Box<Error>,
    },
    /// The run lock.
    #[error(transparent)]
    Lock(#[from] rundir::LockError),
    /// A role's lease.
    #[error(transparent)]
    Lease(#[from] rundir::LeaseError),
    /// `models/best`.
    #[error(transparent)]
    Best(#[from] rundir::BestError),
    /// A run-wide counter.
    #[error(transparent)]
    Counter(#[from] rundir::CounterError),
    /// A run's records and report.
    #[error(transparent)]
    Report(#[from] crate::report::ReportError),
    /// Training, export or a model's files.
    #[error(transparent)]
    Train(#[from] train::TrainError),
    /// A fast net's training or files.
    #[error(transparent)]
    FastNet(#[from] fastnet::Error),
    /// Self-play.
    #[error(transparent)]
    Selfplay(#[from] selfplay::SelfplayError),
    /// A setting out of range (self-play, training and gating share the check).
    #[error(transparent)]
    Setting(#[from] selfplay::ConfigError),
    /// Self-play data.
    #[error(transparent)]
    Data(#[from] selfplay::data::DataError),
    /// A player that cannot play.
    #[error(transparent)]
    Player(#[from] eval::PlayerError),
    /// A player name that names no player.
    #[error(transparent)]
    PlayerName(#[from] eval::BadPlayerName),
    /// A gating or anchoring match.
    #[error(transparent)]
    Gate(#[from] eval::GateError),
    /// A match.
    #[error(transparent)]
    Match(#[from] eval::MatchError),
    /// A rating list.
    #[error(transparent)]
    Rating(#[from] eval::RatingError),
    /// A game name.
    #[error(transparent)]
    Game(#[from] engine::UnknownGameName),
    /// A position text.
    #[error(transparent)]
    Position(#[from] engine::PositionError),
    /// A config written as TOML.
    #[error(transparent)]
    TomlWrite(#[from] toml::ser::Error),
    /// A record written or read as JSON.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
}

/// A pipeline result.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A file error.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    /// This error with `context` said first.
    pub fn context(self, context: impl std::fmt::Display) -> Error {
        Error::Context {
            context: context.to_string(),
            source: Box::new(self),
        }
    }

    /// The whole chain, `context: cause: cause`, leaving out a cause whose text the
    /// message already holds.
    pub fn chain(&self) -> String {
        let mut msg = self.to_string();
        let mut cause = std::error::Error::source(self);
        while let Some(c) = cause {
            let text = c.to_string();
            if !msg.contains(&text) {
                msg.push_str(": ");
                msg.push_str(&text);
            }
            cause = c.source();
        }
        msg
    }
}

/// Context for results, as the pipeline's messages name what was being done.
pub trait Context<T> {
    /// The error, if any, with `context` said first.
    fn context(self, context: impl std::fmt::Display) -> Result<T>;
    /// The error, if any, with the context `f` gives said first.
    fn with_context<D: std::fmt::Display>(self, f: impl FnOnce() -> D) -> Result<T>;
}

impl<T, E: Into<Error>> Context<T> for std::result::Result<T, E> {
    fn context(self, context: impl std::fmt::Display) -> Result<T> {
        self.map_err(|e| e.into().context(context))
    }

    fn with_context<D: std::fmt::Display>(self, f: impl FnOnce() -> D) -> Result<T> {
        self.map_err(|e| e.into().context(f()))
    }
}

impl<T> Context<T> for Option<T> {
    fn context(self, context: impl std::fmt::Display) -> Result<T> {
        self.ok_or_else(|| Error::Invalid(context.to_string()))
    }

    fn with_context<D: std::fmt::Display>(self, f: impl FnOnce() -> D) -> Result<T> {
        self.ok_or_else(|| Error::Invalid(f().to_string()))
    }
}

/// Returns an [`Error::Invalid`] made of a format string.
macro_rules! bail {
    ($($arg:tt)*) => {
        return Err($crate::Error::Invalid(format!($($arg)*)))
    };
}

/// An [`Error::Invalid`] made of a format string.
macro_rules! err {
    ($($arg:tt)*) => {
        $crate::Error::Invalid(format!($($arg)*))
    };
}

pub(crate) use {bail, err};
