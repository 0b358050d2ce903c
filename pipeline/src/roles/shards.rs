//! The self-play batches of a run played by separate workers: their folders under
//! `selfplay/`, their summaries, and the run-wide game-id counter.

use std::path::{Path, PathBuf};

use rundir::RunDir;

use crate::error::Context;
use serde::{Deserialize, Serialize};

/// The prefix of a published batch folder: `selfplay/w-HOST-PID-nK-SEQ`.
pub const BATCH_PREFIX: &str = "w-";

/// What a published batch holds (`summary.json` in its folder).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BatchSummary {
    /// The worker: `HOST-PID-nK` (`HOST-PID` in runs of older versions).
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
///
/// A batch whose summary cannot be read or disagrees with its shards (a truncated or
/// edited `summary.json`, a count that the shards do not hold) is left out of the run's
/// data, with a warning once per index (for the caller's log), and the run goes on with
/// the rest: one corrupt batch never stalls a role.
#[derive(Debug, Default)]
pub struct BatchIndex {
    known: std::collections::HashMap<PathBuf, BatchSummary>,
    /// Batches left out, with why.
    bad: std::collections::HashMap<PathBuf, String>,
    /// Warnings not yet taken ([`BatchIndex::take_warnings`]).
    warnings: Vec<String>,
}

impl BatchIndex {
    /// The warnings of the refreshes since the last call: batches left out, with why.
    pub fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }

    /// The batches published now, oldest first; a folder that has gone is dropped.
    pub fn refresh(&mut self, run: &RunDir) -> crate::Result<Vec<Batch>> {
        let dir = run.selfplay();
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
                None if self.bad.contains_key(&folder) => continue,
                None => match read_batch(&folder) {
                    Ok(Some(s)) => s,
                    // A batch folder is published whole (its summary written before the
                    // rename), so one without a summary is not a batch of this program:
                    // skipped.
                    Ok(None) => continue,
                    Err(why) => {
                        self.warnings.push(format!(
                            "self-play batch {} left out of the run's data: {why}",
                            folder.display()
                        ));
                        self.bad.insert(folder, why);
                        continue;
                    }
                },
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

/// A published batch's summary, checked against its shards: its positions must be the
/// rows its shards hold, its games no more than it reserved ids for. `None`: no summary.
fn read_batch(folder: &Path) -> Result<Option<BatchSummary>, String> {
    let summary = match crate::report::read_record::<BatchSummary>(&folder.join(rundir::SUMMARY)) {
        Ok(Some(s)) => s,
        Ok(None) => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    let mut rows = 0u64;
    for shard in selfplay::shard_files(folder).map_err(|e| e.to_string())? {
        rows = rows.saturating_add(selfplay::data::shard_rows(&shard).map_err(|e| e.to_string())?);
    }
    if rows != summary.positions {
        return Err(format!(
            "summary.json says {} positions, its shards hold {rows}",
            summary.positions
        ));
    }
    if summary.games > summary.games_reserved
        || summary.games > rows
        || (summary.games == 0 && rows > 0)
    {
        return Err(format!(
            "summary.json says {} games, which {rows} positions and {} reserved ids cannot hold",
            summary.games, summary.games_reserved
        ));
    }
    Ok(Some(summary))
}

/// The folders of a run's published self-play, oldest first: the synchronous loop's
/// generations (`selfplay/gen-NNNN` with their summary, by number), then the workers'
/// batches (as [`BatchIndex::refresh`] orders them). Folders being written are left
/// out; batches that cannot be read come back as warnings, as the trainer's are.
pub fn published_selfplay(run: &RunDir) -> crate::Result<(Vec<PathBuf>, Vec<String>)> {
    let mut generations: Vec<u32> = match std::fs::read_dir(run.selfplay()) {
        Ok(entries) => entries
            .flatten()
            .filter_map(|e| rundir::parse_generation(&e.file_name().to_string_lossy()))
            .filter(|&g| run.selfplay_summary(g).is_file())
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => {
            return Err(e).with_context(|| format!("cannot list {}", run.selfplay().display()));
        }
    };
    generations.sort_unstable();
    let mut folders: Vec<PathBuf> = generations
        .into_iter()
        .map(|g| run.selfplay_generation(g))
        .collect();
    let mut index = BatchIndex::default();
    folders.extend(index.refresh(run)?.into_iter().map(|b| b.dir));
    Ok((folders, index.take_warnings()))
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
        rows = rows.saturating_add(b.summary.positions);
        out.push(b.dir.clone());
    }
    out.reverse();
    out
}

/// Reserves `n` game ids unique in the whole run: the counter `counters/next-game-id`,
/// read and advanced under its lock. A counter that is not a number (a corrupt file) is
/// rebuilt from what the run's published games used, with a warning in `run.log`.
pub fn reserve_game_ids(p: &crate::stages::Pipeline, n: u64) -> crate::Result<u64> {
    reserve(p, "next-game-id", n, || used_game_ids(&p.run))
}

/// Reserves a worker number unique in the whole run (`counters/next-worker`): the part
/// of a worker's name that tells apart two workers of the same host and PID (a restarted
/// container's PID 1), so that their batches never share a name.
pub(super) fn reserve_worker_number(p: &crate::stages::Pipeline) -> crate::Result<u64> {
    reserve(p, "next-worker", 1, || used_worker_numbers(&p.run))
}

/// Advances counter `counters/NAME` by `n`; returns its old value.
fn reserve(
    p: &crate::stages::Pipeline,
    name: &str,
    n: u64,
    recover: impl FnOnce() -> u64,
) -> crate::Result<u64> {
    let (first, recovered) = p.run.reserve(name, n, recover)?;
    if let Some(r) = recovered {
        p.warn(&format!(
            "{} is not a number ({:?}); continuing from {}, past every id the run's published batches used",
            p.run.counter(name).display(),
            r.found,
            r.from
        ));
    }
    Ok(first)
}

/// One past the largest game id that the run's published self-play (the generations of
/// `flipzero run` and the workers' batches) says it used; 0 in a new run.
fn used_game_ids(run: &RunDir) -> u64 {
    let Ok(entries) = std::fs::read_dir(run.selfplay()) else {
        return 0;
    };
    let mut next = 0u64;
    for e in entries.flatten() {
        let summary = e.path().join(rundir::SUMMARY);
        if let Ok(Some(b)) = crate::report::read_record::<BatchSummary>(&summary) {
            next = next.max(b.first_game_id.saturating_add(b.games_reserved));
        } else if let Ok(Some(g)) =
            crate::report::read_record::<crate::report::SelfplaySummary>(&summary)
            && let Some(first) = g.first_game_id
        {
            next = next.max(first.saturating_add(g.games));
        }
    }
    next
}

/// One past the largest worker number in the names of the run's batch folders
/// (published or not); 0 in a new run.
fn used_worker_numbers(run: &RunDir) -> u64 {
    std::fs::read_dir(run.selfplay())
        .map(|d| {
            d.flatten()
                .filter_map(|e| BatchName::parse(&e.file_name().to_string_lossy()))
                .map(|b| b.number + 1)
                .max()
                .unwrap_or(0)
        })
        .unwrap_or(0)
}

/// The parts of a batch folder's name `[.]w-HOST-PID-nK-SEQ[.partial|.games]`: the
/// worker's host, its PID and the worker number `K` that the run's counter gave it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchName {
    /// The host (which may hold `-`: the name is read from the right).
    pub host: String,
    /// The worker's PID on that host.
    pub pid: u32,
    /// Its worker number in the run.
    pub number: u64,
    /// The batch's number in that worker.
    pub seq: u64,
}

impl BatchName {
    /// The worker's part of the name: `HOST-PID-nK`.
    pub fn worker(host: &str, pid: u32, number: u64) -> String {
        format!("{host}-{pid}-n{number}")
    }

    /// Parses a batch folder's name, hidden or not, with or without its `.partial`,
    /// `.games` or `.lock` suffix; `None` for any other name (batches of older versions
    /// included).
    pub fn parse(name: &str) -> Option<BatchName> {
        let name = name.strip_prefix('.').unwrap_or(name);
        let name = name
            .strip_suffix(".partial")
            .or_else(|| name.strip_suffix(".games"))
            .or_else(|| name.strip_suffix(".lock"))
            .unwrap_or(name);
        let rest = name.strip_prefix(BATCH_PREFIX)?;
        let mut parts = rest.rsplitn(4, '-');
        let seq = parts.next()?.parse().ok()?;
        let number = parts.next()?.strip_prefix('n')?.parse().ok()?;
        let pid = parts.next()?.parse().ok()?;
        let host = parts.next().filter(|h| !h.is_empty())?.to_string();
        Some(BatchName {
            host,
            pid,
            number,
            seq,
        })
    }
}

/// Removes what workers of this machine that are gone left under `selfplay/`: their
/// hidden `.w-HOST-PID-nK-SEQ.partial` and `.games` folders and `.lock` files, where
/// HOST is exactly this machine's name (a host named like this one plus a suffix is
/// another machine). A worker holds its batch's lock file for as long as it writes the
/// batch, so a batch whose lock can be taken is a dead worker's, whatever PIDs say (a
/// worker in another PID namespace, PID 1 of a restarted container). Returns them.
pub fn remove_dead_partials(run: &RunDir) -> Vec<PathBuf> {
    let dir = run.selfplay();
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return vec![];
    };
    let mut names = std::collections::BTreeSet::new();
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if !name.starts_with('.') {
            continue;
        }
        let Some(b) = BatchName::parse(name.strip_suffix(".lock").unwrap_or(&name)) else {
            continue;
        };
        if b.host == rundir::host_name() {
            names.insert(batch_name(&b));
        }
    }
    let mut removed = vec![];
    for name in names {
        let lock = run.batch_hidden(&name, "lock");
        let Ok(Some(_held)) = rundir::try_lock_file(&lock) else {
            continue;
        };
        for suffix in ["games", "partial"] {
            let d = run.batch_hidden(&name, suffix);
            if d.exists() && std::fs::remove_dir_all(&d).is_ok() {
                removed.push(d);
            }
        }
        let _ = std::fs::remove_file(&lock);
    }
    removed
}

/// The folder name `w-HOST-PID-nK-SEQ` of a batch.
pub fn batch_name(b: &BatchName) -> String {
    format!(
        "{BATCH_PREFIX}{}-{:06}",
        BatchName::worker(&b.host, b.pid, b.number),
        b.seq
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn publish(run: &Path, name: &str, positions: u64, published: u64) {
        let dir = run.join("selfplay").join(name);
        std::fs::create_dir_all(&dir).unwrap();
        let rows = vec![selfplay::Sample::default(); positions as usize];
        selfplay::write_shard(&dir.join("part-0000.parquet"), &rows, &Default::default()).unwrap();
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
    fn batch_names_are_read_from_the_right_so_hosts_may_hold_dashes() {
        let b = BatchName::parse(".w-vm-99999-12-n3-000007.partial").unwrap();
        assert_eq!(
            b,
            BatchName {
                host: "vm-99999".into(),
                pid: 12,
                number: 3,
                seq: 7
            }
        );
        assert_eq!(BatchName::parse("w-vm-1-n0-000000").unwrap().host, "vm");
        // Older names (no worker number) and anything else are not parsed.
        for other in [
            "w-vm-1-000000",
            ".w-vm-1-000000.partial",
            "gen-0001",
            "w--1-n0-0",
        ] {
            assert_eq!(BatchName::parse(other), None, "{other}");
        }
    }

    #[test]
    fn a_polling_index_reads_each_summary_once_and_drops_removed_batches() {
        let run = std::env::temp_dir().join(format!("flipzero-index-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&run);
        publish(&run, "w-h-1-0", 10, 5);
        publish(&run, "w-h-1-1", 20, 3);
        std::fs::create_dir_all(run.join("selfplay/.w-h-1-2.partial")).unwrap();
        let mut index = BatchIndex::default();
        let first = index.refresh(&RunDir::new(&run)).unwrap();
        let names: Vec<_> = first.iter().map(|b| b.summary.positions).collect();
        assert_eq!(
            names,
            [20, 10],
            "oldest publication first, partial folder skipped"
        );
        // A known batch is not read again: its summary gone, it is still listed as read.
        std::fs::remove_file(run.join("selfplay/w-h-1-0/summary.json")).unwrap();
        publish(&run, "w-h-1-3", 30, 9);
        let second = index.refresh(&RunDir::new(&run)).unwrap();
        let names: Vec<_> = second.iter().map(|b| b.summary.positions).collect();
        assert_eq!(names, [20, 10, 30]);
        // A fresh index reads every summary: the one without a summary is not a batch.
        let fresh = BatchIndex::default().refresh(&RunDir::new(&run)).unwrap();
        assert_eq!(fresh.len(), 2);
        // A summary that is cut short, or claims more positions than its shards hold,
        // leaves that batch out (with a warning) and never the others.
        publish(&run, "w-h-1-4", 40, 10);
        std::fs::write(
            run.join("selfplay/w-h-1-4/summary.json"),
            "{\"worker\": \"h",
        )
        .unwrap();
        publish(&run, "w-h-1-5", 50, 11);
        let text = std::fs::read_to_string(run.join("selfplay/w-h-1-5/summary.json")).unwrap();
        std::fs::write(
            run.join("selfplay/w-h-1-5/summary.json"),
            text.replace("\"positions\":50", "\"positions\":18446744073709551615"),
        )
        .unwrap();
        let names: Vec<_> = BatchIndex::default()
            .refresh(&RunDir::new(&run))
            .unwrap()
            .iter()
            .map(|b| b.summary.positions)
            .collect();
        // (w-h-1-0 lost its summary above: a fresh index does not count it.)
        assert_eq!(names, [20, 30]);
        for gone in ["w-h-1-4", "w-h-1-5"] {
            std::fs::remove_dir_all(run.join("selfplay").join(gone)).unwrap();
        }
        // A batch folder that has gone is dropped.
        std::fs::remove_dir_all(run.join("selfplay/w-h-1-1")).unwrap();
        let third = index.refresh(&RunDir::new(&run)).unwrap();
        let names: Vec<_> = third.iter().map(|b| b.summary.positions).collect();
        assert_eq!(names, [10, 30]);
        let _ = std::fs::remove_dir_all(&run);
    }
}
