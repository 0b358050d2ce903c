//! Play-time search: one tree kept between moves, searched by several threads at once,
//! each gathering a batch of leaves under virtual loss for its own evaluator, within a
//! simulation count or a time budget.
//!
//! The tree sits under one mutex. A thread takes it to gather a batch
//! ([`Search::gather`]), lets it go while its evaluator runs, and takes it again to give
//! the evaluations back ([`Search::apply_batch`]); tree work is small beside a network
//! call, so the threads' evaluators run nearly all the time. With one thread the search
//! is a fixed sequence of batches: the same seed, evaluator and simulation count give the
//! same tree.
//!
//! A timed search stops at the soft limit of its budget unless the best move is still in
//! doubt (the runner-up has at least [`CLOSE_RATIO`] of the leader's visits), then at
//! the hard limit; it stops early once the runner-up cannot catch the leader with the
//! simulations the soft limit leaves (lc0's smart pruning). No batch is started that
//! would end after the hard limit at the pace of the last one.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use engine::{Move, Rng, State};

use super::at_once::{AtOnce, Calls, Counts};
use super::cache::{EvalCache, Lookup};
use super::config::{MctsConfig, RootKind};
use super::memory::{DEFAULT_TREE_BYTES, MAX_TREE_BYTES, PlayMemory};
use super::outcome::SearchOutcome;
use super::search::Search;
use super::time::{TimeBudget, leaders};
use super::tree::ROOT;
use crate::evaluator::{Evaluation, Evaluator, evaluate_mixed};

/// When the runner-up has at least this share of the leader's visits at the soft limit,
/// the search goes on towards the hard limit.
pub const CLOSE_RATIO: f32 = 0.7;

/// What ends one search (besides the stop flag).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlayLimits {
    /// New simulations to run (fixed work: no early stop but the tree's bound,
    /// [`PlaySearch::set_tree_limit`]).
    pub sims: Option<u32>,
    /// Thinking time.
    pub time: Option<TimeBudget>,
}

/// Counts of one search.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PlayStats {
    /// New simulations (finished games met count as simulations).
    pub simulations: u32,
    /// Positions evaluated.
    pub evaluations: u64,
    /// Evaluator calls.
    pub batches: u64,
    /// Time inside evaluator calls, summed over threads; where batches hold one leaf,
    /// estimated from every [`CLOCK_EVERY`]th batch's.
    pub eval_time: Duration,
    /// Wall-clock time of the search.
    pub elapsed: Duration,
    /// Visits of the root kept from earlier searches.
    pub reused_visits: u32,
    /// Times a thread found nothing to gather and waited for another's batch.
    pub waits: u64,
    /// Leaves looked up in the evaluation cache, and those found there (not evaluated).
    pub cache_lookups: u64,
    /// See `cache_lookups`.
    pub cache_hits: u64,
    /// The search ended because its tree reached its bound
    /// ([`PlaySearch::set_tree_limit`]).
    pub tree_full: bool,
    /// The simulations' mean number of moves from the root to their leaf.
    pub depth: f64,
    /// The most moves from the root to a simulation's leaf.
    pub seldepth: u32,
}

/// Why a search could not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlayError {
    /// No evaluator was given: a search needs one per thread.
    #[error("a search needs at least one evaluator (one per thread)")]
    NoEvaluator,
    /// The root is a finished game.
    #[error("the game is over: no move to search")]
    GameOver,
    /// A time limit on a target without a clock (WebAssembly without an operating
    /// system): search by simulations there.
    #[error("this build has no clock: give the search a number of simulations, not a time")]
    NoClock,
}

use engine::clock::{now, since};

/// Whether a search on `threads` threads gathering `batch` leaves a call gives out one
/// leaf at a time, each back before the next (`Search::set_one_leaf`: its positions may
/// keep tails).
pub(super) fn one_leaf(threads: usize, batch: usize) -> bool {
    threads == 1 && batch == 1
}

/// A search tree kept between the moves of a game, searched by one thread per evaluator.
pub struct PlaySearch {
    search: Search,
    cfg: MctsConfig,
    rng: Rng,
    batch: usize,
    cache: EvalCache,
    /// The search stops when its tree holds this many bytes ([`Search::tree_bytes`]).
    tree_limit: usize,
}

/// The tree and what every thread changes, under the mutex.
struct Shared<'a> {
    search: &'a mut Search,
    rng: &'a mut Rng,
    cache: &'a mut EvalCache,
    stats: PlayStats,
    /// Set by the first thread that decides to stop; the others stop too.
    done: bool,
    /// Duration of the latest batch, from its gathering (where the endgame solver works)
    /// to the end of its evaluation, to keep the next one within the limit.
    last_batch: Duration,
    /// Batches before the soft limit, counted at each stop check (smart pruning is
    /// checked at every [`PRUNE_EVERY`]th).
    checks: u32,
}

/// Smart pruning is checked at every this many batches: it stops a search at most this
/// many simulations later than it could have (a fraction of a millisecond).
const PRUNE_EVERY: u32 = 16;

/// Where batches hold one leaf, the play loop reads the clock at every this many batches
/// only (and times the evaluator there): a batch of one leaf takes a few microseconds,
/// and three readings of the clock took 2% of them. A search stops at most this many
/// batches later than it would have (tens of microseconds), and smart pruning is checked
/// at every [`PRUNE_EVERY`]th batch still. A batch after one that ran the endgame solver
/// (which may take milliseconds) is timed whatever its number.
pub const CLOCK_EVERY: u32 = 16;

impl PlaySearch {
    /// A search of `root` gathering up to `batch` leaves per evaluator call; `seed` drives
    /// its random choices (symmetries). Its evaluation cache holds
    /// [`DEFAULT_CACHE_ENTRIES`](super::cache::DEFAULT_CACHE_ENTRIES), its tree at most
    /// [`DEFAULT_TREE_BYTES`].
    pub fn new(root: State, cfg: MctsConfig, batch: usize, seed: u64) -> PlaySearch {
        PlaySearch::in_memory(root, cfg, batch, seed, PlayMemory::new())
    }

    /// [`PlaySearch::new`] in the buffers and the cache of `memory` (emptied): the same
    /// search, without the page faults of buffers that grow from nothing.
    pub fn in_memory(
        root: State,
        cfg: MctsConfig,
        batch: usize,
        seed: u64,
        memory: PlayMemory,
    ) -> PlaySearch {
        let PlayMemory { tree, cache } = memory;
        PlaySearch {
            search: Search::in_buffers(root, tree),
            cfg,
            rng: Rng::new(seed),
            batch: batch.max(1),
            cache,
            tree_limit: DEFAULT_TREE_BYTES,
        }
    }

    /// The search's buffers and cache, for the next tree ([`PlaySearch::in_memory`]).
    pub fn into_memory(self) -> PlayMemory {
        PlayMemory::kept(self.search.into_buffers(), self.cache)
    }

    /// Bounds the tree: a search ends (as if its time were up) once the tree holds
    /// `bytes` ([`Search::tree_bytes`]; the batches other threads have in flight then
    /// still come in, and the buffers may take up to twice that while they grow), and
    /// one that starts with a buffer of more than half of `bytes` compacts it (what
    /// reroots left behind dropped, [`Search::compact`]), and starts a fresh tree if the
    /// kept tree alone is still more than half, giving the old one's memory back. A
    /// search with no other limit (`go infinite`) grows its tree by hundreds of megabytes
    /// a second: without a bound it would take all the memory. At most [`MAX_TREE_BYTES`]
    /// (a larger bound is taken as that).
    pub fn set_tree_limit(&mut self, bytes: usize) {
        self.tree_limit = bytes.min(usize::try_from(MAX_TREE_BYTES).unwrap_or(usize::MAX));
    }

    /// Replaces the evaluation cache by an empty one of `entries` (0: no cache).
    pub fn set_cache(&mut self, entries: usize) {
        self.cache = EvalCache::new(entries);
    }

    /// Sets the leaves gathered per evaluator call.
    pub fn set_batch(&mut self, batch: usize) {
        self.batch = batch.max(1);
    }

    /// The tree.
    pub fn tree(&self) -> &Search {
        &self.search
    }

    /// Moves the tree to `state`, keeping the subtree when the tree holds it (the same
    /// position, or one or two plies below the root); returns whether it was kept (the
    /// next [`PlaySearch::run`] may still drop it, see [`PlaySearch::set_tree_limit`]).
    pub fn set_position(&mut self, state: &State) -> bool {
        self.search.reroot(state)
    }

    /// Searches the current root with one thread per evaluator until `limits`, `stop` or
    /// the tree's bound (at least one simulation is always made, so that the move is
    /// searched). A timed search always uses the PUCT root, whatever the configuration
    /// says.
    pub fn run(
        &mut self,
        evaluators: &mut [Box<dyn Evaluator>],
        limits: PlayLimits,
        stop: &AtomicBool,
    ) -> Result<(SearchOutcome, PlayStats), PlayError> {
        if evaluators.is_empty() {
            return Err(PlayError::NoEvaluator);
        }
        if self.search.root_state().legal_moves().is_empty() {
            return Err(PlayError::GameOver);
        }
        let start = now();
        if limits.time.is_some() && start.is_none() {
            return Err(PlayError::NoClock);
        }
        let mut cfg = self.cfg.clone();
        if limits.sims.is_none() {
            cfg.root = RootKind::Puct;
        }
        // One thread gathering one leaf a batch gives each back before the next: its
        // positions may keep tails. Before the tree's bound is checked, since turning
        // tails off grows them.
        self.search
            .set_one_leaf(one_leaf(evaluators.len(), self.batch));
        if self.search.tree_bytes() > self.tree_limit / 2 {
            // What earlier reroots left behind goes first; the kept tree itself if that
            // was not enough.
            self.search.compact();
            if self.search.tree_bytes() > self.tree_limit / 2 {
                self.search.clear();
            }
        }
        self.search
            .set_values_need_moves(evaluators.iter().any(|e| e.values_need_moves()));
        let reused_visits = self.search.visits_at(&[]).map_or(0, |(v, _)| v);
        self.cache.keep_for(self.search.root_state().game());
        let cache_before = self.cache.counts();
        self.search
            .start(limits.sims.unwrap_or(u32::MAX), false, &cfg, &mut self.rng);
        let shared = Mutex::new(Shared {
            search: &mut self.search,
            rng: &mut self.rng,
            cache: &mut self.cache,
            stats: PlayStats {
                reused_visits,
                ..PlayStats::default()
            },
            done: false,
            last_batch: Duration::ZERO,
            checks: 0,
        });
        let ctx = Context {
            cfg: &cfg,
            limits,
            stop,
            start,
            batch: self.batch,
            tree_limit: self.tree_limit,
            clock_every: if self.batch == 1 { CLOCK_EVERY } else { 1 },
        };
        std::thread::scope(|scope| {
            let (first, rest) = evaluators.split_first_mut().expect("not empty");
            for ev in rest {
                let (shared, ctx) = (&shared, &ctx);
                scope.spawn(move || ctx.work(shared, ev.as_mut()));
            }
            ctx.work(&shared, first.as_mut());
        });
        let mut stats = shared.into_inner().unwrap_or_else(|p| p.into_inner()).stats;
        stats.simulations = self.search.simulations();
        (stats.depth, stats.seldepth) = self.search.depth();
        let cache_after = self.cache.counts();
        stats.cache_lookups = cache_after.0 - cache_before.0;
        stats.cache_hits = cache_after.1 - cache_before.1;
        stats.elapsed = since(start);
        Ok((self.search.outcome(&cfg), stats))
    }
}

/// What every thread of one search reads.
struct Context<'a> {
    cfg: &'a MctsConfig,
    limits: PlayLimits,
    stop: &'a AtomicBool,
    /// Where the target has a clock (always, for a timed search).
    start: Option<Instant>,
    batch: usize,
    tree_limit: usize,
    /// The clock is read at every this many batches ([`CLOCK_EVERY`] or 1).
    clock_every: u32,
}

impl Context<'_> {
    fn work(&self, shared: &Mutex<Shared<'_>>, evaluator: &mut dyn Evaluator) {
        let lock = || shared.lock().unwrap_or_else(|p| p.into_inner());
        // Buffers kept from batch to batch: a batch of one leaf allocates nothing.
        let mut states: Vec<State> = Vec::with_capacity(self.batch);
        let mut moves: Vec<Vec<Move>> = Vec::with_capacity(self.batch);
        let mut value_only: Vec<bool> = Vec::with_capacity(self.batch);
        // The requests the cache did not answer, by index; and those it answered with a
        // value alone where the evaluator gives a policy alone for less.
        let mut misses: Vec<usize> = Vec::with_capacity(self.batch);
        let mut policies: Vec<usize> = Vec::with_capacity(self.batch);
        let policy_alone = evaluator.policy_alone();
        let mut evals: Vec<Evaluation> = Vec::with_capacity(self.batch);
        // The evaluation of a leaf expanded during a descent (one leaf at a time).
        let mut expansion = Evaluation::default();
        let mut round = 0u32;
        // Whether the last batch ran the endgame solver (up to its node budget: far
        // longer than a batch of one leaf), after which every batch is timed.
        let mut solved = false;
        loop {
            // Three clock readings a timed batch: its start (which the stop rule reads
            // too), the evaluator's start and its end; one where the cache answered every
            // request (no evaluator call to time).
            let timed = solved || round.is_multiple_of(self.clock_every);
            round = round.wrapping_add(1);
            let gathering = if timed { now() } else { None };
            let (mut batch, evaluating) = {
                let mut g = lock();
                if g.done || self.should_stop(&mut g, gathering) {
                    g.done = true;
                    return;
                }
                let Shared {
                    search,
                    rng,
                    cache,
                    stats,
                    ..
                } = &mut *g;
                let (before, solves) = (search.simulations(), search.endgame_solves);
                let mut descent = AtOnce {
                    cache,
                    calls: Calls {
                        evaluator: &mut *evaluator,
                        policy_alone,
                        timed_as: timed.then_some(self.clock_every),
                        counts: Counts::default(),
                    },
                    eval: &mut expansion,
                };
                let batch = search.gather_with(self.batch, self.cfg, rng, &mut descent);
                solved = search.endgame_solves != solves;
                let counts = descent.calls.counts;
                // Each evaluation of a descent is a batch of one.
                stats.evaluations += counts.evaluations;
                stats.batches += counts.evaluations;
                stats.eval_time += counts.eval_time;
                let evaluated = counts.evaluations > 0;
                if batch.is_empty() && search.simulations() > before {
                    // Only finished games (or leaves the endgame solver proved) were met,
                    // or a leaf evaluated during the descent ([`Descent::value_now`]):
                    // scored already, no wait. The batch's buffers go back for the next.
                    search.apply_batch(batch, &[], self.cfg, rng);
                    let took = since(gathering);
                    g.last_batch = if timed && evaluated {
                        took
                    } else {
                        // A batch of finished games alone is quicker than one that
                        // evaluates: it keeps the longer estimate.
                        g.last_batch.max(took)
                    };
                    continue;
                }
                misses.clear();
                policies.clear();
                for (i, r) in batch.requests.iter().enumerate() {
                    if evals.len() == i {
                        evals.push(Evaluation::default());
                    }
                    match cache.look_up(r, policy_alone, &mut evals[i]) {
                        Lookup::Answered => {}
                        Lookup::PolicyAlone => policies.push(i),
                        Lookup::Miss => misses.push(i),
                    }
                }
                let calls = misses.len() + policies.len();
                (batch, if calls == 0 || !timed { None } else { now() })
            };
            if batch.is_empty() {
                // Every simulation left is in flight on another thread, or the root
                // awaits its evaluation there.
                lock().stats.waits += 1;
                std::thread::sleep(Duration::from_micros(20));
                continue;
            }
            for &i in &policies {
                let r = &batch.requests[i];
                evaluator.policy_into(&r.state, &r.moves, &mut evals[i].policy);
            }
            if let [i] = misses[..] {
                let r = &batch.requests[i];
                evaluator.evaluate_into(&r.state, &r.moves, r.value_only, &mut evals[i]);
            } else if !misses.is_empty() {
                states.clear();
                moves.clear();
                value_only.clear();
                for &i in &misses {
                    let r = &mut batch.requests[i];
                    states.push(r.state);
                    value_only.push(r.value_only);
                    // The request's moves are not needed after this.
                    moves.push(std::mem::take(&mut r.moves));
                }
                let fresh = evaluate_mixed(evaluator, &states, &moves, &value_only);
                for ((&i, e), m) in misses.iter().zip(fresh).zip(moves.drain(..)) {
                    evals[i] = e;
                    // Given back, for the batch's next requests.
                    batch.requests[i].moves = m;
                }
            }
            let calls = misses.len() + policies.len();
            let done = if calls == 0 || !timed { None } else { now() };
            let mut g = lock();
            if calls > 0 {
                g.stats.evaluations += calls as u64;
                g.stats.batches += 1;
                if let (Some(a), Some(b), Some(c)) = (gathering, evaluating, done) {
                    g.stats.eval_time += (c - b) * self.clock_every;
                    g.last_batch = c - a;
                }
            }
            for &i in misses.iter().chain(&policies) {
                g.cache.put(batch.requests[i].position, &evals[i]);
            }
            let n = batch.requests.len();
            let Shared { search, rng, .. } = &mut *g;
            search.apply_batch(batch, &evals[..n], self.cfg, rng);
        }
    }

    /// Whether to stop, at `time` (none without a clock).
    fn should_stop(&self, g: &mut Shared<'_>, time: Option<Instant>) -> bool {
        let search = &*g.search;
        if search.child_visits(ROOT).next().is_none() {
            // The root awaits its evaluation.
            return false;
        }
        if search.finished() {
            return true;
        }
        let done = search.simulations();
        if done == 0 {
            return false;
        }
        if self.stop.load(Ordering::Relaxed) {
            return true;
        }
        if search.tree_bytes() >= self.tree_limit {
            g.stats.tree_full = true;
            return true;
        }
        let (Some(budget), Some(start), Some(time)) = (self.limits.time, self.start, time) else {
            return false;
        };
        let spent = time.saturating_duration_since(start);
        // Leave room for the batches until the next reading of the clock to end in time.
        let elapsed = spent + g.last_batch * self.clock_every;
        if elapsed >= budget.hard {
            return true;
        }
        if elapsed < budget.soft {
            // Smart pruning reads every root move's visits (up to a hundred and more in
            // a middle game): checked every few batches, not at every simulation.
            g.checks = g.checks.wrapping_add(self.clock_every);
            if !g.checks.is_multiple_of(PRUNE_EVERY) {
                return false;
            }
        }
        let (first, second) = leaders(search.child_visits(ROOT).map(|(_, v)| v));
        if elapsed >= budget.soft {
            return (second as f32) < CLOSE_RATIO * first as f32;
        }
        // Smart pruning: the simulations the soft limit leaves at the pace so far.
        let rate = done as f64 / spent.as_secs_f64().max(1e-6);
        let left = rate * (budget.soft - elapsed).as_secs_f64();
        f64::from(second) + left < f64::from(first)
    }
}
