//! A fast net's folder: `model.json` (what it is), `fastnet.safetensors` (the float
//! weights, the trainer's and any other runtime's, which the searchers quantise at load)
//! and `fastnet-quant.safetensors` (those i16 weights written out for other engines to
//! load as they are). Both weight files are plain safetensors (an 8-byte little-endian
//! header length, a JSON header naming each tensor's dtype, shape and byte range, then
//! the data), described in docs/export.md. Every file is written atomically.
//!
//! A folder of `model.json` and the quantised file alone is a whole net for play: the
//! float file is read when it is there, else the quantised one, whose i16 tensors are
//! divided by their scales and quantise back to themselves, so the searchers run the
//! very weights they would have run from the float file and play identically. It is the
//! smallest form of a net (half the float file; what the repository keeps of nets made
//! after 2026-12-05), not a start for more training: its float weights are rounded.

use std::collections::BTreeMap;
#[cfg(feature = "train")]
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::Error;
use crate::features::Layout;
use crate::net::{FastNetConfig, FloatNet, tensor_shapes};

/// `model.json`'s `format`.
pub const FORMAT: &str = "flipzero-fastnet";
/// `model.json`'s `version`.
pub const VERSION: u32 = 1;
/// The float weights' file.
pub const WEIGHTS: &str = "fastnet.safetensors";
/// The quantised weights' file.
pub const QUANT: &str = "fastnet-quant.safetensors";
/// Every file of a fast net's folder that is the net (what an export writes).
pub const FILES: [&str; 3] = ["model.json", WEIGHTS, QUANT];

/// `model.json` of a fast net.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FastNetMeta {
    /// Always [`FORMAT`].
    pub format: String,
    /// [`VERSION`].
    pub version: u32,
    /// The network's description.
    pub network: FastNetConfig,
    /// How the quantised file reads: its scales.
    pub quantisation: String,
    /// What it was trained from and how (free-form: the trainer's summary).
    #[serde(default)]
    pub trained: serde_json::Value,
    /// The search the net is for: `mcts` (policy and value; a file without the key),
    /// or `alphabeta` (trained with `policy_weight = 0`: the value alone, for the
    /// alpha-beta searcher; its policy head is untrained and no MCTS player plays it).
    #[serde(default)]
    pub search: selfplay::SearchKind,
}

#[derive(Serialize, Deserialize)]
struct TensorInfo {
    dtype: String,
    shape: Vec<usize>,
    data_offsets: [usize; 2],
}

fn safetensors(tensors: &[(&str, Vec<usize>, &str, Vec<u8>)]) -> Vec<u8> {
    let mut header = BTreeMap::new();
    let mut offset = 0;
    for (name, shape, dtype, bytes) in tensors {
        header.insert(
            name.to_string(),
            TensorInfo {
                dtype: dtype.to_string(),
                shape: shape.clone(),
                data_offsets: [offset, offset + bytes.len()],
            },
        );
        offset += bytes.len();
    }
    let mut h = serde_json::to_vec(&header).expect("a map of plain values");
    while h.len() % 8 != 0 {
        h.push(b' ');
    }
    let mut out = (h.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(&h);
    for (_, _, _, bytes) in tensors {
        out.extend_from_slice(bytes);
    }
    out
}

fn f32_bytes(x: &[f32]) -> Vec<u8> {
    x.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn i16_bytes(x: &[i16]) -> Vec<u8> {
    x.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Writes `net` into `dir` (created if missing): the float weights, then `model.json`,
/// so that a folder with a `model.json` is whole ([`save_quantised`] adds the export).
#[cfg(feature = "train")]
pub fn save(
    net: &FloatNet,
    dir: &Path,
    trained: serde_json::Value,
    search: selfplay::SearchKind,
) -> Result<(), Error> {
    let game = net.cfg.check()?;
    let layout = Layout::new(game);
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let shapes = tensor_shapes(&net.cfg, &layout);
    let floats: Vec<_> = shapes
        .iter()
        .zip(net.tensors())
        .map(|((name, shape), t)| (*name, shape.clone(), "F32", f32_bytes(t)))
        .collect();
    let path = dir.join(WEIGHTS);
    rundir::write_atomic(&path, &safetensors(&floats)).map_err(|e| Error::io(&path, e))?;
    let meta = FastNetMeta {
        format: FORMAT.into(),
        version: VERSION,
        network: net.cfg.clone(),
        quantisation: format!(
            "l1.weight and l1.bias are round(w * {qa}) (i16), value.weight round(w * {qb}) \
             (i16); value = tanh(sum(clamp(acc, 0, {qa})^2 * value.weight) / ({qa}^2 * {qb}) \
             + value.bias), acc = l1.bias + the rows of the active features, of the side to \
             move's perspective; {policy}",
            qa = net.cfg.qa,
            qb = net.cfg.qb,
            policy = match net.cfg.policy {
                crate::net::PolicyKind::Accumulator => format!(
                    "the policy is in f32 on clamp(acc, 0, {qa}) / {qa}",
                    qa = net.cfg.qa
                ),
                crate::net::PolicyKind::Board =>
                    "the policy is in f32 on the board's cells".to_string(),
            }
        ),
        trained,
        search,
    };
    let path = dir.join("model.json");
    let text = serde_json::to_vec_pretty(&meta).expect("plain values");
    rundir::write_atomic(&path, &text).map_err(|e| Error::io(&path, e))?;
    Ok(())
}

/// Writes [`QUANT`], the weights as the searchers quantise them, into the model folder
/// `dir` of `net`: an export for other engines (and the smallest form of the net, see
/// the module docs); a run writes it where `run.export` says.
#[cfg(feature = "train")]
pub fn save_quantised(net: &FloatNet, dir: &Path) -> Result<(), Error> {
    let path = dir.join(QUANT);
    rundir::write_atomic(&path, &quantised_file(net)?).map_err(|e| Error::io(&path, e))
}

/// The bytes of [`QUANT`] for `net`: the weights as the searchers quantise them (what a
/// runtime that only plays needs, e.g. the web player's bundle).
pub fn quantised_file(net: &FloatNet) -> Result<Vec<u8>, Error> {
    let game = net.cfg.check()?;
    let shapes = tensor_shapes(&net.cfg, &Layout::new(game));
    let q = crate::quant::QuantNet::new(net)?;
    let (l1_w, l1_b, v_w) = q.quantised();
    // The first three in i16, the rest as the float file has them.
    let quant: Vec<_> = shapes
        .iter()
        .zip(net.tensors())
        .map(|((name, shape), t)| {
            let (dtype, bytes) = match *name {
                "l1.weight" => ("I16", i16_bytes(&l1_w)),
                "l1.bias" => ("I16", i16_bytes(&l1_b)),
                "value.weight" => ("I16", i16_bytes(&v_w)),
                _ => ("F32", f32_bytes(t)),
            };
            (*name, shape.clone(), dtype, bytes)
        })
        .collect();
    Ok(safetensors(&quant))
}

/// `flipzero export` of a fast net: the net of folder `dir` (checked as [`load`] checks
/// it) written into `out` (made if missing) as a whole folder: `model.json`, the float
/// weights and the quantised export; into its own folder, only the export is added. An
/// `out` that holds another model is refused ([`rundir::export_refusal`]). Returns the
/// files written.
#[cfg(feature = "train")]
pub fn export(dir: &Path, out: &Path) -> Result<Vec<std::path::PathBuf>, Error> {
    if let Some(why) = rundir::export_refusal(dir, out, &FILES) {
        return Err(Error::Format(why));
    }
    let (net, meta) = load(dir)?;
    let mut written = Vec::new();
    if !rundir::same_folder(dir, out) {
        save(&net, out, meta.trained, meta.search)?;
        // model.json as the source has it, byte for byte: a second export of the same
        // net into the same folder is then recognised as such.
        let from = dir.join("model.json");
        let bytes =
            rundir::read_regular(&from, rundir::Limit::SMALL).map_err(|e| Error::io(&from, e))?;
        let to = out.join("model.json");
        rundir::write_atomic(&to, &bytes).map_err(|e| Error::io(&to, e))?;
        written.extend([to, out.join(WEIGHTS)]);
    }
    save_quantised(&net, out)?;
    written.push(out.join(QUANT));
    Ok(written)
}

/// Whether `dir` holds a fast net (its `model.json` says so).
#[cfg(feature = "train")]
pub fn is_fastnet(dir: &Path) -> bool {
    rundir::read_regular(&dir.join("model.json"), rundir::Limit::SMALL)
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .is_some_and(|v| v["format"] == FORMAT)
}

/// The search the fast net in `dir` is for (its `model.json`'s `search`), read without
/// its weights.
#[cfg(feature = "train")]
pub fn search_of(dir: &Path) -> Result<selfplay::SearchKind, Error> {
    let path = dir.join("model.json");
    let bytes =
        rundir::read_regular(&path, rundir::Limit::SMALL).map_err(|e| Error::io(&path, e))?;
    let meta: FastNetMeta = serde_json::from_slice(&bytes)
        .map_err(|e| Error::Format(format!("{}: {e}", path.display())))?;
    Ok(meta.search)
}

/// The two files of the fast net in `dir` as they are: `model.json` and [`WEIGHTS`]
/// (regular files of bounded size), what [`parse`] and a bundle take.
#[cfg(feature = "train")]
pub fn read_files(dir: &Path) -> Result<(Vec<u8>, Vec<u8>), Error> {
    let read = |name: &str, limit| {
        let path = dir.join(name);
        rundir::read_regular(&path, limit).map_err(|e| Error::io(&path, e))
    };
    Ok((
        read("model.json", rundir::Limit::SMALL)?,
        read(weights_file(dir), rundir::Limit::RECORD)?,
    ))
}

/// The weights file a load of `dir` reads: [`WEIGHTS`], or [`QUANT`] when only it is
/// there (see the module docs).
#[cfg(feature = "train")]
pub fn weights_file(dir: &Path) -> &'static str {
    let there = |f: &str| std::fs::symlink_metadata(dir.join(f)).is_ok();
    if !there(WEIGHTS) && there(QUANT) {
        QUANT
    } else {
        WEIGHTS
    }
}

/// Reads the fast net in `dir`, checking every tensor's name, dtype, shape and range.
#[cfg(feature = "train")]
pub fn load(dir: &Path) -> Result<(FloatNet, FastNetMeta), Error> {
    let (meta, weights) = read_files(dir)?;
    parse(
        &meta,
        &weights,
        &dir.join("model.json").display().to_string(),
        &dir.join(weights_file(dir)).display().to_string(),
    )
}

/// The fast net of a folder's two files read into memory, `model.json` (`meta`) and
/// [`WEIGHTS`] or [`QUANT`] (`weights`), checked as [`load`] checks them; errors name the
/// files as `meta_name` and `weights_name`. What a runtime without files (WebAssembly)
/// loads.
pub fn parse(
    meta: &[u8],
    bytes: &[u8],
    meta_name: &str,
    weights_name: &str,
) -> Result<(FloatNet, FastNetMeta), Error> {
    let meta: FastNetMeta =
        serde_json::from_slice(meta).map_err(|e| Error::Format(format!("{meta_name}: {e}")))?;
    if meta.format != FORMAT || meta.version != VERSION {
        return Err(Error::Format(format!(
            "{meta_name}: format {} version {} (this build reads {FORMAT} version {VERSION})",
            meta.format, meta.version
        )));
    }
    let game = meta
        .network
        .check()
        .map_err(|e| Error::Format(format!("{meta_name}: {e}")))?;
    let layout = Layout::new(game);
    let bad = |m: String| Error::Format(format!("{weights_name}: {m}"));
    if bytes.len() < 8 {
        return Err(bad("shorter than its header".into()));
    }
    let n = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes")) as usize;
    if n > bytes.len() - 8 {
        return Err(bad(format!(
            "header of {n} bytes in a file of {}",
            bytes.len()
        )));
    }
    let header: BTreeMap<String, serde_json::Value> =
        serde_json::from_slice(&bytes[8..8 + n]).map_err(|e| bad(format!("header: {e}")))?;
    let data = &bytes[8 + n..];
    let shapes = tensor_shapes(&meta.network, &layout);
    if let Some(extra) = header
        .keys()
        .find(|k| *k != "__metadata__" && !shapes.iter().any(|(name, _)| name == k))
    {
        return Err(bad(format!(
            "`{extra}` is not a tensor of a fast net (they are: {})",
            shapes
                .iter()
                .map(|(n, _)| *n)
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let mut out = Vec::new();
    for (name, shape) in shapes {
        let info: TensorInfo = header
            .get(name)
            .cloned()
            .ok_or_else(|| bad(format!("no tensor `{name}`")))
            .and_then(|v| serde_json::from_value(v).map_err(|e| bad(format!("`{name}`: {e}"))))?;
        // The quantised file's i16 tensors, by their scales (`model.json`'s quantisation).
        let scale = match name {
            "l1.weight" | "l1.bias" => Some(meta.network.qa),
            "value.weight" => Some(meta.network.qb),
            _ => None,
        };
        let width = match (info.dtype.as_str(), scale) {
            ("F32", _) => 4,
            ("I16", Some(_)) => 2,
            _ => 0,
        };
        if width == 0 || info.shape != shape {
            let i16 = if scale.is_some() { " (or I16)" } else { "" };
            return Err(bad(format!(
                "`{name}` is {} {:?}, expected F32{i16} {shape:?}",
                info.dtype, info.shape
            )));
        }
        let [a, b] = info.data_offsets;
        let len: usize = shape.iter().product::<usize>() * width;
        if b > data.len() {
            return Err(bad(format!(
                "`{name}`: byte range {a}..{b} runs past the end of the data ({} bytes): the file is cut short or not this net's",
                data.len()
            )));
        }
        if b < a || b - a != len {
            return Err(bad(format!(
                "`{name}`: byte range {a}..{b} is not its {len} bytes"
            )));
        }
        let v: Vec<f32> = match (width, scale) {
            (2, Some(scale)) => data[a..b]
                .chunks_exact(2)
                .map(|c| f32::from(i16::from_le_bytes([c[0], c[1]])) / f32::from(scale))
                .collect(),
            _ => data[a..b]
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes")))
                .collect(),
        };
        if v.iter().any(|x| !x.is_finite()) {
            return Err(bad(format!("`{name}` holds a value that is not finite")));
        }
        out.push(v);
    }
    let net = FloatNet::from_tensors(meta.network.clone(), out);
    // What the searchers run is the quantised net, whose integer sums must not overflow.
    crate::quant::QuantNet::check_sums(&net).map_err(|e| bad(e.to_string()))?;
    crate::check::check_outputs(&net)
        .map_err(|m| bad(format!("a net whose outputs cannot be used: {m}")))?;
    Ok((net, meta))
}
