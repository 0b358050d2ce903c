//! model.json: what a front end needs to feed a network, and the checks that keep a
//! foreign or edited file from being run.

use std::path::Path;

use engine::Game;
use serde::{Deserialize, Serialize};

use crate::error::TrainError;
use crate::net::{NetConfig, PLANE_NAMES, PLANES};
use crate::store::write_atomic;

/// Format version of model.json. Version 2 added `weights_sha256`; version 1 files
/// (without it) still load, unchecked.
pub const MODEL_FORMAT_VERSION: u32 = 2;

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
    /// SHA-256 of `model.bpk` (lowercase hex, as `sha256sum` prints it), checked on load.
    #[serde(default)]
    pub weights_sha256: String,
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
            weights_sha256: String::new(),
        }
    }

    /// The game.
    pub fn game(&self) -> Result<Game, String> {
        self.game
            .parse()
            .map_err(|e: engine::UnknownGameName| e.to_string())
    }
}

/// Writes `dir/model.json`; `weights_sha256` is the digest of the `model.bpk` beside it.
pub fn write_metadata(
    dir: &Path,
    game: Game,
    net: &NetConfig,
    steps: u64,
    samples: u64,
    weights_sha256: &str,
) -> Result<(), TrainError> {
    let meta = ModelMeta {
        weights_sha256: weights_sha256.to_string(),
        ..ModelMeta::new(game, net, steps, samples)
    };
    let json = serde_json::to_string_pretty(&meta).expect("metadata serializes");
    write_atomic(&dir.join("model.json"), json.as_bytes())
}

/// Reads `dir/model.json`; errors name the file and the problem.
pub fn read_metadata(dir: &Path) -> Result<ModelMeta, TrainError> {
    let path = dir.join("model.json");
    let text = rundir::read_regular_text(&path, rundir::Limit::RECORD).map_err(|source| {
        TrainError::Io {
            path: path.clone(),
            source,
        }
    })?;
    let meta: ModelMeta = serde_json::from_str(&text).map_err(|e| {
        // A folder of the other family (fastnet) names itself rather than a field.
        let format = serde_json::from_str::<serde_json::Value>(&text)
            .ok()
            .and_then(|v| v["format"].as_str().map(str::to_string));
        TrainError::Checkpoint {
            path: path.clone(),
            message: match format.as_deref() {
                Some(f) if f != "flipzero-model" => format!(
                    "a model of format {f}, not a flipzero-model network (fast nets play as \
                     mcts:DIR and abnet:DIR players)"
                ),
                _ => format!("not valid model metadata: {e}"),
            },
        }
    })?;
    if meta.format != "flipzero-model" || !(1..=MODEL_FORMAT_VERSION).contains(&meta.version) {
        return Err(TrainError::Checkpoint {
            path,
            message: format!(
                "format {} version {}, expected flipzero-model version 1 to {MODEL_FORMAT_VERSION}",
                meta.format, meta.version
            ),
        });
    }
    let hex = |s: &str| s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit());
    if meta.version >= 2 && !hex(&meta.weights_sha256) {
        return Err(TrainError::Checkpoint {
            path,
            message: format!(
                "weights_sha256 `{}` is not a SHA-256 digest (64 hex digits)",
                meta.weights_sha256
            ),
        });
    }
    let game = meta.game().map_err(|m| TrainError::Checkpoint {
        path: dir.join("model.json"),
        message: m,
    })?;
    check_shape(&meta, game).map_err(|message| TrainError::Checkpoint {
        path: dir.join("model.json"),
        message,
    })?;
    Ok(meta)
}

/// Checks what model.json says against its game and the limits a `[train]` config
/// allows, before any weight is allocated: an edited or foreign file is refused, not
/// run (a network of 10⁸ blocks would exhaust memory; a policy of another size would
/// index out of range).
fn check_shape(meta: &ModelMeta, game: Game) -> Result<(), String> {
    let n = &meta.network;
    if let Some((key, v, allowed)) = n.out_of_range() {
        return Err(format!("network.{key} = {v} is out of range: {allowed}"));
    }
    let want = ModelMeta::new(game, n, 0, 0);
    let fields = [
        ("network.in_planes", n.in_planes, PLANES),
        (
            "network.policy_planes",
            n.policy_planes,
            game.policy_planes(),
        ),
        ("width", meta.width, want.width),
        ("height", meta.height, want.height),
        ("policy_size", meta.policy_size, want.policy_size),
        ("policy_planes", meta.policy_planes, want.policy_planes),
        ("input_planes", meta.input_planes.len(), PLANES),
    ];
    for (key, found, expected) in fields {
        if found != expected {
            return Err(format!(
                "{key} = {found}, but a {game} network of this version has {expected}"
            ));
        }
    }
    if meta.input_planes != want.input_planes || meta.jump_offsets != want.jump_offsets {
        return Err(format!(
            "input planes or jump offsets differ from those of {game} in this version"
        ));
    }
    Ok(())
}
