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
        // Say what is wrong with the folder: a CNN's model, or a fast net's files that
        // do not load (the fast net's loader names the file and the fault).
        if train::read_metadata(model).is_ok() {
            return Err(Error::Invalid(format!(
                "{} is a CNN model: the web player plays the nets of `flipzero train --net fast` \
                 (a CNN exports to ONNX and safetensors without --web)",
                model.display()
            )));
        }
        let why = fastnet::io::load(model)
            .err()
            .map_or_else(String::new, |e| format!(": {e}"));
        return Err(Error::Invalid(format!(
            "{} holds no fast net the web player can load{why}",
            model.display()
        )));
    }
    // A link to a folder is followed (as `import` follows it); a file, or a link to a
    // file or to nothing, is refused.
    if std::fs::symlink_metadata(out).is_ok() && !out.is_dir() {
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
        if entries.count() > 0 && !is_bundle(out) {
            return Err(Error::Invalid(format!(
                "{} holds files and no {} of an earlier bundle: name a new or empty folder \
                 (an earlier bundle is replaced)",
                out.display(),
                web::bundle::CONFIG
            )));
        }
    }
    let (meta, weights) = fastnet::io::read_files(model)?;
    let files = web::bundle::files(&meta, &weights, sims, seed, title)
        .map_err(|e| Error::Invalid(format!("{}: {e}", model.display())))?;
    for (name, _) in &files {
        let path = out.join(name);
        // Every folder of the bundle is a real folder (or new), and every file a
        // regular file (or new): nothing is written through a link, and nothing is
        // written at all when one path would fail.
        let mut at = path.parent();
        while let Some(dir) = at.filter(|d| d.starts_with(out) && *d != out) {
            if std::fs::symlink_metadata(dir).is_ok_and(|m| !m.is_dir()) {
                return Err(Error::Invalid(format!(
                    "{} is not a folder (a link or a file): remove it, the bundle makes its own",
                    dir.display()
                )));
            }
            at = dir.parent();
        }
        if std::fs::symlink_metadata(&path).is_ok_and(|m| !m.is_file()) {
            return Err(Error::Invalid(format!(
                "{} is not a regular file (a link, a folder or a device): remove it, the bundle makes its own",
                path.display()
            )));
        }
        if let Some(input) = rundir::output_overwrites(&path, &[model]) {
            return Err(Error::Invalid(format!(
                "{} would overwrite {}, which this command reads: name another output",
                path.display(),
                input.display()
            )));
        }
    }
    // The weights file of the bundle replaced, when it had another name (a version 1
    // bundle's float file): removed once the new bundle is whole, not left to be served.
    // Compared without case: on a case-insensitive file system `net/Model.json` is the
    // new bundle's `net/model.json`, which must not be removed after it is written.
    let stale = previous_weights(out)
        .filter(|old| {
            files
                .iter()
                .all(|(name, _)| !name.eq_ignore_ascii_case(old))
        })
        .map(|old| out.join(old));
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
    if let Some(old) = stale.filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file())) {
        std::fs::remove_file(&old).map_err(|source| Error::Io { path: old, source })?;
    }
    Ok(written)
}

/// The weights file an earlier bundle in `dir` names, when it is a plain relative path
/// inside its `net/` folder (anything else is not removed).
fn previous_weights(dir: &Path) -> Option<String> {
    let b = rundir::read_regular(&dir.join(web::bundle::CONFIG), rundir::Limit::SMALL).ok()?;
    let v: serde_json::Value = serde_json::from_slice(&b).ok()?;
    let w = v.get("weights")?.as_str()?;
    let name = w.strip_prefix("net/")?;
    (!name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        && !name.starts_with('.'))
    .then(|| w.to_string())
}

/// Whether `dir` holds an earlier bundle: its `bundle.json` says so (of any version).
fn is_bundle(dir: &Path) -> bool {
    rundir::read_regular(&dir.join(web::bundle::CONFIG), rundir::Limit::SMALL)
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .is_some_and(|c| c["format"] == web::bundle::FORMAT)
}
