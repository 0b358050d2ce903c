//! The exact endgame: a leaf with few cells left to fill is handed to the engine's alpha-beta
//! (within a node budget) before the evaluator; when it proves a win or a loss, that
//! result is the leaf's exact value (the tree treats it as a finished game).

use std::sync::atomic::AtomicBool;

use engine::State;
use engine::search::{Limits, MATE, Searcher};

/// The deepest forced result the search reports as one (as the engine's mate scores).
const PROOF_HORIZON: i32 = 128;

/// Tries to solve `s` with `searcher` within `nodes` nodes: `Some(1.0)` when the side
/// to move wins by force, `Some(-1.0)` when it loses by force, `None` when the budget
/// ends first (a draw is not proven: alpha-beta's 0 is also a balanced evaluation).
pub fn solve(searcher: &mut Searcher, s: &State, nodes: u64) -> Option<f32> {
    static NEVER: AtomicBool = AtomicBool::new(false);
    let limits = Limits {
        nodes: Some(nodes.max(1)),
        ..Limits::default()
    };
    let report = searcher.search(s, limits, &NEVER, |_| {})?;
    if report.score >= MATE - PROOF_HORIZON {
        Some(1.0)
    } else if report.score <= -(MATE - PROOF_HORIZON) {
        Some(-1.0)
    } else {
        None
    }
}
