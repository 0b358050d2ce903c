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

/// The run's published batches as a role that polls sees them, oldest first (by
/// publication time, then name; hidden `.w-….partial` folders, batches being written,
/// are not batches): the folder is listed on every
/// [`BatchIndex::refresh`], but a batch's `summary.json` is read once (a published batch
/// never changes), so a poll costs one directory listing plus the new batches' reads,
/// not a read of every batch of the run (docs/scale.md).
#[derive(Debug, Default)]
pub struct BatchIndex {
    known: std::collections::HashMap<PathBuf, BatchSummary>,
}

impl BatchIndex {
    /// The batches published now, oldest first; a folder that has gone is dropped.
    pub fn refresh(&mut self, run: &Path) -> anyhow::Result<Vec<Batch>> {
        let dir = run.join("selfplay");
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
            Err(e) => return Err(e).with_context(|| format!("cannot list {}", dir.display())),
        };
        let mut out = vec![];
        let mut seen = std::collections::HashMap::new();
        for e in entries {
            let e = e.with_context(|| format!("cannot list {}", dir.display()))?;
            let name = e.file_name().to_string_lossy().to_string();
            if !name.starts_with(BATCH_PREFIX) {
                continue;
            }
            let folder = e.path();
            let summary = match self.known.remove(&folder) {
                Some(s) => s,
                // A batch folder is published whole (its summary written before the
                // rename), so one without a summary is not a batch of this program:
                // skipped.
                None => {
                    match eval::report::read_record::<BatchSummary>(&folder.join("summary.json"))? {
                        Some(s) => s,
                        None => continue,
                    }
                }
            };
            seen.insert(folder.clone(), summary.clone());
            out.push(Batch {
                dir: folder,
                summary,
            });
        }
        self.known = seen;
        out.sort_by(|a, b| (a.summary.published, &a.dir).cmp(&(b.summary.published, &b.dir)));
        Ok(out)
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn publish(run: &Path, name: &str, positions: u64, published: u64) {
        let dir = run.join("selfplay").join(name);
        std::fs::create_dir_all(&dir).unwrap();
        let s = BatchSummary {
            worker: "h-1".into(),
            seq: 0,
            model: "bootstrap".into(),
            games: 1,
            positions,
            first_game_id: 0,
            games_reserved: 1,
            results: [1, 0, 0],
            seconds: 1.0,
            published,
            stopped_early: false,
        };
        std::fs::write(dir.join("summary.json"), serde_json::to_string(&s).unwrap()).unwrap();
    }

    #[test]
    fn a_polling_index_reads_each_summary_once_and_drops_removed_batches() {
        let run = std::env::temp_dir().join(format!("flipzero-index-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&run);
        publish(&run, "w-h-1-0", 10, 5);
        publish(&run, "w-h-1-1", 20, 3);
        std::fs::create_dir_all(run.join("selfplay/.w-h-1-2.partial")).unwrap();
        let mut index = BatchIndex::default();
        let first = index.refresh(&run).unwrap();
        let names: Vec<_> = first.iter().map(|b| b.summary.positions).collect();
        assert_eq!(
            names,
            [20, 10],
            "oldest publication first, partial folder skipped"
        );
        // A known batch is not read again: its summary gone, it is still listed as read.
        std::fs::remove_file(run.join("selfplay/w-h-1-0/summary.json")).unwrap();
        publish(&run, "w-h-1-3", 30, 9);
        let second = index.refresh(&run).unwrap();
        let names: Vec<_> = second.iter().map(|b| b.summary.positions).collect();
        assert_eq!(names, [20, 10, 30]);
        // A fresh index reads every summary: the one without a summary is not a batch.
        let fresh = BatchIndex::default().refresh(&run).unwrap();
        assert_eq!(fresh.len(), 2);
        // A batch folder that has gone is dropped.
        std::fs::remove_dir_all(run.join("selfplay/w-h-1-1")).unwrap();
        let third = index.refresh(&run).unwrap();
        let names: Vec<_> = third.iter().map(|b| b.summary.positions).collect();
        assert_eq!(names, [10, 30]);
        let _ = std::fs::remove_dir_all(&run);
    }
}
