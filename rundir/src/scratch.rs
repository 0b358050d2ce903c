//! Scratch folders under the system's temporary folder, removed with everything in them
//! when their owner is done (benchmarks, tests): a process that writes gigabytes of
//! shards and models into `/tmp` must not leave them there, a tmpfs filling with every run.

use std::ops::Deref;
use std::path::{Path, PathBuf};

use crate::temps::process_alive;

/// The folder `flipzero-KIND-PID-NAME` (`flipzero-KIND-PID` for an empty name) under [`std::env::temp_dir`], removed when the
/// value is dropped (also when a test panics: unwinding drops it). Not created: the code
/// that writes there creates it as it would a run directory. What a killed process left
/// under the same `flipzero-KIND-` prefix (its PID no longer running on this machine) is
/// removed when the next one is made.
#[derive(Debug)]
pub struct Scratch {
    path: PathBuf,
}

impl Scratch {
    /// The scratch folder `name` of kind `kind` for this process, emptied: whatever an
    /// earlier value of the same name left is removed first.
    pub fn temp(kind: &str, name: &str) -> Scratch {
        let prefix = format!("flipzero-{kind}-");
        remove_dead(&prefix);
        let pid = std::process::id();
        let path = match name {
            "" => std::env::temp_dir().join(format!("{prefix}{pid}")),
            _ => std::env::temp_dir().join(format!("{prefix}{pid}-{name}")),
        };
        let _ = crate::remove_dir_if_exists(&path);
        Scratch { path }
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Deref for Scratch {
    type Target = PathBuf;
    fn deref(&self) -> &PathBuf {
        &self.path
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<std::ffi::OsStr> for Scratch {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.path.as_os_str()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = crate::remove_dir_if_exists(&self.path);
    }
}

/// Removes the folders `PREFIX-PID-…` in the temporary folder whose process is gone.
fn remove_dead(prefix: &str) {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let Some(rest) = name.strip_prefix(prefix) else {
            continue;
        };
        let pid = rest.split('-').next().and_then(|p| p.parse::<u32>().ok());
        // `file_type` does not follow links: only real folders are removed, never what
        // a link planted under the prefix points to.
        let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
        if is_dir && pid.is_some_and(|p| !process_alive(p)) {
            let _ = crate::remove_dir_if_exists(&e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removed_when_dropped_and_after_a_dead_process() {
        let kept = {
            let s = Scratch::temp("scratch-test", "a");
            std::fs::create_dir_all(s.join("deep")).unwrap();
            std::fs::write(s.join("deep/file"), b"x").unwrap();
            assert!(s.join("deep/file").is_file());
            s.path().to_path_buf()
        };
        assert!(!kept.exists(), "dropped: removed");
        // A folder of a process that no longer runs (a PID beyond the kernel's maximum)
        // and one of a live process (this one, another name).
        let dead = std::env::temp_dir().join("flipzero-scratch-test-4294967-old");
        std::fs::create_dir_all(dead.join("x")).unwrap();
        let live = Scratch::temp("scratch-test", "b");
        std::fs::create_dir_all(live.path()).unwrap();
        let live_path = live.path().to_path_buf();
        let _other = Scratch::temp("scratch-test", "c");
        if Path::new("/proc/self").exists() {
            assert!(!dead.exists(), "a dead process's folder is removed");
        }
        assert!(live.is_dir(), "a live process's folder is kept");
        drop(live);
        assert!(!live_path.exists());
    }
}
