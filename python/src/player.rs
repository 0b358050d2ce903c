//! Players: any player the CLI names (`random`, `greedy`, `ab3`, `ab:time=100`,
//! `mcts:DIR:sims=400`, `abnet:DIR`, `uai:PATH`), and the project's tree search with a
//! Python evaluator (a PyTorch or JAX net, batched), `Player.mcts(evaluator, …)`.

use std::sync::{Arc, Mutex};

use engine::{Game, Move, State};
use eval::{MctsPlayer, Player, PlayerSpec, Thinking, Timeouts};
use numpy::{PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;

use crate::error::refused;
use crate::game::{PyGame, PyPosition, game_of};

/// A player of one game.
#[pyclass(name = "Player", module = "flipzero", frozen)]
pub struct PyPlayer {
    player: Mutex<Box<dyn Player>>,
    game: Game,
    name: String,
    /// The first exception a Python evaluator raised during the current search.
    error: Arc<Mutex<Option<PyErr>>>,
}

#[pymethods]
impl PyPlayer {
    /// The player `spec` names (as `flipzero match` takes them) for `game` (a Game or a
    /// name); `seed` drives its random choices.
    #[new]
    #[pyo3(signature = (spec, game, seed = 0))]
    fn new(py: Python<'_>, spec: &str, game: &Bound<'_, PyAny>, seed: u64) -> PyResult<PyPlayer> {
        let game = game_of(game)?;
        let parsed: PlayerSpec = spec.parse().map_err(refused)?;
        let player = py
            .detach(|| parsed.build(game, seed, Timeouts::default()))
            .map_err(refused)?;
        Ok(PyPlayer {
            player: Mutex::new(player),
            game,
            name: spec.to_string(),
            error: Arc::default(),
        })
    }

    /// The project's tree search (play-time MCTS, as `mcts:DIR:sims=N`) over a Python
    /// evaluator: `evaluator(positions)` gets a list of Positions and returns
    /// `(policy, value)`: policy logits over every move index, shape [N, policy_size],
    /// and values in [−1, 1] for the side to move, shape [N] (numpy float32 arrays, or
    /// anything numpy turns into them). `batch` positions at most per call.
    #[staticmethod]
    #[pyo3(signature = (evaluator, game, sims = 400, seed = 0, batch = 8))]
    fn mcts(
        evaluator: Py<PyAny>,
        game: &Bound<'_, PyAny>,
        sims: u32,
        seed: u64,
        batch: usize,
    ) -> PyResult<PyPlayer> {
        let game = game_of(game)?;
        if !(1..=1_000_000).contains(&sims) || !(1..=4096).contains(&batch) {
            return Err(refused(format!(
                "sims {sims}, batch {batch}: expected sims 1 to 1000000, batch 1 to 4096"
            )));
        }
        let error = Arc::<Mutex<Option<PyErr>>>::default();
        let ev = PyEvaluator {
            callback: evaluator,
            game,
            error: error.clone(),
        };
        let player = MctsPlayer::new(vec![Box::new(ev)], Thinking::Sims(sims), batch, seed)
            .map_err(refused)?;
        Ok(PyPlayer {
            player: Mutex::new(Box::new(player)),
            game,
            name: format!("mcts:python:sims={sims}"),
            error,
        })
    }

    /// The game it plays.
    #[getter]
    fn game(&self) -> PyGame {
        PyGame(self.game)
    }

    /// Forgets what it kept of the last game (a tree, a cache).
    fn new_game(&self, py: Python<'_>) -> PyResult<()> {
        let mut player = self.lock()?;
        let p: &mut Box<dyn Player> = &mut player;
        py.detach(|| p.new_game()).map_err(refused)
    }

    /// Its move in `position`, in notation (the interpreter is free while it thinks; a
    /// Python evaluator is called back with it).
    fn choose(&self, py: Python<'_>, position: PyRef<'_, PyPosition>) -> PyResult<String> {
        let s = position.0;
        if s.game() != self.game {
            return Err(refused(format!(
                "this player plays {}, not {}",
                self.game,
                s.game()
            )));
        }
        if let Some(r) = s.result() {
            return Err(refused(format!(
                "the game is over ({}): no move to choose",
                r.reason.name()
            )));
        }
        let mut player = self.lock()?;
        let p: &mut Box<dyn Player> = &mut player;
        let chosen = crate::interrupt::interruptible(py, |stop| p.choose_until(&s, stop))?;
        if let Some(e) = self.error.lock().unwrap_or_else(|e| e.into_inner()).take() {
            // The search finished on stand-in evaluations: forget its tree and cache, so
            // that they do not steer the next move.
            let _ = player.new_game();
            return Err(e);
        }
        Ok(s.move_to_string(chosen.map_err(refused)?))
    }

    fn __repr__(&self) -> String {
        format!("Player('{}', game='{}')", self.name, self.game)
    }
}

impl PyPlayer {
    /// The player, or a refusal while it is searching (its own evaluator calling it,
    /// or another thread).
    fn lock(&self) -> PyResult<std::sync::MutexGuard<'_, Box<dyn Player>>> {
        match self.player.try_lock() {
            Ok(p) => Ok(p),
            Err(std::sync::TryLockError::Poisoned(p)) => Ok(p.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => Err(refused(
                "this player is busy searching (called from its own evaluator, or from another thread)",
            )),
        }
    }
}

/// A Python callable as the tree search's evaluator.
struct PyEvaluator {
    callback: Py<PyAny>,
    game: Game,
    error: Arc<Mutex<Option<PyErr>>>,
}

impl PyEvaluator {
    fn call(&self, states: &[State], moves: &[Vec<Move>]) -> PyResult<Vec<selfplay::Evaluation>> {
        let p = self.game.policy_size();
        Python::attach(|py| {
            let positions: Vec<PyPosition> = states.iter().map(|&s| PyPosition(s)).collect();
            let out = self.callback.call1(py, (positions,))?;
            let (policy, value): (Bound<'_, PyAny>, Bound<'_, PyAny>) = out.extract(py)?;
            let np = py.import("numpy")?;
            let policy = np.call_method1("asarray", (policy, "float32"))?;
            let value = np.call_method1("asarray", (value, "float32"))?;
            let policy: PyReadonlyArray2<'_, f32> = policy.extract().map_err(|_| {
                refused(format!(
                    "the evaluator's policy must be an array [{}, {p}]",
                    states.len()
                ))
            })?;
            let value: PyReadonlyArray1<'_, f32> = value.extract().map_err(|_| {
                refused(format!(
                    "the evaluator's value must be an array [{}]",
                    states.len()
                ))
            })?;
            let (policy, value) = (policy.as_array(), value.as_array());
            if policy.shape() != [states.len(), p] || value.len() != states.len() {
                return Err(refused(format!(
                    "the evaluator answered policy {:?} and value [{}] for {} positions: expected [{n}, {p}] and [{n}]",
                    policy.shape(),
                    value.len(),
                    states.len(),
                    n = states.len()
                )));
            }
            let mut out = Vec::with_capacity(states.len());
            for (i, (s, m)) in states.iter().zip(moves).enumerate() {
                let row: Vec<f32> = policy.row(i).iter().copied().collect();
                let v = value[i];
                if !v.is_finite() || row.iter().any(|x| !x.is_finite()) {
                    return Err(refused(format!(
                        "the evaluator's answer for position {i} holds a value that is not finite"
                    )));
                }
                out.push(selfplay::Evaluation {
                    policy: train::move_probabilities(s, m, &row),
                    value: v.clamp(-1.0, 1.0),
                    wdl: None,
                    score: None,
                });
            }
            Ok(out)
        })
    }
}

impl selfplay::Evaluator for PyEvaluator {
    fn evaluate(&mut self, states: &[State], moves: &[Vec<Move>]) -> Vec<selfplay::Evaluation> {
        let failed = self
            .error
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some();
        let answer = if failed {
            None
        } else {
            match self.call(states, moves) {
                Ok(a) => Some(a),
                Err(e) => {
                    *self.error.lock().unwrap_or_else(|e| e.into_inner()) = Some(e);
                    None
                }
            }
        };
        // After a failure the search finishes on flat evaluations, and `choose` raises
        // the evaluator's exception instead of answering.
        answer.unwrap_or_else(|| selfplay::Uniform.evaluate(states, moves))
    }

    fn name(&self) -> String {
        "python".into()
    }
}
