//! The deterministic search benchmark (as Stockfish's `bench`): fixed positions of every
//! family searched to fixed depths by the alpha-beta engine, whose total node count
//! changes only when the search does. `flipzero bench search` prints it.

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use crate::search::{Limits, Searcher};
use crate::{Game, State};

/// The search benchmark's positions: (game, position, depth).
pub const SEARCH_BENCH: &[(&str, &str, u32)] = &[
    ("ataxx", "x5o/7/7/7/7/7/o5x x 0 1", 14),
    ("ataxx", "x5o/7/2-1-2/7/2-1-2/7/o5x x 0 1", 14),
    ("ataxx", "x2-2o/3-3/2---2/7/2---2/3-3/o2-2x x 0 1", 14),
    ("ataxx", "x1oo3/1x1o3/2xxo2/3o3/1xxoo2/2x4/o5x o 4 9", 11),
    (
        "ataxx",
        "xxxoo2/xxoooo1/xxxxoo1/xoxxooo/xooxxx1/1oo1xx1/3o3 x 0 20",
        17,
    ),
    ("ataxx/assimilation", "startpos", 14),
    ("hexxagon", "startpos", 12),
    ("othello", "startpos", 15),
    (
        "othello",
        "8/8/2ooo3/2oxxo2/2xxxo2/3ox3/8/8 x play - - 0",
        13,
    ),
    (
        "annexation64",
        "4/4/4/10/4ox4/4xo4/10/4/4/4 x play 30 30 0",
        13,
    ),
];

/// One position of the search benchmark, searched.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchLine {
    /// Its game.
    pub game: &'static str,
    /// The depth searched.
    pub depth: u32,
    /// Nodes searched.
    pub nodes: u64,
    /// The best move, in notation.
    pub best: String,
    /// Its score (centipawn-like units of the engine's evaluation).
    pub score: i32,
    /// Seconds it took.
    pub seconds: f64,
}

/// Searches every position of [`SEARCH_BENCH`] with a fresh 16 MiB table, calling
/// `on_line` after each; an error names a position that does not parse or is over.
pub fn search_bench(mut on_line: impl FnMut(&BenchLine)) -> Result<Vec<BenchLine>, String> {
    let stop = AtomicBool::new(false);
    let mut out = vec![];
    for (i, &(game, text, depth)) in SEARCH_BENCH.iter().enumerate() {
        let g: Game = game
            .parse()
            .map_err(|e| format!("bench position {}: {e}", i + 1))?;
        let state: State = if text == "startpos" {
            g.startpos()
        } else {
            g.parse_position(text)
                .map_err(|e| format!("bench position {}: {e}", i + 1))?
        };
        let mut searcher = Searcher::new(16);
        let limits = Limits {
            depth: Some(depth),
            ..Default::default()
        };
        let t = Instant::now();
        let report = searcher
            .search(&state, limits, &stop, |_| {})
            .ok_or_else(|| format!("bench position {} is a finished game", i + 1))?;
        let line = BenchLine {
            game,
            depth,
            nodes: report.nodes,
            best: state.move_to_string(report.pv[0]),
            score: report.score,
            seconds: t.elapsed().as_secs_f64(),
        };
        on_line(&line);
        out.push(line);
    }
    Ok(out)
}
