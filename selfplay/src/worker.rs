//! The game driver: each worker thread plays many games at once and gathers one leaf
//! from each into a single evaluator batch, then writes its positions to Parquet shards.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use engine::boards::{BlockerParams, random_blocker_board};
use engine::{Game, Move, Rng, Side, State, splitmix64};

use crate::config::SelfplayConfig;
use crate::data::{DataError, Sample, write_shard};
use crate::evaluator::Evaluator;
use crate::mcts::{MctsConfig, RootKind, Search};

/// What one finished game gives the progress display.
#[derive(Clone, Debug, PartialEq)]
pub struct GameSummary {
    /// Game number within the run (the id its rows carry).
    pub game_id: u64,
    /// Plies played.
    pub plies: u32,
    /// Positions recorded.
    pub positions: usize,
    /// The winner, or `None` for a draw.
    pub winner: Option<Side>,
    /// How it ended.
    pub reason: String,
}

/// Totals of a self-play run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SelfplayReport {
    /// Games played.
    pub games: u64,
    /// Positions written.
    pub positions: u64,
    /// Plies played (forced moves included).
    pub plies: u64,
    /// Wins of the first player, of the second, and draws.
    pub results: [u64; 3],
    /// Games that ended by resignation.
    pub resignations: u64,
    /// Evaluator calls (alpha-beta: searches).
    pub eval_calls: u64,
    /// Positions sent to the evaluator (alpha-beta: nodes searched).
    pub eval_positions: u64,
    /// Wall time in the evaluator, summed over workers (alpha-beta: all of it).
    pub eval_time: Duration,
    /// Wall time of the workers, summed.
    pub worker_time: Duration,
    /// Shards written.
    pub files: Vec<PathBuf>,
}

/// Errors of a self-play run.
#[derive(Debug, thiserror::Error)]
pub enum SelfplayError {
    /// Writing shards failed.
    #[error(transparent)]
    Data(#[from] DataError),
    /// The settings are invalid.
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    /// Alpha-beta self-play with an evaluator that has no leaf evaluation.
    #[error(
        "selfplay.search = \"alphabeta\" needs a fast net or the bootstrap evaluator (the hand-written evaluation); {0} has no value an alpha-beta search can call"
    )]
    NoLeafEval(String),
    /// The worker pool could not start.
    #[error("cannot start worker threads: {0}")]
    Threads(String),
}

/// The opening of game `game_id`: from `openings` when given (cycled), else the standard
/// start (or a random blocker board) followed by random plies; all from the game's seed.
pub fn opening_for(
    cfg: &SelfplayConfig,
    game: Game,
    openings: &[State],
    rng: &mut Rng,
    game_id: u64,
) -> State {
    if !openings.is_empty() {
        return openings[(game_id % openings.len() as u64) as usize];
    }
    loop {
        let mut s = match game {
            Game::Ataxx(r) if cfg.opening_blockers => {
                State::Ataxx(random_blocker_board(r, &BlockerParams::default(), rng))
            }
            _ => game.startpos(),
        };
        let extra = match cfg.opening_extra_plies {
            0 => 0,
            n => rng.below(u64::from(n) + 1) as u32,
        };
        for _ in 0..cfg.opening_random_plies + extra {
            let moves = s.legal_moves();
            if moves.is_empty() {
                break;
            }
            s.play(moves[rng.below(moves.len() as u64) as usize]);
        }
        if !s.is_game_over() {
            return s;
        }
    }
}

struct Slot {
    game_id: u64,
    rng: Rng,
    state: State,
    search: Search,
    searching: bool,
    full: bool,
    plies: u32,
    samples: Vec<Sample>,
    sides: Vec<Side>,
    may_resign: bool,
    low_streak: [u32; 2],
}

enum Advance {
    Request(crate::mcts::LeafRequest),
    Finished(Box<(GameSummary, Vec<Sample>)>),
}

struct Driver<'a> {
    cfg: &'a SelfplayConfig,
    mcts: MctsConfig,
    game: Game,
    openings: &'a [State],
    model: String,
    /// Added to a game's number in this call to give the id its rows carry.
    first_game_id: u64,
}

impl Driver<'_> {
    fn new_slot(&self, game_id: u64) -> Slot {
        let mut rng = Rng::new(splitmix64(self.cfg.seed ^ splitmix64(game_id).1).1);
        let state = opening_for(self.cfg, self.game, self.openings, &mut rng, game_id);
        let may_resign = self.cfg.resign_threshold.is_some()
            && rng.next_f64() >= f64::from(self.cfg.no_resign_fraction);
        Slot {
            game_id,
            rng,
            state,
            search: Search::new(state),
            searching: false,
            full: true,
            plies: 0,
            samples: Vec::new(),
            sides: Vec::new(),
            may_resign,
            low_streak: [0; 2],
        }
    }

    /// Runs the slot until it needs an evaluation or its game ends.
    fn advance(&self, s: &mut Slot) -> Advance {
        loop {
            if s.state.is_game_over() || s.plies >= self.cfg.max_plies {
                return Advance::Finished(Box::new(self.finish(s, None)));
            }
            if !s.searching {
                let moves = s.state.legal_moves();
                if moves.len() == 1 {
                    // A forced move (often a pass) teaches nothing: play it unrecorded.
                    self.play(s, moves[0]);
                    continue;
                }
                s.full = s.rng.next_f64() < f64::from(self.cfg.full_search_fraction);
                let sims = if s.full {
                    self.cfg.simulations
                } else {
                    self.cfg.fast_simulations
                };
                s.search.start(sims, s.full, &self.mcts, &mut s.rng);
                s.searching = true;
            }
            if let Some(req) = s.search.next_request(&self.mcts, &mut s.rng) {
                return Advance::Request(req);
            }
            s.searching = false;
            let out = s.search.outcome(&self.mcts);
            let side = s.state.side_to_move();
            let mv = self.choose(s, &out.moves, &out.visits, out.best);
            let idx = |m: Move| s.state.policy_index(m) as u16;
            s.samples.push(Sample {
                game_id: self.first_game_id + s.game_id,
                ply: s.plies.min(u16::MAX as u32) as u16,
                variant: self.game.to_string(),
                fen: s.state.text(),
                legal: out.moves.iter().map(|&m| idx(m)).collect(),
                policy: out.policy.clone(),
                played: idx(mv),
                root_q: out.root_q,
                result: 0.0,
                score: 0.0,
                full_search: s.full,
                visits: s.search.simulations(),
                model: self.model.clone(),
                end_reason: String::new(),
                ownership: Vec::new(),
                reply_legal: Vec::new(),
                reply_policy: Vec::new(),
                surprise: if s.full { out.surprise() } else { 0.0 },
                search_cp: None,
            });
            s.sides.push(side);
            if let Some(t) = self.cfg.resign_threshold {
                let streak = &mut s.low_streak[side.index()];
                *streak = if out.root_q < t { *streak + 1 } else { 0 };
                if s.may_resign && *streak >= self.cfg.resign_consecutive {
                    return Advance::Finished(Box::new(self.finish(s, Some(side))));
                }
            }
            self.play(s, mv);
        }
    }

    fn choose(&self, s: &mut Slot, moves: &[Move], visits: &[u32], best: Move) -> Move {
        let t = if s.plies < self.cfg.temperature_plies {
            self.cfg.temperature
        } else {
            self.cfg.final_temperature
        };
        if self.mcts.root == RootKind::Gumbel || !s.full || t <= 0.0 {
            return best;
        }
        let weights: Vec<f64> = visits
            .iter()
            .map(|&v| f64::from(v).powf(1.0 / f64::from(t)))
            .collect();
        let total: f64 = weights.iter().sum();
        if total <= 0.0 {
            return best;
        }
        let mut x = s.rng.next_f64() * total;
        for (m, w) in moves.iter().zip(&weights) {
            x -= w;
            if x < 0.0 {
                return *m;
            }
        }
        best
    }

    fn play(&self, s: &mut Slot, mv: Move) {
        let keep = self.cfg.tree_reuse && self.mcts.root == RootKind::Puct;
        s.search.advance(mv, keep);
        s.state.play(mv);
        s.plies += 1;
    }

    /// Fills in every sample's outcome and auxiliary targets; `resigned` names the side
    /// that resigned.
    fn finish(&self, s: &mut Slot, resigned: Option<Side>) -> (GameSummary, Vec<Sample>) {
        let ending = match resigned {
            Some(side) => Ending::Decided(Some(side.other()), "resigned"),
            None => Ending::Played,
        };
        let game_id = self.first_game_id + s.game_id;
        finish_game(&s.state, ending, game_id, s.plies, &mut s.samples, &s.sides)
    }
}

/// How a game ended: by its rules (or the move cap, when the rules have not ended it),
/// or decided by a driver (`resigned`, `adjudicated`) with this winner.
pub(crate) enum Ending {
    Played,
    Decided(Option<Side>, &'static str),
}

/// Fills in the outcome and auxiliary targets of one game's `samples` (in play order;
/// `sides[k]` the side to move of `samples[k]`) from its last position `state`, and
/// returns its summary with the samples.
pub(crate) fn finish_game(
    state: &State,
    ending: Ending,
    game_id: u64,
    plies: u32,
    samples: &mut Vec<Sample>,
    sides: &[Side],
) -> (GameSummary, Vec<Sample>) {
    let playable = state.playable_cells().max(1) as f32;
    let counts = state.counts();
    let misere = if state.game().misere() { -1 } else { 1 };
    let margin_now = misere * (counts[0] as i32 - counts[1] as i32);
    let decided = matches!(ending, Ending::Decided(..));
    let (winner, x_score, reason) = match (ending, state.result()) {
        (Ending::Decided(w, why), _) => (w, margin_now, why.to_string()),
        (Ending::Played, Some(r)) => (r.winner, r.score, r.reason.name().to_string()),
        (Ending::Played, None) => (None, margin_now, "move-cap".to_string()),
    };
    for (sample, &side) in samples.iter_mut().zip(sides) {
        let sign = if side == Side::X { 1.0 } else { -1.0 };
        sample.result = match winner {
            None => 0.0,
            Some(w) if w == side => 1.0,
            Some(_) => -1.0,
        };
        sample.score = (sign * x_score as f32 / playable).clamp(-1.0, 1.0);
        sample.end_reason = reason.clone();
    }
    // Only a game that ended by the rules has a final position to own: a resigned or
    // adjudicated game's board and one stopped at the run's move cap are not final.
    let final_board = (!decided && state.result().is_some()).then_some(state);
    fill_aux_targets(samples, sides, final_board);
    let summary = GameSummary {
        game_id,
        plies,
        positions: samples.len(),
        winner,
        reason,
    };
    (summary, std::mem::take(samples))
}

/// Fills the auxiliary targets of one game's samples (in play order; `sides[k]` is the
/// side to move of `samples[k]`): every row's ownership of `final_board` (none when
/// `None`), and as each row's reply target the next row's search policy when that row
/// is the very next ply, a full search, and the opponent's move.
fn fill_aux_targets(samples: &mut [Sample], sides: &[Side], final_board: Option<&State>) {
    for k in 0..samples.len() {
        samples[k].ownership = final_board.map_or_else(Vec::new, |b| ownership(b, sides[k]));
        let reply = samples.get(k + 1).filter(|next| {
            Some(next.ply) == samples[k].ply.checked_add(1)
                && next.full_search
                && sides[k + 1] == sides[k].other()
        });
        let (legal, policy) = reply.map_or_else(Default::default, |next| {
            (next.legal.clone(), next.policy.clone())
        });
        samples[k].reply_legal = legal;
        samples[k].reply_policy = policy;
    }
}

/// Who holds each grid cell of `board` from `side`'s view: 1 `side`'s piece, −1 the
/// other's, 0 empty, blocked or not a cell; grid cell `y * width + x` (`Game::grid`).
fn ownership(board: &State, side: Side) -> Vec<i8> {
    let game = board.game();
    let (w, h) = game.grid();
    let mut out = vec![0i8; w * h];
    for cell in game.cells() {
        let (x, y) = game.grid_xy(cell);
        out[y * w + x] = match board.piece_at(cell) {
            Some(p) if p == side => 1,
            Some(_) => -1,
            None => 0,
        };
    }
    out
}

/// What every worker of a self-play run shares: the settings, the first game's id, the
/// game, the openings, the evaluator factory, the output folder and its metadata, the
/// per-game callback, and the number of workers.
#[derive(Clone, Copy)]
pub(crate) struct Job<'a> {
    pub cfg: &'a SelfplayConfig,
    pub first_game_id: u64,
    pub game: Game,
    pub openings: &'a [State],
    pub make_evaluator: &'a (dyn Fn() -> Box<dyn Evaluator> + Sync),
    pub out: &'a Path,
    pub metadata: &'a HashMap<String, String>,
    pub on_game: &'a (dyn Fn(&GameSummary) + Sync),
    pub threads: usize,
}

/// Worker `worker` of `job` playing its games by MCTS: `worker, worker + threads, …`,
/// many at once, their leaves evaluated in one batch.
pub(crate) fn run_worker(job: &Job, worker: usize) -> Result<SelfplayReport, SelfplayError> {
    let Job {
        cfg,
        first_game_id,
        game,
        openings,
        make_evaluator,
        on_game,
        threads,
        ..
    } = *job;
    let start = Instant::now();
    let mut evaluator = make_evaluator();
    let driver = Driver {
        cfg,
        mcts: cfg.mcts(),
        game,
        openings,
        model: evaluator.name(),
        first_game_id,
    };
    let mut next_game = worker as u64;
    let mut slots: Vec<Option<Slot>> = Vec::new();
    for _ in 0..cfg.games_per_thread {
        if next_game < cfg.games {
            slots.push(Some(driver.new_slot(next_game)));
            next_game += threads as u64;
        }
    }
    let mut report = SelfplayReport::default();
    let mut shards = Shards::new(job, worker);
    let mut pending: Vec<usize> = Vec::new();
    let mut states = Vec::new();
    let mut moves = Vec::new();
    let mut value_only = Vec::new();
    loop {
        pending.clear();
        states.clear();
        moves.clear();
        value_only.clear();
        for (i, slot) in slots.iter_mut().enumerate() {
            while let Some(s) = slot {
                match driver.advance(s) {
                    Advance::Request(req) => {
                        pending.push(i);
                        states.push(req.state);
                        value_only.push(req.value_only);
                        moves.push(req.moves);
                        break;
                    }
                    Advance::Finished(done) => {
                        let (summary, samples) = *done;
                        report.count(&summary);
                        shards.add(samples, &mut report)?;
                        on_game(&summary);
                        *slot = (next_game < cfg.games).then(|| driver.new_slot(next_game));
                        next_game += threads as u64;
                    }
                }
            }
        }
        if pending.is_empty() {
            break;
        }
        let t = Instant::now();
        let evals =
            crate::evaluator::evaluate_mixed(evaluator.as_mut(), &states, &moves, &value_only);
        report.eval_time += t.elapsed();
        report.eval_calls += 1;
        report.eval_positions += states.len() as u64;
        for (&i, eval) in pending.iter().zip(&evals) {
            let s = slots[i].as_mut().expect("pending slot is live");
            s.search.apply(eval, &driver.mcts, &mut s.rng);
        }
    }
    shards.flush(&mut report)?;
    report.worker_time = start.elapsed();
    Ok(report)
}

impl SelfplayReport {
    /// Counts one finished game.
    pub(crate) fn count(&mut self, game: &GameSummary) {
        self.games += 1;
        self.plies += u64::from(game.plies);
        self.results[match game.winner {
            Some(Side::X) => 0,
            Some(Side::O) => 1,
            None => 2,
        }] += 1;
        self.resignations += u64::from(game.reason == "resigned");
    }
}

/// One worker's shards: rows gathered game by game, written `rows_per_shard` at a time
/// as `part-WORKER-SHARD.parquet`.
pub(crate) struct Shards<'a> {
    out: &'a Path,
    metadata: &'a HashMap<String, String>,
    worker: usize,
    rows_per_shard: usize,
    rows: Vec<Sample>,
    next: usize,
}

impl<'a> Shards<'a> {
    pub(crate) fn new(job: &Job<'a>, worker: usize) -> Shards<'a> {
        Shards {
            out: job.out,
            metadata: job.metadata,
            worker,
            rows_per_shard: job.cfg.rows_per_shard,
            rows: Vec::new(),
            next: 0,
        }
    }

    /// Adds one game's rows, writing a shard when enough are gathered.
    pub(crate) fn add(
        &mut self,
        samples: Vec<Sample>,
        report: &mut SelfplayReport,
    ) -> Result<(), DataError> {
        self.rows.extend(samples);
        if self.rows.len() >= self.rows_per_shard {
            self.flush(report)?;
        }
        Ok(())
    }

    /// Writes the rows gathered (if any) as a shard.
    pub(crate) fn flush(&mut self, report: &mut SelfplayReport) -> Result<(), DataError> {
        if self.rows.is_empty() {
            return Ok(());
        }
        let path = self
            .out
            .join(format!("part-{:03}-{:04}.parquet", self.worker, self.next));
        write_shard(&path, &self.rows, self.metadata)?;
        report.positions += self.rows.len() as u64;
        report.files.push(path);
        self.rows.clear();
        self.next += 1;
        Ok(())
    }
}
