//! Which model is best: `models/best`, a pointer that cannot leave the run, replaced
//! atomically on promotion.

use std::path::{Path, PathBuf};

/// What `models/best` names before any network is promoted: the bootstrap player.
pub const BOOTSTRAP: &str = "bootstrap";

/// What is wrong with a run directory's `models/best`.
#[derive(Debug, thiserror::Error)]
pub enum BestError {
    /// It exists but cannot be read (or is not UTF-8 text).
    #[error("{path}: cannot read the best model's name: {source}")]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// It names a symbolic link under `models/`, which could lead out of the run.
    #[error(
        "{path} names `{name}`, but models/{name} is a symbolic link: a run's best must be a folder of the run (copy the model into models/ instead)"
    )]
    Link {
        /// The file.
        path: PathBuf,
        /// What it says.
        name: String,
    },
    /// It names something that is not a model folder of this run.
    #[error(
        "{path} names `{name}`, which is not a model of this run (expected a folder name under models/, such as gen-0003, or `bootstrap`)"
    )]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What it says.
        name: String,
    },
}

/// Whether `name` can name a model folder directly under `models/`: one plain path
/// component, so that a pointer can never lead outside the run directory.
pub fn is_model_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 200
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// The run's best model name (a folder under `models/`, or `bootstrap`); `None` when
/// the run has none yet. A file that cannot be read or names anything else (`..`, a
/// path, binary noise) is an error naming the file, never a model outside the run.
pub fn current_best(run_dir: &Path) -> Result<Option<String>, BestError> {
    let run = crate::RunDir::new(run_dir);
    let path = run.best_pointer();
    let text = match crate::read_regular_text(&path, crate::Limit::SMALL) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(BestError::Unreadable { path, source }),
    };
    let name = text.trim();
    if !is_model_name(name) {
        return Err(BestError::Invalid {
            path,
            name: name.escape_debug().take(80).collect(),
        });
    }
    // A model folder of the run is a folder, not a link: a link could lead the pointer
    // out of the run directory (`models/evil -> /elsewhere/gen-0012`).
    let folder = run.model(name);
    if std::fs::symlink_metadata(&folder).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(BestError::Link {
            path,
            name: name.to_string(),
        });
    }
    Ok(Some(name.to_string()))
}

/// Makes `name` (a folder under `models/`, or `bootstrap`) the run's best model:
/// `models/best` is replaced atomically, so a reader sees the old or the new name,
/// never a mix, whenever the process is killed.
pub fn promote(run_dir: &Path, name: &str) -> std::io::Result<()> {
    if !is_model_name(name) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("`{name}` is not a model folder name"),
        ));
    }
    let run = crate::RunDir::new(run_dir);
    std::fs::create_dir_all(run.models())?;
    crate::write_atomic(&run.best_pointer(), format!("{name}\n").as_bytes())
}
