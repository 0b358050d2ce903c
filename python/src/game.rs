//! Games and positions: every game of the engine by name, positions from and to text,
//! legal moves (text and policy indices), play, results, perft, the Zobrist hash and the
//! board's symmetries.

use engine::{Game, Move, Side, State};
use pyo3::prelude::*;

use crate::error::refused;

/// The name of every game (`ataxx`, `othello`, `hexxagon`, `annexation64/misere`, …).
#[pyfunction]
pub fn games() -> Vec<&'static str> {
    engine::GAME_NAMES.to_vec()
}

/// A game given as a `Game` or by name.
pub(crate) fn game_of(game: &Bound<'_, PyAny>) -> PyResult<Game> {
    if let Ok(g) = game.cast::<PyGame>() {
        return Ok(g.get().0);
    }
    let name: String = game.extract()?;
    name.parse().map_err(refused)
}

/// A game: its board, its start and its positions.
#[pyclass(name = "Game", module = "flipzero", frozen, eq, hash)]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct PyGame(pub Game);

#[pymethods]
impl PyGame {
    /// The game of this name (see `games()`).
    #[new]
    fn new(name: &str) -> PyResult<PyGame> {
        name.parse().map(PyGame).map_err(refused)
    }

    /// The game's name.
    #[getter]
    fn name(&self) -> String {
        self.0.to_string()
    }

    /// The standard start.
    fn start(&self) -> PyPosition {
        PyPosition(self.0.startpos())
    }

    /// The position of this text (FEN for the Ataxx family; the game's own text for the
    /// others).
    fn position(&self, text: &str) -> PyResult<PyPosition> {
        self.0.parse_position(text).map(PyPosition).map_err(|e| {
            let shown: String = text.chars().take(200).collect();
            let more = if shown.len() < text.len() { "…" } else { "" };
            refused(format!("bad position `{shown}{more}` for {}: {e}", self.0))
        })
    }

    /// Entries of the policy vector (every move of the game has one index).
    #[getter]
    fn policy_size(&self) -> usize {
        self.0.policy_size()
    }

    /// The board box as (height, width): the encoding's spatial shape.
    #[getter]
    fn board_shape(&self) -> (usize, usize) {
        let (w, h) = self.0.grid();
        (h, w)
    }

    /// Whether fewest pieces wins.
    #[getter]
    fn misere(&self) -> bool {
        self.0.misere()
    }

    /// The board's symmetries (the identity first), each a list giving every cell
    /// index's image (`Position.transform` applies one).
    fn symmetries(&self) -> Vec<Vec<u8>> {
        self.0.symmetries().into_iter().map(|s| s.map).collect()
    }

    fn __repr__(&self) -> String {
        format!("Game('{}')", self.0)
    }

    /// Pickled as its name.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, (String,))> {
        Ok((py.get_type::<PyGame>().into_any(), (self.0.to_string(),)))
    }
}

/// A position of a game. Positions are values: `play` returns a new one.
#[pyclass(name = "Position", module = "flipzero", frozen, eq, hash)]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct PyPosition(pub State);

impl PyPosition {
    fn parse_move(&self, text: &str) -> PyResult<Move> {
        let mv = self
            .0
            .parse_move(text.trim())
            .map_err(|e| refused(format!("illegal move `{text}`: {e}")))?;
        if !self.0.is_legal(mv) {
            return Err(refused(format!("illegal move `{text}`")));
        }
        Ok(mv)
    }
}

#[pymethods]
impl PyPosition {
    /// The game.
    #[getter]
    fn game(&self) -> PyGame {
        PyGame(self.0.game())
    }

    /// The position's text.
    #[getter]
    fn text(&self) -> String {
        self.0.text()
    }

    /// `x` or `o`.
    #[getter]
    fn side_to_move(&self) -> char {
        self.0.side_to_move().char()
    }

    /// Pieces of x and of o.
    #[getter]
    fn counts(&self) -> (u32, u32) {
        let [x, o] = self.0.counts();
        (x, o)
    }

    /// The Zobrist hash (the engine's, as its transposition tables use it).
    #[getter]
    fn zobrist(&self) -> u64 {
        self.0.hash()
    }

    /// The legal moves in notation (`0000` is the pass); none when the game is over.
    fn legal_moves(&self) -> Vec<String> {
        let s = self.0;
        s.legal_moves()
            .into_iter()
            .map(|m| s.move_to_string(m))
            .collect()
    }

    /// The legal moves' policy indices, in the order of `legal_moves()`.
    fn legal_indices(&self) -> Vec<usize> {
        let s = self.0;
        s.legal_moves()
            .into_iter()
            .map(|m| s.policy_index(m))
            .collect()
    }

    /// The policy index of a legal move.
    fn move_index(&self, mv: &str) -> PyResult<usize> {
        Ok(self.0.policy_index(self.parse_move(mv)?))
    }

    /// The legal move with this policy index, or None.
    fn index_move(&self, index: usize) -> Option<String> {
        let s = self.0;
        s.legal_moves()
            .into_iter()
            .find(|&m| s.policy_index(m) == index)
            .map(|m| s.move_to_string(m))
    }

    /// The position after a legal move (an illegal one is a ValueError that says why).
    fn play(&self, mv: &str) -> PyResult<PyPosition> {
        let m = self.parse_move(mv)?;
        Ok(PyPosition(self.0.after(m)))
    }

    /// Whether the game is over.
    #[getter]
    fn is_over(&self) -> bool {
        self.0.is_game_over()
    }

    /// The result when the game is over, else None: a dict with `winner` (`x`, `o` or
    /// None), `result` (`1-0`, `0-1`, `1/2-1/2`), `counts`, `score` (the margin from
    /// x's view) and `reason`.
    fn result<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, pyo3::types::PyDict>>> {
        let Some(r) = self.0.result() else {
            return Ok(None);
        };
        let d = pyo3::types::PyDict::new(py);
        d.set_item("winner", r.winner.map(Side::char))?;
        d.set_item(
            "result",
            match r.winner {
                Some(Side::X) => "1-0",
                Some(Side::O) => "0-1",
                None => "1/2-1/2",
            },
        )?;
        d.set_item("counts", (r.counts[0], r.counts[1]))?;
        d.set_item("score", r.score)?;
        d.set_item("reason", r.reason.name())?;
        Ok(Some(d))
    }

    /// Leaf positions `depth` plies ahead (the engine's perft; the interpreter is free
    /// meanwhile, and Ctrl-C stops it).
    fn perft(&self, py: Python<'_>, depth: u32) -> PyResult<u64> {
        let s = self.0;
        crate::interrupt::interruptible(py, |stop| s.perft_stoppable(depth, stop))?
            .ok_or_else(|| refused("perft stopped"))
    }

    /// The image of the position under a board symmetry (a list from
    /// `Game.symmetries()`).
    fn transform(&self, symmetry: Vec<u8>) -> PyResult<PyPosition> {
        let game = self.0.game();
        let cells = game.cells();
        let sym = game
            .symmetries()
            .into_iter()
            .find(|s| cells.iter().all(|&c| symmetry.get(c) == Some(&s.map[c])))
            .ok_or_else(|| {
                refused(format!(
                    "not a symmetry of {game}: use one of Game.symmetries()"
                ))
            })?;
        if !self.0.symmetries().contains(&sym) {
            return Err(refused(
                "that symmetry moves this position's blocked cells onto open ones",
            ));
        }
        Ok(PyPosition(self.0.transform(&sym)))
    }

    fn __str__(&self) -> String {
        self.0.text()
    }

    fn __repr__(&self) -> String {
        format!("Position('{}', '{}')", self.0.game(), self.0.text())
    }

    /// Pickled (and copied) as its game and text.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, (String, String))> {
        let at = py.get_type::<PyPosition>().getattr("_from_text")?;
        Ok((at, (self.0.game().to_string(), self.0.text())))
    }

    /// The position of `game` given by `text` (what unpickling calls).
    #[staticmethod]
    fn _from_text(game: &str, text: &str) -> PyResult<PyPosition> {
        PyGame::new(game)?.position(text)
    }
}
