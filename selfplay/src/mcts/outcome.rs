//! What a search reports: its outcome at the root, and the root's lines.

use engine::Move;

/// What a finished search found at the root.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchOutcome {
    /// Root moves, in the order of `policy` and `visits`.
    pub moves: Vec<Move>,
    /// The policy target over `moves` (sums to 1).
    pub policy: Vec<f32>,
    /// Visits of each root move.
    pub visits: Vec<u32>,
    /// The move the search chose (before any temperature is applied by the driver).
    pub best: Move,
    /// The root's value for its side to move.
    pub root_q: f32,
    /// The evaluator's prior over `moves`, before any root noise.
    pub prior: Vec<f32>,
    /// The root's exact value for its side to move, when the search proved it.
    pub proven: Option<f32>,
    /// For each of `moves`, its exact value for the side that plays it, when proven
    /// (1 a win, −1 a loss, 0 a draw).
    pub move_proofs: Vec<Option<f32>>,
}

impl SearchOutcome {
    /// KataGo's policy surprise: the KL divergence of the policy target from the
    /// evaluator's prior, `Σ t · ln(t / p)` over the moves the target visits, in nats.
    pub fn surprise(&self) -> f32 {
        self.policy
            .iter()
            .zip(&self.prior)
            .filter(|&(&t, _)| t > 0.0)
            .map(|(&t, &p)| t * (t / p.max(1e-12)).ln())
            .sum::<f32>()
            .max(0.0)
    }
}

/// One root move as the search sees it ([`Search::root_lines`]).
#[derive(Clone, Debug, PartialEq)]
pub struct RootLine {
    /// The move.
    pub mv: Move,
    /// Simulations through it.
    pub visits: u32,
    /// Its mean value for the side that plays it (none before its first visit).
    pub q: Option<f32>,
    /// The evaluator's prior.
    pub prior: f32,
    /// Its exact value for the side that plays it, when proven.
    pub proof: Option<f32>,
    /// The principal variation, from this move on.
    pub pv: Vec<Move>,
}
