//! `flipzero worker selfplay`: plays batches of games with the run's current best
//! network and publishes each as one folder `selfplay/w-HOST-PID-nK-SEQ/` (K: a worker
//! number unique in the run, drawn from its counter at the worker's start, so that a
//! restarted worker with the same host and PID never reuses a name).
//!
//! A batch is played into a hidden folder `.w-HOST-PID-nK-SEQ.games/`, one Parquet file
//! per finished game (local game ids `0..n`). When the batch is done, its games are
//! merged into shards of `selfplay.rows_per_shard` rows with run-wide game ids
//! (reserved from the run's counter), written into the hidden `.w-HOST-PID-nK-SEQ.partial/`
//! with a `summary.json`, and published by renaming that folder. SIGTERM or SIGINT during
//! a batch publishes the games finished so far the same way (games still being played
//! are dropped) and exits 0; readers never see a folder that is not whole.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::error::Context;
use crate::report::write_record;
use eval::BOOTSTRAP_BEST;

use super::common::{RoleOptions, open_run, role, run_finished};
use super::shards::{
    BATCH_PREFIX, BatchName, BatchSummary, remove_dead_partials, reserve_game_ids,
    reserve_worker_number,
};
use crate::observer::{Observer, Task};
use crate::stages::{Pipeline, publish, remove_dir};

/// Runs a self-play worker until the run is finished, `batches` batches are published,
/// or its stop flag is set (then the games finished so far are published and the
/// process ends with status 0).
pub fn selfplay_worker(
    a: &RoleOptions,
    batches: Option<u64>,
    observer: &dyn Observer,
) -> crate::Result<()> {
    role(a, "self-play worker", || run(a, batches, observer))
}

fn run(a: &RoleOptions, batches: Option<u64>, observer: &dyn Observer) -> crate::Result<()> {
    let open = open_run(a, "self-play worker", observer)?;
    let p = &open.pipeline;
    let stop = a.stop.clone();
    for d in remove_dead_partials(&p.run) {
        p.log(&format!("removed {}, left by a killed worker", d.display()));
    }
    for sub in [p.run.selfplay(), p.run.counters()] {
        for f in rundir::remove_stale_temps(&sub) {
            p.log(&format!("removed {}, left by a killed write", f.display()));
        }
    }
    let worker = BatchName::worker(
        rundir::host_name(),
        std::process::id(),
        reserve_worker_number(p)?,
    );
    let mut seq = 0u64;
    loop {
        if stop.load(Ordering::Relaxed) {
            p.log(&format!("self-play worker {worker}: stopped by a signal"));
            break;
        }
        if batches.is_some_and(|n| seq >= n) {
            break;
        }
        if run_finished(&p.cfg, &p.run)? {
            p.log(&format!(
                "self-play worker {worker}: the run is finished, stopping"
            ));
            break;
        }
        play_batch(p, &worker, seq, &stop)?;
        seq += 1;
    }
    Ok(())
}

/// What the games of a batch finished so far add up to, and who publishes the batch.
#[derive(Default)]
struct Progress {
    /// The signal watcher took the batch over: no more games may be recorded.
    stopped: bool,
    /// The batch ended normally: the main thread publishes it.
    done: bool,
    games: u64,
    results: [u64; 3],
}

/// A batch being played: its names and what its summary needs.
struct BatchJob<'a> {
    p: &'a Pipeline<'a>,
    worker: String,
    seq: u64,
    name: String,
    model: String,
    first: u64,
    reserved: u64,
    raw: PathBuf,
    partial: PathBuf,
    done: PathBuf,
    metadata: std::collections::HashMap<String, String>,
    start: Instant,
    /// The batch's lock (`.NAME.lock`), held until the batch is published.
    _owner: rundir::FileLock,
}

fn play_batch(p: &Pipeline, worker: &str, seq: u64, stop: &Arc<AtomicBool>) -> crate::Result<()> {
    let name = format!("{BATCH_PREFIX}{worker}-{seq:06}");
    let sp = p.run.selfplay();
    std::fs::create_dir_all(&sp).with_context(|| format!("cannot create {}", sp.display()))?;
    // Held while the batch is written: what tells other workers of this machine (of any
    // PID namespace) that it is alive. Taken before its folders exist.
    let owner = rundir::lock_file(&p.run.batch_hidden(&name, "lock"))
        .with_context(|| format!("cannot lock the batch {name}"))?;
    let raw = p.run.batch_hidden(&name, "games");
    let partial = p.run.batch_hidden(&name, "partial");
    remove_dir(&raw)?;
    remove_dir(&partial)?;
    let n = p.cfg.selfplay.games_per_worker_batch;
    let first = reserve_game_ids(p, n)?;
    let model = p.loadable_best()?;
    let mut cfg = p.cfg.selfplay_for(&model);
    cfg.games = n;
    // One file per finished game, so that a stop can publish exactly the finished ones.
    cfg.rows_per_shard = 1;
    cfg.seed = engine::splitmix64(p.cfg.selfplay.seed ^ engine::splitmix64(first).1).1;
    let make = crate::inputs::selfplay_evaluators(
        (model != BOOTSTRAP_BEST)
            .then(|| p.run.model(&model))
            .as_deref(),
        p.game,
        &cfg,
        selfplay::BuiltinEvaluator::Bootstrap,
    )?;
    let (openings, mut metadata) = crate::inputs::selfplay_inputs(&p.cfg.selfplay, p.game)?;
    metadata.insert("flipzero.worker_batch".to_string(), name.clone());
    p.log(&format!(
        "{name}: self-play, {n} games with {model} ({}), game ids {first}..{}",
        cfg.effort(),
        first + n
    ));
    let done = p.run.batch(&name);
    let job = BatchJob {
        p,
        worker: worker.to_string(),
        seq,
        name,
        model,
        first,
        reserved: n,
        raw,
        partial,
        done,
        metadata,
        start: Instant::now(),
        _owner: owner,
    };
    let progress = Mutex::new(Progress::default());
    let b = p.observer.task(Task::Selfplay, n);
    let result = std::thread::scope(|scope| {
        // The signal watcher: takes the batch over when a signal comes before it ends.
        let watcher = scope.spawn(|| {
            loop {
                std::thread::sleep(Duration::from_millis(50));
                let mut s = progress.lock().expect("progress");
                if s.done {
                    return;
                }
                if stop.load(Ordering::Relaxed) {
                    s.stopped = true;
                    let (games, results) = (s.games, s.results);
                    drop(s);
                    stop_mid_batch(&job, games, results);
                }
            }
        });
        let r = selfplay::run_selfplay_numbered(
            &cfg,
            job.first,
            &openings,
            &make,
            &job.raw,
            &job.metadata,
            &|g| {
                let mut s = progress.lock().expect("progress");
                if s.stopped {
                    // The batch is being published without this game: hold this thread
                    // until the process exits.
                    drop(s);
                    loop {
                        std::thread::park();
                    }
                }
                s.games += 1;
                s.results[match g.winner {
                    Some(engine::Side::X) => 0,
                    Some(engine::Side::O) => 1,
                    None => 2,
                }] += 1;
                b.advance(1);
            },
        );
        let mut s = progress.lock().expect("progress");
        if s.stopped {
            drop(s);
            loop {
                std::thread::park();
            }
        }
        s.done = true;
        drop(s);
        let _ = watcher.join();
        r
    });
    b.finish();
    let report = result?;
    publish_batch(&job, report.results, false)?;
    Ok(())
}

/// After a signal during a batch: waits (briefly) for the finished games' files, publishes
/// them, and ends the process with status 0.
fn stop_mid_batch(job: &BatchJob, games: u64, results: [u64; 3]) -> ! {
    let until = Instant::now() + Duration::from_secs(10);
    while game_files(&job.raw).len() < games as usize && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    let code = match publish_batch(job, results, true) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!(
                "error: {}: cannot publish the finished games: {}",
                job.name,
                e.chain()
            );
            1
        }
    };
    job.p.log(&format!(
        "self-play worker {}: stopped by a signal during {}",
        job.worker, job.name
    ));
    std::process::exit(code);
}

/// The finished games' files of a batch, in name order.
fn game_files(raw: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(raw)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.extension().is_some_and(|x| x == "parquet")
                        && !p
                            .file_name()
                            .is_some_and(|n| n.to_string_lossy().starts_with('.'))
                })
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// Merges the batch's finished games into shards with run-wide game ids, writes its
/// summary, and publishes the batch folder with one rename. A batch with no finished
/// game publishes nothing.
fn publish_batch(job: &BatchJob, results: [u64; 3], stopped_early: bool) -> crate::Result<()> {
    let p = job.p;
    let mut rows = vec![];
    for f in game_files(&job.raw) {
        // The games' rows carry their run-wide ids already.
        rows.extend(selfplay::read_shard(&f)?.0);
    }
    if rows.is_empty() {
        remove_dir(&job.raw)?;
        let _ = std::fs::remove_file(job.p.run.batch_hidden(&job.name, "lock"));
        return Ok(());
    }
    let mut ids: Vec<u64> = rows.iter().map(|r| r.game_id).collect();
    ids.dedup();
    ids.sort_unstable();
    ids.dedup();
    std::fs::create_dir_all(&job.partial)
        .with_context(|| format!("cannot create {}", job.partial.display()))?;
    for (i, chunk) in rows.chunks(p.cfg.selfplay.rows_per_shard).enumerate() {
        selfplay::write_shard(
            &job.partial.join(format!("part-{i:04}.parquet")),
            chunk,
            &job.metadata,
        )?;
    }
    let summary = BatchSummary {
        worker: job.worker.clone(),
        seq: job.seq,
        model: job.model.clone(),
        games: ids.len() as u64,
        positions: rows.len() as u64,
        first_game_id: job.first,
        games_reserved: job.reserved,
        results,
        seconds: job.start.elapsed().as_secs_f64(),
        published: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        stopped_early,
    };
    write_record(&job.partial.join(rundir::SUMMARY), &summary)?;
    publish(&job.partial, &job.done)?;
    remove_dir(&job.raw)?;
    let _ = std::fs::remove_file(job.p.run.batch_hidden(&job.name, "lock"));
    p.log(&format!(
        "{}: published {} games, {} positions, {:.0} positions/s{}",
        job.name,
        summary.games,
        summary.positions,
        summary.positions as f64 / summary.seconds.max(1e-9),
        if stopped_early {
            " (stopped early: the games in play were dropped)"
        } else {
            ""
        }
    ));
    Ok(())
}
