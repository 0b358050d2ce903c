//! Paired matches: every opening is played twice with colours swapped, pairs run in
//! parallel, and the same seed gives the same games whatever the thread count (untimed
//! matches; on a clock, the games depend on the machine's speed).
//!
//! A match may give both players the same clock ([`MatchClock`]): a fixed time per move,
//! or a base time with an increment (sudden death + increment). Every move's thinking
//! time is measured and taken off the mover's clock; a player whose move takes longer
//! than its clock held loses on time (`time-loss by x: …`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use engine::boards::{BlockerParams, random_blocker_board};
use engine::{Game, Rng, Side, State, splitmix64};
use rayon::prelude::*;
use selfplay::ClockState;

use crate::players::spec::PlayerSpec;
use crate::players::{PlayerError, Timeouts};
use crate::stats::MatchStats;

/// How a match is played.
#[derive(Clone, Debug)]
pub struct MatchConfig {
    /// The game.
    pub game: Game,
    /// Number of game pairs (each opening twice, colours swapped).
    pub pairs: usize,
    /// Openings to cycle through; when empty, openings are generated.
    pub openings: Vec<State>,
    /// Random plies from the start in generated openings.
    pub random_plies: u32,
    /// Whether generated Ataxx-family openings get random blocker boards.
    pub blockers: bool,
    /// Seed of everything random: openings and players' choices.
    pub seed: u64,
    /// Worker threads.
    pub threads: usize,
    /// External-engine timeouts.
    pub timeouts: Timeouts,
    /// A game still running after this many plies is a draw ("move cap").
    pub max_plies: u32,
    /// Number of the first pair: a match played in several parts (SPRT batches) gives
    /// each part the following pair numbers, so openings and seeds continue.
    pub first_pair: usize,
    /// The clock both players play on; `None`: each player's own limits.
    pub clock: Option<MatchClock>,
    /// Search threads of each MCTS player.
    pub search_threads: usize,
}

/// The same clock for both players of a match.
///
/// ```
/// use eval::MatchClock;
/// use std::time::Duration;
/// let tc: MatchClock = "tc=1+0.01".parse().unwrap();
/// assert_eq!(tc, MatchClock::Fischer { base: Duration::from_secs(1), increment: Duration::from_millis(10) });
/// assert_eq!(tc.to_string(), "tc=1+0.01");
/// assert_eq!("time=100".parse::<MatchClock>().unwrap(), MatchClock::PerMove(Duration::from_millis(100)));
/// assert!("tc=0".parse::<MatchClock>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatchClock {
    /// `time=MS`: this long for every move, unused time not carried over.
    PerMove(Duration),
    /// `tc=BASE+INC` (seconds, as cutechess writes it): a clock starting at `base`,
    /// `increment` added after every move.
    Fischer {
        /// The clock at the start of the game.
        base: Duration,
        /// Added after each move.
        increment: Duration,
    },
}

/// A clock that names no clock.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "bad clock `{0}`: expected time=MS (milliseconds a move) or tc=BASE+INC (seconds, e.g. tc=1+0.01), with a positive time"
)]
pub struct BadClock(pub String);

impl std::str::FromStr for MatchClock {
    type Err = BadClock;

    fn from_str(s: &str) -> Result<MatchClock, BadClock> {
        let bad = || BadClock(s.to_string());
        let secs = |v: &str| -> Result<Duration, BadClock> {
            let x: f64 = v.parse().map_err(|_| bad())?;
            if !(x.is_finite() && (0.0..=1e6).contains(&x)) {
                return Err(bad());
            }
            Ok(Duration::from_millis((x * 1000.0).round() as u64))
        };
        if let Some(ms) = s.strip_prefix("time=") {
            let ms: u64 = ms.parse().map_err(|_| bad())?;
            if ms == 0 || ms > 1_000_000_000 {
                return Err(bad());
            }
            return Ok(MatchClock::PerMove(Duration::from_millis(ms)));
        }
        let tc = s.strip_prefix("tc=").ok_or_else(bad)?;
        let (base, inc) = tc.split_once('+').unwrap_or((tc, "0"));
        let (base, increment) = (secs(base)?, secs(inc)?);
        if base.is_zero() {
            return Err(bad());
        }
        Ok(MatchClock::Fischer { base, increment })
    }
}

impl std::fmt::Display for MatchClock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MatchClock::PerMove(t) => write!(f, "time={}", t.as_millis()),
            MatchClock::Fischer { base, increment } => {
                write!(f, "tc={}+{}", base.as_secs_f64(), increment.as_secs_f64())
            }
        }
    }
}

/// Written in configs as its text (`"time=100"`, `"tc=1+0.01"`).
impl serde::Serialize for MatchClock {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for MatchClock {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<MatchClock, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

impl MatchClock {
    /// Each side's clock at the start of a game.
    fn start(&self) -> Duration {
        match *self {
            MatchClock::PerMove(t) => t,
            MatchClock::Fischer { base, .. } => base,
        }
    }

    /// What the mover is told before a move, with `remaining` on its clock.
    fn state(&self, remaining: Duration) -> ClockState {
        match *self {
            MatchClock::PerMove(t) => ClockState {
                remaining: t,
                increment: Duration::ZERO,
                moves_to_go: Some(1),
            },
            MatchClock::Fischer { increment, .. } => ClockState {
                remaining,
                increment,
                moves_to_go: None,
            },
        }
    }

    /// The mover's clock after a move that took `used` with `remaining` on it, or `None`
    /// when it took longer than that (a loss on time).
    fn after(&self, remaining: Duration, used: Duration) -> Option<Duration> {
        let left = remaining.checked_sub(used)?;
        Some(match *self {
            MatchClock::PerMove(t) => t,
            MatchClock::Fischer { increment, .. } => left + increment,
        })
    }
}

impl MatchConfig {
    /// A match of `pairs` pairs with generated openings (2 random plies), 1 thread.
    pub fn new(game: Game, pairs: usize, seed: u64) -> MatchConfig {
        MatchConfig {
            game,
            pairs,
            openings: Vec::new(),
            random_plies: 2,
            blockers: false,
            seed,
            threads: 1,
            timeouts: Timeouts::default(),
            max_plies: 1000,
            first_pair: 0,
            clock: None,
            search_threads: 1,
        }
    }
}

/// One finished game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameRecord {
    /// Pair number, from 0.
    pub pair: usize,
    /// Whether player A had the first move (`x`).
    pub a_is_x: bool,
    /// Name of the first player.
    pub x_name: String,
    /// Name of the second player.
    pub o_name: String,
    /// The opening position.
    pub opening: State,
    /// The moves played from the opening, in notation.
    pub moves: Vec<String>,
    /// The winner, or `None` for a draw.
    pub winner: Option<Side>,
    /// Why it ended (`full-board`, `wipe-out`, `no-moves`, `halfmove-cap`, `move-cap`,
    /// `time-loss by x: …` or `forfeit by x: …`).
    pub reason: String,
}

/// The prefix of the reason of a game lost on time.
pub const TIME_LOSS: &str = "time-loss";

impl GameRecord {
    /// A's points: 1, ½ or 0.
    pub fn a_points(&self) -> f64 {
        match self.winner {
            None => 0.5,
            Some(w) => f64::from(u8::from((w == Side::X) == self.a_is_x)),
        }
    }
}

/// Up to `count` distinct openings: `random_plies` random moves from the start (on a
/// random blocker board when `blockers` is set and the game has blockers); positions
/// where the game already ended are skipped.
pub fn generate_openings(
    game: Game,
    count: usize,
    random_plies: u32,
    blockers: bool,
    seed: u64,
) -> Vec<State> {
    let mut rng = Rng::new(splitmix64(seed ^ 0x4F50_454E_494E_4753).1);
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for _ in 0..count.saturating_mul(50).max(50) {
        if out.len() == count {
            break;
        }
        let mut s = match game {
            Game::Ataxx(r) if blockers => {
                State::Ataxx(random_blocker_board(r, &BlockerParams::default(), &mut rng))
            }
            _ => game.startpos(),
        };
        for _ in 0..random_plies {
            let moves = s.legal_moves();
            if moves.is_empty() {
                break;
            }
            s.play(moves[rng.below(moves.len() as u64) as usize]);
        }
        if !s.is_game_over() && seen.insert(s.hash()) {
            out.push(s);
        }
    }
    out
}

/// A played game: its moves, the winner (`None`: a draw) and why it ended.
type Played = (Vec<String>, Option<Side>, String);

/// Plays one game; a player that fails (error, timeout, illegal move) forfeits.
fn play_game(
    x: &PlayerSpec,
    o: &PlayerSpec,
    opening: State,
    seed: u64,
    cfg: &MatchConfig,
) -> Result<Played, (Side, PlayerError)> {
    let forfeit = |side: Side, e: &dyn std::fmt::Display| {
        (
            Some(side.other()),
            format!("forfeit by {}: {e}", side.char()),
        )
    };
    let mut players = Vec::with_capacity(2);
    for (side, spec) in [(Side::X, x), (Side::O, o)] {
        match spec.build_with(
            cfg.game,
            splitmix64(seed ^ side.index() as u64).1,
            cfg.timeouts,
            cfg.search_threads,
            cfg.clock.is_some(),
        ) {
            Ok(mut p) => {
                if let Err(e) = p.new_game() {
                    let (w, r) = forfeit(side, &e);
                    return Ok((vec![], w, r));
                }
                players.push(p)
            }
            // A network that stopped loading mid-match (its run's best was replaced by
            // a broken one) cannot play at all: the match ends, no forfeits counted.
            Err(e @ (PlayerError::Model(_) | PlayerError::WrongGame { .. })) => {
                return Err((side, e));
            }
            Err(e) => {
                let (w, r) = forfeit(side, &e);
                return Ok((vec![], w, r));
            }
        }
    }
    let mut s = opening;
    let mut moves = Vec::new();
    let mut clocks = cfg.clock.map(|c| [c.start(); 2]);
    loop {
        if let Some(r) = s.result() {
            return Ok((moves, r.winner, r.reason.name().to_string()));
        }
        if moves.len() as u32 >= cfg.max_plies {
            return Ok((moves, None, "move-cap".into()));
        }
        let side = s.side_to_move();
        let player = &mut players[side.index()];
        let chosen = match (cfg.clock, clocks.as_mut()) {
            (Some(clock), Some(left)) => {
                let remaining = left[side.index()];
                let t = Instant::now();
                let chosen = player.choose_timed(&s, &clock.state(remaining));
                let used = t.elapsed();
                match clock.after(remaining, used) {
                    Some(next) => left[side.index()] = next,
                    None => {
                        let reason = format!(
                            "{TIME_LOSS} by {}: the move took {} ms with {} ms on the clock",
                            side.char(),
                            used.as_millis(),
                            remaining.as_millis()
                        );
                        return Ok((moves, Some(side.other()), reason));
                    }
                }
                chosen
            }
            _ => player.choose(&s),
        };
        match chosen {
            Ok(mv) if s.is_legal(mv) => {
                moves.push(s.move_to_string(mv));
                s.play(mv);
            }
            Ok(mv) => {
                let text = s.move_to_string(mv);
                let (w, r) = forfeit(side, &format!("illegal move {text}"));
                return Ok((moves, w, r));
            }
            Err(e) => {
                let (w, r) = forfeit(side, &e);
                return Ok((moves, w, r));
            }
        }
    }
}

/// Why a match could not be played.
#[derive(Debug, thiserror::Error)]
pub enum MatchError {
    /// A player cannot play this game at all (its model is missing, corrupt, or of
    /// another game): refused before the first game, not counted as forfeits.
    #[error("player {name}: {source}")]
    Player {
        /// The player's name.
        name: String,
        /// Why.
        source: PlayerError,
    },
    /// The worker threads could not be started.
    #[error("cannot start the match's threads: {0}")]
    Threads(#[from] rayon::ThreadPoolBuildError),
    /// A player without limits of its own (`ab`) in a match without a clock.
    #[error("player {0} has no limit of its own: give the match a clock (time=MS or tc=BASE+INC)")]
    NeedsClock(String),
}

/// Plays a paired match of `a` against `b`, calling `on_game` as each game ends (from
/// any worker thread). Records come back in pair order; stats are from A's view.
/// Both players are checked first ([`PlayerSpec::check`]) and a run directory is pinned
/// to its best network of the moment ([`PlayerSpec::pinned`]); a player that fails
/// during the match (an external engine that crashes) forfeits the game instead.
pub fn run_match(
    a: &PlayerSpec,
    b: &PlayerSpec,
    cfg: &MatchConfig,
    on_game: &(dyn Fn(&GameRecord) + Sync),
) -> Result<(Vec<GameRecord>, MatchStats), MatchError> {
    run_match_until(a, b, cfg, on_game, &AtomicBool::new(false))
}

/// [`run_match`] that starts no game once `stop` is set (the games under way finish):
/// the records and stats are those of the games played.
pub fn run_match_until(
    a: &PlayerSpec,
    b: &PlayerSpec,
    cfg: &MatchConfig,
    on_game: &(dyn Fn(&GameRecord) + Sync),
    stop: &AtomicBool,
) -> Result<(Vec<GameRecord>, MatchStats), MatchError> {
    let pin = |p: &PlayerSpec| {
        p.pinned()
            .and_then(|pinned| pinned.check(cfg.game, cfg.timeouts).map(|()| pinned))
            .map_err(|source| MatchError::Player {
                name: p.to_string(),
                source,
            })
    };
    if cfg.clock.is_none() {
        for p in [a, b] {
            if p.needs_clock() {
                return Err(MatchError::NeedsClock(p.to_string()));
            }
        }
    }
    let (a, b) = (&pin(a)?, &pin(b)?);
    let openings = if cfg.openings.is_empty() {
        generate_openings(
            cfg.game,
            cfg.pairs,
            cfg.random_plies,
            cfg.blockers,
            cfg.seed,
        )
    } else {
        cfg.openings.clone()
    };
    let openings = if openings.is_empty() {
        vec![cfg.game.startpos()]
    } else {
        openings
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(cfg.threads.max(1))
        .build()?;
    let pairs: Result<Vec<Vec<GameRecord>>, MatchError> = pool.install(|| {
        (cfg.first_pair..cfg.first_pair + cfg.pairs)
            .into_par_iter()
            .map(|pair| {
                let opening = openings[pair % openings.len()];
                let pair_seed = splitmix64(cfg.seed ^ (pair as u64).wrapping_mul(0x9E37)).1;
                let game = |a_is_x: bool| {
                    if stop.load(Ordering::Relaxed) {
                        return Ok(None);
                    }
                    let (x, o) = if a_is_x { (a, b) } else { (b, a) };
                    let seed = pair_seed ^ u64::from(a_is_x);
                    let (moves, winner, reason) =
                        play_game(x, o, opening, seed, cfg).map_err(|(side, source)| {
                            MatchError::Player {
                                name: if side == Side::X { x } else { o }.to_string(),
                                source,
                            }
                        })?;
                    let rec = GameRecord {
                        pair,
                        a_is_x,
                        x_name: x.to_string(),
                        o_name: o.to_string(),
                        opening,
                        moves,
                        winner,
                        reason,
                    };
                    on_game(&rec);
                    Ok::<_, MatchError>(Some(rec))
                };
                Ok([game(true)?, game(false)?].into_iter().flatten().collect())
            })
            .collect()
    });
    let records: Vec<GameRecord> = pairs?.into_iter().flatten().collect();
    let stats = match_stats(&records);
    Ok((records, stats))
}

/// The statistics of a match's games (in any order): W/D/L of every game for A, and
/// the pentanomial of the pairs whose two games are both there (a match stopped early
/// may hold one game of a pair).
pub fn match_stats(records: &[GameRecord]) -> MatchStats {
    let mut stats = MatchStats::default();
    let mut pairs: std::collections::BTreeMap<usize, Vec<f64>> = Default::default();
    for g in records {
        // 1 point → win (0), ½ → draw (1), 0 → loss (2).
        stats.wdl[(2.0 - 2.0 * g.a_points()) as usize] += 1;
        pairs.entry(g.pair).or_default().push(g.a_points());
    }
    for points in pairs.values().filter(|p| p.len() == 2) {
        stats.pentanomial[((points[0] + points[1]) * 2.0) as usize] += 1;
    }
    stats
}
