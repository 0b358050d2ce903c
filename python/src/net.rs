//! The network's input encoding and trained networks: `encode(positions)` gives the
//! planes a network reads, `Model(dir).predict(positions)` what it answers, the same
//! numbers as `flipzero infer` (Burn's forward pass on the CPU).

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use engine::{Game, State};
use numpy::{PyArray1, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::error::refused;
use crate::game::{PyGame, PyPosition, game_of};

fn states(positions: &[PyRef<'_, PyPosition>]) -> Vec<State> {
    positions.iter().map(|p| p.0).collect()
}

/// Positions a `predict` call runs at once: a longer call is interruptible between two.
const CHUNK: usize = 1024;

/// The positions of one game, or why not.
fn one_game(states: &[State], want: Option<Game>) -> PyResult<Option<Game>> {
    let Some(first) = want.or_else(|| states.first().map(State::game)) else {
        return Ok(None);
    };
    if let Some(s) = states.iter().find(|s| s.game() != first) {
        return Err(refused(format!(
            "a position of {} among positions of {first}",
            s.game()
        )));
    }
    Ok(Some(first))
}

/// The network's input planes of `positions` (one game): a float32 array
/// [N, planes, height, width], built with the interpreter free.
#[pyfunction]
pub fn encode<'py>(
    py: Python<'py>,
    positions: Vec<PyRef<'py, PyPosition>>,
) -> PyResult<Bound<'py, PyAny>> {
    let states = states(&positions);
    let Some(game) = one_game(&states, None)? else {
        return Err(refused("no positions to encode"));
    };
    let (w, h) = game.grid();
    let planes = train::net::PLANES;
    let data = py.detach(move || {
        train::net::encode_batch(&states)
            .into_raw_vec_and_offset()
            .0
    });
    let n = data.len() / (planes * w * h);
    Ok(PyArray1::from_vec(py, data)
        .reshape([n, planes, h, w])?
        .into_any())
}

/// A trained network (a model folder written by `flipzero train`, or a run whose best
/// it is).
#[pyclass(name = "Model", module = "flipzero", frozen)]
pub struct PyModel {
    model: Mutex<train::LoadedModel>,
    game: Game,
    dir: PathBuf,
}

#[pymethods]
impl PyModel {
    /// Loads the model folder `path` (or a run directory's best network).
    #[new]
    fn new(py: Python<'_>, path: PathBuf) -> PyResult<PyModel> {
        let dir = match eval::resolve_net(&path).map_err(refused)? {
            eval::ResolvedNet::Model(dir) => dir,
            eval::ResolvedNet::Bootstrap => {
                return Err(refused(format!(
                    "{} is a run whose best is still the bootstrap evaluator: no network to run",
                    path.display()
                )));
            }
        };
        let d = dir.clone();
        let model = py.detach(move || train::load_model(&d)).map_err(refused)?;
        Ok(PyModel {
            game: model.game,
            model: Mutex::new(model),
            dir,
        })
    }

    /// Makes weights trained elsewhere a model folder and loads it, as `flipzero import`
    /// does: `weights` is a safetensors file under Burn's names or PyTorch's (a PyTorch
    /// `state_dict` saved with `safetensors.torch.save_file`), the network's shape read off
    /// its tensors; `out` gets `model.json` and `model.bpk` (a model already there is
    /// never overwritten).
    #[staticmethod]
    fn import_weights(
        py: Python<'_>,
        weights: PathBuf,
        game: &Bound<'_, PyAny>,
        out: PathBuf,
    ) -> PyResult<PyModel> {
        let game = game_of(game)?;
        let o = out.clone();
        py.detach(move || train::import_weights(&weights, game, &o))
            .map_err(refused)?;
        PyModel::new(py, out)
    }

    /// The game it plays.
    #[getter]
    fn game(&self) -> PyGame {
        PyGame(self.game)
    }

    /// Its folder.
    #[getter]
    fn path(&self) -> PathBuf {
        self.dir.clone()
    }

    /// The network's answer for `positions` (of its game), as float32 arrays:
    /// `policy_logits` [N, policy_size] (over every move index; `Position.legal_indices`
    /// picks the legal ones), `wdl` [N, 3] (win, draw, loss for the side to move),
    /// `value` [N] (win − loss) and `score` [N] (the expected margin, scaled to [−1, 1]).
    /// The same numbers as `flipzero infer`.
    fn predict<'py>(
        &self,
        py: Python<'py>,
        positions: Vec<PyRef<'py, PyPosition>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let states = states(&positions);
        one_game(&states, Some(self.game)).map_err(|_| {
            let other = states
                .iter()
                .find(|s| s.game() != self.game)
                .map(State::game);
            refused(format!(
                "model {} is for game {}, not {}",
                self.dir.display(),
                self.game,
                other.map_or_else(String::new, |g| g.to_string())
            ))
        })?;
        let n = states.len();
        let p = self.game.policy_size();
        let run = |stop: &AtomicBool| {
            let model = self.model.lock().unwrap_or_else(|e| e.into_inner());
            let mut out = Vec::with_capacity(n);
            for chunk in states.chunks(CHUNK) {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                out.extend(train::predict(&model, chunk));
            }
            out
        };
        // A long call in chunks on a thread of its own, which Ctrl-C stops between two;
        // a short one (a search's batch) on this thread, without a thread's start.
        let preds = if n > CHUNK {
            crate::interrupt::interruptible(py, run)?
        } else {
            py.detach(|| run(&AtomicBool::new(false)))
        };
        let mut logits = Vec::with_capacity(n * p);
        let mut wdl = Vec::with_capacity(n * 3);
        let mut value = Vec::with_capacity(n);
        let mut score = Vec::with_capacity(n);
        for pr in &preds {
            logits.extend_from_slice(&pr.policy_logits);
            wdl.extend_from_slice(&pr.wdl);
            value.push(pr.wdl[0] - pr.wdl[2]);
            score.push(pr.score);
        }
        let d = PyDict::new(py);
        d.set_item(
            "policy_logits",
            PyArray1::from_vec(py, logits).reshape([n, p])?,
        )?;
        d.set_item("wdl", PyArray1::from_vec(py, wdl).reshape([n, 3])?)?;
        d.set_item("value", PyArray1::from_vec(py, value))?;
        d.set_item("score", PyArray1::from_vec(py, score))?;
        Ok(d)
    }

    /// The network's tensors as float32 numpy arrays by name: `naming="pytorch"` (the
    /// default) gives PyTorch's names and layouts (BatchNorm `weight`/`bias`, Linear
    /// weights `[out, in]`; a `state_dict` without BatchNorm's `num_batches_tracked`),
    /// `"burn"` the project's own (as `model.safetensors` of an export). What
    /// `Model.import_weights` reads back.
    #[pyo3(signature = (naming = "pytorch"))]
    fn tensors<'py>(&self, py: Python<'py>, naming: &str) -> PyResult<Bound<'py, PyDict>> {
        let naming = match naming {
            "pytorch" => train::Naming::PyTorch,
            "burn" => train::Naming::Burn,
            other => {
                return Err(refused(format!("naming `{other}` (known: pytorch, burn)")));
            }
        };
        let tensors = py.detach(|| {
            let model = self.model.lock().unwrap_or_else(|e| e.into_inner());
            train::named_tensors(&model.net, naming)
        });
        let d = PyDict::new(py);
        for (name, shape, values) in tensors {
            d.set_item(name, PyArray1::from_vec(py, values).reshape(shape)?)?;
        }
        Ok(d)
    }

    /// The network's probabilities over the legal moves of `position`, most likely
    /// first, as `flipzero infer` prints them: a list of (move, policy index,
    /// probability).
    fn policy(
        &self,
        py: Python<'_>,
        position: PyRef<'_, PyPosition>,
    ) -> PyResult<Vec<(String, usize, f32)>> {
        let s = position.0;
        if s.game() != self.game {
            return Err(refused(format!(
                "model {} is for game {}, not {}",
                self.dir.display(),
                self.game,
                s.game()
            )));
        }
        let pred = py.detach(|| {
            let model = self.model.lock().unwrap_or_else(|e| e.into_inner());
            train::predict(&model, &[s]).remove(0)
        });
        let out = train::ranked_moves(&s, &pred.policy_logits)
            .into_iter()
            .map(|(m, p)| (s.move_to_string(m), s.policy_index(m), p))
            .collect();
        Ok(out)
    }

    fn __repr__(&self) -> String {
        format!("Model('{}', game='{}')", self.dir.display(), self.game)
    }
}
