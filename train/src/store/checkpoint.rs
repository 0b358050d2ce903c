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

/// The folder of a model directory that holds its training checkpoints.
pub const CHECKPOINTS: &str = "checkpoints";

/// The checkpoint folders of a model directory, newest first: the one
/// `checkpoints/latest` names, then every other `step-NNNNNNNN` folder by step, so that
/// a resume can fall back to an older checkpoint when the newest is corrupt. A `latest`
/// that cannot be read or names anything but an existing checkpoint folder of this model
/// (`../..`, a path) is passed over, with a warning (the second value).
pub fn checkpoint_dirs(out: &Path) -> (Vec<PathBuf>, Option<String>) {
    let root = out.join(CHECKPOINTS);
    let step_of = |name: &str| -> Option<u64> {
        let digits = name.strip_prefix("step-")?;
        (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
            .then(|| digits.parse().ok())
            .flatten()
    };
    let mut steps: Vec<(u64, PathBuf)> = std::fs::read_dir(&root)
        .map(|d| {
            d.flatten()
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().to_string();
                    Some((step_of(&name)?, e.path()))
                })
                .filter(|(_, p)| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    steps.sort_by_key(|s| std::cmp::Reverse(s.0));
    let pointer = root.join("latest");
    let (latest, warning) = match rundir::read_regular_text(&pointer, rundir::Limit::SMALL) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (None, None),
        Err(e) => (
            None,
            Some(format!("{}: {e}; passed over", pointer.display())),
        ),
        Ok(text) => {
            let name = text.trim();
            let dir = root.join(name);
            if step_of(name).is_some() && dir.is_dir() {
                (Some(dir), None)
            } else {
                (
                    None,
                    Some(format!(
                        "{} names `{}`, not a checkpoint folder of this model; passed over",
                        pointer.display(),
                        name.chars().take(40).collect::<String>()
                    )),
                )
            }
        }
    };
    let mut out: Vec<PathBuf> = latest.into_iter().collect();
    for (_, p) in steps {
        if !out.contains(&p) {
            out.push(p);
        }
    }
    (out, warning)
}

/// The state of checkpoint folder `dir` (its `state.json`).
pub fn read_state(dir: &Path) -> Result<CheckpointState, TrainError> {
    let state_path = dir.join("state.json");
    let text =
        rundir::read_regular_text(&state_path, rundir::Limit::RECORD).map_err(io(&state_path))?;
    serde_json::from_str(&text).map_err(|e| TrainError::Checkpoint {
        path: state_path.clone(),
        message: format!("corrupt checkpoint state: {e}"),
    })
}

/// Moves a corrupt checkpoint folder aside (`checkpoints/corrupt-step-NNNNNNNN`, kept
/// for inspection, never read again); returns its new path.
pub fn quarantine(dir: &Path) -> std::io::Result<PathBuf> {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let parent = dir.parent().unwrap_or(Path::new("."));
    let mut to = parent.join(format!("corrupt-{name}"));
    let mut k = 1;
    while to.exists() {
        to = parent.join(format!("corrupt-{name}-{k}"));
        k += 1;
    }
    std::fs::rename(dir, &to)?;
    Ok(to)
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
