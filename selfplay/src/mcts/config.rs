//! The search's settings.

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
    /// A leaf is first evaluated for its value alone, and expanded (its policy
    /// evaluated, its moves stored) when a descent reaches it again; that descent is no
    /// simulation, the next one goes through it (Monty's rule). Most leaves are visited
    /// once: their policies are never computed and their moves never stored.
    pub lazy_expansion: bool,
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
            lazy_expansion: false,
        }
    }
}
