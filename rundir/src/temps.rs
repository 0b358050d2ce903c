//! The leftovers of writes that were killed: hidden temporary files, told apart by the
//! host and PID in their names.

use std::path::{Path, PathBuf};

/// Removes the hidden temporary files (`.NAME.HOST.PID.tmp`, as
/// `crate::temp_path` names them) that killed atomic writes left directly in
/// `dir`: those written on this machine by a process that is gone. A temporary file of a
/// live process (a `flipzero report` writing beside a run), of another machine sharing
/// the directory, or whose writer cannot be told (no `/proc`), is kept. Returns the
/// removed paths.
pub fn remove_stale_temps(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let p = e.path();
        let dead = local_temp_writer(&name).is_some_and(|pid| !process_alive(pid));
        if dead && p.is_file() && std::fs::remove_file(&p).is_ok() {
            removed.push(p);
        }
    }
    removed
}

/// The PID in a temporary file name `.NAME.HOST.PID.tmp` written on this machine.
fn local_temp_writer(name: &str) -> Option<u32> {
    let stem = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let (rest, pid) = stem.rsplit_once('.')?;
    let (_, host) = rest.rsplit_once('.')?;
    (host == crate::host_name())
        .then(|| pid.parse().ok())
        .flatten()
}

/// Whether process `pid` runs on this machine; `true` when that cannot be told.
pub fn process_alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    if !Path::new("/proc/self").exists() {
        return true;
    }
    Path::new("/proc").join(pid.to_string()).exists()
}
