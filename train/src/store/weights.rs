//! Weights on disk: burnpack files written atomically beside their SHA-256 digest, and
//! read back only when the digest matches.

use std::path::Path;

use burn::module::Module;
use burn::prelude::*;

use crate::error::{TrainError, io};
use crate::net::{Net, NetConfig};

/// Writes `bytes` to `path` atomically (temporary file, fsync, rename).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), TrainError> {
    selfplay::data::write_atomic(path, bytes).map_err(io(path))
}

/// The SHA-256 digest of `bytes`, in lowercase hex (as `sha256sum` prints it).
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Saves a network's weights as burnpack bytes, atomically; returns their SHA-256 digest,
/// which the caller records beside them (model.json, a checkpoint's state.json).
pub fn save_net(net: &Net, path: &Path) -> Result<String, TrainError> {
    let bytes = net
        .clone()
        .into_record()
        .into_bytes()
        .map_err(|e| TrainError::Checkpoint {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
    write_atomic(path, &bytes)?;
    Ok(sha256_hex(&bytes))
}

/// Loads weights into a network of shape `cfg`. When `digest` is given, the file's
/// SHA-256 must equal it (a flipped byte is refused before any weight is read); a corrupt
/// file or a file of another shape is an error naming the file.
pub fn load_net(
    cfg: &NetConfig,
    path: &Path,
    digest: Option<&str>,
    device: &Device,
) -> Result<Net, TrainError> {
    let bytes = rundir::read_regular(path, rundir::Limit::DATA).map_err(io(path))?;
    if let Some(want) = digest {
        let found = sha256_hex(&bytes);
        if !found.eq_ignore_ascii_case(want) {
            return Err(TrainError::Checkpoint {
                path: path.to_path_buf(),
                message: format!(
                    "weights do not match their recorded digest (sha256 {found}, recorded \
                     {want}): the file is corrupt or was replaced"
                ),
            });
        }
    }
    let bad = |e: &dyn std::fmt::Display| TrainError::Checkpoint {
        path: path.to_path_buf(),
        message: format!(
            "cannot load weights for a {}x{} network: {e}",
            cfg.blocks, cfg.channels
        ),
    };
    let record = burn::store::ModuleRecord::from_bytes(burn::tensor::Bytes::from_bytes_vec(bytes))
        .map_err(|e| bad(&e))?;
    cfg.init(device)
        .try_load_record(record)
        .map_err(|e| bad(&e))
}
