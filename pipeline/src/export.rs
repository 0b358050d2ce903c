//! `flipzero export --web`: a fast net's static web bundle (`web::bundle`) written into
//! a folder, each file atomically, `bundle.json` last.

use std::path::{Path, PathBuf};

use crate::Error;

/// Writes the web bundle of the fast net in model folder `model` into `out`, playing
/// `sims` simulations a move with `seed` (`title`: the page's, or "flipzero · GAME").
/// `out` must be new, empty, or an earlier bundle (whose files are replaced); nothing
/// is written where it would overwrite the model. Returns the files written.
pub fn export_web(
    model: &Path,
    out: &Path,
    sims: u32,
    seed: u64,
    title: Option<&str>,
) -> Result<Vec<PathBuf>, Error> {
    if !fastnet::io::is_fastnet(model) {
        return Err(Error::Invalid(format!(
            "{} is not a fast net: the web player plays the nets of `flipzero train --net fast` \
             (a CNN model exports to ONNX and safetensors without --web)",
            model.display()
        )));
    }
    if std::fs::symlink_metadata(out).is_ok_and(|m| !m.is_dir()) {
        return Err(Error::Invalid(format!(
            "{} is not a folder: name a new or empty folder",
            out.display()
        )));
    }
    if out.exists() {
        let entries = std::fs::read_dir(out).map_err(|source| Error::Io {
            path: out.to_path_buf(),
            source,
        })?;
        if entries.count() > 0 && !out.join(web::bundle::CONFIG).is_file() {
            return Err(Error::Invalid(format!(
                "{} holds files and no {}: name a new or empty folder (an earlier bundle is replaced)",
                out.display(),
                web::bundle::CONFIG
            )));
        }
    }
    let read = |name: &str, limit| {
        let path = model.join(name);
        rundir::read_regular(&path, limit).map_err(|source| Error::Io { path, source })
    };
    let meta = read("model.json", rundir::Limit::SMALL)?;
    let weights = read(fastnet::io::WEIGHTS, rundir::Limit::RECORD)?;
    let files = web::bundle::files(&meta, &weights, sims, seed, title)
        .map_err(|e| Error::Invalid(format!("{}: {e}", model.display())))?;
    for (name, _) in &files {
        let path = out.join(name);
        if let Some(input) = rundir::output_overwrites(&path, &[model]) {
            return Err(Error::Invalid(format!(
                "{} would overwrite {}, which this command reads: name another output",
                path.display(),
                input.display()
            )));
        }
    }
    let mut written = Vec::new();
    for (name, bytes) in files {
        let path = out.join(&name);
        let io = |source| Error::Io {
            path: path.clone(),
            source,
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        rundir::write_atomic(&path, &bytes).map_err(io)?;
        written.push(path);
    }
    Ok(written)
}
