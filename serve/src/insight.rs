//! Search insight for the analysis board: a network's tree search of one position, with
//! each candidate move's visits, mean value, prior, proof and principal variation (as
//! Lizzie and KaTrain show them). The page asks for growing simulation counts to watch
//! the search deepen.

use std::sync::atomic::AtomicBool;

use engine::{Game, State};
use eval::{MctsPlayer, NetEngine, NetSource, Thinking};
use serde::Serialize;

use crate::error::ApiError;
use crate::position::{PositionView, move_cells, view};

/// Moves of each principal variation shown.
pub const PV_LEN: usize = 10;

/// One candidate move.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Candidate {
    /// The move in notation.
    pub text: String,
    /// Its source cell (a jump) and target cell (none for a pass).
    pub from: Option<usize>,
    /// See `from`.
    pub to: Option<usize>,
    /// Simulations through it.
    pub visits: u32,
    /// Its mean value for the side that plays it, in [-1, 1] (none before a visit).
    pub q: Option<f32>,
    /// The network's prior.
    pub prior: f32,
    /// `win`, `loss` or `draw` when the search proved it.
    pub proof: Option<&'static str>,
    /// The principal variation from this move on, in notation.
    pub pv: Vec<String>,
}

/// A search of one position.
#[derive(Clone, Debug, Serialize)]
pub struct SearchInsight {
    /// The network (`bootstrap`, `<run>`, `<run>/gen-NNNN`).
    pub net: String,
    /// Simulations searched.
    pub sims: u32,
    /// The root's value for the side to move (none for a forced move, which is not
    /// searched).
    pub value: Option<f32>,
    /// The candidate moves, most visited first.
    pub candidates: Vec<Candidate>,
    /// The position.
    pub view: PositionView,
}

/// Searches `state` with `net` (named `name`) for `sims` simulations, `seed` fixing its
/// random choices; `stop` ends it early with what it has.
pub fn search(
    name: String,
    net: &NetSource,
    game: Game,
    state: &State,
    sims: u32,
    seed: u64,
    stop: &AtomicBool,
) -> Result<SearchInsight, ApiError> {
    let ev = eval::build_evaluator(net, game, NetEngine::Fast)
        .map_err(|e| ApiError::BadRequest(format!("network `{name}`: {e}")))?;
    let batch = eval::batch_for(Some(sims), ev.preferred_batch());
    let mut player = MctsPlayer::new(vec![ev], Thinking::Sims(sims), batch, seed)
        .map_err(|e| ApiError::Internal(format!("network `{name}`: {e}")))?;
    let moves = state.legal_moves();
    if moves.len() > 1 {
        let limits = selfplay::PlayLimits {
            sims: Some(sims),
            time: None,
        };
        player
            .search(state, limits, stop)
            .map_err(|e| ApiError::Internal(format!("network `{name}` failed to search: {e}")))?;
    }
    let (value, lines) = match player.analysis(PV_LEN) {
        Some((v, l)) => (Some(v), l),
        None => (None, vec![]),
    };
    let candidates = if lines.is_empty() {
        // A forced move: nothing to weigh.
        moves
            .iter()
            .map(|&m| candidate(state, m, 0, None, 1.0, None, &[m]))
            .collect()
    } else {
        lines
            .iter()
            .map(|l| candidate(state, l.mv, l.visits, l.q, l.prior, l.proof, &l.pv))
            .collect()
    };
    Ok(SearchInsight {
        net: name,
        sims: player.last_stats().map_or(0, |s| s.simulations),
        value,
        candidates,
        view: view(state),
    })
}

fn candidate(
    state: &State,
    mv: engine::Move,
    visits: u32,
    q: Option<f32>,
    prior: f32,
    proof: Option<f32>,
    pv: &[engine::Move],
) -> Candidate {
    let (from, to) = move_cells(mv);
    let mut s = *state;
    let mut texts = vec![];
    for &m in pv {
        if s.result().is_some() || !s.is_legal(m) {
            break;
        }
        texts.push(s.move_to_string(m));
        s = s.after(m);
    }
    Candidate {
        text: state.move_to_string(mv),
        from,
        to,
        visits,
        q,
        prior,
        proof: proof.map(|p| {
            if p > 0.0 {
                "win"
            } else if p < 0.0 {
                "loss"
            } else {
                "draw"
            }
        }),
        pv: texts,
    }
}
