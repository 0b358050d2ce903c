//! `flipzero._flipzero`, the native half of the Python package `flipzero` (its Python
//! half is `python/flipzero/`): games and positions ([`game`]), the network's input
//! encoding and trained networks ([`net`]), and players, including tree search with a
//! Python evaluator ([`player`]). Every refusal is a Python `ValueError` carrying the CLI's
//! message (a missing file too, as the CLI words it); long calls release the interpreter.

use pyo3::prelude::*;

mod data;
mod error;
mod game;
mod interrupt;
mod net;
mod player;
mod run;

#[pymodule]
fn _flipzero(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(game::games, m)?)?;
    m.add_class::<game::PyGame>()?;
    m.add_class::<game::PyPosition>()?;
    m.add_function(wrap_pyfunction!(net::encode, m)?)?;
    m.add_class::<net::PyModel>()?;
    m.add_class::<player::PyPlayer>()?;
    m.add_function(wrap_pyfunction!(data::shard_files, m)?)?;
    m.add_class::<data::PyShards>()?;
    m.add_class::<run::PyRun>()?;
    m.add_function(wrap_pyfunction!(run::run, m)?)?;
    m.add_function(wrap_pyfunction!(run::config, m)?)?;
    m.add_function(wrap_pyfunction!(run::play_match, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
