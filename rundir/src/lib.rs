//! The run directory of flipzero and the files around it: how they are written (atomic
//! replace, or a stream where the path is one) and how they are read (regular files only,
//! with a bound on their size). No other workspace crate is imported: every crate that
//! touches a run directory or a file named by a user goes through this one.

#![warn(missing_docs)]

pub mod files;
pub mod host;

pub use files::{
    Limit, OutputKind, commit, open_regular, read_regular, read_regular_text, temp_path,
    write_atomic, write_output,
};
pub use host::host_name;
