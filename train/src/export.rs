//! Model metadata (model.json) and weight export (safetensors, Burn and PyTorch names).

use std::path::{Path, PathBuf};

use burn::prelude::*;
use burn::store::{BurnToPyTorchAdapter, ModuleSnapshot, SafetensorsStore};
use engine::Game;
use serde::{Deserialize, Serialize};

use burn_onnx::export::{AxisSpec, InputSpec, OnnxExporter};
use onnx_ir::{Message, ModelProto};

use crate::encode::{PLANE_NAMES, PLANES};
use crate::model::{Net, NetConfig};
use crate::training::{TrainError, load_net, write_atomic};

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
    let text = std::fs::read_to_string(&path).map_err(|source| TrainError::Io {
        path: path.clone(),
        source,
    })?;
    let meta: ModelMeta = serde_json::from_str(&text).map_err(|e| TrainError::Checkpoint {
        path: path.clone(),
        message: format!("not valid model metadata: {e}"),
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

/// A trained model loaded for inference (CPU).
#[derive(Clone)]
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

impl ModelMeta {
    /// The recorded digest of the weights, if this version of model.json has one.
    fn digest(&self) -> Option<&str> {
        (!self.weights_sha256.is_empty()).then_some(self.weights_sha256.as_str())
    }
}

/// Loads `dir/model.json` and `dir/model.bpk` (checked against the recorded digest).
pub fn load_model(dir: &Path) -> Result<LoadedModel, TrainError> {
    let meta = read_metadata(dir)?;
    let game = meta.game().expect("checked by read_metadata");
    let device = Device::flex();
    let net = load_net(
        &meta.network,
        &dir.join("model.bpk"),
        meta.digest(),
        &device,
    )?
    .valid();
    Ok(LoadedModel {
        meta,
        game,
        net,
        device,
    })
}

/// The weights of model `dir` as the starting point of a training run for `game` with
/// network `shape`: a model of another game or shape is refused, naming both.
pub fn load_init(dir: &Path, game: Game, shape: &NetConfig) -> Result<Net, TrainError> {
    let meta = read_metadata(dir)?;
    let path = dir.join("model.json");
    if meta.game().ok() != Some(game) {
        return Err(TrainError::Checkpoint {
            path,
            message: format!("the initial model is for game {}, not {game}", meta.game),
        });
    }
    if &meta.network != shape {
        return Err(TrainError::Checkpoint {
            path,
            message: format!(
                "the initial model is a {}x{} network, this run trains a {}x{} one",
                meta.network.blocks, meta.network.channels, shape.blocks, shape.channels
            ),
        });
    }
    load_net(
        shape,
        &dir.join("model.bpk"),
        meta.digest(),
        &Device::flex(),
    )
}

/// Files written by [`export`].
pub fn export(model_dir: &Path, out: &Path) -> Result<Vec<PathBuf>, TrainError> {
    let model = load_model(model_dir)?;
    std::fs::create_dir_all(out).map_err(|source| TrainError::Io {
        path: out.to_path_buf(),
        source,
    })?;
    // An export killed mid-write leaves its temporary files (ours, and the safetensors
    // store's own `model.safetensors.tmp.PID-N.tmp`); a new export replaces them.
    if let Ok(entries) = std::fs::read_dir(out) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            let ours = name.starts_with("model.") || name.starts_with(".model.");
            if ours && name.ends_with(".tmp") && e.path().is_file() {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
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
    export_onnx(model_dir, &out.join("model.onnx"))?;
    written.push(out.join("model.onnx"));
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

/// Names of the ONNX graph's input and outputs.
pub const ONNX_INPUT: &str = "planes";
/// See [`ONNX_INPUT`].
pub const ONNX_OUTPUTS: [&str; 3] = ["policy_logits", "wdl_logits", "score"];

/// Writes the network as ONNX (opset 18): input `planes` `[N, planes, height, width]`
/// float32 with a dynamic batch axis; outputs `policy_logits` `[N, policy_size]`,
/// `wdl_logits` `[N, 3]`, `score` `[N, 1]`; model.json in the model's metadata under
/// `flipzero.model_json`.
pub fn export_onnx(model_dir: &Path, path: &Path) -> Result<(), TrainError> {
    // The exporter moves BatchNorm state to its capture device: export a throw-away copy.
    let model = load_model(model_dir)?;
    let fail = |m: String| TrainError::Checkpoint {
        path: path.to_path_buf(),
        message: m,
    };
    let (w, h) = model.game.grid();
    let sample = Tensor::<4>::zeros([1, PLANES, h, w], &model.device);
    let validation = Tensor::<4>::zeros([2, PLANES, h, w], &model.device);
    let specs = [InputSpec::new([
        AxisSpec::dynamic("batch"),
        AxisSpec::Static,
        AxisSpec::Static,
        AxisSpec::Static,
    ])];
    let onnx = OnnxExporter::new()
        .export_dynamic(
            &model.net,
            sample,
            validation,
            &specs,
            |net: &Net, x: Tensor<4>| {
                let o = net.forward(x);
                (o.policy, o.wdl, o.score)
            },
        )
        .map_err(|e| fail(format!("ONNX export failed: {e}")))?;
    let mut proto =
        ModelProto::parse_from_bytes(onnx.as_bytes()).map_err(|e| fail(e.to_string()))?;
    let graph = proto.graph.mut_or_insert_default();
    let mut renames: Vec<(String, String)> = Vec::new();
    if let Some(input) = graph.input.first_mut() {
        renames.push((
            std::mem::replace(&mut input.name, ONNX_INPUT.into()),
            ONNX_INPUT.into(),
        ));
    }
    for (out, name) in graph.output.iter_mut().zip(ONNX_OUTPUTS) {
        renames.push((std::mem::replace(&mut out.name, name.into()), name.into()));
    }
    for node in graph.node.iter_mut() {
        for v in node.input.iter_mut().chain(node.output.iter_mut()) {
            if let Some((_, new)) = renames.iter().find(|(old, _)| old == v) {
                *v = new.clone();
            }
        }
    }
    graph.name = "flipzero".into();
    let meta =
        std::fs::read_to_string(model_dir.join("model.json")).map_err(|source| TrainError::Io {
            path: model_dir.join("model.json"),
            source,
        })?;
    proto.metadata_props.push(Default::default());
    let entry = proto.metadata_props.last_mut().expect("just pushed");
    entry.key = "flipzero.model_json".into();
    entry.value = meta;
    proto.producer_name = "flipzero".into();
    let bytes = proto.write_to_bytes().map_err(|e| fail(e.to_string()))?;
    write_atomic(path, &bytes)
}

/// Writes a float32 array as a NumPy `.npy` file (format 1.0), atomically.
pub fn write_npy(path: &Path, shape: &[usize], data: &[f32]) -> Result<(), TrainError> {
    assert_eq!(
        shape.iter().product::<usize>(),
        data.len(),
        "shape and data disagree"
    );
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let tuple = if dims.len() == 1 {
        format!("{},", dims[0])
    } else {
        dims.join(", ")
    };
    let mut header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({tuple}), }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend((header.len() as u16).to_le_bytes());
    bytes.extend(header.as_bytes());
    for v in data {
        bytes.extend(v.to_le_bytes());
    }
    write_atomic(path, &bytes)
}
