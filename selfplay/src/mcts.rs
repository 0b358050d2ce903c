//! Monte-Carlo tree search over the game interface, written as a state machine that hands
//! out one leaf at a time ([`Search::next_request`]) and takes its evaluation back
//! ([`Search::apply`]), so that a worker can batch the leaves of many games into one
//! evaluator call.
//!
//! Values are stored on each move (edge) from the view of the side that plays it, so a
//! node reads its moves' values directly. Every ply (a pass included) changes the
//! side to move, so views alternate along a path.
//!
//! The module by concern: [`tree`] the storage (nodes, edges carrying their children's
//! statistics, the root), `select` the choice of a move (PUCT, first-play urgency, the
//! Gumbel root and its schedule), `solver` the proofs (MCTS-solver and the exact
//! endgame), `batch` the leaves handed out and given back, `targets` what a finished
//! search reports, `reuse` moving the root down the tree; [`play`] runs a search on
//! threads within a clock.

use engine::Move;

mod batch;
pub mod cache;
pub mod endgame;
mod gumbel;
mod noise;
pub mod play;
pub mod player;
mod reuse;
mod select;
mod solver;
mod targets;
pub mod time;
pub mod tree;

pub use batch::{LeafBatch, LeafRequest};
pub use tree::Search;

/// Which rule picks the root actions.
#[derive(Clone, Copy, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RootKind {
    /// PUCT at the root, with Dirichlet noise and forced playouts on full searches.
    Puct,
    /// Gumbel-top-k sampling with Sequential Halving; completed-Q policy targets.
    Gumbel,
}

/// Search settings.
#[derive(Clone, Debug, PartialEq)]
pub struct MctsConfig {
    /// Exploration constant of PUCT.
    pub c_puct: f32,
    /// First-play urgency: an unvisited child is valued at the parent's value minus this
    /// times the square root of the prior mass already visited.
    pub fpu_reduction: f32,
    /// Total Dirichlet concentration at the root, spread over the legal moves.
    pub dirichlet_total_alpha: f32,
    /// Weight of the Dirichlet noise in the root priors (0 turns it off).
    pub dirichlet_epsilon: f32,
    /// Forced playouts at the root (k = 2) and pruning of the policy target (KataGo).
    pub forced_playouts: bool,
    /// Root selection rule.
    pub root: RootKind,
    /// Actions sampled by the Gumbel root.
    pub gumbel_k: usize,
    /// σ(q) = (c_visit + max N) · c_scale · q in the Gumbel root.
    pub gumbel_c_visit: f32,
    /// See `gumbel_c_visit`.
    pub gumbel_c_scale: f32,
    /// Evaluate every leaf under a random symmetry of the board.
    pub symmetry: bool,
    /// A leaf with at most this many cells left to fill ([`State::cells_to_fill`]: the
    /// empty cells, or the pieces left in the supplies where those run out first) is
    /// first given to alpha-beta, whose proven win or loss becomes its exact value
    /// ([`endgame`]); 0 turns it off.
    pub endgame_empties: u32,
    /// Alpha-beta nodes per such leaf.
    pub endgame_nodes: u64,
}

impl Default for MctsConfig {
    fn default() -> Self {
        MctsConfig {
            c_puct: 1.5,
            fpu_reduction: 0.2,
            dirichlet_total_alpha: 10.0,
            dirichlet_epsilon: 0.25,
            forced_playouts: true,
            root: RootKind::Puct,
            gumbel_k: 8,
            gumbel_c_visit: 50.0,
            gumbel_c_scale: 1.0,
            symmetry: true,
            endgame_empties: 0,
            endgame_nodes: 20_000,
        }
    }
}

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
