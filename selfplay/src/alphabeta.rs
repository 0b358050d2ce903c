//! Alpha-beta self-play (`selfplay.search = "alphabeta"`): the games of the alpha-beta
//! nets, as Zataxx makes its data. Each game starts from random plies, drawn again while
//! a search scores the opening beyond `ab_opening_max_cp`; then every move is the
//! searcher's best at `ab_soft_nodes` (hard limit `ab_hard_nodes`), and a search that
//! scores beyond `ab_adjudicate_cp` ends the game for the side it favours. Each position
//! is recorded with the search's score (`search_cp`, its value as `root_q`) and the
//! move as a one-hot policy.
//!
//! A game depends on the seed, its number and the network only: the searcher is
//! node-limited and cleared before every game, so runs are reproducible with any number
//! of threads.

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use engine::search::{Limits, Searcher, value_of_score};
use engine::{Rng, splitmix64};

use crate::data::Sample;
use crate::evaluator::LeafEval;
use crate::worker::{
    Ending, GameSummary, Job, SelfplayError, SelfplayReport, Shards, finish_game, opening_for,
};

/// The `model` of rows played with the search's hand-written evaluation.
pub const HAND_WRITTEN: &str = "hand-written";

/// Openings drawn for one game before the last one is taken whatever its score (a
/// variant where most openings are decided cannot stall the run).
const OPENING_TRIES: u32 = 64;

/// Worker `worker` of `job` playing its games by alpha-beta: games `worker, worker +
/// threads, …`, one after another.
pub(crate) fn run_worker(job: &Job, worker: usize) -> Result<SelfplayReport, SelfplayError> {
    let (cfg, start) = (job.cfg, Instant::now());
    let evaluator = (job.make_evaluator)();
    let mut model = evaluator.name();
    let mut searcher = Searcher::new(cfg.ab_hash_mb);
    match evaluator.leaf_eval() {
        // The rows name what evaluated: the search's own evaluation, not the bootstrap.
        Some(LeafEval::HandWritten) => model = HAND_WRITTEN.to_string(),
        Some(LeafEval::Net(e)) => searcher.set_eval(Some(e)),
        None => return Err(SelfplayError::NoLeafEval(model)),
    }
    let player = Player {
        job,
        model,
        limits: Limits {
            soft_nodes: Some(cfg.ab_soft_nodes),
            nodes: Some(cfg.ab_hard_nodes),
            ..Limits::default()
        },
    };
    let mut report = SelfplayReport::default();
    let mut shards = Shards::new(job, worker);
    let mut number = worker as u64;
    while number < cfg.games {
        let t = Instant::now();
        let id = job.first_game_id + number;
        let (summary, samples, nodes) = player.play(&mut searcher, number, id);
        report.eval_time += t.elapsed();
        report.eval_calls += u64::from(summary.plies);
        report.eval_positions += nodes;
        report.count(&summary);
        shards.add(samples, &mut report)?;
        (job.on_game)(&summary);
        number += job.threads as u64;
    }
    shards.flush(&mut report)?;
    report.worker_time = start.elapsed();
    Ok(report)
}

struct Player<'a> {
    job: &'a Job<'a>,
    model: String,
    limits: Limits,
}

impl Player<'_> {
    /// Plays game `number` of this call (its id in the rows: `game_id`); returns its
    /// summary, rows and the nodes searched.
    fn play(
        &self,
        searcher: &mut Searcher,
        number: u64,
        game_id: u64,
    ) -> (GameSummary, Vec<Sample>, u64) {
        let Job {
            cfg,
            game,
            openings,
            ..
        } = *self.job;
        let stop = AtomicBool::new(false);
        let mut rng = Rng::new(splitmix64(cfg.seed ^ splitmix64(number).1).1);
        let mut nodes = 0;
        let mut state = opening_for(cfg, game, openings, &mut rng, number);
        // The accepted opening's search, from cleared tables, is also the game's first:
        // it is kept, not searched again.
        let mut first = None;
        if openings.is_empty() && cfg.ab_opening_max_cp > 0 {
            for _ in 1..OPENING_TRIES {
                searcher.clear();
                let r = searcher
                    .search(&state, self.limits, &stop, |_| {})
                    .expect("an opening is not over");
                if r.score.abs() <= cfg.ab_opening_max_cp {
                    first = Some(r);
                    break;
                }
                nodes += r.nodes;
                state = opening_for(cfg, game, openings, &mut rng, number);
            }
        }
        if first.is_none() {
            searcher.clear();
        }
        let (mut samples, mut sides) = (Vec::new(), Vec::new());
        let mut plies = 0;
        let mut moves = Vec::new();
        let ending = loop {
            if state.is_game_over() || plies >= cfg.max_plies {
                break Ending::Played;
            }
            let r = match first.take() {
                Some(r) => r,
                None => searcher
                    .search(&state, self.limits, &stop, |_| {})
                    .expect("a game not over has a move"),
            };
            nodes += r.nodes;
            let side = state.side_to_move();
            if cfg.ab_adjudicate_cp > 0 && r.score.abs() >= cfg.ab_adjudicate_cp {
                let winner = if r.score > 0 { side } else { side.other() };
                break Ending::Decided(Some(winner), "adjudicated");
            }
            let mv = r.pv[0];
            state.legal_moves_into(&mut moves);
            let idx = |m| state.policy_index(m) as u16;
            samples.push(Sample {
                game_id,
                ply: plies.min(u32::from(u16::MAX)) as u16,
                variant: game.to_string(),
                fen: state.text(),
                legal: moves.iter().map(|&m| idx(m)).collect(),
                policy: moves.iter().map(|&m| f32::from(m == mv)).collect(),
                played: idx(mv),
                root_q: value_of_score(r.score),
                // A forced move is no choice to learn.
                full_search: moves.len() > 1,
                visits: u32::try_from(r.nodes).unwrap_or(u32::MAX),
                model: self.model.clone(),
                search_cp: Some(r.score),
                ..Sample::default()
            });
            sides.push(side);
            state.play(mv);
            plies += 1;
        };
        let (summary, samples) = finish_game(&state, ending, game_id, plies, &mut samples, &sides);
        (summary, samples, nodes)
    }
}
