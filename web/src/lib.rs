//! What a browser sees of the engine: the views of a position that the pages draw
//! ([`position`], for `flipzero serve` and this crate's player alike), and the player
//! that needs no server ([`player`]): the engine, the project's tree search and a fast
//! net, compiled to WebAssembly (`web/build.sh`) and driven from JavaScript through the
//! small C interface of [`abi`]. `flipzero export --web --out DIR` writes the module with
//! a page and a network as a static bundle (docs/web.md).
//!
//! The player is the same code as the native one (`selfplay::TreePlayer` over
//! `fastnet::FastEvaluator`, integer inference): a seed and a simulation count give the
//! same moves in the browser as `mcts:DIR:sims=N` does natively.

#![warn(missing_docs)]

pub mod abi;
pub mod assets;
pub mod bundle;
pub mod packed;
pub mod player;
pub mod position;

/// The WebAssembly module that `web/build.sh` builds from this crate, committed so that
/// `flipzero export --web` needs no WebAssembly toolchain (`make web` rebuilds it; the
/// browser test plays it against the native player).
pub const WASM: &[u8] = include_bytes!("../dist/flipzero.wasm");
