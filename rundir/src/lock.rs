//! Who holds a run directory: `run.lock`, an operating-system file lock taken
//! exclusively by `flipzero run` and shared by the separate roles (which register under
//! `leases/roles/`), and [`with_file_lock`], the lock that makes a read-and-write of
//! shared state (a config, a counter, a lease) whole across processes.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::temps::process_alive;

/// Why a run directory could not be locked.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another live process holds it.
    #[error(
        "{path} is held by another flipzero process ({holder}); wait for it to finish or stop it first"
    )]
    Held {
        /// The lock file.
        path: PathBuf,
        /// What the holder wrote there: its PID, host and start time.
        holder: String,
    },
    /// The lock file could not be opened or written.
    #[error("{path}: {source}")]
    Io {
        /// The lock file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

/// An exclusive hold on a run directory, released when dropped or when the process
/// dies (however it dies: the operating system drops the file lock with the process,
/// so a dead holder's lock is taken over at once).
#[derive(Debug)]
pub struct RunLock {
    file: File,
    path: PathBuf,
    shared: bool,
    /// A shared holder's registration (`leases/roles/HOST-PID`), removed when dropped.
    registered: Option<PathBuf>,
}

impl RunLock {
    /// Locks `dir` (which must exist) for `role` (e.g. `run`). A directory held by a
    /// live process is refused with the holder's PID and host.
    pub fn acquire(dir: &Path, role: &str) -> Result<RunLock, LockError> {
        let path = crate::RunDir::new(dir).lock_file();
        let io = |source| LockError::Io {
            path: path.clone(),
            source,
        };
        let mut file = open_lock_file(&path).map_err(io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = (&mut file).take(4096).read_to_string(&mut holder);
                let holder = holder.trim();
                return Err(LockError::Held {
                    path,
                    holder: if holder.is_empty() {
                        let roles = live_roles(dir);
                        if roles.is_empty() {
                            "separate roles (flipzero worker), or a process that has not yet written its name".into()
                        } else {
                            roles.join("; ")
                        }
                    } else {
                        holder.to_string()
                    },
                });
            }
            Err(TryLockError::Error(e)) => return Err(io(e)),
        }
        let line = holder_line(role);
        file.set_len(0).map_err(io)?;
        file.seek(SeekFrom::Start(0)).map_err(io)?;
        file.write_all(line.as_bytes()).map_err(io)?;
        file.sync_data().map_err(io)?;
        Ok(RunLock {
            file,
            path,
            shared: false,
            registered: None,
        })
    }

    /// A shared hold on `dir` (which must exist), as each separate role (`flipzero
    /// worker`) takes: any number of them hold it together, while `flipzero run` (which
    /// takes it exclusively) is refused, and they are refused while it runs. The holder
    /// is registered as `leases/roles/HOST-PID` (`role`, its PID and host), so that a
    /// refusal can name the processes that hold the run.
    pub fn acquire_shared(dir: &Path, role: &str) -> Result<RunLock, LockError> {
        let path = crate::RunDir::new(dir).lock_file();
        let io = |source| LockError::Io {
            path: path.clone(),
            source,
        };
        let mut file = open_lock_file(&path).map_err(io)?;
        match file.try_lock_shared() {
            Ok(()) => {
                let registered = register_role(dir, role);
                Ok(RunLock {
                    file,
                    path,
                    shared: true,
                    registered,
                })
            }
            Err(TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = (&mut file).take(4096).read_to_string(&mut holder);
                Err(LockError::Held {
                    path,
                    holder: holder.trim().to_string(),
                })
            }
            Err(TryLockError::Error(e)) => Err(io(e)),
        }
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Opens (or creates) the lock file `path` for reading and writing, without truncating
/// what its holder wrote. Writing through a link would truncate whatever it points to,
/// so anything but a regular file is refused.
fn open_lock_file(path: &Path) -> std::io::Result<File> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| !m.is_file()) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file (a link or a folder): remove it, flipzero makes its own",
        ));
    }
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
}

impl Drop for RunLock {
    fn drop(&mut self) {
        if !self.shared {
            let _ = self.file.set_len(0);
        }
        if let Some(r) = &self.registered {
            let _ = std::fs::remove_file(r);
        }
        let _ = self.file.unlock();
    }
}

/// The line a holder of a run writes (in `run.lock` and under `leases/roles/`):
/// `flipzero ROLE, PID N on host H, since T (Unix time)`.
fn holder_line(role: &str) -> String {
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    format!(
        "flipzero {role}, PID {} on host {}, since {started} (Unix time)\n",
        std::process::id(),
        crate::host_name()
    )
}

/// The PID and host a holder's line names (the line of [`RunLock`]); none for text that
/// names no PID and host.
pub fn parse_holder(text: &str) -> Option<(u32, String)> {
    let word_after = |key: &str| {
        let mut words = text.split_whitespace();
        words.find(|w| *w == key)?;
        words.next().map(|w| w.trim_end_matches(',').to_string())
    };
    let pid = word_after("PID")?.parse().ok()?;
    Some((pid, word_after("host")?))
}

/// Registers this process as a shared holder of run `dir` (best effort: a folder that
/// cannot be written only makes a refusal less precise).
fn register_role(dir: &Path, role: &str) -> Option<PathBuf> {
    let roles = crate::RunDir::new(dir).roles();
    std::fs::create_dir_all(&roles).ok()?;
    let path = roles.join(format!("{}-{}", crate::host_name(), std::process::id()));
    crate::write_atomic(&path, holder_line(role).as_bytes()).ok()?;
    Some(path)
}

/// The registered shared holders of run `dir` that may be alive: those of this machine
/// whose process is gone are removed (a killed role leaves its registration), those of
/// other machines are kept.
fn live_roles(dir: &Path) -> Vec<String> {
    let roles = crate::RunDir::new(dir).roles();
    let Ok(entries) = std::fs::read_dir(&roles) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let Some((host, pid)) = name.rsplit_once('-') else {
            continue;
        };
        let Ok(pid) = pid.parse::<u32>() else {
            continue;
        };
        if host == crate::host_name() && !process_alive(pid) {
            let _ = std::fs::remove_file(e.path());
            continue;
        }
        if let Ok(text) = crate::read_regular_text(&e.path(), crate::Limit::SMALL) {
            out.push(text.trim().to_string());
        }
    }
    out.sort();
    out
}

/// An exclusive lock on a lock file, released when dropped (or when the process dies).
#[derive(Debug)]
pub struct FileLock(File);

impl Drop for FileLock {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}

/// Takes an exclusive lock on file `path` (created if missing, with its folder), waiting
/// for another holder: what makes a read-and-write of the run directory's shared state
/// (its config, a counter, a lease) whole against other processes, on this machine and
/// on a filesystem that supports locks. The one lock of the workspace besides
/// [`RunLock`].
pub fn lock_file(path: &Path) -> std::io::Result<FileLock> {
    let file = open_for_lock(path)?;
    file.lock()?;
    Ok(FileLock(file))
}

/// [`lock_file`] without waiting: `None` when another process (of any PID namespace on
/// this machine) holds the lock. What tells a live owner from a dead one without
/// trusting PIDs.
pub fn try_lock_file(path: &Path) -> std::io::Result<Option<FileLock>> {
    let file = open_for_lock(path)?;
    match file.try_lock() {
        Ok(()) => Ok(Some(FileLock(file))),
        Err(TryLockError::WouldBlock) => Ok(None),
        Err(TryLockError::Error(e)) => Err(e),
    }
}

fn open_for_lock(path: &Path) -> std::io::Result<File> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_holders_line_names_its_pid_and_host() {
        assert_eq!(
            parse_holder(&holder_line("run")),
            Some((std::process::id(), crate::host_name().to_string()))
        );
        assert_eq!(parse_holder("hello world"), None);
        assert_eq!(parse_holder("flipzero run, PID -5 on host x"), None);
    }
}
