//! `go`: its parameters, and the search thread that answers `bestmove`.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use engine::search::{Limits, MATE, Params, SearchReport, Searcher};
use engine::uai::{Go, GoError, GoParam, Info, Reply, Score};
use engine::{Move, State};
use selfplay::{ClockState, NetEngine, PlayLimits, TimeBudget, TimeManager, expected_moves_left};

use super::options::{Choice, check_net};
use super::output::Output;
use crate::SearchParams;
use crate::players::mcts::{
    MctsPlayer, NetSource, ResolvedNet, Thinking, batch_for, mcts_evaluators, resolve_net,
};
use crate::players::spec::PlayerSpec;
use crate::players::{Player, Timeouts};

/// An MCTS player kept between searches, so that its tree is reused and its network is
/// not folded again: for one network and one thread count.
pub(super) struct KeptMcts {
    /// The model directory (`None`: the bootstrap evaluator) and the search threads.
    key: (Option<PathBuf>, NetEngine, usize, SearchParams),
    /// The evaluators' preferred batch.
    preferred_batch: usize,
    player: MctsPlayer,
    /// Whether it searched (before, it takes the seed of its first search's position).
    searched: bool,
}

impl KeptMcts {
    /// Forgets the tree (a new game).
    pub(super) fn new_game(&mut self) {
        let _ = self.player.new_game();
    }

    /// Makes the memory of its next new tree ready, within the `TreeMemory` bound
    /// `tree_bytes` ([`MctsPlayer::prepare`]).
    pub(super) fn prepare(&mut self, tree_bytes: usize) {
        self.player.set_tree_limit(tree_bytes);
        self.player.prepare();
    }
}

/// What a search thread hands back: the alpha-beta tables and the kept MCTS player.
pub(super) type Kept = (Searcher, Option<KeptMcts>);

/// A search thread; it prints `bestmove` before it ends and hands its tables back.
pub(super) struct Running {
    handle: JoinHandle<Kept>,
    stop: Arc<AtomicBool>,
    /// What to answer if the thread dies without answering: a legal move (none for a
    /// `perft`, which answers no `bestmove`).
    fallback: Option<String>,
    out: Output,
}

impl Running {
    /// Stops the search (it still answers `bestmove`) and waits for its tables. Every
    /// player polls the flag between nodes or simulations, so this takes milliseconds.
    pub(super) fn stop(self) -> Option<Kept> {
        self.stop.store(true, Ordering::Relaxed);
        match self.handle.join() {
            Ok(kept) => Some(kept),
            Err(_) => {
                self.out.error("the search failed");
                if let Some(mv) = self.fallback {
                    self.out.say(&Reply::BestMove { mv, ponder: None });
                }
                None
            }
        }
    }
}

/// What a search thread needs besides the position.
pub(super) struct Setup {
    pub player: Choice,
    /// Simulations per move of an MCTS player; 0 = by the clock.
    pub simulations: u32,
    /// Search threads of an MCTS player.
    pub threads: usize,
    /// The bound on an MCTS player's tree, bytes.
    pub tree_bytes: usize,
    /// The time manager (its move overhead is the `MoveOverhead` option).
    pub time_manager: TimeManager,
    /// The alpha-beta search's parameters (the player's, with the GUI's options).
    pub ab: Params,
    pub searcher: Searcher,
    pub mcts: Option<KeptMcts>,
}

/// Starts searching `pos` (which has legal moves) on a new thread.
pub(super) fn start(pos: State, params: &GoParams, setup: Setup, out: Output) -> Running {
    let moves = pos.legal_moves();
    let fallback = pos.move_to_string(moves[0]);
    let forced = (moves.len() == 1).then(|| moves[0]);
    let budget = params.budget(&pos, &setup.time_manager);
    let limits = params.limits(budget);
    let infinite = params.infinite;
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let Setup {
        player,
        simulations,
        threads,
        tree_bytes,
        time_manager: _,
        ab,
        mut searcher,
        mut mcts,
    } = setup;
    if *searcher.params() != ab {
        searcher.set_params(ab);
    }
    let gui = Gui {
        limits,
        budget,
        infinite,
        simulations,
        threads,
        tree_bytes,
    };
    let say = out.clone();
    let handle = std::thread::spawn(move || {
        let mv = match forced {
            Some(mv) => mv,
            None => choose(&player, &gui, &mut searcher, &mut mcts, &pos, &flag, &say),
        };
        // With `go infinite`, the answer waits for `stop`.
        while infinite && !flag.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(1));
        }
        say.say(&Reply::BestMove {
            mv: pos.move_to_string(mv),
            ponder: None,
        });
        (searcher, mcts)
    });
    Running {
        handle,
        stop,
        fallback: Some(fallback),
        out,
    }
}

/// Starts `perft depth` of `pos` on a new thread, which prints `nodes N` when done (or
/// nothing when stopped first), so that the command loop answers `isready`, `stop` and
/// `quit` while it counts. The tables ride along and come back, as with a search.
pub(super) fn start_perft(pos: State, depth: u32, kept: Kept, out: Output) -> Running {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let say = out.clone();
    let handle = std::thread::spawn(move || {
        match pos.perft_stoppable(depth, &flag) {
            Some(n) => say.say(&Reply::Nodes(n)),
            None => say.info(format!("perft {depth} stopped")),
        }
        kept
    });
    Running {
        handle,
        stop,
        fallback: None,
        out,
    }
}

/// What the GUI asked of one search.
struct Gui {
    /// Alpha-beta limits.
    limits: Limits,
    /// Thinking time from `movetime` or the clock.
    budget: Option<TimeBudget>,
    infinite: bool,
    /// The `Simulations` option; 0 = by the clock.
    simulations: u32,
    threads: usize,
    tree_bytes: usize,
}

/// The move of `player`; a player that cannot play (a model that no longer loads or no
/// longer matches the game) is reported and the alpha-beta search plays instead.
fn choose(
    player: &Choice,
    gui: &Gui,
    searcher: &mut Searcher,
    mcts: &mut Option<KeptMcts>,
    pos: &State,
    stop: &AtomicBool,
    out: &Output,
) -> Move {
    let limits = gui.limits;
    let played = match player {
        Choice::Search => return search(searcher, pos, limits, stop, out),
        Choice::Ladder(PlayerSpec::AlphaBeta { limits: own, .. }) => {
            return search(searcher, pos, merge(*own, limits), stop, out);
        }
        // The kept searcher (its tables, the `Hash` size) with the fast net at its
        // leaves; the GUI's limits and `stop` hold as for `ab`.
        Choice::Ladder(PlayerSpec::NetAlphaBeta {
            net, limits: own, ..
        }) => match crate::players::spec::fast_value(net, pos.game()) {
            Ok(eval) => {
                searcher.set_eval(Some(eval));
                let mv = search(searcher, pos, merge(*own, limits), stop, out);
                searcher.set_eval(None);
                return mv;
            }
            Err(e) => Err(e.to_string()),
        },
        Choice::Ladder(PlayerSpec::Mcts {
            net,
            sims,
            time,
            engine,
            params,
            ..
        }) => {
            // The GUI's node limit is a simulation count; otherwise the Simulations
            // option, the player's own time, the GUI's time, or the player's own count;
            // `go infinite` searches until `stop`.
            let play = match (limits.nodes, gui.simulations, time, gui.budget) {
                (Some(n), ..) => PlayLimits {
                    sims: Some(n.min(1_000_000) as u32),
                    time: None,
                },
                (None, n, ..) if n > 0 => PlayLimits {
                    sims: Some(n),
                    time: None,
                },
                _ if gui.infinite => PlayLimits::default(),
                (None, _, Some(t), _) => PlayLimits {
                    sims: None,
                    time: Some(TimeBudget::fixed(*t)),
                },
                (None, _, None, Some(b)) => PlayLimits {
                    sims: None,
                    time: Some(b),
                },
                (None, _, None, None) => PlayLimits {
                    sims: Some(*sims),
                    time: None,
                },
            };
            run_mcts(
                net,
                (*engine, *params),
                (gui.threads, gui.tree_bytes),
                play,
                mcts,
                pos,
                stop,
                out,
            )
        }
        Choice::Ladder(spec) => spec
            .build(pos.game(), pos.hash(), Timeouts::default())
            .and_then(|mut p| p.choose(pos))
            .map_err(|e| e.to_string()),
    };
    played.unwrap_or_else(|msg| {
        out.error(format!("{msg}; the alpha-beta search plays instead"));
        search(searcher, pos, limits, stop, out)
    })
}

/// The kept MCTS player of network `net` with these settings for `pos`'s game: the one
/// kept, or a new one where it was of another network, thread count or settings (a
/// network given by a run directory is resolved again: its best model may have changed).
pub(super) fn kept_player<'a>(
    net: &NetSource,
    (net_engine, params): (NetEngine, SearchParams),
    threads: usize,
    kept: &'a mut Option<KeptMcts>,
    pos: &State,
) -> Result<&'a mut KeptMcts, String> {
    let model = match net {
        NetSource::Bootstrap => None,
        NetSource::Path(p) => match resolve_net(p).map_err(|e| e.to_string())? {
            ResolvedNet::Bootstrap => None,
            ResolvedNet::Model(dir) => Some(dir),
        },
    };
    let key = (model, net_engine, threads, params);
    if kept.as_ref().is_none_or(|k| k.key != key) {
        *kept = None;
        // Checked only when the player is built: the kept player searches with the
        // weights it loaded (a check a move cost a tenth of a millisecond).
        if let NetSource::Path(p) = net {
            check_net(p, pos.game())?;
        }
        let evaluators =
            mcts_evaluators(net, pos.game(), threads, net_engine).map_err(|e| e.to_string())?;
        let preferred_batch = evaluators[0].preferred_batch();
        let mut player = MctsPlayer::new(evaluators, Thinking::Sims(1), 1, pos.hash())
            .map_err(|e| e.to_string())?;
        player.set_params(&params);
        *kept = Some(KeptMcts {
            key,
            preferred_batch,
            player,
            searched: false,
        });
    }
    Ok(kept.as_mut().expect("built above"))
}

/// Searches with the kept MCTS player ([`kept_player`]); reports the search's counts in
/// an `info` line.
#[allow(clippy::too_many_arguments)]
fn run_mcts(
    net: &NetSource,
    (net_engine, params): (NetEngine, SearchParams),
    (threads, tree_bytes): (usize, usize),
    limits: PlayLimits,
    kept: &mut Option<KeptMcts>,
    pos: &State,
    stop: &AtomicBool,
    out: &Output,
) -> Result<Move, String> {
    let k = kept_player(net, (net_engine, params), threads, kept, pos)?;
    if !k.searched {
        // Seeded by the position of its first search, wherever it was built.
        k.player.set_seed(pos.hash());
        k.searched = true;
    }
    k.player
        .set_batch(batch_for(limits.sims, k.preferred_batch));
    k.player.set_tree_limit(tree_bytes);
    let mv = k
        .player
        .search(pos, limits, stop)
        .map_err(|e| e.to_string())?;
    if let Some(st) = k.player.last_stats() {
        let ms = st.elapsed.as_millis().max(1);
        out.say(&Reply::Info(Info {
            depth: Some(st.depth.round() as u64),
            seldepth: Some(st.seldepth.into()),
            nodes: Some(st.simulations.into()),
            nps: Some(saturating(u128::from(st.simulations) * 1000 / ms)),
            time: Some(saturating(ms)),
            string: Some(format!(
                "{} evaluations in {} batches, {} visits reused, {} of {} leaves from the evaluation cache{}",
                st.evaluations,
                st.batches,
                st.reused_visits,
                st.cache_hits,
                st.cache_lookups,
                if st.tree_full {
                    format!("; the tree reached TreeMemory ({} MiB): search stopped", tree_bytes >> 20)
                } else {
                    String::new()
                }
            )),
            ..Info::default()
        }));
    }
    Ok(mv)
}

/// The tighter of a ladder player's own limits and the GUI's.
fn merge(own: Limits, gui: Limits) -> Limits {
    fn min<T: Ord>(a: Option<T>, b: Option<T>) -> Option<T> {
        match (a, b) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        }
    }
    Limits {
        depth: min(own.depth, gui.depth),
        nodes: min(own.nodes, gui.nodes),
        time: min(own.time, gui.time),
        soft_time: min(own.soft_time, gui.soft_time),
        soft_nodes: min(own.soft_nodes, gui.soft_nodes),
    }
}

fn search(
    searcher: &mut Searcher,
    pos: &State,
    limits: Limits,
    stop: &AtomicBool,
    out: &Output,
) -> Move {
    let report = searcher.search(pos, limits, stop, |r| {
        out.say(&Reply::Info(info_line(r, pos)))
    });
    // `start` is only called on positions with legal moves, so there is a first one.
    report
        .and_then(|r| r.pv.first().copied())
        .unwrap_or_else(|| pos.legal_moves()[0])
}

fn info_line(r: &SearchReport, pos: &State) -> Info {
    let score = if r.score.abs() > MATE - 200 {
        let plies = MATE - r.score.abs();
        let moves = (plies + 1) / 2;
        Score::Mate(i64::from(if r.score > 0 { moves } else { -moves }))
    } else {
        Score::Cp(i64::from(r.score))
    };
    let ms = r.time.as_millis().max(1);
    let mut p = *pos;
    let mut pv = vec![];
    for &m in &r.pv {
        pv.push(p.move_to_string(m));
        p.play(m);
    }
    Info {
        depth: Some(r.depth.into()),
        score: Some(score),
        nodes: Some(r.nodes),
        nps: Some(saturating(r.nodes as u128 * 1000 / ms)),
        time: Some(saturating(ms)),
        pv,
        ..Info::default()
    }
}

/// A count of milliseconds or nodes per second, as `info` gives it.
fn saturating(n: u128) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

/// The parameters of a `go` command.
#[derive(Default, Debug)]
pub(super) struct GoParams {
    wtime: Option<u64>,
    btime: Option<u64>,
    winc: u64,
    binc: u64,
    movestogo: Option<u64>,
    movetime: Option<u64>,
    depth: Option<u32>,
    nodes: Option<u64>,
    infinite: bool,
}

impl GoParams {
    /// The parameters of `go` this engine uses. What it cannot use (`ponder`,
    /// `searchmoves …`, `mate …`, unknown words, values that are not numbers) comes back
    /// as warnings, in the order given, and is left out: a `go` is always answered with a
    /// `bestmove`, as a GUI waits for one.
    pub(super) fn from_uai(go: &Go) -> (GoParams, Vec<String>) {
        let mut p = GoParams::default();
        let mut warnings = Vec::new();
        let unsupported = |k: &str| format!("`go {k}` is not supported: ignored");
        for param in &go.params {
            match param {
                GoParam::WTime(n) => p.wtime = Some(*n),
                GoParam::BTime(n) => p.btime = Some(*n),
                GoParam::WInc(n) => p.winc = *n,
                GoParam::BInc(n) => p.binc = *n,
                GoParam::MovesToGo(n) => p.movestogo = Some((*n).max(1)),
                GoParam::MoveTime(n) => p.movetime = Some(*n),
                GoParam::Depth(n) => p.depth = Some((*n).clamp(1, 64) as u32),
                GoParam::Nodes(n) => p.nodes = Some((*n).max(1)),
                GoParam::Infinite => p.infinite = true,
                GoParam::Ponder => {
                    warnings.push("`go ponder` is not supported: searching normally".into())
                }
                GoParam::SearchMoves(_) => warnings.push(unsupported("searchmoves")),
                GoParam::Mate(_) => warnings.push(unsupported("mate")),
                GoParam::Malformed(e @ GoError::MissingValue(k))
                | GoParam::Malformed(e @ GoError::NotANumber { key: k, .. }) => {
                    // A `mate` that cannot be read is unsupported all the same.
                    warnings.push(if *k == "mate" {
                        unsupported("mate")
                    } else {
                        e.to_string()
                    })
                }
                GoParam::Malformed(e) => warnings.push(e.to_string()),
            }
        }
        (p, warnings)
    }

    /// The thinking time: `movetime` (less 10 ms for latency), or the time manager's
    /// budget on the mover's clock; none with `go infinite` or without either. In UAI for
    /// Ataxx (libataxx, cuteataxx) the first player `x` is "black": `btime`/`binc` are
    /// x's clock, `wtime`/`winc` o's.
    fn budget(&self, pos: &State, tm: &TimeManager) -> Option<TimeBudget> {
        if self.infinite {
            return None;
        }
        if let Some(t) = self.movetime {
            return Some(TimeBudget::fixed(Duration::from_millis(
                t.saturating_sub(10).max(1),
            )));
        }
        let x_to_move = pos.side_to_move() == engine::Side::X;
        let (left, inc) = if x_to_move {
            (self.btime, self.binc)
        } else {
            (self.wtime, self.winc)
        };
        // A clock for the other side only: ours is taken as empty (move at once, as
        // Stockfish does), not as unlimited.
        let left = left.or_else(|| (self.wtime.or(self.btime)).map(|_| 0))?;
        let clock = ClockState {
            remaining: Duration::from_millis(left),
            increment: Duration::from_millis(inc),
            moves_to_go: self.movestogo.map(|m| m.min(u64::from(u32::MAX)) as u32),
        };
        let b = tm.budget(&clock, expected_moves_left(pos));
        let at_least = Duration::from_millis(1);
        Some(TimeBudget {
            soft: b.soft.max(at_least),
            hard: b.hard.max(at_least),
        })
    }

    /// Alpha-beta limits: `depth`, `nodes`, and the budget's soft and hard times.
    fn limits(&self, budget: Option<TimeBudget>) -> Limits {
        let own = Limits {
            depth: self.depth,
            nodes: self.nodes,
            ..Limits::default()
        };
        match budget {
            Some(b) => crate::clock_limits(b, own),
            None => own,
        }
    }
}
