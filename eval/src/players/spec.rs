//! Player names, parsed and built: the factory of every player. The baseline ladder
//! (`random`, `greedy`, `ab1`…, `ab:nodes=N`, `ab:time=MS`, and `ab`, which plays on a
//! match's clock only), MCTS with a network (`mcts:<dir>`), and external UAI engines
//! (`uai:<path>[:options]`). The players themselves live in the sibling modules
//! `baselines`, `mcts` and `uai`; none of them imports this one.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use engine::search::{Limits, Searcher};
use engine::{Game, Rng};
use selfplay::NetEngine;

use super::baselines::{AbSearch, AlphaBetaPlayer, GreedyPlayer, RandomPlayer};
use super::mcts::{
    MctsPlayer, NetSource, ResolvedNet, Thinking, batch_for, mcts_evaluators, resolve_net,
};
use super::nboard::NboardPlayer;
use super::params::SearchParams;
use super::uai::UaiPlayer;
use super::{Player, PlayerError, Timeouts};

/// Simulations per move of an MCTS player when its name gives none.
pub const DEFAULT_MCTS_SIMS: u32 = 64;

/// A player name, parsed. Names are stable and usable everywhere a player is named.
///
/// ```
/// use eval::PlayerSpec;
/// assert_eq!("ab3".parse::<PlayerSpec>().unwrap().to_string(), "ab3");
/// assert_eq!("ab:nodes=5000".parse::<PlayerSpec>().unwrap().to_string(), "ab:nodes=5000");
/// assert!("ab:bogus=1".parse::<PlayerSpec>().is_err());
/// // The ladder's `abN` is the full-width search; every other `ab` the tuned one, whose
/// // parameters can be set by name:
/// assert_eq!("ab:depth=3".parse::<PlayerSpec>().unwrap().to_string(), "ab:depth=3");
/// assert_eq!("ab:depth=3,search=full".parse::<PlayerSpec>().unwrap().to_string(), "ab3");
/// let t = "ab:time=50,rfp_margin=60".parse::<PlayerSpec>().unwrap();
/// assert_eq!(t.to_string(), "ab:time=50,rfp_margin=60");
/// let e = "ab:time=50,rfp_margin=1".parse::<PlayerSpec>().unwrap_err().to_string();
/// assert!(e.contains("rfp_margin") && e.contains("10..=400"), "{e}");
/// let m = "mcts:data/runs/a:sims=200".parse::<PlayerSpec>().unwrap();
/// assert_eq!(m.to_string(), "mcts:data/runs/a:sims=200");
/// assert_eq!("mcts:bootstrap".parse::<PlayerSpec>().unwrap().to_string(), "mcts:bootstrap");
/// // Burn's forward pass instead of the fast path (any architecture Burn can build):
/// let b = "mcts:models/m:sims=50,engine=burn".parse::<PlayerSpec>().unwrap();
/// assert_eq!(b.to_string(), "mcts:models/m:sims=50,engine=burn");
/// assert_eq!("mcts:m:engine=fast".parse::<PlayerSpec>().unwrap().to_string(), "mcts:m");
/// assert!("mcts:m:engine=gpu".parse::<PlayerSpec>().is_err());
/// // The search without tree reuse and batching (the ablation of docs/strength.md):
/// let basic = "mcts:m:time=100,search=basic".parse::<PlayerSpec>().unwrap();
/// assert_eq!(basic.to_string(), "mcts:m:time=100,search=basic");
/// assert!("mcts:m:search=fast".parse::<PlayerSpec>().is_err());
/// let tuned = "mcts:m:time=100,cpuct=1.3,endgame=3".parse::<PlayerSpec>().unwrap();
/// assert_eq!(tuned.to_string(), "mcts:m:time=100,cpuct=1.3,endgame=3");
/// assert!("mcts:m:cpuct=0".parse::<PlayerSpec>().is_err());
/// // A setting out of its range is named with its range, not as an unknown player:
/// let e = "mcts:m:endgame=12".parse::<PlayerSpec>().unwrap_err().to_string();
/// assert!(e.contains("`endgame=12`") && e.contains("endgame (0..=8 cells left to fill)"), "{e}");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlayerSpec {
    /// Uniformly random legal moves.
    Random,
    /// The move with the best immediate piece gain (fewest in misère), random tie-break.
    Greedy,
    /// Alpha-beta search with these limits (none: `ab`, for timed matches only).
    AlphaBeta {
        /// The search's limits.
        limits: Limits,
        /// The search: full-width or tuned, and its parameters.
        search: AbSearch,
    },
    /// MCTS with a trained network or the bootstrap evaluator: `sims` simulations a
    /// move, or `time` per move when set.
    Mcts {
        /// Where the evaluations come from.
        net: NetSource,
        /// Simulations per move.
        sims: u32,
        /// Thinking time per move, instead of a simulation count.
        time: Option<Duration>,
        /// The engine that runs the network (`engine=burn`: Burn's forward pass, for an
        /// architecture the fast path does not run).
        engine: NetEngine,
        /// The search without its play-time techniques (`search=basic`): one leaf per
        /// evaluator call and the tree discarded after every move; the ablation of
        /// docs/strength.md.
        basic: bool,
        /// The search's tunable settings (`cpuct=`, `fpu=`, `endgame=`, `lazy=`).
        params: SearchParams,
    },
    /// Alpha-beta with a fast net's value at the leaves (`abnet:DIR[:depth=N,nodes=N,
    /// time=MS]`; no limit: a match's clock only).
    NetAlphaBeta {
        /// The fast net's folder (or a run whose best is one).
        net: PathBuf,
        /// The search's limits.
        limits: Limits,
        /// The search and its parameters (the evaluation's are not used: the net
        /// evaluates).
        search: AbSearch,
    },
    /// An external UAI engine.
    Uai {
        /// The program.
        path: PathBuf,
        /// `setoption` pairs, and the `go` parameters `movetime`, `depth`, `nodes`.
        options: Vec<(String, String)>,
    },
    /// An external NBoard engine (Othello): `nboard:<path>[:depth=N]`.
    Nboard {
        /// The program.
        path: PathBuf,
        /// `depth=N`, the depth (an engine's level) sent with `set depth`.
        options: Vec<(String, String)>,
    },
}

/// The grammar of player names: the one text that `--help` and the unknown-player error
/// both show.
pub const PLAYER_NAMES: &str = "random, greedy, ab (on a match clock), ab1..ab64 (the full-width search to that depth), ab:depth=N|nodes=N|soft_nodes=N|time=MS[,search=full|tuned][,PARAM=N...] (the tuned search; PARAM any search parameter, `flipzero uai` lists them as options), mcts:bootstrap|<model or run dir>[:sims=N|:time=MS][,engine=fast|burn][,search=basic][,cpuct=X,fpu=X,endgame=N,lazy=0|1], abnet:<fast-net dir>[:depth=N,nodes=N,soft_nodes=N,time=MS,PARAM=N...], uai:<path>[:name=value,...] (UAI options, plus movetime/depth/nodes for `go`), or nboard:<path>[:depth=N] (an NBoard Othello engine at depth, or level, N). A run directory means its current best network";

/// A player name that names no player, or a player setting out of its range.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BadPlayerName {
    /// The name fits no player's grammar.
    #[error("unknown player `{0}`: expected {names}", names = PLAYER_NAMES)]
    Unknown(String),
    /// The name is a player's, one of its settings is wrong: the setting and its range.
    #[error("player `{name}`: {why}")]
    Setting {
        /// The whole name.
        name: String,
        /// The setting given and what it allows.
        why: String,
    },
}

impl FromStr for PlayerSpec {
    type Err = BadPlayerName;

    fn from_str(s: &str) -> Result<PlayerSpec, BadPlayerName> {
        let bad = || BadPlayerName::Unknown(s.to_string());
        match s {
            "random" => return Ok(PlayerSpec::Random),
            "greedy" => return Ok(PlayerSpec::Greedy),
            "ab" => {
                return Ok(PlayerSpec::AlphaBeta {
                    limits: Limits::default(),
                    search: AbSearch::TUNED,
                });
            }
            _ => {}
        }
        if let Some(rest) = s.strip_prefix("uai:") {
            let (path, options) = engine_and_options(rest).ok_or_else(bad)?;
            return Ok(PlayerSpec::Uai { path, options });
        }
        if let Some(rest) = s.strip_prefix("nboard:") {
            let (path, options) = engine_and_options(rest).ok_or_else(bad)?;
            return Ok(PlayerSpec::Nboard { path, options });
        }
        if let Some(rest) = s.strip_prefix("abnet:") {
            let (net, options) = path_and_options(rest).ok_or_else(bad)?;
            let (limits, search) = ab_options(options, s)?;
            return Ok(PlayerSpec::NetAlphaBeta {
                net: PathBuf::from(net),
                limits,
                search,
            });
        }
        if let Some(rest) = s.strip_prefix("mcts:") {
            let (source, options) = path_and_options(rest).ok_or_else(bad)?;
            let (mut sims, mut time, mut engine) = (DEFAULT_MCTS_SIMS, None, NetEngine::Fast);
            let mut basic = false;
            let mut params = SearchParams::default();
            for part in options.split(',').filter(|o| !o.is_empty()) {
                let (k, v) = part.split_once('=').ok_or_else(bad)?;
                let setting = |why| BadPlayerName::Setting {
                    name: s.to_string(),
                    why,
                };
                if params.set(k, v).map_err(setting)? {
                    continue;
                }
                if k == "engine" {
                    engine = v.parse().map_err(|_| bad())?;
                    continue;
                }
                if k == "search" {
                    basic = match v {
                        "basic" => true,
                        "full" => false,
                        _ => return Err(bad()),
                    };
                    continue;
                }
                let n: u64 = v.parse().ok().filter(|&n| n > 0).ok_or_else(bad)?;
                match k {
                    "sims" if n <= 1_000_000 => sims = n as u32,
                    "time" => time = Some(Duration::from_millis(n)),
                    _ => return Err(bad()),
                }
            }
            let net = if source == "bootstrap" {
                NetSource::Bootstrap
            } else {
                NetSource::Path(PathBuf::from(source))
            };
            return Ok(PlayerSpec::Mcts {
                net,
                sims,
                time,
                engine,
                basic,
                params,
            });
        }
        if let Some(d) = s.strip_prefix("ab").filter(|d| !d.starts_with(':')) {
            let depth: u32 = d
                .parse()
                .ok()
                .filter(|d| (1..=64).contains(d))
                .ok_or_else(bad)?;
            return Ok(PlayerSpec::AlphaBeta {
                limits: Limits {
                    depth: Some(depth),
                    ..Limits::default()
                },
                search: AbSearch::FULL_WIDTH,
            });
        }
        if let Some(rest) = s.strip_prefix("ab:") {
            let (limits, search) = ab_options(rest, s)?;
            if rest.is_empty() {
                return Err(bad());
            }
            return Ok(PlayerSpec::AlphaBeta { limits, search });
        }
        Err(bad())
    }
}

/// `PATH[:OPTIONS]`: options follow the last `:` when what follows it looks like
/// name=value pairs (paths may hold colons); `None` for an empty path.
fn path_and_options(rest: &str) -> Option<(&str, &str)> {
    let (path, options) = match rest.rsplit_once(':') {
        Some((p, o)) if o.contains('=') && !p.is_empty() => (p, o),
        _ => (rest, ""),
    };
    (!path.is_empty()).then_some((path, options))
}

/// An external engine's `PATH[:name=value,...]`.
fn engine_and_options(rest: &str) -> Option<(PathBuf, Vec<(String, String)>)> {
    let (path, options) = path_and_options(rest)?;
    let options = options
        .split(',')
        .filter(|o| !o.is_empty())
        .map(|o| {
            o.split_once('=')
                .map(|(k, v)| (k.to_string(), v.to_string()))
        })
        .collect::<Option<Vec<_>>>()?;
    Some((PathBuf::from(path), options))
}

/// An external engine's name, `KIND:PATH[:name=value,...]` (what [`engine_and_options`]
/// reads back).
fn engine_name(
    f: &mut fmt::Formatter<'_>,
    kind: &str,
    path: &std::path::Path,
    options: &[(String, String)],
) -> fmt::Result {
    write!(f, "{kind}:{}", path.display())?;
    if !options.is_empty() {
        let o: Vec<String> = options.iter().map(|(k, v)| format!("{k}={v}")).collect();
        write!(f, ":{}", o.join(","))?;
    }
    Ok(())
}

/// The options of an alpha-beta player (`ab:` or `abnet:`): limits `depth=N`,
/// `nodes=N` (the hard limit), `soft_nodes=N` (no iteration starts past it), `time=MS`, `search=full|tuned`, and search parameters by name; `name` is
/// the whole player name, for errors.
fn ab_options(text: &str, name: &str) -> Result<(Limits, AbSearch), BadPlayerName> {
    let bad = || BadPlayerName::Unknown(name.to_string());
    let mut limits = Limits::default();
    let mut search = AbSearch::TUNED;
    for part in text.split(',').filter(|p| !p.is_empty()) {
        let (k, v) = part.split_once('=').ok_or_else(bad)?;
        let setting = |why| BadPlayerName::Setting {
            name: name.to_string(),
            why,
        };
        if search.set(k, v).map_err(setting)? {
            continue;
        }
        let n: u64 = v.parse().ok().filter(|&n| n > 0).ok_or_else(bad)?;
        match k {
            "depth" if n <= 64 => limits.depth = Some(n as u32),
            "nodes" => limits.nodes = Some(n),
            "soft_nodes" => limits.soft_nodes = Some(n),
            "time" => limits.time = Some(Duration::from_millis(n)),
            _ => return Err(bad()),
        }
    }
    Ok((limits, search))
}

/// `depth=N,nodes=N,soft_nodes=N,time=MS` of the limits that are set.
fn limit_parts(l: &Limits) -> Vec<String> {
    let mut parts = vec![];
    if let Some(d) = l.depth {
        parts.push(format!("depth={d}"));
    }
    if let Some(n) = l.nodes {
        parts.push(format!("nodes={n}"));
    }
    if let Some(n) = l.soft_nodes {
        parts.push(format!("soft_nodes={n}"));
    }
    if let Some(t) = l.time {
        parts.push(format!("time={}", t.as_millis()));
    }
    parts
}

impl fmt::Display for PlayerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlayerSpec::Random => f.write_str("random"),
            PlayerSpec::Greedy => f.write_str("greedy"),
            PlayerSpec::AlphaBeta { limits: l, search } => {
                let mut parts = limit_parts(l);
                let settings = search.parts();
                match (l.depth, l.nodes, l.time, search.full_width) {
                    (Some(d), None, None, true) if settings.is_empty() => {
                        return write!(f, "ab{d}");
                    }
                    (None, None, None, false) if settings.is_empty() => return f.write_str("ab"),
                    (.., true) => parts.push("search=full".into()),
                    _ => {}
                }
                parts.extend(settings);
                write!(f, "ab:{}", parts.join(","))
            }
            PlayerSpec::NetAlphaBeta {
                net,
                limits,
                search,
            } => {
                write!(f, "abnet:{}", net.display())?;
                let mut parts = limit_parts(limits);
                if search.full_width {
                    parts.push("search=full".into());
                }
                parts.extend(search.parts());
                if !parts.is_empty() {
                    write!(f, ":{}", parts.join(","))?;
                }
                Ok(())
            }
            PlayerSpec::Mcts {
                net,
                sims,
                time,
                engine,
                basic,
                params,
            } => {
                match net {
                    NetSource::Bootstrap => f.write_str("mcts:bootstrap")?,
                    NetSource::Path(p) => write!(f, "mcts:{}", p.display())?,
                }
                let mut parts = Vec::new();
                match time {
                    Some(t) => parts.push(format!("time={}", t.as_millis())),
                    None if *sims != DEFAULT_MCTS_SIMS => parts.push(format!("sims={sims}")),
                    None => {}
                }
                if *engine != NetEngine::Fast {
                    parts.push(format!("engine={engine}"));
                }
                if *basic {
                    parts.push("search=basic".into());
                }
                parts.extend(params.parts());
                if parts.is_empty() {
                    Ok(())
                } else {
                    write!(f, ":{}", parts.join(","))
                }
            }
            PlayerSpec::Uai { path, options } => engine_name(f, "uai", path, options),
            PlayerSpec::Nboard { path, options } => engine_name(f, "nboard", path, options),
        }
    }
}

impl PlayerSpec {
    /// The program of an external engine (`uai:` and `nboard:` players).
    pub fn external_program(&self) -> Option<&std::path::Path> {
        match self {
            PlayerSpec::Uai { path, .. } | PlayerSpec::Nboard { path, .. } => Some(path),
            _ => None,
        }
    }

    /// Checks, before any game starts, that this player can play `game`: an MCTS
    /// player's model must load and be a model of `game`; an external engine must start,
    /// complete its handshake and accept `game` and its options (it is stopped again; one
    /// that fails later, mid-match, forfeits its games).
    pub fn check(&self, game: Game, timeouts: Timeouts) -> Result<(), PlayerError> {
        match self {
            PlayerSpec::Mcts { net, engine, .. } => {
                mcts_evaluators(net, game, 1, *engine).map(drop)
            }
            PlayerSpec::Uai { path, options } => {
                UaiPlayer::start(path.clone(), options.clone(), game, timeouts).map(drop)
            }
            PlayerSpec::Nboard { path, options } => {
                NboardPlayer::start(path.clone(), options.clone(), game, timeouts).map(drop)
            }
            PlayerSpec::NetAlphaBeta { net, .. } => fast_value(net, game).map(drop),
            _ => Ok(()),
        }
    }

    /// This player with a run directory replaced by the network that is its best now
    /// (`mcts:` and `abnet:` players), so that every game of a match plays that network
    /// even if the run promotes another meanwhile.
    pub fn pinned(&self) -> Result<PlayerSpec, PlayerError> {
        Ok(match self {
            PlayerSpec::Mcts {
                net: NetSource::Path(p),
                sims,
                time,
                engine,
                basic,
                params,
            } => PlayerSpec::Mcts {
                net: match resolve_net(p)? {
                    ResolvedNet::Model(dir) => NetSource::Path(dir),
                    ResolvedNet::Bootstrap => NetSource::Bootstrap,
                },
                sims: *sims,
                time: *time,
                engine: *engine,
                basic: *basic,
                params: *params,
            },
            // A run whose best is still the bootstrap evaluator stays as named: building
            // the player then says that it holds no fast net.
            PlayerSpec::NetAlphaBeta {
                net,
                limits,
                search,
            } => PlayerSpec::NetAlphaBeta {
                net: match resolve_net(net)? {
                    ResolvedNet::Model(dir) => dir,
                    ResolvedNet::Bootstrap => net.clone(),
                },
                limits: *limits,
                search: *search,
            },
            other => other.clone(),
        })
    }

    /// Whether this player has no limit of its own (`ab`): it can only play on a clock.
    pub fn needs_clock(&self) -> bool {
        matches!(self, PlayerSpec::AlphaBeta { limits: l, .. } | PlayerSpec::NetAlphaBeta { limits: l, .. }
            if *l == Limits::default())
    }

    /// A fresh player for `game`; `seed` drives its random choices (tie-breaks, random
    /// moves). An MCTS player searches on one thread.
    pub fn build(
        &self,
        game: Game,
        seed: u64,
        timeouts: Timeouts,
    ) -> Result<Box<dyn Player>, PlayerError> {
        self.build_with(game, seed, timeouts, 1, false)
    }

    /// Like [`PlayerSpec::build`], with `search_threads` threads for an MCTS player, set
    /// up for a clock when `clocked` (timed searches gather larger batches).
    pub fn build_with(
        &self,
        game: Game,
        seed: u64,
        timeouts: Timeouts,
        search_threads: usize,
        clocked: bool,
    ) -> Result<Box<dyn Player>, PlayerError> {
        Ok(match self {
            PlayerSpec::Random => Box::new(RandomPlayer(Rng::new(seed))),
            PlayerSpec::Greedy => Box::new(GreedyPlayer(Rng::new(seed))),
            PlayerSpec::AlphaBeta { limits, search } => {
                Box::new(AlphaBetaPlayer::new(*limits, search))
            }
            PlayerSpec::NetAlphaBeta {
                net,
                limits,
                search,
            } => Box::new(AlphaBetaPlayer {
                searcher: Searcher::new(16)
                    .with_params(search.params)
                    .with_eval(fast_value(net, game)?),
                limits: *limits,
                last_score: None,
            }),
            PlayerSpec::Mcts {
                net,
                sims,
                time,
                engine,
                basic,
                params,
            } => {
                let evaluators = mcts_evaluators(net, game, search_threads, *engine)?;
                let preferred = evaluators[0].preferred_batch();
                let thinking = time.map_or(Thinking::Sims(*sims), Thinking::Time);
                let fixed = (!clocked && time.is_none()).then_some(*sims);
                let batch = if *basic {
                    1
                } else {
                    batch_for(fixed, preferred)
                };
                let mut player = MctsPlayer::new(evaluators, thinking, batch, seed)?;
                player.set_params(params);
                player.set_tree_reuse(!basic);
                Box::new(player)
            }
            PlayerSpec::Uai { path, options } => Box::new(UaiPlayer::start(
                path.clone(),
                options.clone(),
                game,
                timeouts,
            )?),
            PlayerSpec::Nboard { path, options } => Box::new(NboardPlayer::start(
                path.clone(),
                options.clone(),
                game,
                timeouts,
            )?),
        })
    }
}

/// The leaf evaluation of the fast net `net` names, for `game`.
pub(crate) fn fast_value(
    net: &std::path::Path,
    game: Game,
) -> Result<Box<dyn engine::search::StaticEval>, PlayerError> {
    match super::mcts::load_fastnet(&NetSource::Path(net.to_path_buf()), game)? {
        Some((_, q)) => Ok(Box::new(fastnet::FastValue::new(q))),
        None => Err(PlayerError::Model(format!(
            "{} holds no fast net (abnet: plays a folder written by `flipzero train --net fast`)",
            net.display()
        ))),
    }
}
