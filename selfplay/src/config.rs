//! Self-play settings: the `[selfplay]` table of a flipzero config file.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::evaluator::{BuiltinEvaluator, NetEngine};
use crate::mcts::{MctsConfig, RootKind};

/// Self-play settings. Every field has a default; unknown keys are rejected.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SelfplayConfig {
    /// Game name (see `flipzero perft --help`).
    pub game: String,
    /// Games to play.
    pub games: u64,
    /// Games a `flipzero worker selfplay` process plays and publishes as one shard
    /// directory (it reloads the best network between batches).
    pub games_per_worker_batch: u64,
    /// Worker threads.
    pub threads: usize,
    /// Games each worker plays at once; their leaves form one evaluator batch.
    pub games_per_thread: usize,
    /// Seed of everything random.
    pub seed: u64,
    /// Evaluator when no network is given: uniform, random or bootstrap.
    pub evaluator: BuiltinEvaluator,
    /// Engine that runs a trained network: fast (the CPU fast path, checked against
    /// Burn when loaded) or burn (Burn's forward pass: any architecture, slower).
    pub net_engine: NetEngine,
    /// Where Burn's engine (`net_engine = burn`) runs the network: cpu (Burn's Flex
    /// backend), cuda, cuda:N or wgpu (a GPU, in a build with that feature; checked
    /// against the fast path's outputs when the model is loaded).
    pub device: String,
    /// Simulations of a full search.
    pub simulations: u32,
    /// Simulations of a fast search (playout-cap randomization).
    pub fast_simulations: u32,
    /// Share of moves searched fully; only those become policy targets (1 = always).
    pub full_search_fraction: f32,
    /// Root rule: puct or gumbel.
    pub root: RootKind,
    /// PUCT exploration constant.
    pub c_puct: f32,
    /// First-play-urgency reduction.
    pub fpu_reduction: f32,
    /// Total Dirichlet concentration at the root (spread over the legal moves).
    pub dirichlet_total_alpha: f32,
    /// Weight of the root noise (0 = none).
    pub dirichlet_epsilon: f32,
    /// Forced playouts and policy-target pruning (PUCT root).
    pub forced_playouts: bool,
    /// Actions considered by the Gumbel root.
    pub gumbel_k: usize,
    /// Evaluate leaves under a random board symmetry.
    pub symmetry_eval: bool,
    /// Keep the subtree of the move played (PUCT root).
    pub tree_reuse: bool,
    /// Move-choice temperature for the first `temperature_plies` plies.
    pub temperature: f32,
    /// Plies played with `temperature`.
    pub temperature_plies: u32,
    /// Temperature after that (0 = most visited move).
    pub final_temperature: f32,
    /// Resign when the root value stays below this for `resign_consecutive` of one
    /// side's moves; absent = never resign.
    pub resign_threshold: Option<f32>,
    /// Consecutive low values before resigning.
    pub resign_consecutive: u32,
    /// Share of games that never resign (to check that resignations are right).
    pub no_resign_fraction: f32,
    /// A game reaching this many plies ends as a draw.
    pub max_plies: u32,
    /// Rows per Parquet shard.
    pub rows_per_shard: usize,
    /// Random plies from the start of each game's opening.
    pub opening_random_plies: u32,
    /// Openings on random blocker boards (Ataxx family).
    pub opening_blockers: bool,
    /// Up to this many more random plies (uniform from 0, per game) after
    /// `opening_random_plies`: openings of both parities and more variety.
    pub opening_extra_plies: u32,
    /// A file of opening positions, one a line (overrides the three keys above).
    pub opening_file: Option<PathBuf>,
    /// The search that plays the games: `mcts` (the keys above) or `alphabeta` (the
    /// `ab_*` keys: the network's value at the leaves of the alpha-beta search, the
    /// bootstrap evaluator's place taken by the hand-written evaluation).
    pub search: SearchKind,
    /// Alpha-beta: no iteration starts past this many nodes.
    pub ab_soft_nodes: u64,
    /// Alpha-beta: the search stops at this many nodes.
    pub ab_hard_nodes: u64,
    /// Alpha-beta: transposition table of each worker, MiB (cleared every game).
    pub ab_hash_mb: usize,
    /// Alpha-beta: an opening whose searched score is beyond ± this is drawn again (0:
    /// none is).
    pub ab_opening_max_cp: i32,
    /// Alpha-beta: a game ends, won by the side its score favours, when a search scores
    /// beyond ± this (0: never; a proven result scores about ±30000).
    pub ab_adjudicate_cp: i32,
}

/// The search that plays self-play games.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchKind {
    /// Monte Carlo tree search with the network's policy and value.
    #[default]
    Mcts,
    /// Alpha-beta with the network's value at its leaves (a fast net, or the
    /// hand-written evaluation in place of the bootstrap evaluator).
    AlphaBeta,
}

impl Default for SelfplayConfig {
    fn default() -> Self {
        SelfplayConfig {
            game: "ataxx".into(),
            games: 100,
            games_per_worker_batch: 32,
            threads: 2,
            games_per_thread: 16,
            seed: 1,
            evaluator: BuiltinEvaluator::Bootstrap,
            net_engine: NetEngine::Fast,
            device: "cpu".into(),
            simulations: 64,
            fast_simulations: 16,
            full_search_fraction: 0.25,
            root: RootKind::Puct,
            c_puct: 1.5,
            fpu_reduction: 0.2,
            dirichlet_total_alpha: 10.0,
            dirichlet_epsilon: 0.25,
            forced_playouts: true,
            gumbel_k: 8,
            symmetry_eval: true,
            tree_reuse: true,
            temperature: 1.0,
            temperature_plies: 12,
            final_temperature: 0.0,
            resign_threshold: None,
            resign_consecutive: 3,
            no_resign_fraction: 0.1,
            max_plies: 600,
            rows_per_shard: 50_000,
            opening_random_plies: 2,
            opening_blockers: false,
            opening_extra_plies: 0,
            opening_file: None,
            search: SearchKind::Mcts,
            ab_soft_nodes: 5_000,
            ab_hard_nodes: 10_000,
            ab_hash_mb: 4,
            ab_opening_max_cp: 300,
            ab_adjudicate_cp: 8_000,
        }
    }
}

/// A setting out of its allowed range, named `table.key`: the one error type of every
/// config table (`[selfplay]`, `[train]`, `[gate]`).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{table}.{key} = {value} is out of range: {allowed}")]
pub struct ConfigError {
    /// The table.
    pub table: &'static str,
    /// The key.
    pub key: &'static str,
    /// The value given.
    pub value: String,
    /// The allowed range.
    pub allowed: &'static str,
}

impl ConfigError {
    /// `Ok` when `ok`; otherwise the error naming `table.key`, `value` and the range.
    pub fn check(
        table: &'static str,
        key: &'static str,
        value: impl std::fmt::Display,
        ok: bool,
        allowed: &'static str,
    ) -> Result<(), ConfigError> {
        if ok {
            Ok(())
        } else {
            Err(ConfigError {
                table,
                key,
                value: value.to_string(),
                allowed,
            })
        }
    }
}

impl SelfplayConfig {
    /// Checks every range; the error names the first key out of range.
    pub fn validate(&self) -> Result<(), ConfigError> {
        fn check<T: std::fmt::Display>(
            key: &'static str,
            v: T,
            ok: bool,
            allowed: &'static str,
        ) -> Result<(), ConfigError> {
            ConfigError::check("selfplay", key, v, ok, allowed)
        }
        let unit = |x: f32| (0.0..=1.0).contains(&x);
        check(
            "game",
            &self.game,
            self.game.parse::<engine::Game>().is_ok(),
            "a game name (see flipzero perft --help)",
        )?;
        check("games", self.games, self.games >= 1, "at least 1")?;
        check(
            "games_per_worker_batch",
            self.games_per_worker_batch,
            (1..=1_000_000).contains(&self.games_per_worker_batch),
            "1..=1000000",
        )?;
        check(
            "threads",
            self.threads,
            (1..=256).contains(&self.threads),
            "1..=256",
        )?;
        check(
            "games_per_thread",
            self.games_per_thread,
            (1..=4096).contains(&self.games_per_thread),
            "1..=4096",
        )?;
        let gpu = self.device == "cuda"
            || self.device == "wgpu"
            || self
                .device
                .strip_prefix("cuda:")
                .is_some_and(|n| n.parse::<usize>().is_ok());
        check(
            "device",
            &self.device,
            self.device == "cpu" || gpu,
            "cpu, cuda, cuda:N or wgpu",
        )?;
        check(
            "device",
            &self.device,
            self.device == "cpu" || self.net_engine == NetEngine::Burn,
            "cpu with net_engine = \"fast\" (a GPU runs the network through Burn: set net_engine = \"burn\")",
        )?;
        check(
            "simulations",
            self.simulations,
            (1..=100_000).contains(&self.simulations),
            "1..=100000",
        )?;
        check(
            "fast_simulations",
            self.fast_simulations,
            (1..=100_000).contains(&self.fast_simulations),
            "1..=100000",
        )?;
        check(
            "full_search_fraction",
            self.full_search_fraction,
            unit(self.full_search_fraction),
            "0..=1",
        )?;
        check(
            "c_puct",
            self.c_puct,
            self.c_puct > 0.0 && self.c_puct <= 100.0,
            "(0, 100]",
        )?;
        check(
            "fpu_reduction",
            self.fpu_reduction,
            (0.0..=2.0).contains(&self.fpu_reduction),
            "0..=2",
        )?;
        check(
            "dirichlet_total_alpha",
            self.dirichlet_total_alpha,
            self.dirichlet_total_alpha > 0.0 && self.dirichlet_total_alpha <= 1000.0,
            "(0, 1000]",
        )?;
        check(
            "dirichlet_epsilon",
            self.dirichlet_epsilon,
            unit(self.dirichlet_epsilon),
            "0..=1",
        )?;
        check(
            "gumbel_k",
            self.gumbel_k,
            (1..=1024).contains(&self.gumbel_k),
            "1..=1024",
        )?;
        check(
            "temperature",
            self.temperature,
            (0.0..=10.0).contains(&self.temperature),
            "0..=10",
        )?;
        check(
            "final_temperature",
            self.final_temperature,
            (0.0..=10.0).contains(&self.final_temperature),
            "0..=10",
        )?;
        if let Some(t) = self.resign_threshold {
            check("resign_threshold", t, (-1.0..=0.0).contains(&t), "-1..=0")?;
        }
        check(
            "resign_consecutive",
            self.resign_consecutive,
            self.resign_consecutive >= 1,
            "at least 1",
        )?;
        check(
            "no_resign_fraction",
            self.no_resign_fraction,
            unit(self.no_resign_fraction),
            "0..=1",
        )?;
        check(
            "max_plies",
            self.max_plies,
            self.max_plies >= 1,
            "at least 1",
        )?;
        check(
            "rows_per_shard",
            self.rows_per_shard,
            self.rows_per_shard >= 1,
            "at least 1",
        )?;
        check(
            "opening_extra_plies",
            self.opening_extra_plies,
            self.opening_extra_plies <= 1000,
            "0..=1000",
        )?;
        check(
            "ab_soft_nodes",
            self.ab_soft_nodes,
            (1..=1_000_000_000).contains(&self.ab_soft_nodes),
            "1..=1000000000",
        )?;
        check(
            "ab_hard_nodes",
            self.ab_hard_nodes,
            self.ab_hard_nodes >= self.ab_soft_nodes && self.ab_hard_nodes <= 1_000_000_000,
            "ab_soft_nodes..=1000000000",
        )?;
        check(
            "ab_hash_mb",
            self.ab_hash_mb,
            (1..=65_536).contains(&self.ab_hash_mb),
            "1..=65536",
        )?;
        check(
            "ab_opening_max_cp",
            self.ab_opening_max_cp,
            (0..=30_000).contains(&self.ab_opening_max_cp),
            "0..=30000",
        )?;
        check(
            "ab_adjudicate_cp",
            self.ab_adjudicate_cp,
            (0..=30_000).contains(&self.ab_adjudicate_cp),
            "0..=30000",
        )?;
        Ok(())
    }

    /// The search's effort a move, for logs: `800 simulations` or `alpha-beta, 5000
    /// nodes (at most 10000)`.
    pub fn effort(&self) -> String {
        match self.search {
            SearchKind::Mcts => format!("{} simulations", self.simulations),
            SearchKind::AlphaBeta => format!(
                "alpha-beta, {} nodes (at most {})",
                self.ab_soft_nodes, self.ab_hard_nodes
            ),
        }
    }

    /// The search settings.
    pub fn mcts(&self) -> MctsConfig {
        MctsConfig {
            c_puct: self.c_puct,
            fpu_reduction: self.fpu_reduction,
            dirichlet_total_alpha: self.dirichlet_total_alpha,
            dirichlet_epsilon: self.dirichlet_epsilon,
            forced_playouts: self.forced_playouts,
            root: self.root,
            gumbel_k: self.gumbel_k,
            symmetry: self.symmetry_eval,
            ..MctsConfig::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_errors_name_the_key() {
        SelfplayConfig::default().validate().unwrap();
        let c = SelfplayConfig {
            dirichlet_epsilon: 1.5,
            ..SelfplayConfig::default()
        };
        let e = c.validate().unwrap_err().to_string();
        assert_eq!(e, "selfplay.dirichlet_epsilon = 1.5 is out of range: 0..=1");
        let bad: Result<SelfplayConfig, _> = toml::from_str("simulatons = 3");
        assert!(
            bad.unwrap_err()
                .to_string()
                .contains("unknown field `simulatons`")
        );
        let ok: SelfplayConfig = toml::from_str("simulations = 3\nroot = \"gumbel\"").unwrap();
        assert_eq!((ok.simulations, ok.root), (3, RootKind::Gumbel));
    }
}
