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
/// Candidates (the most visited) whose lines carry their positions for the page's
/// previews: as many as its table shows.
pub const PREVIEWS: usize = 12;

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
    /// The position after each move of `pv`, as text (the page plays a line into its
    /// variation tree from these); for the [`PREVIEWS`] most visited candidates only.
    pub pv_positions: Vec<String>,
    /// The position at the end of `pv` (the page previews a line on its board); for the
    /// [`PREVIEWS`] most visited candidates only.
    pub pv_end: Option<PositionView>,
}

/// A network's own view of a position averaged over the board's symmetries (those that
/// keep its blocked cells): a net is not exactly symmetric, and the search evaluates
/// each position under one symmetry drawn at random, so one evaluation is one sample.
#[derive(Clone, Debug, Serialize)]
pub struct NetView {
    /// The mean value for the side to move, in [-1, 1].
    pub value: f32,
    /// The lowest and highest value over the symmetries.
    pub value_range: [f32; 2],
    /// The mean win / draw / loss probabilities, when the net models them.
    pub wdl: Option<[f32; 3]>,
    /// The mean policy over the legal moves, in `state.legal_moves()` order.
    pub policy: Vec<f32>,
    /// Symmetries averaged.
    pub symmetries: usize,
}

/// `ev`'s evaluation of `state` (with legal moves `moves`) under each of its
/// symmetries, averaged; `None` when the evaluator returned nothing.
pub fn net_view(
    ev: &mut dyn selfplay::Evaluator,
    state: &State,
    moves: &[engine::Move],
) -> Option<NetView> {
    let syms = state.symmetries();
    let (states, lists): (Vec<State>, Vec<Vec<engine::Move>>) = if syms.is_empty() {
        (vec![*state], vec![moves.to_vec()])
    } else {
        syms.iter()
            .map(|s| {
                (
                    state.transform(s),
                    moves.iter().map(|&m| s.apply(m)).collect(),
                )
            })
            .unzip()
    };
    let evals = ev.evaluate(&states, &lists);
    if evals.is_empty() || evals.iter().any(|e| e.policy.len() != moves.len()) {
        return None;
    }
    let n = evals.len() as f32;
    let values: Vec<f32> = evals.iter().map(|e| e.value).collect();
    let mut policy = vec![0.0f32; moves.len()];
    for e in &evals {
        for (p, q) in policy.iter_mut().zip(&e.policy) {
            *p += q / n;
        }
    }
    let wdl = evals
        .iter()
        .map(|e| e.wdl)
        .collect::<Option<Vec<_>>>()
        .map(|w| {
            let mut m = [0.0f32; 3];
            for x in &w {
                for k in 0..3 {
                    m[k] += x[k] / n;
                }
            }
            m
        });
    Some(NetView {
        value: values.iter().sum::<f32>() / n,
        value_range: [
            values.iter().copied().fold(f32::INFINITY, f32::min),
            values.iter().copied().fold(f32::NEG_INFINITY, f32::max),
        ],
        wdl,
        policy,
        symmetries: evals.len(),
    })
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
    /// The candidate moves, most visited first. Their priors are the network's policy
    /// averaged over the board's symmetries ([`net_view`]), as the page's policy panel
    /// shows it; the search itself drew one symmetry for each position it evaluated.
    pub candidates: Vec<Candidate>,
    /// Symmetries the priors average.
    pub prior_symmetries: usize,
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
    let mut ev = eval::build_evaluator(net, game, NetEngine::Fast)
        .map_err(|e| ApiError::BadRequest(format!("network `{name}`: {e}")))?;
    let moves = state.legal_moves();
    let averaged = net_view(ev.as_mut(), state, &moves)
        .ok_or_else(|| ApiError::Internal(format!("network `{name}` gave no evaluation")))?;
    let prior_of = |m: engine::Move| {
        moves
            .iter()
            .position(|&x| x == m)
            .map_or(0.0, |i| averaged.policy[i])
    };
    let batch = eval::batch_for(Some(sims), ev.preferred_batch());
    let mut player = MctsPlayer::new(vec![ev], Thinking::Sims(sims), batch, seed)
        .map_err(|e| ApiError::Internal(format!("network `{name}`: {e}")))?;
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
    // A forced move (not searched) is a line of itself with no visits.
    let lines = if lines.is_empty() {
        moves
            .iter()
            .map(|&mv| selfplay::RootLine {
                mv,
                visits: 0,
                q: None,
                prior: 1.0,
                proof: None,
                pv: vec![mv],
            })
            .collect()
    } else {
        lines
    };
    let candidates = lines
        .iter()
        .enumerate()
        .map(|(i, l)| candidate(state, l, prior_of(l.mv), i < PREVIEWS))
        .collect();
    Ok(SearchInsight {
        net: name,
        sims: player.last_stats().map_or(0, |s| s.simulations),
        value,
        candidates,
        prior_symmetries: averaged.symmetries,
        view: view(state),
    })
}

/// The candidate of root line `l` with the network's averaged `prior`; with `preview`,
/// the positions along its line and the view of its end too.
fn candidate(state: &State, l: &selfplay::RootLine, prior: f32, preview: bool) -> Candidate {
    let (from, to) = move_cells(l.mv);
    let mut s = *state;
    let mut texts = vec![];
    let mut positions = vec![];
    for &m in &l.pv {
        if s.result().is_some() || !s.is_legal(m) {
            break;
        }
        texts.push(s.move_to_string(m));
        s = s.after(m);
        if preview {
            positions.push(s.text());
        }
    }
    Candidate {
        text: state.move_to_string(l.mv),
        from,
        to,
        visits: l.visits,
        q: l.q,
        prior,
        proof: l.proof.map(|p| {
            if p > 0.0 {
                "win"
            } else if p < 0.0 {
                "loss"
            } else {
                "draw"
            }
        }),
        pv: texts,
        pv_positions: positions,
        pv_end: preview.then(|| view(&s)),
    }
}
