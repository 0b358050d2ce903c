//! Checkpoints of a training run: `checkpoints/step-NNNNNNNN/` folders with the weights,
//! the optimizer state and `state.json`, switched by an atomic `checkpoints/latest`.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::TrainConfig;
use crate::error::{TrainError, io};

/// What a checkpoint records beside the weights and the optimizer state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckpointState {
    /// Steps completed.
    pub step: u64,
    /// The game.
    pub game: String,
    /// The settings of the run.
    pub config: TrainConfig,
    /// Rows in the training window (the data order depends on it).
    pub window_rows: usize,
    /// SHA-256 of the checkpoint's `model.bpk` and of its optimizer file, checked when
    /// the checkpoint is loaded (empty in checkpoints of older versions: not checked).
    #[serde(default)]
    pub digests: Digests,
}

/// The SHA-256 digests of a checkpoint's files.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Digests {
    /// Of `model.bpk`.
    pub weights: String,
    /// Of the optimizer state file.
    pub optimizer: String,
}

/// The newest checkpoint of a model directory, if any: its folder and state.
pub fn latest_checkpoint(out: &Path) -> Result<Option<(PathBuf, CheckpointState)>, TrainError> {
    let latest = out.join("checkpoints").join("latest");
    let name = match std::fs::read_to_string(&latest) {
        Ok(name) => name,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(TrainError::Io {
                path: latest,
                source,
            });
        }
    };
    // Only a checkpoint folder of this model: `step-` and digits, nothing that leads out.
    let name = name.trim();
    let digits = name.strip_prefix("step-").unwrap_or("");
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(TrainError::Checkpoint {
            path: latest,
            message: format!(
                "names `{}`, not a checkpoint folder (step-NNNNNNNN)",
                name.chars().take(40).collect::<String>()
            ),
        });
    }
    let dir = out.join("checkpoints").join(name);
    let state_path = dir.join("state.json");
    let text = std::fs::read_to_string(&state_path).map_err(io(&state_path))?;
    let state: CheckpointState =
        serde_json::from_str(&text).map_err(|e| TrainError::Checkpoint {
            path: state_path.clone(),
            message: format!("corrupt checkpoint state: {e}"),
        })?;
    Ok(Some((dir, state)))
}

/// Removes what a killed run's atomic writes left in `dir`: hidden `.NAME.PID.tmp` files
/// and `.step-N.tmp` checkpoint folders, which only this trainer writes there.
pub(crate) fn remove_stale_temps(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if name.starts_with('.') && name.ends_with(".tmp") {
            let p = e.path();
            let _ = if p.is_dir() {
                std::fs::remove_dir_all(&p)
            } else {
                std::fs::remove_file(&p)
            };
        }
    }
}
