//! A self-play run: its games dealt to worker threads, each of which plays them with the
//! search the settings name (MCTS, [`crate::worker`]; alpha-beta, `crate::alphabeta`),
//! and their reports summed.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

use engine::{Game, State};

use crate::config::{SearchKind, SelfplayConfig};
use crate::data::DataError;
use crate::evaluator::Evaluator;
use crate::worker::{GameSummary, Job, SelfplayError, SelfplayReport};

/// Plays `cfg.games` games and writes their positions as shards in `out`. Worker `k` of
/// `T` plays games `k, k + T, …`; each game's randomness comes from the seed and its
/// number, so a single-threaded run is reproducible byte for byte. `make_evaluator` is
/// called once per worker; `on_game` after every finished game (from worker threads).
pub fn run_selfplay(
    cfg: &SelfplayConfig,
    openings: &[State],
    make_evaluator: &(dyn Fn() -> Box<dyn Evaluator> + Sync),
    out: &Path,
    metadata: &HashMap<String, String>,
    on_game: &(dyn Fn(&GameSummary) + Sync),
) -> Result<SelfplayReport, SelfplayError> {
    run_selfplay_numbered(cfg, 0, openings, make_evaluator, out, metadata, on_game)
}

/// [`run_selfplay`] whose games carry the ids `first_game_id ..` (`first_game_id` + the
/// game's number in this call) in their rows, so that the games of a run's generations
/// or batches have ids unique in the run. The games themselves (openings, seeds) depend
/// on their number in this call only.
pub fn run_selfplay_numbered(
    cfg: &SelfplayConfig,
    first_game_id: u64,
    openings: &[State],
    make_evaluator: &(dyn Fn() -> Box<dyn Evaluator> + Sync),
    out: &Path,
    metadata: &HashMap<String, String>,
    on_game: &(dyn Fn(&GameSummary) + Sync),
) -> Result<SelfplayReport, SelfplayError> {
    cfg.validate()?;
    let game: Game = cfg.game.parse().expect("validated");
    std::fs::create_dir_all(out).map_err(|source| DataError::Io {
        path: out.to_path_buf(),
        source,
    })?;
    let threads = cfg.threads.min(cfg.games as usize).max(1);
    let job = Job {
        cfg,
        first_game_id,
        game,
        openings,
        make_evaluator,
        out,
        metadata,
        on_game,
        threads,
    };
    let job = &job;
    let report = Mutex::new(SelfplayReport::default());
    let first_error: Mutex<Option<SelfplayError>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for worker in 0..threads {
            let report = &report;
            let first_error = &first_error;
            scope.spawn(move || {
                let run = match cfg.search {
                    SearchKind::Mcts => crate::worker::run_worker,
                    SearchKind::AlphaBeta => crate::alphabeta::run_worker,
                };
                let result = run(job, worker);
                match result {
                    Ok(r) => {
                        let mut t = report.lock().expect("report lock");
                        t.games += r.games;
                        t.positions += r.positions;
                        t.plies += r.plies;
                        for i in 0..3 {
                            t.results[i] += r.results[i];
                        }
                        t.resignations += r.resignations;
                        t.eval_calls += r.eval_calls;
                        t.eval_positions += r.eval_positions;
                        t.eval_time += r.eval_time;
                        t.worker_time += r.worker_time;
                        t.files.extend(r.files);
                    }
                    Err(e) => {
                        first_error.lock().expect("error lock").get_or_insert(e);
                    }
                }
            });
        }
    });
    if let Some(e) = first_error.into_inner().expect("error lock") {
        return Err(e);
    }
    let mut r = report.into_inner().expect("report lock");
    r.files.sort();
    Ok(r)
}
