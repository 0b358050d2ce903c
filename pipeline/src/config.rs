//! The pipeline config: one table per stage (`[run]`, `[selfplay]`, `[train]`, `[gate]`,
//! `[anchor]`), read from a file or the built-in default, with `--set table.key=value`
//! overrides; shared by `run` and `gate`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::{Context, bail};
use crate::overrides::{Override, TABLES};
use eval::{GateConfig, PlayerSpec};
use selfplay::SelfplayConfig;
use serde::{Deserialize, Serialize};
use train::TrainConfig;

/// The default config, built in so that `flipzero run` works from any directory.
pub const DEFAULT_CONFIG: &str = include_str!("../../configs/default.toml");

/// The `[run]` table: the loop itself. Its values come from a config laid over the
/// built-in configs/default.toml, the one source of defaults (no Rust `Default`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoopConfig {
    /// Generations to run (each: self-play, train, gate, promote, anchor, report).
    pub generations: u32,
    /// Stop starting new generations after this many minutes (0 = no limit).
    pub time_budget_minutes: f64,
    /// Gate the first network against the bootstrap player too (otherwise the first
    /// network is promoted without a match: there is no incumbent network yet).
    pub gate_first_network: bool,
    /// Gate every new network against the best (`[gate]`); when false, every trained
    /// network is promoted without a match (AlphaZero's and lc0's loop): a short run
    /// spends its minutes on self-play instead.
    pub gating: bool,
    /// Also write the exports of every generation: a CNN's model.onnx and safetensors
    /// files, a fast net's quantised file.
    pub export: bool,
    /// Seconds after which the lease of a trainer or gatekeeper (`flipzero worker`)
    /// that stopped renewing it may be taken over by another process.
    pub lease_timeout_seconds: u64,
    /// Simulations of a full search while the bootstrap evaluator plays self-play
    /// (generation 0, and any batch before a first network is promoted), 0 =
    /// `selfplay.simulations`: its evaluator is a shallow alpha-beta
    /// search, far slower a leaf than a network, so a short run buys more of its
    /// positions with shallower searches.
    pub bootstrap_simulations: u32,
    /// Simulations of a fast search while the bootstrap evaluator plays, 0 =
    /// `selfplay.fast_simulations`.
    pub bootstrap_fast_simulations: u32,
    /// The run's final net (fast-net runs): when the loop ends, a fresh fast net of
    /// this width trained on every position of the run, as one more generation without
    /// self-play (gated or promoted as any other); a time budget leaves room for it.
    /// The synchronous loop's alone: the roles warn that they do not train it. 0: none.
    pub final_net_hidden: u32,
    /// Passes of the final net's training over the run's positions.
    pub final_net_epochs: u32,
    /// Networks kept in `models/`: the newest this many generations', besides those
    /// always kept (the best, the best before it, every candidate not yet judged, the
    /// next training's start, every `keep_every`-th); the others' weights are removed as
    /// the run goes, their records kept (`crate::retention`). 0: every network is kept.
    pub keep_models: u32,
    /// Also keep every generation whose number is a multiple of this (0: none).
    pub keep_every: u32,
}

/// The `[anchor]` table: matches of each new best against fixed baselines.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnchorConfig {
    /// Baseline players (see `flipzero match --help`), e.g. ["random", "greedy", "ab2"].
    pub ladder: Vec<String>,
    /// Game pairs against each baseline (each opening played twice, colours swapped).
    pub pairs: usize,
}

/// The `[train]` keys of the pipeline that the CNN training library does not read: the
/// network family, and the asynchronous trainer's (`flipzero worker train`). They sit in
/// `[train]` beside [`TrainConfig`]'s keys.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrainRoleConfig {
    /// The family of the networks the run trains.
    pub family: NetFamily,
    /// New self-play positions (beyond those the previous candidate saw) that make the
    /// asynchronous trainer train the next candidate.
    pub rows_per_candidate: u64,
}

/// The names of [`TrainRoleConfig`]'s keys in the `[train]` table.
const TRAIN_ROLE_KEYS: [&str; 2] = ["family", "rows_per_candidate"];

/// The networks a run trains.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NetFamily {
    /// The residual CNN of `[train]` (policy, WDL, score and auxiliary heads).
    Cnn,
    /// The CPU-shaped sparse-input nets of `[fastnet]` (crate `fastnet`).
    Fast,
}

/// A whole pipeline config: one table per stage.
#[derive(Clone, Debug, PartialEq)]
pub struct RunConfig {
    /// The loop.
    pub run: LoopConfig,
    /// Self-play (its `game` is the run's game).
    pub selfplay: SelfplayConfig,
    /// Training of each generation (the CNN's).
    pub train: TrainConfig,
    /// Training of each generation's fast net (`train.family = "fast"`).
    pub fastnet: fastnet::train::TrainConfig,
    /// The asynchronous trainer's keys of the `[train]` table.
    pub train_role: TrainRoleConfig,
    /// Gating.
    pub gate: GateConfig,
    /// Anchoring.
    pub anchor: AnchorConfig,
}

/// [`RunConfig`] as written: [`TrainRoleConfig`]'s keys inside `[train]`.
#[derive(Serialize)]
struct RunConfigOut<'a> {
    run: &'a LoopConfig,
    selfplay: &'a SelfplayConfig,
    train: TrainOut<'a>,
    fastnet: &'a fastnet::train::TrainConfig,
    gate: &'a GateConfig,
    anchor: &'a AnchorConfig,
}

#[derive(Serialize)]
struct TrainOut<'a> {
    #[serde(flatten)]
    lib: &'a TrainConfig,
    #[serde(flatten)]
    role: &'a TrainRoleConfig,
}

impl Serialize for RunConfig {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        RunConfigOut {
            run: &self.run,
            selfplay: &self.selfplay,
            train: TrainOut {
                lib: &self.train,
                role: &self.train_role,
            },
            fastnet: &self.fastnet,
            gate: &self.gate,
            anchor: &self.anchor,
        }
        .serialize(s)
    }
}

/// A TOML syntax error on one line: `FILE:LINE:COLUMN: not valid TOML: why`.
fn toml_error(origin: &str, text: &str, e: &toml::de::Error) -> crate::Error {
    let at = e.span().map_or(String::new(), |span| {
        let before = &text[..span.start.min(text.len())];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        format!(":{line}:{column}")
    });
    crate::error::err!("{origin}{at}: not valid TOML: {}", one_line(e.message()))
}

/// A message of several lines as one.
fn one_line(msg: &str) -> String {
    msg.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

/// The `[train]` keys that override the shape of the `net` preset: a config that names
/// its own `net` does not inherit the built-in config's values of these (the built-in
/// `blocks = 6` would otherwise reshape every preset).
const NET_SHAPE_KEYS: [&str; 5] = [
    "blocks",
    "channels",
    "gpool_every",
    "head_channels",
    "value_hidden",
];

/// `tables` with `sets` applied in order. Naming another `train.net` preset than the
/// config's drops its shape keys ([`NET_SHAPE_KEYS`]) unless they are set here too.
fn with_overrides(
    tables: &toml::Table,
    sets: &[&Override],
    origin: &str,
) -> crate::Result<toml::Table> {
    let mut all = tables.clone();
    for o in sets {
        let t = all
            .entry(o.table.clone())
            .or_insert_with(|| toml::Value::Table(Default::default()));
        let toml::Value::Table(t) = t else {
            bail!("{origin}: `{}` must be a table", o.table);
        };
        if o.sets("train", "net") && t.get("net") != Some(&o.value) {
            for k in NET_SHAPE_KEYS {
                if !sets.iter().any(|s| s.sets("train", k)) {
                    t.remove(k);
                }
            }
        }
        t.insert(o.key.clone(), o.value.clone());
    }
    Ok(all)
}

/// `text`'s tables laid over the built-in config (configs/default.toml), key by key: the
/// one source of every default. A key left out of a config takes the built-in value;
/// naming `train.net` drops the built-in shape overrides ([`NET_SHAPE_KEYS`]).
fn overlay(user: &toml::Table) -> toml::Table {
    let mut all: toml::Table = toml::from_str(DEFAULT_CONFIG).expect("the built-in config parses");
    for (name, value) in user {
        match (all.get_mut(name), value) {
            (Some(toml::Value::Table(base)), toml::Value::Table(keys)) => {
                // A config that names its preset takes the preset's shape (and its own
                // shape keys), not the built-in overrides.
                if name == "train" && keys.contains_key("net") {
                    for k in NET_SHAPE_KEYS {
                        base.remove(k);
                    }
                }
                for (k, v) in keys {
                    base.insert(k.clone(), v.clone());
                }
            }
            // Not a table (an error the validation names), or a table the built-in
            // config lacks: as written.
            _ => {
                all.insert(name.clone(), value.clone());
            }
        }
    }
    all
}

impl RunConfig {
    /// The built-in config (configs/default.toml) with `table.key=value` overrides.
    pub fn builtin(sets: &[String]) -> crate::Result<RunConfig> {
        load_config(None, sets)
    }

    /// Parses config text, lays it over the built-in config (every key left out takes
    /// configs/default.toml's value), applies the overrides, and validates every table.
    /// Errors name the file, the table and the key; an error the overrides cause names
    /// those overrides (`--set selfplay.games=x: …`).
    pub fn from_text(text: &str, origin: &str, sets: &[Override]) -> crate::Result<RunConfig> {
        let user: toml::Table = toml::from_str(text).map_err(|e| toml_error(origin, text, &e))?;
        for k in user.keys() {
            if !TABLES.contains(&k.as_str()) {
                bail!(
                    "{origin}: unknown table or key `{k}` (expected the tables {})",
                    TABLES.join(", ")
                );
            }
        }
        let file_only = overlay(&user);
        let with = |sets: &[&Override]| -> crate::Result<RunConfig> {
            RunConfig::from_table(&with_overrides(&file_only, sets, origin)?, origin)
        };
        let all: Vec<&Override> = sets.iter().collect();
        // Validated once, with every override applied (a rule over two keys must not
        // depend on their order, and an override may mend the file). An error is the
        // file's when the file alone has it; else it is blamed on the overrides without
        // which it is not this error (all of them when no one alone makes it).
        let e = match with(&all) {
            Ok(cfg) => return Ok(cfg),
            Err(e) if sets.is_empty() => return Err(e),
            Err(e) => e,
        };
        // Errors compared whole (their chains): the outer line alone ("invalid
        // setting") is the same for every range error.
        let message = e.chain();
        if let Err(file_error) = RunConfig::from_table(&file_only, origin)
            && file_error.chain() == message
        {
            return Err(file_error);
        }
        // An override that makes this very error on its own, over the built-in config, is
        // the one at fault (a value out of range, of the wrong type); else the error
        // comes of several settings together (a rule over two keys), and it is blamed on
        // the overrides without which it would not be this error.
        let builtin = overlay(&toml::Table::new());
        let alone = |o: &Override| {
            with_overrides(&builtin, &[o], origin)
                .and_then(|t| RunConfig::from_table(&t, origin))
                .err()
                .map(|e| e.chain())
        };
        let mut blamed: Vec<&Override> = all
            .iter()
            .copied()
            .filter(|o| alone(o).as_ref() == Some(&message))
            .collect();
        if blamed.is_empty() {
            blamed = (0..all.len())
                .filter(|&i| {
                    let others: Vec<&Override> = [&all[..i], &all[i + 1..]].concat();
                    with(&others).err().map(|e| e.chain()).as_ref() != Some(&message)
                })
                .map(|i| all[i])
                .collect();
        }
        if blamed.is_empty() {
            blamed = all;
        }
        let names: Vec<String> = blamed.iter().map(|o| o.to_string()).collect();
        let whole = e.chain();
        Err(crate::error::err!(
            "{}{}",
            names.join(", "),
            whole.strip_prefix(origin).unwrap_or(&format!(": {whole}"))
        ))
    }

    /// The config of parsed tables, validated; errors begin with `origin`.
    fn from_table(all: &toml::Table, origin: &str) -> crate::Result<RunConfig> {
        fn section<T: for<'de> Deserialize<'de>>(
            all: &toml::Table,
            name: &str,
            origin: &str,
        ) -> crate::Result<T> {
            match all.get(name) {
                None => bail!("{origin}: no [{name}] table"),
                Some(v @ toml::Value::Table(_)) => {
                    v.clone().try_into().map_err(|e: toml::de::Error| {
                        crate::error::err!("{origin}: in [{name}]: {}", one_line(e.message()))
                    })
                }
                Some(_) => bail!("{origin}: `{name}` must be a table"),
            }
        }
        // The trainer role's keys leave `[train]` before the library's table reads it.
        let mut all = all.clone();
        let mut role = toml::Table::new();
        if let Some(toml::Value::Table(t)) = all.get_mut("train") {
            for k in TRAIN_ROLE_KEYS {
                if let Some(v) = t.remove(k) {
                    role.insert(k.to_string(), v);
                }
            }
        }
        let mut roles = toml::Table::new();
        roles.insert("train".into(), toml::Value::Table(role));
        let all = &all;
        let cfg = RunConfig {
            run: section(all, "run", origin)?,
            selfplay: section(all, "selfplay", origin)?,
            train: section(all, "train", origin)?,
            train_role: section(&roles, "train", origin)?,
            fastnet: section(all, "fastnet", origin)?,
            gate: section(all, "gate", origin)?,
            anchor: section(all, "anchor", origin)?,
        };
        cfg.validate()
            .with_context(|| format!("{origin}: invalid setting"))?;
        Ok(cfg)
    }

    /// Checks every table's ranges.
    pub fn validate(&self) -> crate::Result<()> {
        self.selfplay.validate()?;
        self.train.validate()?;
        self.fastnet.with_sets(&[]).context("in [fastnet]")?;
        self.gate.validate()?;
        let game: engine::Game = self.selfplay.game.parse()?;
        for (key, on) in [
            ("selfplay.opening_blockers", self.selfplay.opening_blockers),
            ("gate.opening_blockers", self.gate.opening_blockers),
        ] {
            if on && !matches!(game, engine::Game::Ataxx(_)) {
                bail!(
                    "{key} = true: random blocker boards are an Ataxx-family opening; {game} has none"
                );
            }
        }
        if !(1..=100_000).contains(&self.run.generations) {
            bail!(
                "run.generations = {} is out of range: 1 to 100000",
                self.run.generations
            );
        }
        if !(self.run.time_budget_minutes >= 0.0 && self.run.time_budget_minutes.is_finite()) {
            bail!(
                "run.time_budget_minutes = {} is out of range: 0 (no limit) or more",
                self.run.time_budget_minutes
            );
        }
        if !(1..=86_400).contains(&self.run.lease_timeout_seconds) {
            bail!(
                "run.lease_timeout_seconds = {} is out of range: 1 to 86400",
                self.run.lease_timeout_seconds
            );
        }
        for (key, sims) in [
            ("run.bootstrap_simulations", self.run.bootstrap_simulations),
            (
                "run.bootstrap_fast_simulations",
                self.run.bootstrap_fast_simulations,
            ),
        ] {
            if sims > 100_000 {
                bail!("{key} = {sims} is out of range: 0 (self-play's) or 1 to 100000");
            }
        }
        let hidden = self.run.final_net_hidden;
        if hidden != 0 && (!hidden.is_multiple_of(32) || hidden > 2048) {
            bail!(
                "run.final_net_hidden = {hidden} is out of range: 0 (no final net), or a multiple of 32 up to 2048"
            );
        }
        if hidden != 0 && self.train_role.family != NetFamily::Fast {
            bail!(
                "run.final_net_hidden = {hidden}: the final net is a fast net, trained by runs of train.family = \"fast\" only"
            );
        }
        if self.selfplay.search == selfplay::SearchKind::AlphaBeta
            && self.selfplay.net_engine != selfplay::NetEngine::Fast
        {
            bail!(
                "selfplay.search = \"alphabeta\": alpha-beta self-play searches with a fast net's value (selfplay.net_engine = \"fast\")"
            );
        }
        if !(1..=100).contains(&self.run.final_net_epochs) {
            bail!(
                "run.final_net_epochs = {} is out of range: 1 to 100",
                self.run.final_net_epochs
            );
        }
        if !(1..=1_000_000_000).contains(&self.train_role.rows_per_candidate) {
            bail!(
                "train.rows_per_candidate = {} is out of range: 1 to 1000000000",
                self.train_role.rows_per_candidate
            );
        }
        if !(1..=100_000).contains(&self.anchor.pairs) {
            bail!(
                "anchor.pairs = {} is out of range: 1 to 100000",
                self.anchor.pairs
            );
        }
        for p in &self.anchor.ladder {
            let spec: PlayerSpec = p.parse().context("in anchor.ladder")?;
            if matches!(spec, PlayerSpec::Mcts { .. }) {
                bail!(
                    "anchor.ladder = {p}: baselines must be fixed players (random, greedy, ab…, uai:…)"
                );
            }
            if let Some(path) = spec.external_program() {
                check_program(path).with_context(|| format!("anchor.ladder = {p}"))?;
            }
            if spec.needs_clock() && self.gate.clock.is_none() {
                bail!(
                    "anchor.ladder = {p}: `ab` plays on a clock only; set gate.clock (e.g. \"time=100\") or name a limit (ab4, ab:time=100)"
                );
            }
        }
        Ok(())
    }

    /// The self-play config of a generation played by `best` (a generation name, or
    /// [`eval::BOOTSTRAP_BEST`]): the bootstrap evaluator's simulations when no network
    /// plays yet.
    pub fn selfplay_for(&self, best: &str) -> SelfplayConfig {
        let mut cfg = self.selfplay.clone();
        if best == eval::BOOTSTRAP_BEST {
            if self.run.bootstrap_simulations > 0 {
                cfg.simulations = self.run.bootstrap_simulations;
            }
            if self.run.bootstrap_fast_simulations > 0 {
                cfg.fast_simulations = self.run.bootstrap_fast_simulations;
            }
        }
        cfg
    }

    /// What a run (not `flipzero selfplay` with a given net) needs of its config: the
    /// run's nets play its self-play, and alpha-beta searches a fast net's value only.
    pub fn check_run(&self) -> crate::Result<()> {
        if self.selfplay.search == selfplay::SearchKind::AlphaBeta
            && self.train_role.family != NetFamily::Fast
        {
            bail!(
                "selfplay.search = \"alphabeta\" trains nets for the alpha-beta searcher: fast nets (train.family = \"fast\", as in configs/nnue.toml)"
            );
        }
        Ok(())
    }

    /// Every setting as `table.key = value`, for comparing configs.
    pub fn flat(&self) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        let table = toml::Table::try_from(self).expect("configs serialize");
        for (t, v) in table {
            if let toml::Value::Table(inner) = v {
                for (k, v) in inner {
                    out.insert(format!("{t}.{k}"), v.to_string());
                }
            }
        }
        out
    }

    /// The keys whose values differ (as `key: saved (saved) vs now (now)`), leaving out
    /// those that may change on resume and the keys `except`.
    pub fn differences(&self, other: &RunConfig, except: &[&str]) -> Vec<String> {
        let (a, b) = (self.flat(), other.flat());
        let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
        keys.sort();
        keys.dedup();
        keys.into_iter()
            .filter(|k| !RESUMABLE_KEYS.contains(&k.as_str()) && !except.contains(&k.as_str()))
            .filter(|k| a.get(*k) != b.get(*k))
            .map(|k| {
                format!(
                    "{k}: {} (saved) vs {} (now)",
                    a.get(k).map_or("unset", |s| s.as_str()),
                    b.get(k).map_or("unset", |s| s.as_str())
                )
            })
            .collect()
    }
}

/// Checks that `path` names a program that can be started: an executable regular file,
/// found on `PATH` when it is a bare name (as starting it would look it up).
fn check_program(path: &std::path::Path) -> crate::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let found = if path.components().count() == 1 && !path.as_os_str().is_empty() {
        std::env::var_os("PATH")
            .map(|dirs| {
                std::env::split_paths(&dirs)
                    .map(|d| d.join(path))
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
            .into_iter()
            .find(|p: &PathBuf| p.is_file())
    } else {
        Some(path.to_path_buf())
    };
    let Some(program) = found else {
        bail!("{}: no such program on PATH", path.display());
    };
    match std::fs::metadata(&program) {
        Err(e) => bail!("{}: {e}", program.display()),
        Ok(m) if !m.is_file() => bail!("{}: not a regular file", program.display()),
        Ok(m) if m.permissions().mode() & 0o111 == 0 => {
            bail!("{}: not executable (chmod +x)", program.display())
        }
        Ok(_) => Ok(()),
    }
}

/// Settings of one process, not of the run: a role of `flipzero worker` may set them for
/// itself (`--set selfplay.threads=8`, a GPU worker's `selfplay.device = "cuda"`)
/// without being refused for differing from the run's config, and without changing it;
/// they change how fast a process works, not what the run computes (the engines and
/// devices are checked equal to one another when a model is loaded).
pub const LOCAL_KEYS: [&str; 7] = [
    "selfplay.games_per_worker_batch",
    "selfplay.threads",
    "selfplay.games_per_thread",
    "selfplay.net_engine",
    "selfplay.device",
    "gate.threads",
    "train.device",
];

impl RunConfig {
    /// This config with the per-process settings ([`LOCAL_KEYS`]) of `local`.
    pub fn with_local_settings(&self, local: &RunConfig) -> RunConfig {
        let mut c = self.clone();
        c.selfplay.games_per_worker_batch = local.selfplay.games_per_worker_batch;
        c.selfplay.threads = local.selfplay.threads;
        c.selfplay.games_per_thread = local.selfplay.games_per_thread;
        c.selfplay.net_engine = local.selfplay.net_engine;
        c.selfplay.device = local.selfplay.device.clone();
        c.gate.threads = local.gate.threads;
        c.train.device = local.train.device.clone();
        c
    }
}

/// Settings that may change when a run is resumed: extending or shortening the loop,
/// and the final net trained when it ends.
const RESUMABLE_KEYS: [&str; 6] = [
    "run.generations",
    "run.time_budget_minutes",
    "run.final_net_hidden",
    "run.final_net_epochs",
    "run.keep_models",
    "run.keep_every",
];

/// The config of a command that reads one table (`train`, `gate`): `--set` may name its
/// keys bare (`steps=300`) or with the table (`train.steps=300`); a key of another
/// table is refused, as the command would ignore it. The whole file is validated, laid
/// over the built-in configs/default.toml (which is the config when there is no file).
pub fn load_table(path: Option<&Path>, sets: &[String], table: &str) -> crate::Result<RunConfig> {
    load_with(path, &Override::parse_all(sets, Some(table))?)
}

/// Loads the config named by the arguments (or the built-in default), with `--set`
/// overrides of any table.
pub fn load_config(path: Option<&Path>, sets: &[String]) -> crate::Result<RunConfig> {
    load_with(path, &Override::parse_all(sets, None)?)
}

/// The config of file `path` (or the built-in default) with parsed overrides.
pub fn load_with(path: Option<&Path>, sets: &[Override]) -> crate::Result<RunConfig> {
    match path {
        Some(p) => {
            let text = rundir::read_regular_text(p, rundir::Limit::CONFIG)
                .with_context(|| format!("cannot read config {}", p.display()))?;
            RunConfig::from_text(&text, &p.display().to_string(), sets)
        }
        None => RunConfig::from_text(DEFAULT_CONFIG, "configs/default.toml (built in)", sets),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The keys of `text` whose values differ from the built-in config's (and `train.net`
    /// whenever it is named, as naming it is what resets the shape keys).
    fn minimal(text: &str) -> String {
        let full: toml::Table = toml::from_str(text).unwrap();
        let base: toml::Table = toml::from_str(DEFAULT_CONFIG).unwrap();
        let mut out = toml::Table::new();
        for (t, keys) in &full {
            let keys = keys.as_table().unwrap();
            let mut kept = toml::Table::new();
            let names_net = t == "train" && keys.contains_key("net");
            for (k, v) in keys {
                let shape = NET_SHAPE_KEYS.contains(&k.as_str()) || k == "net";
                if base[t].get(k) != Some(v) || (names_net && shape) {
                    kept.insert(k.clone(), v.clone());
                }
            }
            out.insert(t.clone(), toml::Value::Table(kept));
        }
        toml::to_string(&out).unwrap()
    }

    /// One source of defaults: every config of configs/ means exactly the same when
    /// only its changed keys are written, and an empty file is the built-in config.
    #[test]
    fn a_config_of_only_its_changes_means_the_whole_file() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs");
        let mut seen = 0;
        for e in std::fs::read_dir(&dir).unwrap() {
            let path = e.unwrap().path();
            if path.extension().is_none_or(|x| x != "toml") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let whole = RunConfig::from_text(&text, "whole", &[]).unwrap();
            let small = minimal(&text);
            let changed = RunConfig::from_text(&small, "minimal", &[]).unwrap();
            assert_eq!(
                whole.differences(&changed, &[]),
                Vec::<String>::new(),
                "{}: {small}",
                path.display()
            );
            assert_eq!(whole, changed, "{}", path.display());
            seen += 1;
        }
        assert!(seen >= 6, "{seen} configs");
        assert_eq!(
            RunConfig::from_text("", "empty", &[]).unwrap(),
            load_config(None, &[]).unwrap()
        );
        // A key left out takes the built-in value, not a library's own default.
        let cfg = RunConfig::from_text("[anchor]\npairs = 3\n", "t", &[]).unwrap();
        assert_eq!(cfg.anchor.ladder, ["greedy", "ab3", "ab4"]);
        assert_eq!(cfg.run.generations, 14);
        assert_eq!(cfg.train.blocks, Some(6));
        // Naming a net preset drops the built-in shape overrides.
        let cfg = RunConfig::from_text("[train]\nnet = \"standard\"\n", "t", &[]).unwrap();
        assert_eq!(cfg.train.blocks, None);
        let cfg = load_config(None, &["train.net=\"standard\"".into()]).unwrap();
        assert_eq!(cfg.train.blocks, None);
    }

    /// The fast-net trainer's library defaults are the built-in config's `[fastnet]`.
    #[test]
    fn fastnet_defaults_are_the_built_in_table() {
        let cfg = load_config(None, &[]).unwrap();
        assert_eq!(cfg.fastnet, fastnet::train::TrainConfig::default());
        assert_eq!(cfg.train_role.family, NetFamily::Cnn);
        let e = load_config(None, &["fastnet.hidden=100".into()])
            .unwrap_err()
            .chain();
        assert!(e.contains("[fastnet]") && e.contains("hidden"), "{e}");
        let e = load_config(None, &["train.family=\"nnue\"".into()])
            .unwrap_err()
            .chain();
        assert!(e.contains("family") && e.contains("nnue"), "{e}");
    }

    #[test]
    fn syntax_and_key_errors_are_one_line_with_the_place() {
        let e = RunConfig::from_text("[run]\ngenerations = \n", "my.toml", &[])
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("my.toml:2:"), "{e}");
        assert_eq!(e.lines().count(), 1, "{e}");
        let e = RunConfig::from_text("[run]\ngenerationz = 3\n", "my.toml", &[])
            .unwrap_err()
            .chain();
        assert!(e.contains("generationz"), "{e}");
        assert_eq!(e.lines().count(), 1, "{e}");
    }

    /// An error is blamed on the overrides that make it, found by validating without
    /// each (not by searching the message for key names): a rule over two overrides
    /// names both, an override that has nothing to do with it is not named, and an error
    /// the file alone has is the file's.
    #[test]
    fn an_error_is_blamed_on_the_overrides_that_make_it() {
        let sets = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let e = load_config(
            None,
            &sets(&[
                "run.generations=3",
                "selfplay.opening_blockers=true",
                "selfplay.game=othello",
            ]),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("--set selfplay.opening_blockers=true, --set selfplay.game=othello: "),
            "{e}"
        );
        assert!(!e.contains("generations"), "{e}");
        // Two range errors: the first one found is named, not every override.
        let e = load_config(
            None,
            &sets(&["selfplay.games=0", "train.steps=0", "selfplay.threads=1"]),
        )
        .unwrap_err()
        .chain();
        assert!(e.starts_with("--set selfplay.games=0: "), "{e}");
        // The error of file `text` (named `origin`) with overrides `over`.
        let file_error = |text: &str, origin: &str, over: &[&str]| {
            RunConfig::from_text(
                text,
                origin,
                &Override::parse_all(&sets(over), None).unwrap(),
            )
            .unwrap_err()
            .chain()
        };
        // A file's error that an override mends is not the file's to answer for.
        let e = file_error(
            "[selfplay]\ngames = 0\n",
            "bad.toml",
            &["selfplay.games=8", "train.steps=0"],
        );
        assert!(
            e.starts_with("--set train.steps=0: ") && e.contains("train.steps"),
            "{e}"
        );
        let e = load_config(None, &sets(&["run.generations=3", "anchor.pairs=many"]))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("--set anchor.pairs=many: in [anchor]"), "{e}");
        let bad_file = file_error("[anchor]\npairs = 0\n", "my.toml", &["run.generations=3"]);
        assert!(
            bad_file.starts_with("my.toml: ") && bad_file.contains("anchor.pairs"),
            "{bad_file}"
        );
    }

    /// Blocker boards are asked of an Ataxx-family game only, by self-play or by the gate.
    #[test]
    fn blocker_openings_need_an_ataxx_game() {
        for key in ["selfplay.opening_blockers", "gate.opening_blockers"] {
            let on = format!("{key}=true");
            assert!(
                load_config(None, &[on.clone(), "selfplay.game=\"ataxx/thomas\"".into()]).is_ok()
            );
            let e = load_config(None, &[on, "selfplay.game=\"othello\"".into()])
                .unwrap_err()
                .chain();
            assert!(e.contains(key) && e.contains("othello"), "{e}");
        }
    }

    /// Generation 0's simulations apply while the bootstrap evaluator plays and only
    /// then; 0 keeps self-play's; a count above self-play's range is refused by name.
    #[test]
    fn bootstrap_simulations_apply_to_the_bootstrap_player_only() {
        let sets = |b: u32, f: u32| {
            vec![
                "selfplay.simulations=800".to_string(),
                "selfplay.fast_simulations=200".to_string(),
                format!("run.bootstrap_simulations={b}"),
                format!("run.bootstrap_fast_simulations={f}"),
            ]
        };
        let cfg = load_config(None, &sets(128, 32)).unwrap();
        let sims = |c: &SelfplayConfig| (c.simulations, c.fast_simulations);
        assert_eq!(sims(&cfg.selfplay_for(eval::BOOTSTRAP_BEST)), (128, 32));
        assert_eq!(sims(&cfg.selfplay_for("gen-0000")), (800, 200));
        let partly = load_config(None, &sets(0, 32)).unwrap();
        assert_eq!(sims(&partly.selfplay_for(eval::BOOTSTRAP_BEST)), (800, 32));
        let e = load_config(None, &sets(100_001, 0)).unwrap_err().chain();
        assert!(
            e.contains("run.bootstrap_simulations = 100001") && e.contains("out of range"),
            "{e}"
        );
    }

    /// The final net: a fast net's width (0, or a multiple of 32 up to 2048), of a
    /// fast-net run only, with 1 to 100 epochs; each refusal names its key.
    #[test]
    fn final_net_settings_are_checked_by_name() {
        let fast = |extra: &[&str]| {
            let mut sets = vec!["train.family=\"fast\"".to_string()];
            sets.extend(extra.iter().map(|s| s.to_string()));
            load_config(None, &sets)
        };
        let cfg = fast(&["run.final_net_hidden=512", "run.final_net_epochs=3"]).unwrap();
        assert_eq!(
            (cfg.run.final_net_hidden, cfg.run.final_net_epochs),
            (512, 3)
        );
        assert_eq!(load_config(None, &[]).unwrap().run.final_net_hidden, 0);
        for (set, key) in [
            ("run.final_net_hidden=500", "run.final_net_hidden = 500"),
            ("run.final_net_hidden=2080", "run.final_net_hidden = 2080"),
            ("run.final_net_epochs=0", "run.final_net_epochs = 0"),
            ("run.final_net_epochs=101", "run.final_net_epochs = 101"),
        ] {
            let e = fast(&[set]).unwrap_err().chain();
            assert!(e.contains(key) && e.contains("out of range"), "{e}");
        }
        let e = load_config(None, &["run.final_net_hidden=512".to_string()])
            .unwrap_err()
            .chain();
        assert!(
            e.contains("run.final_net_hidden = 512") && e.contains("train.family"),
            "{e}"
        );
    }

    /// Every setting is written in the built-in config (or is one that is unset by
    /// default), so that no library's own default ever fills a left-out key.
    #[test]
    fn the_built_in_config_names_every_setting() {
        let written: toml::Table = toml::from_str(DEFAULT_CONFIG).unwrap();
        let effective = toml::Table::try_from(load_config(None, &[]).unwrap()).unwrap();
        // Settings whose default is "unset" (TOML has no null): written as comments.
        let unset = ["selfplay.opening_file", "gate.clock"];
        for (t, keys) in &effective {
            for k in keys.as_table().unwrap().keys() {
                let key = format!("{t}.{k}");
                assert!(
                    written[t].as_table().unwrap().contains_key(k) || unset.contains(&key.as_str()),
                    "{key} is not in configs/default.toml"
                );
            }
        }
        for key in unset {
            assert!(
                DEFAULT_CONFIG.contains(key.split_once('.').unwrap().1),
                "{key}"
            );
        }
    }

    /// Each per-process key, changed alone, is a difference the roles overlook, and
    /// `with_local_settings` carries it: the list and the copy cannot drift apart.
    #[test]
    fn local_keys_and_their_copy_agree() {
        let base = load_config(None, &[]).unwrap();
        let changed = [
            "selfplay.games_per_worker_batch=9",
            "selfplay.threads=7",
            "selfplay.games_per_thread=5",
            "selfplay.net_engine=\"burn\"",
            "selfplay.device=\"cuda\"",
            "gate.threads=3",
            "train.device=\"flex\"",
        ];
        assert_eq!(changed.len(), LOCAL_KEYS.len());
        for (set, key) in changed.iter().zip(LOCAL_KEYS) {
            assert!(set.starts_with(key), "{set} vs {key}");
            let mut sets = vec![set.to_string()];
            let mut base = base.clone();
            if key == "selfplay.device" {
                // Only Burn's engine runs on a device: both configs use it.
                sets.push("selfplay.net_engine=\"burn\"".into());
                base.selfplay.net_engine = selfplay::NetEngine::Burn;
            }
            let other = load_config(None, &sets).unwrap();
            assert_eq!(base.differences(&other, &[]).len(), 1, "{key}");
            assert!(base.differences(&other, &LOCAL_KEYS).is_empty(), "{key}");
            assert!(
                other
                    .differences(&base.with_local_settings(&other), &[])
                    .is_empty(),
                "{key}: {:?}",
                other.differences(&base.with_local_settings(&other), &[])
            );
        }
        // A key of the run is still a difference.
        let other = load_config(None, &["selfplay.simulations=65".into()]).unwrap();
        assert_eq!(base.differences(&other, &LOCAL_KEYS).len(), 1);
    }
}
