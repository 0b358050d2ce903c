//! `flipzero bench play`: evaluations per second of the play-time search on several
//! threads, against the fast path's raw batched throughput at the same batch size, on
//! the same number of threads. `flipzero bench mcts`: the play-time search's nodes per
//! second on one thread, as `flipzero uai` searches.

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use anyhow::Context;
use engine::{Game, State};
use selfplay::{Evaluator, MctsConfig, PlayLimits, PlaySearch};

/// The network: a model directory, or an untrained `small` net (the same cost).
fn model(dir: Option<&std::path::Path>, game: Game) -> anyhow::Result<train::LoadedModel> {
    if let Some(dir) = dir {
        return Ok(train::load_model(dir)?);
    }
    let cfg = train::TrainConfig {
        net: "small".into(),
        ..Default::default()
    };
    let device = burn::tensor::Device::flex();
    let net_cfg = cfg.net_config(game);
    Ok(train::LoadedModel {
        meta: train::ModelMeta::new(game, &net_cfg, 0, 0),
        game,
        net: net_cfg.init(&device),
        device,
    })
}

/// `n` positions of up to `plies` random plies from the start.
fn positions(game: Game, n: usize, plies: u64) -> Vec<State> {
    let mut rng = engine::Rng::new(11);
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let mut s = game.startpos();
        for _ in 0..rng.below(plies + 1) {
            let m = s.legal_moves();
            if m.len() <= 1 {
                break;
            }
            s.play(m[rng.below(m.len() as u64) as usize]);
        }
        if s.legal_moves().len() > 1 {
            out.push(s);
        }
    }
    out
}

/// Positions/s of `threads` evaluators, each evaluating batches of `batch` for `secs`.
fn raw(model: &train::LoadedModel, threads: usize, batch: usize, secs: f64) -> f64 {
    let states = positions(model.game, 512, 30);
    let moves: Vec<_> = states.iter().map(State::legal_moves).collect();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (states, moves) = (&states, &moves);
                scope.spawn(move || {
                    let mut ev = train::FastEvaluator::new(model, "bench".into());
                    let start = Instant::now();
                    let mut n = 0usize;
                    let mut i = t * 97;
                    while start.elapsed().as_secs_f64() < secs {
                        let at = i % (states.len() - batch);
                        let _ = ev.evaluate(&states[at..at + batch], &moves[at..at + batch]);
                        n += batch;
                        i += batch;
                    }
                    n as f64 / start.elapsed().as_secs_f64()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("bench thread"))
            .sum::<f64>()
    })
}

/// Runs the benchmark: for each batch size, raw throughput on 1 and `threads` threads,
/// then timed searches from a few positions on `threads` threads.
pub fn run(dir: Option<&std::path::Path>, threads: usize, secs: f64) -> anyhow::Result<()> {
    let game: Game = "ataxx".parse()?;
    let model = model(dir, game)?;
    let cfg = MctsConfig::for_play();
    println!(
        "net {}x{} ({}), {threads} threads, {secs} s per figure",
        model.meta.network.blocks,
        model.meta.network.channels,
        dir.map_or("untrained small".to_string(), |d| d.display().to_string())
    );
    // Opening positions: the searches stay clear of finished games, which cost no
    // evaluation.
    let roots = positions(game, 4, 4);
    for batch in [16usize, 32, 64] {
        let raw1 = raw(&model, 1, batch, secs);
        let raw_n = raw(&model, threads, batch, secs);
        let (mut evals, mut batches, mut elapsed, mut busy, mut waits) =
            (0u64, 0u64, Duration::ZERO, Duration::ZERO, 0u64);
        let (mut lookups, mut hits) = (0u64, 0u64);
        for (i, root) in roots.iter().enumerate() {
            let mut evaluators: Vec<Box<dyn Evaluator>> = (0..threads)
                .map(|_| {
                    Box::new(train::FastEvaluator::new(&model, "bench".into()))
                        as Box<dyn Evaluator>
                })
                .collect();
            let mut search = PlaySearch::new(*root, cfg.clone(), batch, i as u64);
            // No limit but the stop flag, set after this position's share of the time:
            // no early stop, the whole time searched.
            let t = Duration::from_secs_f64(secs / roots.len() as f64);
            let stop = AtomicBool::new(false);
            let stats = std::thread::scope(|scope| {
                let stop = &stop;
                scope.spawn(move || {
                    std::thread::sleep(t);
                    stop.store(true, std::sync::atomic::Ordering::Relaxed);
                });
                search.run(&mut evaluators, PlayLimits::default(), stop)
            })?
            .1;
            evals += stats.evaluations;
            batches += stats.batches;
            elapsed += stats.elapsed;
            busy += stats.eval_time;
            waits += stats.waits;
            lookups += stats.cache_lookups;
            hits += stats.cache_hits;
        }
        let play = evals as f64 / elapsed.as_secs_f64();
        println!(
            "batch {batch:>2}: raw fast path {raw1:>8.0} positions/s on 1 thread, {raw_n:>8.0} on {threads}; \
             in play {play:>8.0} evaluations/s on {threads} (mean batch {:.1}, evaluators busy {:.0}% of the time, {} waits): \
             {:.2} of raw on {threads} threads, {:.2} of raw on 1; evaluation cache: {hits} of {lookups} leaves found ({:.1}%)",
            evals as f64 / batches.max(1) as f64,
            100.0 * busy.as_secs_f64() / (elapsed.as_secs_f64() * threads as f64),
            waits,
            play / raw_n,
            play / raw1,
            100.0 * hits as f64 / lookups.max(1) as f64
        );
    }
    Ok(())
}

/// The mcts benchmark (see `Suite::Mcts`); the last line is `evaluations <total>`, which
/// changes only with the search (or the net).
pub fn mcts(model: &std::path::Path, nodes: u32) -> anyhow::Result<()> {
    let game = eval::model_game(model)?;
    let source = eval::NetSource::Path(model.to_path_buf());
    let mut roots = vec![game.startpos()];
    let mut rng = engine::Rng::new(7);
    while roots.len() < 4 {
        let mut s = game.startpos();
        for _ in 0..8 {
            let m = s.legal_moves();
            if m.is_empty() {
                break;
            }
            s.play(m[rng.below(m.len() as u64) as usize]);
        }
        if s.legal_moves().len() > 1 {
            roots.push(s);
        }
    }
    println!(
        "instruction set {:?}, {}",
        engine::Isa::current(),
        model.display()
    );
    let never = AtomicBool::new(false);
    let (mut total, mut seconds) = (0u64, 0.0);
    for root in &roots {
        // A fresh player a position: no tree or cache carried over; made ready, untimed,
        // as the UAI engine makes it at `isready`.
        let evaluators = eval::mcts_evaluators(&source, game, 1, selfplay::NetEngine::Fast)?;
        let mut player = eval::MctsPlayer::new(evaluators, eval::Thinking::Sims(1), 1, 1)?;
        player.prepare();
        let limits = PlayLimits {
            sims: Some(nodes),
            time: None,
        };
        let t = Instant::now();
        player.search(root, limits, &never)?;
        let s = t.elapsed().as_secs_f64();
        let stats = player
            .last_stats()
            .context("a searched position has counts")?;
        println!(
            "{:<60} {:>8} nodes {:>8} evaluations {:>7.3} s {:>9.0} nodes/s",
            root.text(),
            stats.simulations,
            stats.evaluations,
            s,
            f64::from(stats.simulations) / s
        );
        total += stats.evaluations;
        seconds += s;
    }
    println!(
        "{} positions: {:.0} nodes/s",
        roots.len(),
        f64::from(nodes) * roots.len() as f64 / seconds
    );
    println!("evaluations {total}");
    Ok(())
}
