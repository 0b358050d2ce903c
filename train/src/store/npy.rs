//! NumPy `.npy` files of float arrays, written by `ndarray-npy` (what `np.load` reads).

use std::path::Path;

use ndarray::{ArrayRef, Dimension};
use ndarray_npy::WriteNpyExt;

use crate::error::TrainError;
use crate::store::write_atomic;

/// Writes `array` to `path` as a `.npy` file (little-endian float32, its shape, C order),
/// atomically: the bytes are made in memory, then written to a temporary file in the same
/// directory, synced and renamed over `path`.
pub fn save_npy<D: Dimension>(path: &Path, array: &ArrayRef<f32, D>) -> Result<(), TrainError> {
    write_atomic(path, &npy_bytes(path, array)?)
}

/// The bytes of `array` as a `.npy` file (`path` names it in an error).
pub fn npy_bytes<D: Dimension>(
    path: &Path,
    array: &ArrayRef<f32, D>,
) -> Result<Vec<u8>, TrainError> {
    let mut bytes = Vec::new();
    array
        .write_npy(&mut bytes)
        .map_err(|e| TrainError::Checkpoint {
            path: path.to_path_buf(),
            message: format!("cannot encode the array as .npy: {e}"),
        })?;
    Ok(bytes)
}
