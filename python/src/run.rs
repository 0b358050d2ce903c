//! Runs, matches and ratings: start or resume a run (`flipzero run`), its progress
//! reported to a Python callable; read a run's config, records, best model and rating
//! list; play a match between two players.

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use eval::{MatchClock, MatchConfig, PlayerSpec};
use pipeline::{Observer, Progress, Task};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::error::refused;
use crate::game::PyGame;

/// Serialisable `value` as Python objects (through JSON).
fn to_python<'py, T: serde::Serialize>(py: Python<'py>, value: &T) -> PyResult<Bound<'py, PyAny>> {
    let text = serde_json::to_string(value).map_err(refused)?;
    py.import("json")?.call_method1("loads", (text,))
}

/// A run directory, read.
#[pyclass(name = "Run", module = "flipzero", frozen)]
pub struct PyRun {
    dir: PathBuf,
}

#[pymethods]
impl PyRun {
    /// The run directory `path` (refused when it holds no run).
    #[new]
    fn new(path: PathBuf) -> PyResult<PyRun> {
        pipeline::report::check_run(&path).map_err(refused)?;
        Ok(PyRun { dir: path })
    }

    /// Its folder.
    #[getter]
    fn path(&self) -> PathBuf {
        self.dir.clone()
    }

    /// Its config (`config.toml`, with the built-in defaults filled in), as a dict.
    fn config<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let path = rundir::RunDir::new(&self.dir).config();
        let cfg = pipeline::load_config(Some(&path), &[]).map_err(refused)?;
        to_python(py, &cfg)
    }

    /// Every generation's records (self-play, training, gating and anchoring), oldest
    /// first, as `report.md` and `metrics.csv` are made of.
    fn generations<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let gens = pipeline::report::read_generations(&self.dir).map_err(refused)?;
        to_python(py, &gens)
    }

    /// `metrics.csv` of the run as it stands (one line a generation).
    fn metrics_csv(&self) -> PyResult<String> {
        let gens = pipeline::report::read_generations(&self.dir).map_err(refused)?;
        Ok(pipeline::report::metrics_csv(&gens))
    }

    /// The best model's name (`gen-NNNN` or `bootstrap`), None before the first.
    #[getter]
    fn best(&self) -> PyResult<Option<String>> {
        rundir::current_best(&self.dir).map_err(refused)
    }

    /// The maximum-likelihood rating list of every player of the run's games (gating
    /// and anchoring), `anchor` (default: the run's strongest baseline) at 0 Elo: a list
    /// of dicts (player, elo, ci95, games, points), strongest first.
    #[pyo3(signature = (anchor = None))]
    fn ratings<'py>(
        &self,
        py: Python<'py>,
        anchor: Option<String>,
    ) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let dir = self.dir.clone();
        let list = py
            .detach(move || -> Result<_, String> {
                let games = pipeline::report::collect_games(std::slice::from_ref(&dir))
                    .map_err(|e| e.to_string())?;
                let anchor = match anchor {
                    Some(a) => a,
                    None => pipeline::report::default_anchor(&dir)
                        .map_err(|e| e.to_string())?
                        .ok_or("the run has no anchoring games yet: name an anchor")?,
                };
                pipeline::report::ratings(&games, &anchor, 0.0).map_err(|e| e.to_string())
            })
            .map_err(refused)?;
        list.into_iter()
            .map(|(name, r)| {
                let d = PyDict::new(py);
                d.set_item("player", name)?;
                d.set_item("elo", r.elo)?;
                d.set_item("ci95", r.ci95)?;
                d.set_item("games", r.games)?;
                d.set_item("points", r.points)?;
                Ok(d)
            })
            .collect()
    }

    fn __repr__(&self) -> String {
        format!("Run('{}')", self.dir.display())
    }
}

/// A pipeline's lines, warnings and progress, passed to a Python callable as
/// `progress(kind, data)`: `("line", text)`, `("warning", text)`, and
/// `("progress", {"task", "done", "total", "message"})` at most twice a second a task
/// and when it ends. The callable's first exception is kept and raised at the end.
struct PyObserver {
    callback: Option<Py<PyAny>>,
    error: Mutex<Option<PyErr>>,
}

impl PyObserver {
    fn send(&self, kind: &str, make: impl FnOnce(Python<'_>) -> PyResult<Bound<'_, PyAny>>) {
        let Some(cb) = &self.callback else { return };
        let mut error = self.error.lock().unwrap_or_else(|e| e.into_inner());
        if error.is_some() {
            return;
        }
        if let Err(e) = Python::attach(|py| cb.call1(py, (kind, make(py)?)).map(drop)) {
            *error = Some(e);
        }
    }
}

impl Observer for PyObserver {
    fn line(&self, line: &str) {
        self.send("line", |py| Ok(line.into_pyobject(py)?.into_any()));
    }

    fn warning(&self, text: &str) {
        self.send("warning", |py| Ok(text.into_pyobject(py)?.into_any()));
    }

    fn task(&self, task: Task, total: u64) -> Box<dyn Progress + '_> {
        Box::new(PyProgress {
            observer: self,
            task,
            total,
            done: AtomicU64::new(0),
            message: Mutex::new(String::new()),
            last: Mutex::new(None),
        })
    }
}

struct PyProgress<'a> {
    observer: &'a PyObserver,
    task: Task,
    total: u64,
    done: AtomicU64,
    message: Mutex<String>,
    last: Mutex<Option<Instant>>,
}

impl PyProgress<'_> {
    fn report(&self, force: bool) {
        {
            let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
            if !force && last.is_some_and(|t| t.elapsed() < Duration::from_millis(500)) {
                return;
            }
            *last = Some(Instant::now());
        }
        let message = self
            .message
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let done = self.done.load(Ordering::Relaxed);
        self.observer.send("progress", |py| {
            let d = PyDict::new(py);
            d.set_item("task", format!("{:?}", self.task).to_lowercase())?;
            d.set_item("done", done)?;
            d.set_item("total", self.total)?;
            d.set_item("message", message)?;
            Ok(d.into_any())
        });
    }
}

impl Progress for PyProgress<'_> {
    fn set(&self, done: u64) {
        self.done.store(done, Ordering::Relaxed);
        self.report(false);
    }

    fn advance(&self, n: u64) {
        self.done.fetch_add(n, Ordering::Relaxed);
        self.report(false);
    }

    fn message(&self, text: String) {
        *self.message.lock().unwrap_or_else(|e| e.into_inner()) = text;
    }

    fn finish(&self) {
        self.report(true);
    }
}

/// A run's settings as `flipzero run` reads them: the file `path` (default: the built-in
/// defaults, configs/default.toml) with `set` (`KEY=VALUE`, as `--set`) applied and every
/// default filled in, as a dict of sections. A bad key or value is refused with the
/// command line's message.
#[pyfunction]
#[pyo3(signature = (path = None, set = Vec::new()))]
pub fn config(
    py: Python<'_>,
    path: Option<PathBuf>,
    set: Vec<String>,
) -> PyResult<Bound<'_, PyAny>> {
    let cfg = pipeline::load_config(path.as_deref(), &set).map_err(refused)?;
    to_python(py, &cfg)
}

/// Starts or resumes the run in `path`, as `flipzero run --run PATH [--config CONFIG]
/// [--set KEY=VALUE …] [--force]` does, until its generations or time budget are used
/// up; `progress(kind, data)` receives its lines and progress. Returns the report's
/// summary: `table`, `best`, `report` (the path of report.md).
#[pyfunction]
#[pyo3(signature = (path, config = None, set = Vec::new(), force = false, progress = None))]
pub fn run<'py>(
    py: Python<'py>,
    path: PathBuf,
    config: Option<PathBuf>,
    set: Vec<String>,
    force: bool,
    progress: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    if let Some(p) = &progress
        && !p.bind(py).is_callable()
    {
        return Err(pyo3::exceptions::PyTypeError::new_err(
            "progress must be a callable progress(kind, data), or None",
        ));
    }
    let cfg = pipeline::load_config(config.as_deref(), &set).map_err(refused)?;
    let observer = PyObserver {
        callback: progress,
        error: Mutex::new(None),
    };
    let summary =
        py.detach(|| pipeline::SyncRun::open(&path, cfg, force, &observer).and_then(|r| r.run()));
    if let Some(e) = observer
        .error
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take()
    {
        return Err(e);
    }
    let summary = summary.map_err(refused)?;
    let d = PyDict::new(py);
    d.set_item("table", summary.table)?;
    d.set_item("best", summary.best)?;
    d.set_item("report", summary.report)?;
    Ok(d)
}

/// A match of `pairs` game pairs between players `a` and `b` (as `flipzero match` names
/// them) on balanced generated openings, each played with both colours; `clock`: a
/// time control (`tc=1+0.01`, `time=100`) or each player's own limits. Returns A's
/// `wdl`, `pentanomial`, `score`, `elo` and `ci95`, and the games as `pgn`.
#[pyfunction]
#[pyo3(signature = (a, b, game, pairs = 10, seed = 0, threads = 1, clock = None))]
// Python's keyword arguments, one parameter each.
#[allow(clippy::too_many_arguments)]
pub fn play_match<'py>(
    py: Python<'py>,
    a: &str,
    b: &str,
    game: &Bound<'py, PyAny>,
    pairs: usize,
    seed: u64,
    threads: usize,
    clock: Option<&str>,
) -> PyResult<Bound<'py, PyDict>> {
    let game = PyGame(crate::game::game_of(game)?);
    let spec_a: PlayerSpec = a.parse().map_err(refused)?;
    let spec_b: PlayerSpec = b.parse().map_err(refused)?;
    if !(1..=100_000).contains(&pairs) || !(1..=256).contains(&threads) {
        return Err(refused(format!(
            "pairs {pairs}, threads {threads}: expected 1 to 100000 pairs and 1 to 256 threads"
        )));
    }
    let clock: Option<MatchClock> = clock.map(str::parse).transpose().map_err(refused)?;
    let mut cfg = MatchConfig::new(game.0, pairs, seed);
    cfg.threads = threads;
    cfg.clock = clock;
    // Ctrl-C: no new game starts, the games under way end, KeyboardInterrupt.
    let (records, stats) = crate::interrupt::interruptible(py, |stop| {
        eval::run_match_until(&spec_a, &spec_b, &cfg, &|_| {}, stop)
    })?
    .map_err(refused)?;
    let e = stats.elo();
    let d = PyDict::new(py);
    d.set_item("wdl", stats.wdl.to_vec())?;
    d.set_item("pentanomial", stats.pentanomial.to_vec())?;
    d.set_item("score", e.score)?;
    d.set_item("elo", e.elo)?;
    d.set_item("ci95", e.ci95)?;
    d.set_item("pgn", eval::to_pgn(&records, game.0, clock))?;
    Ok(d)
}
