//! Weights trained elsewhere (PyTorch, JAX, …) made into a model directory: a safetensors
//! file under the project's tensor names, Burn's (`model.safetensors` of an export) or
//! PyTorch's (`model.pytorch.safetensors`: BatchNorm `weight`/`bias`, Linear weights
//! `[out, in]`), becomes `model.json` + `model.bpk`, which every player, `infer`, `export`
//! and a run's `init` load. The network's shape is read off the tensors' shapes, so the
//! file needs nothing beside it but the game.

use std::collections::BTreeMap;
use std::path::Path;

use burn::module::Module;
use engine::Game;
use safetensors::{Dtype, SafeTensors};

use crate::error::{TrainError, io};
use crate::net::{Head, NamedTensors, NetConfig, PLANES};
use crate::store::{save_net, write_metadata};

/// Which names a file uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Naming {
    /// Burn's names and layouts (`stem.bn.gamma`, Linear weights `[in, out]`).
    Burn,
    /// PyTorch's (`stem.bn.weight`, Linear weights `[out, in]`, `num_batches_tracked`).
    PyTorch,
}

/// What [`import_weights`] made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Imported {
    /// The network's shape, as read off the tensors.
    pub network: NetConfig,
    /// The names the file used.
    pub naming: Naming,
}

/// Reads the safetensors file `weights` as a network for `game` and writes `out/model.json`
/// and `out/model.bpk` (atomically; `out` is made if missing). Refused, naming the file
/// and the tensor: a file that is not safetensors, a dtype other than F32/F64/F16/BF16,
/// a value that is not finite, a negative BatchNorm variance, outputs that cannot be used
/// ([`crate::net::check`]), a missing, extra or misshapen tensor, a shape this version
/// does not run or that does not fit `game`, and an `out` that already holds a model (it
/// is never overwritten).
pub fn import_weights(weights: &Path, game: Game, out: &Path) -> Result<Imported, TrainError> {
    // A model is a folder: a file (or a link to one, or to nothing) in its place is said
    // so, before the weights are read, not as the OS's "File exists" when it is made.
    if std::fs::symlink_metadata(out).is_ok() && !out.is_dir() {
        return Err(TrainError::Checkpoint {
            path: out.to_path_buf(),
            message: "is not a folder: --out names the model folder to make (new or empty)".into(),
        });
    }
    for f in ["model.json", "model.bpk"] {
        let p = out.join(f);
        if std::fs::symlink_metadata(&p).is_ok() {
            return Err(TrainError::Checkpoint {
                path: p,
                message: "already exists: importing never overwrites a model (choose an empty \
                          directory)"
                    .into(),
            });
        }
    }
    let bytes = rundir::read_regular(weights, rundir::Limit::DATA).map_err(io(weights))?;
    let bad = |message: String| TrainError::Checkpoint {
        path: weights.to_path_buf(),
        message,
    };
    let (tensors, naming) = read_tensors(&bytes).map_err(bad)?;
    let network = shape_of(&tensors, game).map_err(bad)?;
    let mut named = NamedTensors::default();
    let mut extra: Vec<&str> = tensors.keys().map(String::as_str).collect();
    for spec in network.tensors() {
        let (shape, values) = tensors
            .get(&spec.name)
            .ok_or_else(|| bad(format!("no tensor `{}`{}", spec.name, naming.hint())))?;
        if *shape != spec.shape {
            return Err(bad(format!(
                "`{}` has shape {shape:?}; a {}x{} network for {game} needs {:?}",
                spec.name, network.blocks, network.channels, spec.shape
            )));
        }
        extra.retain(|n| *n != spec.name);
        named.insert(spec.name.clone(), shape.clone(), values.clone());
    }
    if !extra.is_empty() {
        extra.truncate(8);
        return Err(bad(format!(
            "tensors that are not part of the network: {}",
            extra.join(", ")
        )));
    }
    let device = burn::prelude::Device::flex();
    let net = named.into_net(&network, &device).map_err(bad)?;
    crate::net::check::check_outputs(&net.valid(), game, &device)
        .map_err(|m| bad(format!("a network whose outputs cannot be used: {m}")))?;
    std::fs::create_dir_all(out).map_err(io(out))?;
    let bpk = out.join("model.bpk");
    let digest = save_net(&net, &bpk)?;
    if let Err(e) = write_metadata(out, game, &network, 0, 0, &digest) {
        // Weights without their model.json are no model, and would block a retry.
        let _ = std::fs::remove_file(&bpk);
        return Err(e);
    }
    Ok(Imported { network, naming })
}

impl Naming {
    fn hint(self) -> &'static str {
        match self {
            Naming::Burn => " (Burn's names: see `flipzero train --dry-run` for the list)",
            Naming::PyTorch => " (PyTorch's names: as in an export's model.pytorch.safetensors)",
        }
    }
}

type Tensors = BTreeMap<String, (Vec<usize>, Vec<f32>)>;

/// The file's tensors in Burn's names and layouts, as f32.
fn read_tensors(bytes: &[u8]) -> Result<(Tensors, Naming), String> {
    let file =
        SafeTensors::deserialize(bytes).map_err(|e| format!("not a safetensors file: {e}"))?;
    let naming = if file.tensor("stem.bn.gamma").is_ok() {
        Naming::Burn
    } else if file.tensor("stem.bn.weight").is_ok() {
        Naming::PyTorch
    } else {
        return Err(
            "neither Burn's names nor PyTorch's: no tensor `stem.bn.gamma` or `stem.bn.weight` \
             (the names of an export's model.safetensors or model.pytorch.safetensors)"
                .into(),
        );
    };
    let mut out = Tensors::new();
    for (name, view) in file.iter() {
        // PyTorch's BatchNorm counts its updates; the count takes no part in the output.
        if naming == Naming::PyTorch && name.ends_with(".num_batches_tracked") {
            continue;
        }
        let values = floats(view.dtype(), view.data()).map_err(|e| format!("`{name}`: {e}"))?;
        if let Some(i) = values.iter().position(|v| !v.is_finite()) {
            return Err(format!(
                "`{name}` holds a value that is not finite (at {i})"
            ));
        }
        if name.ends_with(".running_var")
            && let Some(i) = values.iter().position(|&v| v < 0.0)
        {
            return Err(format!("`{name}` holds a negative variance (at {i})"));
        }
        let (name, shape, values) = match naming {
            Naming::Burn => (name.to_string(), view.shape().to_vec(), values),
            Naming::PyTorch => renamed(name, view.shape(), &values, Naming::Burn),
        };
        out.insert(name, (shape, values));
    }
    Ok((out, naming))
}

/// A `rows` × `cols` matrix (row-major) transposed.
fn transposed(rows: usize, cols: usize, values: &[f32]) -> Vec<f32> {
    (0..rows * cols)
        .map(|k| values[(k % rows) * cols + k / rows])
        .collect()
}

/// The tensors of `net` under `naming`'s names and layouts: what [`import_weights`] reads
/// back (PyTorch's leave out BatchNorm's `num_batches_tracked`, which holds no weight).
pub fn named_tensors(net: &crate::net::Net, naming: Naming) -> Vec<(String, Vec<usize>, Vec<f32>)> {
    let named = NamedTensors::of(net);
    named
        .iter()
        .map(|(name, shape, values)| match naming {
            Naming::Burn => (name.to_string(), shape.to_vec(), values.to_vec()),
            Naming::PyTorch => renamed(name, shape, values, Naming::PyTorch),
        })
        .collect()
}

/// One tensor moved between the two namings, to `to`: BatchNorm's `gamma`/`beta` are
/// PyTorch's `weight`/`bias`, and every 2-D tensor of the network is a Linear weight,
/// `[in, out]` in Burn and `[out, in]` in PyTorch.
fn renamed(
    name: &str,
    shape: &[usize],
    values: &[f32],
    to: Naming,
) -> (String, Vec<usize>, Vec<f32>) {
    const PAIRS: [(&str, &str); 2] = [(".bn.gamma", ".bn.weight"), (".bn.beta", ".bn.bias")];
    for (burn, torch) in PAIRS {
        let (from, into) = match to {
            Naming::Burn => (torch, burn),
            Naming::PyTorch => (burn, torch),
        };
        if let Some(prefix) = name.strip_suffix(from) {
            return (format!("{prefix}{into}"), shape.to_vec(), values.to_vec());
        }
    }
    if let [rows, cols] = *shape {
        return (
            name.to_string(),
            vec![cols, rows],
            transposed(rows, cols, values),
        );
    }
    (name.to_string(), shape.to_vec(), values.to_vec())
}

/// A tensor's values as f32.
fn floats(dtype: Dtype, data: &[u8]) -> Result<Vec<f32>, String> {
    Ok(match dtype {
        Dtype::F32 => data
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect(),
        Dtype::F64 => data
            .chunks_exact(8)
            .map(|b| f64::from_le_bytes(b.try_into().expect("8 bytes")) as f32)
            .collect(),
        Dtype::F16 => data
            .chunks_exact(2)
            .map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32())
            .collect(),
        Dtype::BF16 => data
            .chunks_exact(2)
            .map(|b| half::bf16::from_le_bytes([b[0], b[1]]).to_f32())
            .collect(),
        other => return Err(format!("dtype {other:?} (F32, F64, F16 or BF16 are read)")),
    })
}

/// The network's shape, read off the tensors' shapes and checked against `game` and the
/// limits of this version.
fn shape_of(t: &Tensors, game: Game) -> Result<NetConfig, String> {
    let dims = |name: &str, rank: usize| -> Result<&[usize], String> {
        match t.get(name) {
            Some((s, _)) if s.len() == rank => Ok(s),
            Some((s, _)) => Err(format!("`{name}` has shape {s:?}, not {rank}-dimensional")),
            None => Err(format!("no tensor `{name}`")),
        }
    };
    let stem = dims("stem.conv.weight", 4)?;
    let (channels, in_planes) = (stem[0], stem[1]);
    if in_planes != PLANES {
        return Err(format!(
            "`stem.conv.weight` reads {in_planes} input planes; this version encodes {PLANES}"
        ));
    }
    let blocks = (0..)
        .take_while(|i| t.contains_key(&format!("blocks.{i}.a.conv.weight")))
        .count();
    let gpool: Vec<bool> = (0..blocks)
        .map(|i| t.contains_key(&format!("blocks.{i}.gpool.weight")))
        .collect();
    let gpool_every = gpool.iter().position(|&g| g).map_or(0, |i| i + 1);
    let head_channels = dims("policy_conv.conv.weight", 4)?[0];
    let policy_planes = dims("policy_out.weight", 4)?[0];
    let value_hidden = dims("value_fc.weight", 2)?[1];
    let aux_heads = [
        (Head::Ownership, "ownership_out.weight"),
        (Head::Reply, "reply_out.weight"),
    ]
    .into_iter()
    .filter(|(_, n)| t.contains_key(*n))
    .map(|(h, _)| h)
    .collect();
    let network = NetConfig {
        blocks,
        channels,
        gpool_every,
        head_channels,
        value_hidden,
        in_planes,
        policy_planes,
        aux_heads,
    };
    if let Some((key, v, allowed)) = network.out_of_range() {
        return Err(format!(
            "a network with {key} = {v} (this version runs {allowed})"
        ));
    }
    if let Some(i) = (0..blocks).find(|&i| gpool[i] != network.has_gpool(i)) {
        return Err(format!(
            "global pooling in blocks {:?}: this version places it in every {}th block, so \
             block {i} {} one",
            (0..blocks).filter(|&i| gpool[i]).collect::<Vec<_>>(),
            gpool_every,
            if gpool[i] { "cannot have" } else { "needs" }
        ));
    }
    if policy_planes != game.policy_planes() {
        return Err(format!(
            "`policy_out.weight` has {policy_planes} policy planes; {game} has {}",
            game.policy_planes()
        ));
    }
    Ok(network)
}
