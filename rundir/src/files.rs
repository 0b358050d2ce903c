//! Files: written whole or not at all, read only when they are regular files of a
//! bounded size.
//!
//! The policies (README, "Files flipzero reads and writes"):
//! - **A file of the run directory** is written by [`write_atomic`]: a hidden temporary
//!   file beside it (`.NAME.HOST.PID.tmp`), fsync, rename, fsync of the folder. A reader
//!   sees the old file or the new one, never a mix, however the writer dies.
//! - **An output path named by a user** (`match --pgn`, `gate --json`, `infer
//!   --dump-input`, …) is written by [`write_output`]: a path that does not exist is
//!   created atomically; a regular file this user may write is replaced atomically
//!   (keeping its permissions), and through a symbolic link the file it points to is
//!   replaced, never the link; a FIFO or a character device (`/dev/null`, a terminal) is
//!   written in place as a stream, never created, truncated or replaced; the process's
//!   own standard output or error (`/dev/stdout`, or any path to the same file) is
//!   written through that stream, after what the command printed there; a directory, a
//!   block device, a socket, a link to nothing or a file the user may not write is
//!   refused. An output is checked before the work that makes it ([`check_output`]),
//!   and may not overwrite what the command reads ([`output_overwrites`]).
//! - **A file that is read** (a config, a model's files, a run's records, `models/best`,
//!   a PGN) must be a regular file (after following links) no larger than its
//!   [`Limit`]: a FIFO, a device or a directory is refused at once (it is opened without
//!   waiting for a writer), and `/dev/zero` cannot fill the memory.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The most bytes a read takes from one file: more is an error naming the limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limit(pub u64);

impl Limit {
    /// Pointers and small state: `models/best`, a lease, a counter, a host name.
    pub const SMALL: Limit = Limit(64 << 10);
    /// A config file.
    pub const CONFIG: Limit = Limit(4 << 20);
    /// A JSON record or summary of a run (`eval/*.json`, `summary.json`, `model.json`).
    pub const RECORD: Limit = Limit(256 << 20);
    /// A text file of games or positions (PGN, an openings file), a metrics table.
    pub const TEXT: Limit = Limit(2 << 30);
    /// Network weights, optimizer state, a data shard.
    pub const DATA: Limit = Limit(16 << 30);
}

impl std::fmt::Display for Limit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let b = self.0;
        if b >= 1 << 30 {
            write!(f, "{} GiB", b >> 30)
        } else if b >= 1 << 20 {
            write!(f, "{} MiB", b >> 20)
        } else {
            write!(f, "{} KiB", b >> 10)
        }
    }
}

/// What a file type is, in words ("a FIFO", "a directory").
fn describe(t: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_dir() {
        "a directory"
    } else if t.is_symlink() {
        "a symbolic link"
    } else if t.is_file() {
        "a regular file"
    } else {
        "not a regular file"
    }
}

fn invalid(msg: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidInput, msg)
}

/// Opens `path` for reading if it is a regular file (after following links). A FIFO is
/// opened without waiting for a writer and refused, as are devices and directories: the
/// error says what the path is.
pub fn open_regular(path: &Path) -> std::io::Result<File> {
    open_file(path, true)
}

/// [`open_regular`] for a run's own file (its lock, log or config, which flipzero writes
/// itself): a link there is refused, not followed out of the run.
pub fn open_own(path: &Path) -> std::io::Result<File> {
    open_file(path, false)
}

fn open_file(path: &Path, follow: bool) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Without O_NONBLOCK, opening a FIFO waits for a writer (forever); the flag
        // changes nothing for a regular file's reads.
        let nofollow = if follow { 0 } else { libc::O_NOFOLLOW };
        options.custom_flags(libc::O_NONBLOCK | nofollow);
    }
    #[cfg(not(unix))]
    if !follow && std::fs::symlink_metadata(path)?.file_type().is_symlink() {
        return Err(invalid("is a link, not a regular file".into()));
    }
    let file = options.open(path).map_err(|e| {
        // O_NOFOLLOW on a link fails with ELOOP: say what it is.
        if !follow && std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
            invalid("is a link, not a regular file".into())
        } else {
            e
        }
    })?;
    let t = file.metadata()?.file_type();
    if !t.is_file() {
        return Err(invalid(format!("is {}, not a regular file", describe(t))));
    }
    Ok(file)
}

/// The whole of regular file `path`, at most `limit` bytes (a larger file is an error
/// naming the limit). Keeps the error kind of a failed open (`NotFound`).
pub fn read_regular(path: &Path, limit: Limit) -> std::io::Result<Vec<u8>> {
    read_file(open_regular(path)?, limit)
}

/// [`read_regular`] of a run's own file ([`open_own`]: a link is refused).
pub fn read_own(path: &Path, limit: Limit) -> std::io::Result<Vec<u8>> {
    read_file(open_own(path)?, limit)
}

fn read_file(file: File, limit: Limit) -> std::io::Result<Vec<u8>> {
    let len = file.metadata()?.len();
    let too_large = || {
        invalid(format!(
            "is larger than {limit}, the most flipzero reads of it"
        ))
    };
    if len > limit.0 {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(len as usize);
    // A file may grow while it is read (or report no size, as /proc files do).
    file.take(limit.0 + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit.0 {
        return Err(too_large());
    }
    Ok(bytes)
}

/// [`read_regular`] as UTF-8 text.
pub fn read_regular_text(path: &Path, limit: Limit) -> std::io::Result<String> {
    utf8(read_regular(path, limit)?)
}

/// [`read_own`] as UTF-8 text.
pub fn read_own_text(path: &Path, limit: Limit) -> std::io::Result<String> {
    utf8(read_own(path, limit)?)
}

fn utf8(bytes: Vec<u8>) -> std::io::Result<String> {
    String::from_utf8(bytes).map_err(|e| {
        invalid(format!(
            "is not UTF-8 text (byte {})",
            e.utf8_error().valid_up_to()
        ))
    })
}

/// The temporary name a file is written under before [`commit`]: hidden, beside the
/// final name, unique to the machine and the process (`.NAME.HOST.PID.tmp`), so that a
/// clean-up can tell whose it is on a directory shared between machines.
pub fn temp_path(path: &Path) -> PathBuf {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    dir.join(format!(
        ".{name}.{}.{}.tmp",
        crate::host_name(),
        std::process::id()
    ))
}

/// Publishes a fully written temporary file: fsync it, rename it to `path`, and fsync
/// the directory so that the rename survives a crash. Readers see the old file or the
/// new one, never a mix.
pub fn commit(file: File, tmp: &Path, path: &Path) -> std::io::Result<()> {
    file.sync_all()?;
    drop(file);
    std::fs::rename(tmp, path)?;
    sync_parent(path);
    Ok(())
}

/// Makes a rename in `path`'s folder last (best effort: not every filesystem can).
fn sync_parent(path: &Path) {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Writes `bytes` to `path` atomically: a temporary file beside it, fsync, rename.
/// A write that fails (a full disk) removes its temporary file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomic_with(path, bytes, None)
}

fn write_atomic_with(
    path: &Path,
    bytes: &[u8],
    permissions: Option<std::fs::Permissions>,
) -> std::io::Result<()> {
    let tmp = temp_path(path);
    let written = File::create(&tmp).and_then(|mut f| {
        f.write_all(bytes)?;
        if let Some(p) = permissions {
            f.set_permissions(p)?;
        }
        commit(f, &tmp, path)
    });
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// Publishes a finished folder: renames `partial` to `done` (which must not exist or
/// be empty) and syncs the parent, so that the rename survives a crash. Readers see the
/// folder whole or not at all.
pub fn publish_dir(partial: &Path, done: &Path) -> std::io::Result<()> {
    std::fs::rename(partial, done)?;
    sync_parent(done);
    Ok(())
}

/// Removes folder `path` with everything in it; one that does not exist is fine.
pub fn remove_dir_if_exists(path: &Path) -> std::io::Result<()> {
    match std::fs::remove_dir_all(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// How [`write_output`] wrote its path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OutputKind {
    /// The path did not exist: created atomically.
    Created,
    /// A regular file was replaced atomically: this one (the target of a link).
    Replaced(PathBuf),
    /// Written in place as a stream (a FIFO, a device).
    Streamed,
    /// The path is this process's own standard output or error (`/dev/stdout`, or any
    /// path to the same file): written through that stream, after what it printed.
    Standard,
}

/// Where an output path leads.
enum Target {
    /// Nothing there: create it.
    Create,
    /// A regular file (the end of the links), with its metadata.
    Replace(PathBuf, std::fs::Metadata),
    /// A FIFO or a character device.
    Stream,
    /// This process's standard output (1) or error (2).
    Standard(i32),
}

/// Whether metadata `m` is of the same file as this process's descriptor `fd`.
#[cfg(unix)]
fn is_descriptor(m: &std::fs::Metadata, fd: i32) -> bool {
    use std::os::fd::AsFd;
    use std::os::unix::fs::MetadataExt;
    let handle = match fd {
        1 => std::io::stdout().as_fd().try_clone_to_owned(),
        _ => std::io::stderr().as_fd().try_clone_to_owned(),
    };
    handle
        .ok()
        .and_then(|h| File::from(h).metadata().ok())
        .is_some_and(|d| d.dev() == m.dev() && d.ino() == m.ino())
}

#[cfg(not(unix))]
fn is_descriptor(_: &std::fs::Metadata, _: i32) -> bool {
    false
}

/// What writing `path` would do, by the policy of this module's documentation.
fn classify(path: &Path) -> std::io::Result<Target> {
    if let Ok(m) = std::fs::metadata(path) {
        for fd in [1, 2] {
            if is_descriptor(&m, fd) {
                return Ok(Target::Standard(fd));
            }
        }
    }
    // Follow the links one at a time, so that the file at their end is replaced, never
    // a link, and a link to nothing is refused rather than followed into a new file.
    let mut at = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                let link = std::fs::read_link(&at)?;
                at = match at.parent() {
                    Some(dir) if link.is_relative() => dir.join(link),
                    _ => link,
                };
            }
            Ok(m) => return resolved(&at, m),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && at != path => {
                return Err(invalid(format!(
                    "is a symbolic link to {}, which does not exist; flipzero does not create files through links",
                    at.display()
                )));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Target::Create),
            Err(e) => return Err(e),
        }
    }
    Err(invalid("is a chain of more than 40 symbolic links".into()))
}

/// What writing the file `target` at the end of an output's links would do.
fn resolved(target: &Path, m: std::fs::Metadata) -> std::io::Result<Target> {
    let t = m.file_type();
    if t.is_file() {
        // Replaced only when it could be written in place: a file its user may not write
        // (read-only, or another's) is not swapped for a new one behind their back.
        return match OpenOptions::new().write(true).open(target) {
            Ok(_) => Ok(Target::Replace(target.to_path_buf(), m)),
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => Err(invalid(
                "is a file this user may not write (permission denied); flipzero does not replace it".into(),
            )),
            Err(e) => Err(e),
        };
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() || t.is_char_device() {
            return Ok(Target::Stream);
        }
    }
    Err(invalid(format!(
        "is {}; give the path of a regular file (replaced), a FIFO or a character device (written to)",
        describe(t)
    )))
}

/// Checks, before any work, that [`write_output`] would write `path`: the same refusals,
/// nothing written.
pub fn check_output(path: &Path) -> std::io::Result<()> {
    classify(path).map(drop)
}

/// Whether [`write_output`] would write `path` as a file (create it, or replace the
/// regular file there) rather than as a stream: a command that rewrites its output as
/// it goes does so only then.
pub fn output_is_file(path: &Path) -> std::io::Result<bool> {
    Ok(matches!(
        classify(path)?,
        Target::Create | Target::Replace(..)
    ))
}

/// Writes `bytes` to the output path `path` that a user named, by the policy of this
/// module's documentation: never replacing a link, a device, a FIFO or a file the user
/// may not write.
pub fn write_output(path: &Path, bytes: &[u8]) -> std::io::Result<OutputKind> {
    match classify(path)? {
        Target::Create => {
            write_atomic(path, bytes)?;
            Ok(OutputKind::Created)
        }
        Target::Replace(target, m) => {
            write_atomic_with(&target, bytes, Some(m.permissions()))?;
            Ok(OutputKind::Replaced(target))
        }
        Target::Stream => {
            // No create, no truncate; appended (a character device ignores it).
            let mut f = OpenOptions::new().append(true).open(path)?;
            f.write_all(bytes)?;
            f.flush()?;
            Ok(OutputKind::Streamed)
        }
        Target::Standard(fd) => {
            if fd == 1 {
                let mut out = std::io::stdout().lock();
                out.write_all(bytes)?;
                out.flush()?;
            } else {
                let mut err = std::io::stderr().lock();
                err.write_all(bytes)?;
                err.flush()?;
            }
            Ok(OutputKind::Standard)
        }
    }
}

/// The input among `inputs` (files, or folders whose contents are read) that output
/// path `output` would overwrite: the same file, or a file inside the folder. An output
/// path must never destroy what the command reads (`--pgn` naming the `--openings`
/// file, `--dump-input` into the model).
pub fn output_overwrites(output: &Path, inputs: &[&Path]) -> Option<PathBuf> {
    let name = output.file_name()?;
    let parent = output
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let out = std::fs::canonicalize(parent).ok()?.join(name);
    let out_meta = std::fs::metadata(output).ok();
    for input in inputs {
        let Ok(abs) = std::fs::canonicalize(input) else {
            continue;
        };
        if abs.is_dir() {
            if out.starts_with(&abs) {
                return Some(input.to_path_buf());
            }
        } else if out == abs || out_meta.as_ref().is_some_and(|m| same_file(m, &abs)) {
            return Some(input.to_path_buf());
        }
    }
    None
}

/// Whether metadata `m` is of the file at `path`.
#[cfg(unix)]
fn same_file(m: &std::fs::Metadata, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).is_ok_and(|p| p.dev() == m.dev() && p.ino() == m.ino())
}

#[cfg(not(unix))]
fn same_file(_: &std::fs::Metadata, _: &Path) -> bool {
    false
}

/// Whether `a` and `b` name the same folder (after links); false where either is missing.
pub fn same_folder(a: &Path, b: &Path) -> bool {
    matches!((a.canonicalize(), b.canonicalize()), (Ok(a), Ok(b)) if a == b)
}

/// Why folder `out` may not receive an export of the model folder `model` that writes
/// the files `written`, if it may not. It may when it is new or empty, when it is the
/// model's own folder, and when it holds nothing but an earlier export of the same model
/// (the export's files and their temporary files, every one the model also has the same
/// byte for byte). Anything else — a file that is not the export's (a run directory,
/// notes), another model's file of the same name, a file that is not a folder — is
/// refused: an export never replaces what it did not write.
pub fn export_refusal(model: &Path, out: &Path, written: &[&str]) -> Option<String> {
    if std::fs::symlink_metadata(out).is_err() {
        return None;
    }
    if !out.is_dir() {
        return Some(format!(
            "{}: is not a folder (--out names the folder the export is written into)",
            out.display()
        ));
    }
    if same_folder(model, out) {
        return None;
    }
    let refuse = |why: String| {
        Some(format!(
            "{}: {why}: an export goes into a new or empty folder, the model's own, or an \
             earlier export of the same model, never over anything else",
            out.display()
        ))
    };
    let entries = match std::fs::read_dir(out) {
        Ok(e) => e,
        Err(e) => return refuse(format!("cannot be read ({e})")),
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let temporary = name.starts_with('.') && name.ends_with(".tmp")
            || name.starts_with("model.") && name.ends_with(".tmp");
        if !written.contains(&name.as_str()) && !temporary {
            return refuse(format!("holds `{name}`, which this export does not write"));
        }
    }
    for name in written {
        let (theirs, ours) = (out.join(name), model.join(name));
        if std::fs::symlink_metadata(&theirs).is_err() || std::fs::symlink_metadata(&ours).is_err()
        {
            continue;
        }
        let equal = match (std::fs::metadata(&theirs), std::fs::metadata(&ours)) {
            (Ok(a), Ok(b)) if a.is_file() && b.is_file() && a.len() == b.len() => {
                let read = |p: &Path| read_regular(p, Limit::DATA).ok();
                matches!((read(&theirs), read(&ours)), (Some(a), Some(b)) if a == b)
            }
            _ => false,
        };
        if !equal {
            return refuse(format!("holds another model (its `{name}` differs)"));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("rundir-files-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn reads_refuse_what_is_not_a_bounded_regular_file() {
        let d = temp("reads");
        let f = d.join("a.txt");
        std::fs::write(&f, "hello").unwrap();
        assert_eq!(read_regular_text(&f, Limit(5)).unwrap(), "hello");
        let e = read_regular(&f, Limit(4)).unwrap_err().to_string();
        assert!(e.contains("larger than"), "{e}");
        let e = read_regular(&d, Limit::SMALL).unwrap_err().to_string();
        assert!(e.contains("is a directory"), "{e}");
        let e = read_regular(Path::new("/dev/zero"), Limit::SMALL)
            .unwrap_err()
            .to_string();
        assert!(e.contains("character device"), "{e}");
        let missing = read_regular(&d.join("nope"), Limit::SMALL).unwrap_err();
        assert_eq!(missing.kind(), std::io::ErrorKind::NotFound);
        let fifo = d.join("fifo");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        let e = read_regular(&fifo, Limit::SMALL).unwrap_err().to_string();
        assert!(e.contains("FIFO"), "{e}");
        let e = read_own(&fifo, Limit::SMALL).unwrap_err().to_string();
        assert!(e.contains("FIFO"), "{e}");
        // A run's own file is read where it is: a link is refused, not followed.
        let link = d.join("link");
        std::os::unix::fs::symlink(&f, &link).unwrap();
        assert_eq!(read_regular_text(&link, Limit::SMALL).unwrap(), "hello");
        let e = read_own_text(&link, Limit::SMALL).unwrap_err().to_string();
        assert!(e.contains("is a link"), "{e}");
        assert_eq!(read_own_text(&f, Limit::SMALL).unwrap(), "hello");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn outputs_replace_regular_files_through_links_and_keep_the_links() {
        let d = temp("outputs");
        let new = d.join("new.pgn");
        assert_eq!(write_output(&new, b"1").unwrap(), OutputKind::Created);
        assert_eq!(std::fs::read(&new).unwrap(), b"1");
        assert_eq!(
            write_output(&new, b"2").unwrap(),
            OutputKind::Replaced(new.clone())
        );
        let link = d.join("link.pgn");
        std::os::unix::fs::symlink("new.pgn", &link).unwrap();
        assert_eq!(
            write_output(&link, b"3").unwrap(),
            OutputKind::Replaced(d.join("new.pgn"))
        );
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read(&new).unwrap(), b"3");
        let dangling = d.join("dangling.pgn");
        std::os::unix::fs::symlink("nowhere/x.pgn", &dangling).unwrap();
        let e = write_output(&dangling, b"4").unwrap_err().to_string();
        assert!(e.contains("does not exist"), "{e}");
        assert!(!d.join("nowhere").exists());
        let e = write_output(&d, b"5").unwrap_err().to_string();
        assert!(e.contains("is a directory"), "{e}");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn outputs_never_overwrite_an_input() {
        let d = temp("inputs");
        let openings = d.join("openings.txt");
        std::fs::write(&openings, "x").unwrap();
        let model = d.join("model");
        std::fs::create_dir_all(&model).unwrap();
        let link = d.join("link.txt");
        std::os::unix::fs::symlink("openings.txt", &link).unwrap();
        let inputs = [openings.as_path(), model.as_path()];
        assert_eq!(
            output_overwrites(&openings, &inputs),
            Some(openings.clone())
        );
        assert_eq!(output_overwrites(&link, &inputs), Some(openings.clone()));
        assert_eq!(
            output_overwrites(&model.join("model.bpk"), &inputs),
            Some(model.clone())
        );
        assert_eq!(output_overwrites(&d.join("games.pgn"), &inputs), None);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn outputs_stream_into_devices_and_through_links_into_dev() {
        let d = temp("streams");
        // (Standard when the test's own output goes to /dev/null.)
        let streamed = |k: OutputKind| matches!(k, OutputKind::Streamed | OutputKind::Standard);
        assert!(streamed(
            write_output(Path::new("/dev/null"), b"x").unwrap()
        ));
        let sink = d.join("sink");
        std::os::unix::fs::symlink("/dev/null", &sink).unwrap();
        assert!(streamed(write_output(&sink, b"x").unwrap()));
        assert!(
            std::fs::symlink_metadata(&sink)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        let _ = std::fs::remove_dir_all(&d);
    }
}
