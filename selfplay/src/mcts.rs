//! Monte-Carlo tree search over the game interface, written as a state machine that hands
//! out one leaf at a time ([`Search::next_request`]) and takes its evaluation back
//! ([`Search::apply`]), so that a worker can batch the leaves of many games into one
//! evaluator call.
//!
//! Values are stored on each node from the view of the player who moved into it, so a
//! parent reads its children's values directly. Every ply (a pass included) changes the
//! side to move, so views alternate along a path.

use std::collections::VecDeque;

use engine::{Move, Rng, State, Symmetry};

use crate::evaluator::Evaluation;

pub mod cache;
pub mod endgame;
mod gumbel;
mod noise;
pub mod play;
pub mod player;
mod reuse;
pub mod time;

use gumbel::Gumbel;
use noise::{dirichlet, gumbel_noise};

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

const NONE: u32 = u32::MAX;

/// A node's search statistics. Its position lives apart, in [`Search::states`] at the
/// same index: PUCT reads the statistics of every child of a node, and these small
/// records keep that scan within a few cache lines (with the position inline, a node
/// took two, and the scan was the search's largest cost).
#[derive(Clone, Debug)]
struct Node {
    first_edge: u32,
    num_edges: u32,
    visits: u32,
    /// Sum of values from the view of the player who moved into this node.
    value_sum: f32,
    /// The exact value for the side to move here, when it is known: a finished game, a
    /// position the tree has proven (MCTS-solver: a move to a proven loss of the
    /// opponent wins; all moves proven, the best of them), or one the endgame solver
    /// solved. Descents stop at such a node and back its exact value up.
    exact: Option<f32>,
    expanded: bool,
    /// Simulations through this node whose leaf awaits its evaluation (virtual loss:
    /// each counts as a visit lost by the player who moved into this node).
    in_flight: u32,
}

#[derive(Clone, Copy, Debug)]
struct Edge {
    mv: Move,
    prior: f32,
    child: u32,
}

/// A position for the evaluator, already mapped by the symmetry chosen for it.
#[derive(Clone, Debug)]
pub struct LeafRequest {
    /// The (transformed) position.
    pub state: State,
    /// Its legal moves, transformed the same way and in the tree's order.
    pub moves: Vec<Move>,
    /// The tree's position (untransformed): an evaluation of `state` is one of this
    /// position with its legal moves in the order [`State::legal_moves`] gives.
    pub position: State,
}

/// A leaf handed out by [`Search::gather`] and not yet evaluated.
#[derive(Clone, Debug)]
struct PendingLeaf {
    /// The path from the root to the leaf, `LeafBatch::paths[path.0..path.1]`; every
    /// node on it carries one virtual loss.
    path: (u32, u32),
    /// The leaf's legal moves in the tree's order, `LeafBatch::moves[m.0..m.1]`; `None`
    /// for a collision (a descent that met a leaf already awaiting its evaluation),
    /// which only holds virtual loss.
    moves: Option<(u32, u32)>,
}

/// Leaves gathered by [`Search::gather`]: the positions to evaluate, and the paths to
/// give their evaluations back to with [`Search::apply_batch`]. The paths and moves of
/// all leaves share two buffers, and a batch given back is kept by its search for the
/// next [`Search::gather`]: a descent allocates nothing but its request's moves.
#[derive(Debug, Default)]
pub struct LeafBatch {
    /// The positions for the evaluator, in order (collisions have none).
    pub requests: Vec<LeafRequest>,
    leaves: Vec<PendingLeaf>,
    paths: Vec<u32>,
    moves: Vec<Move>,
}

impl LeafBatch {
    /// Whether the batch holds nothing to evaluate or give back.
    pub fn is_empty(&self) -> bool {
        self.leaves.is_empty()
    }

    fn clear(&mut self) {
        self.requests.clear();
        self.leaves.clear();
        self.paths.clear();
        self.moves.clear();
    }

    fn path(&self, leaf: &PendingLeaf) -> &[u32] {
        &self.paths[leaf.path.0 as usize..leaf.path.1 as usize]
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

/// One game's search tree and the progress of the current search.
pub struct Search {
    nodes: Vec<Node>,
    /// The position of each node of `nodes`, at the same index.
    states: Vec<State>,
    edges: Vec<Edge>,
    root: u32,
    sims_target: u32,
    sims_done: u32,
    full: bool,
    /// Leaves handed out and not yet given back (collisions excluded).
    in_flight: u32,
    /// The batch of [`Search::next_request`], awaiting [`Search::apply`].
    pending: Option<LeafBatch>,
    gumbel: Option<Gumbel>,
    /// The root's priors as the evaluator gave them (before root noise).
    root_prior: Vec<f32>,
    root_value: f32,
    symmetries: Vec<Symmetry>,
    /// The endgame solver's tables, made when first needed.
    endgame: Option<Box<engine::search::Searcher>>,
    /// The last batch given back, emptied, for the next [`Search::gather`].
    recycled: Option<LeafBatch>,
    /// The buffers of the tree before the last [`Search::advance`] or
    /// [`Search::reroot`], emptied: the next subtree is copied into them, so that a game's
    /// trees reuse memory the process already has (fresh pages cost the kernel's zeroing).
    spare: Spare,
}

/// Emptied buffers of an earlier tree (see `Search::spare`; used by `reuse`).
#[derive(Default)]
struct Spare {
    nodes: Vec<Node>,
    states: Vec<State>,
    edges: Vec<Edge>,
    queue: VecDeque<(u32, u32)>,
}

fn terminal_value(s: &State) -> Option<f32> {
    if s.count_moves() > 0 {
        return None;
    }
    let r = s.result()?;
    Some(match r.winner {
        None => 0.0,
        Some(w) if w == s.side_to_move() => 1.0,
        Some(_) => -1.0,
    })
}

impl Search {
    /// A fresh tree rooted at `root`.
    pub fn new(root: State) -> Search {
        let symmetries = root.symmetries();
        Search::with_symmetries(root, symmetries)
    }

    fn with_symmetries(root: State, symmetries: Vec<Symmetry>) -> Search {
        let mut s = Search {
            nodes: Vec::new(),
            states: Vec::new(),
            edges: Vec::new(),
            root: 0,
            sims_target: 0,
            sims_done: 0,
            full: true,
            in_flight: 0,
            pending: None,
            gumbel: None,
            root_prior: Vec::new(),
            root_value: 0.0,
            symmetries,
            endgame: None,
            recycled: None,
            spare: Spare::default(),
        };
        s.root = s.alloc(root);
        s
    }

    fn alloc(&mut self, state: State) -> u32 {
        self.nodes.push(Node {
            first_edge: 0,
            num_edges: 0,
            visits: 0,
            value_sum: 0.0,
            exact: terminal_value(&state),
            expanded: false,
            in_flight: 0,
        });
        self.states.push(state);
        (self.nodes.len() - 1) as u32
    }

    /// The root position.
    pub fn root_state(&self) -> State {
        self.states[self.root as usize]
    }

    /// Nodes in the tree.
    pub fn tree_size(&self) -> usize {
        self.nodes.len()
    }

    /// Bytes the tree's nodes, their positions and their moves take.
    pub fn tree_bytes(&self) -> usize {
        self.nodes.len() * size_of::<Node>()
            + self.states.len() * size_of::<State>()
            + self.edges.len() * size_of::<Edge>()
    }

    /// Starts a search of `sims` simulations at the root. A full search gets root noise
    /// (PUCT) and forced playouts; a fast one (playout-cap randomization) gets neither.
    pub fn start(&mut self, sims: u32, full: bool, cfg: &MctsConfig, rng: &mut Rng) {
        self.sims_target = sims.max(1);
        self.sims_done = 0;
        self.full = full;
        self.pending = None;
        self.in_flight = 0;
        self.gumbel = None;
        if self.nodes[self.root as usize].expanded {
            self.prepare_root(cfg, rng);
        }
    }

    /// Whether the current search has used its simulations, or has proven the root.
    pub fn finished(&self) -> bool {
        let root = &self.nodes[self.root as usize];
        root.expanded && (self.sims_done >= self.sims_target || root.exact.is_some())
    }

    /// The root's exact value for its side to move, once the tree has proven it.
    pub fn proven(&self) -> Option<f32> {
        let root = &self.nodes[self.root as usize];
        root.exact.filter(|_| root.expanded)
    }

    /// Proves what it can of the nodes of `path` above its last one (whose value is
    /// exact), from the bottom up, stopping at the first that stays unproven.
    fn prove_path(&mut self, path: &[u32]) {
        for &id in path.iter().rev().skip(1) {
            if !self.prove(id) {
                break;
            }
        }
    }

    /// Proves node `id` from its children when they allow it: a move to a position lost
    /// for the opponent wins; when every move leads to a proven position, the node is
    /// worth the best of them. Returns whether the node is proven.
    fn prove(&mut self, id: u32) -> bool {
        let n = &self.nodes[id as usize];
        if n.exact.is_some() {
            return true;
        }
        if !n.expanded || n.num_edges == 0 {
            return false;
        }
        let mut best = f32::NEG_INFINITY;
        let mut all = true;
        for e in &self.edges[n.first_edge as usize..(n.first_edge + n.num_edges) as usize] {
            match (e.child != NONE)
                .then(|| self.nodes[e.child as usize].exact)
                .flatten()
            {
                Some(v) if -v >= 1.0 => {
                    best = 1.0;
                    all = true;
                    break;
                }
                Some(v) => best = best.max(-v),
                None => all = false,
            }
        }
        if all {
            self.nodes[id as usize].exact = Some(best);
        }
        all
    }

    /// The proven value of the move of edge `e` for the side that plays it, if any.
    fn edge_proof(&self, e: &Edge) -> Option<f32> {
        (e.child != NONE)
            .then(|| self.nodes[e.child as usize].exact)
            .flatten()
            .map(|v| -v)
    }

    /// Simulations run in the current search.
    pub fn simulations(&self) -> u32 {
        self.sims_done
    }

    /// Noise and the Gumbel schedule, once the root has priors.
    fn prepare_root(&mut self, cfg: &MctsConfig, rng: &mut Rng) {
        let root = self.nodes[self.root as usize].clone();
        let range = root.first_edge as usize..(root.first_edge + root.num_edges) as usize;
        self.root_prior = self.edges[range.clone()].iter().map(|e| e.prior).collect();
        if cfg.root == RootKind::Gumbel {
            let logits: Vec<f32> = self.edges[range.clone()]
                .iter()
                .map(|e| e.prior.max(1e-12).ln())
                .collect();
            let g: Vec<f32> = if self.full {
                (0..logits.len()).map(|_| gumbel_noise(rng)).collect()
            } else {
                vec![0.0; logits.len()]
            };
            let mut order: Vec<usize> = (0..logits.len()).collect();
            order.sort_by(|&a, &b| (g[b] + logits[b]).total_cmp(&(g[a] + logits[a])));
            let m = cfg.gumbel_k.clamp(1, logits.len());
            order.truncate(m);
            let phases = (m as f32).log2().ceil().max(1.0) as u32;
            let mut gs = Gumbel {
                g,
                logits,
                remaining: order,
                queue: VecDeque::new(),
                phases_left: phases,
                budget: self.sims_target,
                scheduled: 0,
            };
            gs.plan_phase();
            self.gumbel = Some(gs);
        } else if self.full && cfg.dirichlet_epsilon > 0.0 && root.num_edges > 1 {
            let alpha = cfg.dirichlet_total_alpha / root.num_edges as f32;
            let noise = dirichlet(rng, alpha, root.num_edges as usize);
            for (e, n) in self.edges[range].iter_mut().zip(noise) {
                e.prior = (1.0 - cfg.dirichlet_epsilon) * e.prior + cfg.dirichlet_epsilon * n;
            }
        }
    }

    /// The next leaf to evaluate, or `None` when the search is finished. Finished games
    /// met on the way are scored exactly and count as simulations.
    pub fn next_request(&mut self, cfg: &MctsConfig, rng: &mut Rng) -> Option<LeafRequest> {
        debug_assert!(self.pending.is_none(), "apply the pending evaluation first");
        loop {
            if self.finished() {
                return None;
            }
            let batch = self.gather(1, cfg, rng);
            if let Some(req) = batch.requests.first().cloned() {
                self.pending = Some(batch);
                return Some(req);
            }
            // A descent that ended in a finished game: already backed up.
            debug_assert!(batch.leaves.is_empty());
            self.recycle(batch);
        }
    }

    /// Takes the evaluation of the last requested leaf: expands it and backs the value up.
    pub fn apply(&mut self, eval: &Evaluation, cfg: &MctsConfig, rng: &mut Rng) {
        let batch = self.pending.take().expect("an evaluation was requested");
        self.apply_batch(batch, std::slice::from_ref(eval), cfg, rng);
    }

    /// Descents from the root under virtual loss, for one evaluator call, until `max`
    /// leaves are gathered or `max` descents did not find one: each descent ends at a
    /// leaf to evaluate, at a finished game (scored and backed up at once, a simulation),
    /// or at a leaf already awaiting its evaluation (a collision: it holds its virtual
    /// loss until the batch is given back, so that the next descents go elsewhere). With
    /// `max` 1, one descent is made. The batch may be empty: the search is finished, its
    /// remaining simulations are all in flight, or the root awaits its evaluation.
    /// Several batches may be in flight at once; give each back with
    /// [`Search::apply_batch`] before [`Search::outcome`] or [`Search::advance`].
    pub fn gather(&mut self, max: usize, cfg: &MctsConfig, rng: &mut Rng) -> LeafBatch {
        let mut batch = self.recycled.take().unwrap_or_default();
        let root = &self.nodes[self.root as usize];
        if !root.expanded {
            if root.in_flight == 0 {
                let start = batch.paths.len();
                batch.paths.push(self.root);
                self.add_virtual_loss(&[self.root]);
                self.push_request(self.root, &mut batch, start, cfg, rng);
            }
            return batch;
        }
        let max = max.max(1);
        // Descents that found no leaf to evaluate, less those that did.
        let mut misses = 0;
        // One endgame solve a batch at most: each may take its whole node budget, and a
        // timed search can only stop between batches.
        let mut may_solve = true;
        while batch.requests.len() < max && misses < max {
            if self.sims_done + self.in_flight >= self.sims_target
                || self.nodes[self.root as usize].exact.is_some()
            {
                break;
            }
            misses += 1;
            let start = batch.paths.len();
            batch.paths.push(self.root);
            let mut node = self.root;
            loop {
                let n = &self.nodes[node as usize];
                if let Some(v) = n.exact {
                    let path = &batch.paths[start..];
                    self.backup(path, v);
                    self.prove_path(path);
                    self.sims_done += 1;
                    batch.paths.truncate(start);
                    break;
                }
                if !n.expanded {
                    let collision = n.in_flight > 0;
                    self.add_virtual_loss(&batch.paths[start..]);
                    if collision {
                        let path = (start as u32, batch.paths.len() as u32);
                        batch.leaves.push(PendingLeaf { path, moves: None });
                        break;
                    }
                    if let Some(v) = self.solve_endgame(node, cfg, &mut may_solve) {
                        // Solved: a finished game from now on.
                        let path = &batch.paths[start..];
                        for &id in path {
                            let n = &mut self.nodes[id as usize];
                            n.in_flight = n.in_flight.saturating_sub(1);
                        }
                        self.nodes[node as usize].exact = Some(v);
                        self.backup(path, v);
                        self.prove_path(path);
                        self.sims_done += 1;
                        batch.paths.truncate(start);
                        break;
                    }
                    misses -= 1;
                    self.in_flight += 1;
                    self.push_request(node, &mut batch, start, cfg, rng);
                    break;
                }
                let edge = if node == self.root {
                    self.pick_root(cfg)
                } else {
                    self.pick_puct(node, cfg, false)
                };
                node = self.child(edge, node);
                batch.paths.push(node);
            }
        }
        batch
    }

    /// Keeps a batch given back (emptied) for the next [`Search::gather`].
    fn recycle(&mut self, mut batch: LeafBatch) {
        batch.clear();
        self.recycled = Some(batch);
    }

    /// The exact value of leaf `node` when the endgame solver proves it (see
    /// [`MctsConfig::endgame_empties`]); `may_solve` is cleared by an attempt.
    fn solve_endgame(&mut self, node: u32, cfg: &MctsConfig, may_solve: &mut bool) -> Option<f32> {
        if !*may_solve || cfg.endgame_empties == 0 {
            return None;
        }
        let s = self.states[node as usize];
        if s.cells_to_fill() > cfg.endgame_empties {
            return None;
        }
        *may_solve = false;
        let searcher = self
            .endgame
            .get_or_insert_with(|| Box::new(engine::search::Searcher::full_width(1)));
        endgame::solve(searcher, &s, cfg.endgame_nodes)
    }

    fn add_virtual_loss(&mut self, path: &[u32]) {
        for &id in path {
            self.nodes[id as usize].in_flight += 1;
        }
    }

    /// Adds the request of leaf `node`, whose path is `batch.paths[start..]`, to `batch`.
    fn push_request(
        &mut self,
        node: u32,
        batch: &mut LeafBatch,
        start: usize,
        cfg: &MctsConfig,
        rng: &mut Rng,
    ) {
        let state = self.states[node as usize];
        let first = batch.moves.len();
        state.for_each_legal(|m| batch.moves.push(m));
        let moves = &batch.moves[first..];
        let req = if cfg.symmetry && self.symmetries.len() > 1 {
            let sym = &self.symmetries[rng.below(self.symmetries.len() as u64) as usize];
            LeafRequest {
                state: state.transform(sym),
                moves: moves.iter().map(|&m| sym.apply(m)).collect(),
                position: state,
            }
        } else {
            LeafRequest {
                state,
                moves: moves.to_vec(),
                position: state,
            }
        };
        batch.requests.push(req);
        batch.leaves.push(PendingLeaf {
            path: (start as u32, batch.paths.len() as u32),
            moves: Some((first as u32, batch.moves.len() as u32)),
        });
    }

    /// Gives back a batch from [`Search::gather`] with the evaluations of its requests
    /// (in order): removes its virtual losses, expands its leaves and backs their values
    /// up. Collisions only give their virtual loss back.
    pub fn apply_batch(
        &mut self,
        batch: LeafBatch,
        evals: &[Evaluation],
        cfg: &MctsConfig,
        rng: &mut Rng,
    ) {
        debug_assert_eq!(batch.requests.len(), evals.len());
        let mut evals = evals.iter();
        for leaf in &batch.leaves {
            let path = batch.path(leaf);
            for &id in path {
                let n = &mut self.nodes[id as usize];
                n.in_flight = n.in_flight.saturating_sub(1);
            }
            let Some((m0, m1)) = leaf.moves else { continue };
            let eval = evals.next().expect("an evaluation for every request");
            let node = *path.last().expect("a path holds its leaf");
            self.expand(node, &batch.moves[m0 as usize..m1 as usize], eval);
            if node == self.root {
                // The root is only requested before its expansion: its own evaluation
                // is not a simulation.
                self.root_value = eval.value;
                let root = &mut self.nodes[node as usize];
                root.visits += 1;
                root.value_sum -= eval.value;
                self.prepare_root(cfg, rng);
                continue;
            }
            self.in_flight = self.in_flight.saturating_sub(1);
            self.backup(path, eval.value);
            self.sims_done += 1;
        }
        self.recycle(batch);
    }

    fn expand(&mut self, node: u32, moves: &[Move], eval: &Evaluation) {
        debug_assert_eq!(moves.len(), eval.policy.len());
        let first = self.edges.len() as u32;
        let sum: f32 = eval.policy.iter().sum::<f32>().max(1e-12);
        for (&mv, &p) in moves.iter().zip(&eval.policy) {
            self.edges.push(Edge {
                mv,
                prior: p / sum,
                child: NONE,
            });
        }
        let n = &mut self.nodes[node as usize];
        n.first_edge = first;
        n.num_edges = moves.len() as u32;
        n.expanded = true;
    }

    /// Backs up `v`, the value for the side to move at the last node of `path`.
    fn backup(&mut self, path: &[u32], v: f32) {
        let mut x = -v;
        for &id in path.iter().rev() {
            let n = &mut self.nodes[id as usize];
            n.visits += 1;
            n.value_sum += x;
            x = -x;
        }
    }

    fn child(&mut self, edge: usize, parent: u32) -> u32 {
        let e = self.edges[edge];
        if e.child != NONE {
            return e.child;
        }
        let parent_state = self.states[parent as usize];
        let id = self.alloc(parent_state.after(e.mv));
        self.edges[edge].child = id;
        id
    }

    /// A child's value and visits, each simulation in flight through it counted as a
    /// visit lost (virtual loss); `None` while it has neither.
    /// A proven child's value is its exact one.
    fn q_and_visits(&self, e: &Edge) -> Option<(f32, u32)> {
        if e.child == NONE {
            return None;
        }
        let c = &self.nodes[e.child as usize];
        let n = c.visits + c.in_flight;
        if n == 0 {
            return None;
        }
        let q = match c.exact {
            Some(v) => -v,
            None => (c.value_sum - c.in_flight as f32) / n as f32,
        };
        Some((q, n))
    }

    fn pick_puct(&self, node: u32, cfg: &MctsConfig, forced: bool) -> usize {
        let n = &self.nodes[node as usize];
        let range = n.first_edge as usize..(n.first_edge + n.num_edges) as usize;
        let parent_q = if n.visits > 0 {
            -n.value_sum / n.visits as f32
        } else {
            0.0
        };
        // One pass for the prior mass already visited and the children's visits.
        let (visited_mass, child_total) = self.edges[range.clone()]
            .iter()
            .filter_map(|e| self.q_and_visits(e).map(|(_, v)| (e.prior, v)))
            .fold((0.0f32, 0u32), |(m, t), (p, v)| (m + p, t + v));
        let fpu = parent_q - cfg.fpu_reduction * visited_mass.sqrt();
        let sqrt_n = (child_total.max(1) as f32).sqrt();
        let mut best = range.start;
        let mut best_score = f32::NEG_INFINITY;
        for i in range {
            let e = &self.edges[i];
            match self.edge_proof(e) {
                // A proven win is taken; a proven loss is never searched again (the node
                // would be proven lost if every move were).
                Some(p) if p >= 1.0 => return i,
                Some(p) if p <= -1.0 => continue,
                _ => {}
            }
            let (q, nv) = self.q_and_visits(e).unwrap_or((fpu, 0));
            if forced && (nv as f32) < (2.0 * e.prior * child_total as f32).sqrt() {
                return i;
            }
            let score = q + cfg.c_puct * e.prior * sqrt_n / (1 + nv) as f32;
            if score > best_score {
                best_score = score;
                best = i;
            }
        }
        best
    }

    fn pick_root(&mut self, cfg: &MctsConfig) -> usize {
        let first = self.nodes[self.root as usize].first_edge as usize;
        if self.gumbel.is_some() {
            if self.gumbel.as_ref().is_some_and(|g| g.queue.is_empty()) {
                self.halve(cfg);
            }
            let g = self.gumbel.as_mut().expect("gumbel root");
            let a = g.queue.pop_front().expect("the schedule covers the budget");
            return first + a;
        }
        let forced = self.full && cfg.forced_playouts;
        self.pick_puct(self.root, cfg, forced)
    }

    /// Gumbel score of root action `a`: g + logit + σ(q̂).
    fn gumbel_score(&self, a: usize, cfg: &MctsConfig) -> f32 {
        let g = self.gumbel.as_ref().expect("gumbel root");
        let first = self.nodes[self.root as usize].first_edge as usize;
        let max_n = self.root_child_visits().into_iter().max().unwrap_or(0) as f32;
        let q = self
            .q_and_visits(&self.edges[first + a])
            .map_or(self.root_value, |(q, _)| q);
        g.g[a] + g.logits[a] + (cfg.gumbel_c_visit + max_n) * cfg.gumbel_c_scale * (q + 1.0) / 2.0
    }

    /// Keeps the better half of the remaining Gumbel actions and plans the next phase.
    fn halve(&mut self, cfg: &MctsConfig) {
        let mut remaining = self.gumbel.as_ref().expect("gumbel").remaining.clone();
        if remaining.len() > 1 {
            remaining.sort_by(|&a, &b| {
                self.gumbel_score(b, cfg)
                    .total_cmp(&self.gumbel_score(a, cfg))
            });
            remaining.truncate(remaining.len().div_ceil(2));
        }
        let g = self.gumbel.as_mut().expect("gumbel");
        g.remaining = remaining;
        g.phases_left = g.phases_left.saturating_sub(1).max(1);
        g.plan_phase();
    }

    /// Each move of node `id` with the visits given back to it (none in flight), in the
    /// tree's order; none before the node's expansion. Allocation-free: the play loop
    /// reads the root's after every batch.
    pub(crate) fn child_visits(&self, id: u32) -> impl Iterator<Item = (Move, u32)> + '_ {
        let n = &self.nodes[id as usize];
        self.edges[n.first_edge as usize..(n.first_edge + n.num_edges) as usize]
            .iter()
            .map(|e| {
                let v = if e.child == NONE {
                    0
                } else {
                    self.nodes[e.child as usize].visits
                };
                (e.mv, v)
            })
    }

    fn root_child_visits(&self) -> Vec<u32> {
        let r = &self.nodes[self.root as usize];
        (r.first_edge..r.first_edge + r.num_edges)
            .map(|i| {
                self.q_and_visits(&self.edges[i as usize])
                    .map_or(0, |x| x.1)
            })
            .collect()
    }

    /// Each root move's line of the search as an analysis board shows it, most visited
    /// first: visits, mean value and prior, proof, and the principal variation (the most
    /// visited reply at each step, up to `pv_len` moves from the root move on).
    pub fn root_lines(&self, pv_len: usize) -> Vec<RootLine> {
        let r = &self.nodes[self.root as usize];
        let mut lines: Vec<RootLine> = self.edges
            [r.first_edge as usize..(r.first_edge + r.num_edges) as usize]
            .iter()
            .map(|e| {
                let qv = self.q_and_visits(e);
                let mut pv = vec![e.mv];
                let mut node = e.child;
                while pv.len() < pv_len.max(1) && node != NONE {
                    let n = &self.nodes[node as usize];
                    let next = self.edges
                        [n.first_edge as usize..(n.first_edge + n.num_edges) as usize]
                        .iter()
                        .filter_map(|c| self.q_and_visits(c).map(|(_, v)| (v, c)))
                        .max_by_key(|(v, _)| *v);
                    let Some((_, c)) = next else { break };
                    pv.push(c.mv);
                    node = c.child;
                }
                RootLine {
                    mv: e.mv,
                    visits: qv.map_or(0, |x| x.1),
                    q: qv.map(|x| x.0),
                    prior: e.prior,
                    proof: self.edge_proof(e),
                    pv,
                }
            })
            .collect();
        lines.sort_by(|a, b| b.visits.cmp(&a.visits).then(b.prior.total_cmp(&a.prior)));
        lines
    }

    /// The root's mean value for its side to move (its exact value when proven).
    pub fn root_value(&self) -> f32 {
        let r = &self.nodes[self.root as usize];
        match r.exact {
            Some(v) => v,
            None if r.visits > 0 => -r.value_sum / r.visits as f32,
            None => 0.0,
        }
    }

    /// The result of the finished search.
    pub fn outcome(&self, cfg: &MctsConfig) -> SearchOutcome {
        let r = &self.nodes[self.root as usize];
        let range = r.first_edge as usize..(r.first_edge + r.num_edges) as usize;
        let moves: Vec<Move> = self.edges[range.clone()].iter().map(|e| e.mv).collect();
        let visits = self.root_child_visits();
        let root_q = self.root_value();
        let proofs: Vec<Option<f32>> = self.edges[range.clone()]
            .iter()
            .map(|e| self.edge_proof(e))
            .collect();
        let (mut policy, best) = if let Some(g) = &self.gumbel {
            let best = *g
                .remaining
                .iter()
                .max_by(|&&a, &&b| {
                    self.gumbel_score(a, cfg)
                        .total_cmp(&self.gumbel_score(b, cfg))
                })
                .expect("at least one action");
            (self.completed_q_policy(cfg), best)
        } else {
            let best = (0..visits.len())
                .max_by_key(|&i| (visits[i], std::cmp::Reverse(i)))
                .unwrap_or(0);
            let target = if self.full && cfg.forced_playouts {
                self.pruned_visits(cfg, best)
            } else {
                visits.clone()
            };
            let total: u32 = target.iter().sum();
            let policy = if total == 0 {
                vec![1.0 / visits.len() as f32; visits.len()]
            } else {
                target.iter().map(|&v| v as f32 / total as f32).collect()
            };
            (policy, best)
        };
        // The solver's word over the visits: a proven win is played (and is the policy
        // target), a proven loss only when every move loses.
        let most_visited = |keep: &dyn Fn(Option<f32>) -> bool| {
            (0..visits.len())
                .filter(|&i| keep(proofs[i]))
                .max_by_key(|&i| (visits[i], std::cmp::Reverse(i)))
        };
        let best = if let Some(win) = most_visited(&|p| p.is_some_and(|p| p >= 1.0)) {
            policy = (0..visits.len())
                .map(|i| f32::from(u8::from(i == win)))
                .collect();
            win
        } else if proofs[best].is_some_and(|p| p <= -1.0) {
            most_visited(&|p| p.is_none_or(|p| p > -1.0)).unwrap_or(best)
        } else {
            best
        };
        SearchOutcome {
            best: moves[best],
            moves,
            policy,
            visits,
            root_q,
            prior: self.root_prior.clone(),
            proven: r.exact.filter(|_| r.expanded),
            move_proofs: proofs,
        }
    }

    /// KataGo's policy-target pruning: take back from each non-best child the forced
    /// playouts that its PUCT value would not have earned.
    fn pruned_visits(&self, cfg: &MctsConfig, best: usize) -> Vec<u32> {
        let r = &self.nodes[self.root as usize];
        let first = r.first_edge as usize;
        let mut visits = self.root_child_visits();
        let total: u32 = visits.iter().sum();
        let sqrt_n = (total.max(1) as f32).sqrt();
        let edge = |i: usize| &self.edges[first + i];
        let (qb, nb) = self.q_and_visits(edge(best)).unwrap_or((0.0, 0));
        let best_puct = qb + cfg.c_puct * edge(best).prior * sqrt_n / (1 + nb) as f32;
        for (i, v) in visits.iter_mut().enumerate() {
            if i == best || *v == 0 {
                continue;
            }
            let (q, _) = self.q_and_visits(edge(i)).expect("visited");
            let forced = (2.0 * edge(i).prior * total as f32).sqrt() as u32;
            let floor = v.saturating_sub(forced);
            while *v > floor && q + cfg.c_puct * edge(i).prior * sqrt_n / (*v as f32) < best_puct {
                *v -= 1;
            }
            if *v <= 1 {
                *v = 0;
            }
        }
        visits
    }

    /// softmax(logits + σ(completed Q)) over every root move (Gumbel MuZero).
    fn completed_q_policy(&self, cfg: &MctsConfig) -> Vec<f32> {
        let g = self.gumbel.as_ref().expect("gumbel root");
        let r = &self.nodes[self.root as usize];
        let first = r.first_edge as usize;
        let visits = self.root_child_visits();
        let total: u32 = visits.iter().sum();
        let max_n = visits.iter().copied().max().unwrap_or(0) as f32;
        let scale = |q: f32| (cfg.gumbel_c_visit + max_n) * cfg.gumbel_c_scale * (q + 1.0) / 2.0;
        // v_mix: the network value blended with the prior-weighted value of visited moves.
        let (mut mass, mut weighted) = (0.0f32, 0.0f32);
        for i in 0..visits.len() {
            if let Some((q, _)) = self.q_and_visits(&self.edges[first + i]) {
                mass += self.edges[first + i].prior;
                weighted += self.edges[first + i].prior * q;
            }
        }
        let v_mix = if mass > 0.0 {
            (self.root_value + total as f32 * weighted / mass) / (1.0 + total as f32)
        } else {
            self.root_value
        };
        let z: Vec<f32> = (0..visits.len())
            .map(|i| {
                let q = self
                    .q_and_visits(&self.edges[first + i])
                    .map_or(v_mix, |(q, _)| q);
                g.logits[i] + scale(q)
            })
            .collect();
        let m = z.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
        let e: Vec<f32> = z.iter().map(|x| (x - m).exp()).collect();
        let s: f32 = e.iter().sum();
        e.iter().map(|x| x / s).collect()
    }
}
