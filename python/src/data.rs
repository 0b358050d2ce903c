//! Self-play data: a run's (or any folder's) Parquet shards, and the training arrays the
//! trainer makes of their rows (planes, policy and value targets), with the board's
//! symmetries as augmentation.

use std::path::{Path, PathBuf};

use engine::{Game, Rng, splitmix64};
use numpy::{PyArray1, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use selfplay::Sample;

use crate::error::refused;
use crate::game::PyGame;

/// The shard files `path` names, oldest first: a shard file itself, a folder of shards,
/// or a run directory (its published self-play: the loop's generations in order, then
/// the workers' batches, as `pipeline::roles::published_selfplay` lists them).
fn files_of(path: &Path) -> PyResult<Vec<PathBuf>> {
    if path.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    let run = rundir::RunDir::new(path);
    let dirs = if run.selfplay().is_dir() {
        pipeline::roles::published_selfplay(&run)
            .map_err(refused)?
            .0
    } else {
        vec![path.to_path_buf()]
    };
    let mut files = Vec::new();
    for d in dirs {
        files.extend(selfplay::data::shard_files(&d).map_err(refused)?);
    }
    Ok(files)
}

/// The shard files of `path` (a shard, a folder of shards or a run directory), oldest
/// first: what `pyarrow.dataset.dataset(files)` or `polars.scan_parquet(files)` read.
#[pyfunction]
pub fn shard_files(path: PathBuf) -> PyResult<Vec<PathBuf>> {
    files_of(&path)
}

/// Training rows read from shards (the newest `max_rows` of them), ready to become the
/// trainer's arrays.
#[pyclass(name = "Shards", module = "flipzero", frozen)]
pub struct PyShards {
    rows: Vec<Sample>,
    game: Game,
    skipped: Vec<String>,
}

#[pymethods]
impl PyShards {
    /// The newest `max_rows` rows of the shards `paths` name (shard files, folders of
    /// shards or run directories, oldest first). Files that cannot be read are skipped
    /// and listed in `skipped`; rows of two games are refused.
    #[new]
    #[pyo3(signature = (*paths, max_rows = 1_000_000))]
    fn new(py: Python<'_>, paths: Vec<PathBuf>, max_rows: usize) -> PyResult<PyShards> {
        let mut files = Vec::new();
        for p in &paths {
            files.extend(files_of(p)?);
        }
        let window = py
            .detach(|| train::data::load_window_from(files.iter().rev().cloned().map(Ok), max_rows))
            .map_err(refused)?;
        let (rows, skipped) = (window.rows, window.skipped);
        let Some(first) = rows.first() else {
            return Err(refused(format!(
                "no rows in {} ({} files{})",
                paths
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                files.len(),
                if skipped.is_empty() {
                    String::new()
                } else {
                    format!("; unreadable: {}", skipped.join("; "))
                }
            )));
        };
        let game: Game = first.variant.parse().map_err(refused)?;
        if let Some(r) = rows.iter().find(|r| r.variant != first.variant) {
            return Err(refused(format!(
                "rows of {} and of {} (game {} ply {}): one game at a time",
                first.variant, r.variant, r.game_id, r.ply
            )));
        }
        Ok(PyShards {
            rows,
            game,
            skipped,
        })
    }

    fn __len__(&self) -> usize {
        self.rows.len()
    }

    /// The rows' game.
    #[getter]
    fn game(&self) -> PyGame {
        PyGame(self.game)
    }

    /// The files that could not be read, with why.
    #[getter]
    fn skipped(&self) -> Vec<String> {
        self.skipped.clone()
    }

    /// The trainer's arrays of rows `indices` (default: all), float32: `inputs`
    /// [N, planes, height, width], `policy` [N, policy_size] (the search's visit
    /// distribution), `legal` [N, policy_size], `policy_weight` [N] (1 for full
    /// searches), `wdl` [N, 3] (the result, one-hot, side to move's view), `score` [N],
    /// `ownership` [N, height, width], `ownership_weight` [N], `reply_policy`
    /// [N, policy_size], `reply_weight` [N]. With `augment`, each row under a board
    /// symmetry drawn from `seed` and its index (the same call gives the same arrays).
    #[pyo3(signature = (indices = None, augment = false, seed = 0))]
    fn arrays<'py>(
        &self,
        py: Python<'py>,
        indices: Option<Vec<usize>>,
        augment: bool,
        seed: u64,
    ) -> PyResult<Bound<'py, PyDict>> {
        let indices = indices.unwrap_or_else(|| (0..self.rows.len()).collect());
        if let Some(&i) = indices.iter().find(|&&i| i >= self.rows.len()) {
            return Err(refused(format!("row {i} of {} rows", self.rows.len())));
        }
        let game = self.game;
        let b = py
            .detach(|| {
                let mut b = train::data::Batch::zeros(game, indices.len());
                for (slot, &i) in indices.iter().enumerate() {
                    let pick = |n: usize| {
                        if augment {
                            Rng::new(splitmix64(seed ^ splitmix64(i as u64).1).1).below(n as u64)
                                as usize
                        } else {
                            0
                        }
                    };
                    train::data::encode_sample(game, &self.rows[i], pick, &mut b, slot)?;
                }
                Ok::<_, train::data::RowError>(b)
            })
            .map_err(refused)?;
        let d = PyDict::new(py);
        macro_rules! put {
            ($name:literal, $a:expr) => {{
                let a = $a;
                let shape = a.shape().to_vec();
                let v = a.into_raw_vec_and_offset().0;
                d.set_item($name, PyArray1::from_vec(py, v).reshape(shape)?)?;
            }};
        }
        put!("inputs", b.inputs);
        put!("policy", b.policy);
        put!("legal", b.legal);
        put!("policy_weight", b.policy_weight);
        put!("wdl", b.wdl);
        put!("score", b.score);
        put!("ownership", b.ownership);
        put!("ownership_weight", b.ownership_weight);
        put!("reply_policy", b.reply_policy);
        put!("reply_weight", b.reply_weight);
        Ok(d)
    }

    /// Row `i` as a dict: `game_id`, `ply`, `position` (text), `played` (policy index),
    /// `root_q`, `result`, `score`, `full_search`, `visits`, `model`, `end_reason`,
    /// `search_cp` (alpha-beta rows' search score; `None` in MCTS rows).
    fn row<'py>(&self, py: Python<'py>, i: usize) -> PyResult<Bound<'py, PyDict>> {
        let r = self
            .rows
            .get(i)
            .ok_or_else(|| refused(format!("row {i} of {} rows", self.rows.len())))?;
        let d = PyDict::new(py);
        d.set_item("game_id", r.game_id)?;
        d.set_item("ply", r.ply)?;
        d.set_item("position", &r.fen)?;
        d.set_item("played", r.played)?;
        d.set_item("root_q", r.root_q)?;
        d.set_item("result", r.result)?;
        d.set_item("score", r.score)?;
        d.set_item("full_search", r.full_search)?;
        d.set_item("visits", r.visits)?;
        d.set_item("model", &r.model)?;
        d.set_item("end_reason", &r.end_reason)?;
        d.set_item("search_cp", r.search_cp)?;
        Ok(d)
    }
}
