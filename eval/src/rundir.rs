//! The run directory's shared state: who holds it (a lock), which model is best (a
//! pointer that cannot leave the run), and the leftovers of writes that were killed.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// The lock file of a run directory.
pub const LOCK_FILE: &str = "run.lock";

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
        let path = dir.join(LOCK_FILE);
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
        let started = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let line = format!(
            "flipzero {role}, PID {} on host {}, since {started} (Unix time)\n",
            std::process::id(),
            rundir::host_name()
        );
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
        let path = dir.join(LOCK_FILE);
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

/// The folder where the shared holders of a run register.
const ROLES_DIR: [&str; 2] = ["leases", "roles"];

/// Registers this process as a shared holder of run `dir` (best effort: a folder that
/// cannot be written only makes a refusal less precise).
fn register_role(dir: &Path, role: &str) -> Option<PathBuf> {
    let roles = dir.join(ROLES_DIR[0]).join(ROLES_DIR[1]);
    std::fs::create_dir_all(&roles).ok()?;
    let path = roles.join(format!("{}-{}", rundir::host_name(), std::process::id()));
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let line = format!(
        "flipzero {role}, PID {} on host {}, since {started} (Unix time)\n",
        std::process::id(),
        rundir::host_name()
    );
    rundir::write_atomic(&path, line.as_bytes()).ok()?;
    Some(path)
}

/// The registered shared holders of run `dir` that may be alive: those of this machine
/// whose process is gone are removed (a killed role leaves its registration), those of
/// other machines are kept.
fn live_roles(dir: &Path) -> Vec<String> {
    let roles = dir.join(ROLES_DIR[0]).join(ROLES_DIR[1]);
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
        if host == rundir::host_name() && !process_alive(pid) {
            let _ = std::fs::remove_file(e.path());
            continue;
        }
        if let Ok(text) = rundir::read_regular_text(&e.path(), rundir::Limit::SMALL) {
            out.push(text.trim().to_string());
        }
    }
    out.sort();
    out
}

/// Removes the hidden temporary files (`.NAME.HOST.PID.tmp`, as
/// `selfplay::data::temp_path` names them) that killed atomic writes left directly in
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
    (host == rundir::host_name())
        .then(|| pid.parse().ok())
        .flatten()
}

/// Whether process `pid` runs on this machine; `true` when that cannot be told.
pub(crate) fn process_alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    if !Path::new("/proc/self").exists() {
        return true;
    }
    Path::new("/proc").join(pid.to_string()).exists()
}

/// What is wrong with a run directory's `models/best`.
#[derive(Debug, thiserror::Error)]
pub enum BestError {
    /// It exists but cannot be read (or is not UTF-8 text).
    #[error("{path}: cannot read the best model's name: {source}")]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// It names a symbolic link under `models/`, which could lead out of the run.
    #[error(
        "{path} names `{name}`, but models/{name} is a symbolic link: a run's best must be a folder of the run (copy the model into models/ instead)"
    )]
    Link {
        /// The file.
        path: PathBuf,
        /// What it says.
        name: String,
    },
    /// It names something that is not a model folder of this run.
    #[error(
        "{path} names `{name}`, which is not a model of this run (expected a folder name under models/, such as gen-0003, or `bootstrap`)"
    )]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What it says.
        name: String,
    },
}

/// Whether `name` can name a model folder directly under `models/`: one plain path
/// component, so that a pointer can never lead outside the run directory.
pub fn is_model_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 200
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// The run's best model name (a folder under `models/`, or `bootstrap`); `None` when
/// the run has none yet. A file that cannot be read or names anything else (`..`, a
/// path, binary noise) is an error naming the file, never a model outside the run.
pub fn current_best(run_dir: &Path) -> Result<Option<String>, BestError> {
    let path = run_dir.join("models").join("best");
    let text = match rundir::read_regular_text(&path, rundir::Limit::SMALL) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(BestError::Unreadable { path, source }),
    };
    let name = text.trim();
    if !is_model_name(name) {
        return Err(BestError::Invalid {
            path,
            name: name.chars().take(80).collect(),
        });
    }
    // A model folder of the run is a folder, not a link: a link could lead the pointer
    // out of the run directory (`models/evil -> /elsewhere/gen-0012`).
    let folder = run_dir.join("models").join(name);
    if std::fs::symlink_metadata(&folder).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(BestError::Link {
            path,
            name: name.to_string(),
        });
    }
    Ok(Some(name.to_string()))
}

/// Makes `name` (a folder under `models/`, or `bootstrap`) the run's best model:
/// `models/best` is replaced atomically, so a reader sees the old or the new name,
/// never a mix, whenever the process is killed.
pub fn promote(run_dir: &Path, name: &str) -> std::io::Result<()> {
    if !is_model_name(name) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("`{name}` is not a model folder name"),
        ));
    }
    let models = run_dir.join("models");
    std::fs::create_dir_all(&models)?;
    selfplay::data::write_atomic(&models.join("best"), format!("{name}\n").as_bytes())
}
