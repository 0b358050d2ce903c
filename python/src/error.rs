//! How a refusal reaches Python.

use pyo3::PyErr;

/// A refusal, as Python sees it: `ValueError(message)`, the message the CLI prints.
pub(crate) fn refused(e: impl std::fmt::Display) -> PyErr {
    pyo3::exceptions::PyValueError::new_err(e.to_string())
}
