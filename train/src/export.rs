//! Model metadata (model.json) and weight export (safetensors, Burn and PyTorch names).

use std::path::{Path, PathBuf};

use burn::prelude::*;
use burn::store::{BurnToPyTorchAdapter, ModuleSnapshot, SafetensorsStore};
use engine::Game;
use serde::{Deserialize, Serialize};

use crate::encode::{PLANE_NAMES, PLANES};
use crate::model::{Net, NetConfig};
use crate::training::{TrainError, load_net, write_atomic};

/// Format version of model.json.
pub const MODEL_FORMAT_VERSION: u32 = 1;

/// What model.json says about a network: everything a front end needs to feed it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelMeta {
    /// Always `flipzero-model`.
    pub format: String,
    /// Format version.
    pub version: u32,
    /// The game name.
    pub game: String,
    /// Grid width (files or hex columns).
    pub width: usize,
    /// Grid height.
    pub height: usize,
    /// Input planes, in order (see `encode`).
    pub input_planes: Vec<String>,
    /// How to read the input: a text description of the encoding.
    pub input_layout: String,
    /// Policy vector length.
    pub policy_size: usize,
    /// Policy planes (1 + jump offsets, or 1).
    pub policy_planes: usize,
    /// Jump offsets (source − target, grid coordinates) of policy slots 1, 2, ….
    pub jump_offsets: Vec<(i8, i8)>,
    /// How to read the policy.
    pub policy_layout: String,
    /// Outputs of the network.
    pub outputs: String,
    /// Network shape.
    pub network: NetConfig,
    /// Training steps so far.
    pub training_steps: u64,
    /// Samples seen in training.
    pub samples_seen: u64,
}

impl ModelMeta {
    /// The metadata of a network for `game`.
    pub fn new(game: Game, network: &NetConfig, steps: u64, samples: u64) -> ModelMeta {
        let (w, h) = game.grid();
        ModelMeta {
            format: "flipzero-model".into(),
            version: MODEL_FORMAT_VERSION,
            game: game.to_string(),
            width: w,
            height: h,
            input_planes: PLANE_NAMES.iter().map(|s| s.to_string()).collect(),
            input_layout: format!(
                "float32 [batch, {PLANES}, height, width]; cell (x, y) at [.., y, x]; x = file (a = 0) \
                 and y = rank (1 = 0) on square boards; Hexxagon in axial coordinates \
                 (column, row - 1 + max(0, column - 4)); planes from the side to move's view"
            ),
            policy_size: game.policy_size(),
            policy_planes: game.policy_planes(),
            jump_offsets: game.jump_offsets(),
            policy_layout:
                "index = slot * width * height + y * width + x of the target cell; slot 0: \
                            clone or placement; slot 1 + j: jump whose source is target + \
                            jump_offsets[j]; the last index is the pass"
                    .into(),
            outputs: "policy_logits [batch, policy_size] (softmax over the legal moves' indices); \
                      wdl_logits [batch, 3] (win, draw, loss for the side to move); score \
                      [batch, 1] (final margin / playable cells, tanh)"
                .into(),
            network: network.clone(),
            training_steps: steps,
            samples_seen: samples,
        }
    }

    /// The game.
    pub fn game(&self) -> Result<Game, String> {
        self.game
            .parse()
            .map_err(|e: engine::UnknownGameName| e.to_string())
    }
}

/// Writes `dir/model.json`.
pub fn write_metadata(
    dir: &Path,
    game: Game,
    net: &NetConfig,
    steps: u64,
    samples: u64,
) -> Result<(), TrainError> {
    let meta = ModelMeta::new(game, net, steps, samples);
    let json = serde_json::to_string_pretty(&meta).expect("metadata serializes");
    write_atomic(&dir.join("model.json"), json.as_bytes())
}

/// Reads `dir/model.json`; errors name the file and the problem.
pub fn read_metadata(dir: &Path) -> Result<ModelMeta, TrainError> {
    let path = dir.join("model.json");
    let text = std::fs::read_to_string(&path).map_err(|source| TrainError::Io {
        path: path.clone(),
        source,
    })?;
    let meta: ModelMeta = serde_json::from_str(&text).map_err(|e| TrainError::Checkpoint {
        path: path.clone(),
        message: format!("not valid model metadata: {e}"),
    })?;
    if meta.format != "flipzero-model" || meta.version != MODEL_FORMAT_VERSION {
        return Err(TrainError::Checkpoint {
            path,
            message: format!(
                "format {} version {}, expected flipzero-model version {MODEL_FORMAT_VERSION}",
                meta.format, meta.version
            ),
        });
    }
    meta.game().map_err(|m| TrainError::Checkpoint {
        path: dir.join("model.json"),
        message: m,
    })?;
    Ok(meta)
}

/// A trained model loaded for inference (CPU).
pub struct LoadedModel {
    /// Its metadata.
    pub meta: ModelMeta,
    /// The game.
    pub game: Game,
    /// The network, in inference mode.
    pub net: Net,
    /// The device it lives on.
    pub device: Device,
}

/// Loads `dir/model.json` and `dir/model.bpk`.
pub fn load_model(dir: &Path) -> Result<LoadedModel, TrainError> {
    let meta = read_metadata(dir)?;
    let game = meta.game().expect("checked by read_metadata");
    let device = Device::flex();
    let net = load_net(&meta.network, &dir.join("model.bpk"), &device)?.valid();
    Ok(LoadedModel {
        meta,
        game,
        net,
        device,
    })
}

/// Files written by [`export`].
pub fn export(model_dir: &Path, out: &Path) -> Result<Vec<PathBuf>, TrainError> {
    let model = load_model(model_dir)?;
    std::fs::create_dir_all(out).map_err(|source| TrainError::Io {
        path: out.to_path_buf(),
        source,
    })?;
    let mut written = vec![];
    let save = |path: PathBuf, pytorch: bool| -> Result<PathBuf, TrainError> {
        let tmp = path.with_extension("safetensors.tmp");
        let mut store = SafetensorsStore::from_file(&tmp);
        if pytorch {
            store = store.with_to_adapter(BurnToPyTorchAdapter);
        }
        model
            .net
            .save_into(&mut store)
            .map_err(|e| TrainError::Checkpoint {
                path: path.clone(),
                message: e.to_string(),
            })?;
        let f = std::fs::File::open(&tmp).map_err(|source| TrainError::Io {
            path: tmp.clone(),
            source,
        })?;
        f.sync_all().map_err(|source| TrainError::Io {
            path: tmp.clone(),
            source,
        })?;
        std::fs::rename(&tmp, &path).map_err(|source| TrainError::Io {
            path: path.clone(),
            source,
        })?;
        Ok(path)
    };
    written.push(save(out.join("model.safetensors"), false)?);
    written.push(save(out.join("model.pytorch.safetensors"), true)?);
    if out != model_dir {
        for f in ["model.json", "model.bpk"] {
            let bytes = std::fs::read(model_dir.join(f)).map_err(|source| TrainError::Io {
                path: model_dir.join(f),
                source,
            })?;
            write_atomic(&out.join(f), &bytes)?;
            written.push(out.join(f));
        }
    }
    Ok(written)
}
