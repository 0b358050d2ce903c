//! The self-play batches of a run played by separate workers: their folders under
//! `selfplay/`, their summaries, and the run-wide game-id counter.

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::{Deserialize, Serialize};

/// The prefix of a published batch folder: `selfplay/w-HOST-PID-SEQ`.
pub const BATCH_PREFIX: &str = "w-";

/// What a published batch holds (`summary.json` in its folder).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BatchSummary {
    /// The worker: `HOST-PID`.
    pub worker: String,
    /// The batch's number in that worker.
    pub seq: u64,
    /// The network that played (`bootstrap` or a generation name).
    pub model: String,
    /// Games in the batch.
    pub games: u64,
    /// Positions (rows) in its shards.
    pub positions: u64,
    /// The run-wide id of its first game; its games have ids `first_game_id ..
    /// first_game_id + games_reserved`, the finished ones a subset of them.
    pub first_game_id: u64,
    /// Ids reserved for the batch.
    pub games_reserved: u64,
    /// Wins of X, wins of O, draws.
    pub results: [u64; 3],
    /// Wall-clock seconds of play.
    pub seconds: f64,
    /// Unix time (seconds) of publication.
    pub published: u64,
    /// Whether the worker was stopped during the batch (only finished games are in it).
    pub stopped_early: bool,
}

/// A published batch.
#[derive(Clone, Debug)]
pub struct Batch {
    /// Its folder.
    pub dir: PathBuf,
    /// Its summary.
    pub summary: BatchSummary,
}

/// The run's published batches, oldest first (by publication time, then name). Hidden
/// folders (`.w-….partial`, batches being written) are not batches.
pub fn list_batches(run: &Path) -> anyhow::Result<Vec<Batch>> {
    let dir = run.join("selfplay");
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
        Err(e) => return Err(e).with_context(|| format!("cannot list {}", dir.display())),
    };
    let mut out = vec![];
    for e in entries {
        let e = e.with_context(|| format!("cannot list {}", dir.display()))?;
        let name = e.file_name().to_string_lossy().to_string();
        if !name.starts_with(BATCH_PREFIX) {
            continue;
        }
        let path = e.path().join("summary.json");
        // A batch folder is published whole (its summary written before the rename), so
        // one without a summary is not a batch of this program: skipped.
        if let Some(summary) = eval::report::read_record::<BatchSummary>(&path)? {
            out.push(Batch {
                dir: e.path(),
                summary,
            });
        }
    }
    out.sort_by(|a, b| (a.summary.published, &a.dir).cmp(&(b.summary.published, &b.dir)));
    Ok(out)
}

/// The newest batches holding at least `window` positions (all of them when fewer),
/// oldest first: the folders a training window of that size reads.
pub fn window_batches(batches: &[Batch], window: usize) -> Vec<PathBuf> {
    let mut rows = 0u64;
    let mut out = vec![];
    for b in batches.iter().rev() {
        if rows >= window as u64 {
            break;
        }
        rows += b.summary.positions;
        out.push(b.dir.clone());
    }
    out.reverse();
    out
}

/// Reserves `n` game ids unique in the whole run: the counter `counters/next-game-id`,
/// read and advanced under its lock.
pub fn reserve_game_ids(run: &Path, n: u64) -> anyhow::Result<u64> {
    let path = run.join("counters").join("next-game-id");
    super::with_file_lock(&run.join("counters").join("next-game-id.lock"), || {
        let first = match std::fs::read_to_string(&path) {
            Ok(t) => t
                .trim()
                .parse::<u64>()
                .with_context(|| format!("{}: not a game id ({:?})", path.display(), t.trim()))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => 0,
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        let next = first
            .checked_add(n)
            .with_context(|| format!("{}: game ids exhausted", path.display()))?;
        eval::write_atomic(&path, format!("{next}\n").as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))?;
        Ok(first)
    })
}

/// Removes what workers of this machine that are gone left under `selfplay/`: their
/// hidden `.w-HOST-PID-SEQ.partial` and `.w-HOST-PID-SEQ.games` folders. Returns them.
pub fn remove_dead_partials(run: &Path) -> Vec<PathBuf> {
    let dir = run.join("selfplay");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return vec![];
    };
    let prefix = format!(".{BATCH_PREFIX}{}-", selfplay::data::host_name());
    let mut removed = vec![];
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let Some(rest) = name.strip_prefix(&prefix) else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        let alive = pid == std::process::id()
            || !Path::new("/proc/self").exists()
            || Path::new("/proc").join(pid.to_string()).exists();
        if !alive && std::fs::remove_dir_all(e.path()).is_ok() {
            removed.push(e.path());
        }
    }
    removed
}
