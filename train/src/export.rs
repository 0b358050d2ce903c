//! Export of a trained model for other runtimes: safetensors (Burn and PyTorch names)
//! and ONNX, with model.json beside them.

use std::path::{Path, PathBuf};

use burn::prelude::*;
use burn::store::{BurnToPyTorchAdapter, ModuleSnapshot, SafetensorsStore};

use burn_onnx::export::{AxisSpec, InputSpec, OnnxExporter};
use onnx_ir::{Message, ModelProto};

use crate::error::TrainError;
use crate::net::{Net, PLANES};
use crate::store::{load_model, write_atomic};

/// The files [`export`] writes into its folder.
pub const EXPORT_FILES: [&str; 5] = [
    "model.json",
    "model.bpk",
    "model.onnx",
    "model.safetensors",
    "model.pytorch.safetensors",
];

/// Files written by [`export`] (see [`EXPORT_FILES`]); an `out` holding anything but an
/// earlier export of the same model is refused ([`rundir::export_refusal`]).
pub fn export(model_dir: &Path, out: &Path) -> Result<Vec<PathBuf>, TrainError> {
    if let Some(why) = rundir::export_refusal(model_dir, out, &EXPORT_FILES) {
        return Err(TrainError::Unsupported(why));
    }
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
        // The store writes its file private (0600); the export is written again as every
        // other file of it is, with the permissions a new file gets (the umask's).
        let bytes =
            rundir::read_regular(&tmp, rundir::Limit::DATA).map_err(|source| TrainError::Io {
                path: tmp.clone(),
                source,
            })?;
        let _ = std::fs::remove_file(&tmp);
        write_atomic(&path, &bytes)?;
        Ok(path)
    };
    export_onnx(model_dir, &out.join("model.onnx"))?;
    written.push(out.join("model.onnx"));
    written.push(save(out.join("model.safetensors"), false)?);
    written.push(save(out.join("model.pytorch.safetensors"), true)?);
    if out != model_dir {
        for f in ["model.json", "model.bpk"] {
            let bytes = rundir::read_regular(&model_dir.join(f), rundir::Limit::DATA).map_err(
                |source| TrainError::Io {
                    path: model_dir.join(f),
                    source,
                },
            )?;
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
    let meta = rundir::read_regular_text(&model_dir.join("model.json"), rundir::Limit::RECORD)
        .map_err(|source| TrainError::Io {
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
