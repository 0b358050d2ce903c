//! `flipzero bench`: fixed workloads whose counts are deterministic for a build.

use std::time::Instant;

use anyhow::Context;
use clap::{Args, ValueEnum};
use engine::{Game, Position, Rules, Variant};

/// Which benchmark to run.
#[derive(Clone, Copy, ValueEnum)]
pub enum Suite {
    /// Alpha-beta search of a fixed list of positions to a fixed depth; the total node
    /// count is deterministic for a build (a change of count is a change of search).
    Search,
    /// Self-play with a fake evaluator of fixed cost per position (one thread): MCTS
    /// simulations per second and the share of time spent outside the evaluator.
    Selfplay,
    /// Network speed on Burn's Flex backend: training samples/s (tiny and small nets,
    /// batch 256) and inference positions/s (batch 1, 16, 64, 256).
    Net,
    /// Move generation: perft with bulk counting (start position, depths 6 and 7, one
    /// thread), perft with every leaf move made (make-move throughput), Hexxagon,
    /// Othello (depths 10 and 11) and Annexation 64 perft, at the engine's
    /// instruction-set level (printed first).
    Movegen,
    /// The play-time MCTS search (`--model DIR`, or an untrained small net): evaluations/s
    /// on `--threads` threads at batch 16, 32 and 64, against the fast path's raw batched
    /// throughput on 1 and on as many threads.
    Play,
    /// `flipzero serve` under a closed loop of dashboard viewers on 127.0.0.1 (needs
    /// `--run`): requests/s and latency percentiles at 1 to 64 clients.
    Serve,
    /// The rating list (one thread): a seeded synthetic tournament of `--players`
    /// players of known ratings and `--games` games, rated as `flipzero ratings` rates:
    /// seconds, and the fit's error against the true ratings. `--pgn FILE` also writes
    /// the tournament as PGN, to time `flipzero ratings --pgn FILE --anchor p00000`.
    Ratings,
    /// The serverless player's search, natively (`--model DIR`, a fast net): the net
    /// against itself from the start, 2000 simulations a move, 30 moves, seed 1;
    /// evaluations/s. `bench/web-player.js` times the same in WebAssembly (Node), and
    /// `bench/web.sh` runs both.
    Web,
    /// The play-time MCTS search of a fast net (`--model DIR`) as `flipzero uai`
    /// searches: one thread, one leaf an evaluator call, the evaluation cache; the start
    /// position and three seeded openings, `--nodes` simulations each from a fresh tree.
    /// Nodes (simulations) a second; the counts are deterministic for a build.
    Mcts,
}

/// Arguments of `flipzero bench`.
#[derive(Args)]
pub struct BenchArgs {
    /// The benchmark suite.
    #[arg(value_enum, default_value = "search")]
    suite: Suite,
    /// The run directory the serve benchmark serves.
    #[arg(long)]
    run: Option<std::path::PathBuf>,
    /// The model directory of the play benchmark (default: an untrained small net).
    #[arg(long)]
    model: Option<std::path::PathBuf>,
    /// Runtime threads of the serve benchmark's server; search threads of the play one.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Seconds per load level of the serve benchmark; per figure of the play one.
    #[arg(long, default_value_t = 5.0)]
    seconds: f64,
    /// Players of the ratings benchmark's tournament.
    #[arg(long, default_value_t = 10_000)]
    players: usize,
    /// Games of the ratings benchmark's tournament.
    #[arg(long, default_value_t = 100_000)]
    games: usize,
    /// Where the ratings benchmark also writes its tournament as PGN.
    #[arg(long)]
    pgn: Option<std::path::PathBuf>,
    /// Simulations a position of the mcts benchmark.
    #[arg(long, default_value_t = 300_000)]
    nodes: u32,
}

fn timed(label: &str, f: impl FnOnce() -> u64) -> u64 {
    let t = Instant::now();
    let n = f();
    let s = t.elapsed().as_secs_f64();
    println!(
        "{label:<44} {n:>12} nodes {s:>8.3} s {:>9.1} M nodes/s",
        n as f64 / s / 1e6
    );
    n
}

/// Runs the chosen suite; the last line is `nodes <total>`.
pub fn run(a: BenchArgs) -> anyhow::Result<()> {
    match a.suite {
        Suite::Search => bench_search(),
        Suite::Selfplay => bench_selfplay(),
        Suite::Net => bench_net(),
        Suite::Ratings => bench_ratings(a.players, a.games, a.pgn.as_deref()),
        Suite::Play => {
            super::bench_play::run(a.model.as_deref(), a.threads.max(1), a.seconds.max(0.5))
        }
        Suite::Web => {
            let model = a
                .model
                .as_deref()
                .context("the web benchmark needs --model DIR (a fast net)")?;
            bench_web(model)
        }
        Suite::Mcts => {
            let model = a
                .model
                .as_deref()
                .context("the mcts benchmark needs --model DIR (a fast net)")?;
            super::bench_play::mcts(model, a.nodes.max(1))
        }
        Suite::Serve => {
            let run = a
                .run
                .as_deref()
                .ok_or_else(|| anyhow::anyhow!("bench serve needs --run DIR"))?;
            super::bench_serve::run(run, a.threads.max(1), a.seconds.max(0.5))
        }
        Suite::Movegen => {
            print_kernels();
            let start = Position::startpos(Rules::ATAXX);
            let hex = Position::startpos(Rules::new(Variant::Hexxagon));
            let mut total = 0;
            total += timed("ataxx startpos perft 6 (bulk)", || engine::perft(&start, 6));
            total += timed("ataxx startpos perft 7 (bulk)", || engine::perft(&start, 7));
            total += timed("ataxx startpos perft 6 (every leaf made)", || {
                engine::perft_make_all(&start, 6)
            });
            total += timed("hexxagon startpos perft 6 (bulk)", || {
                engine::perft(&hex, 6)
            });
            for (name, depth) in [("othello", 10), ("othello", 11), ("annexation64", 12)] {
                let s = name.parse::<Game>()?.startpos();
                total += timed(&format!("{name} startpos perft {depth} (bulk)"), || {
                    s.perft(depth)
                });
            }
            println!("nodes {total}");
            Ok(())
        }
    }
}

/// The ratings benchmark: see [`Suite::Ratings`]. The last line is `seconds <s>`.
fn bench_ratings(
    players: usize,
    games: usize,
    pgn: Option<&std::path::Path>,
) -> anyhow::Result<()> {
    use std::fmt::Write as _;
    anyhow::ensure!(players >= 2, "--players must be at least 2");
    let (names, truth, list) = eval::tournament::synthetic_tournament(players, games, 1);
    if let Some(path) = pgn {
        let mut text = String::new();
        for (i, (x, o, p)) in list.iter().enumerate() {
            let result = if *p == 1.0 {
                "1-0"
            } else if *p == 0.0 {
                "0-1"
            } else {
                "1/2-1/2"
            };
            let _ = write!(
                text,
                "[Event \"flipzero bench ratings\"]\n[Round \"{}\"]\n[Black \"{x}\"]\n\
                 [White \"{o}\"]\n[Result \"{result}\"]\n\n{result}\n\n",
                i + 1
            );
        }
        super::write_output(path, text.as_bytes())?;
        println!("wrote {} ({} games)", path.display(), list.len());
    }
    let anchor = &names[0];
    let t = Instant::now();
    let rated = pipeline::report::ratings(&list, anchor, 0.0)?;
    let seconds = t.elapsed().as_secs_f64();
    let q = eval::tournament::fit_quality(&names, &truth, &list, &rated);
    println!(
        "players {}  games {}  intervals {}",
        rated.len(),
        list.len(),
        if rated.len() > eval::EXACT_INTERVALS_UP_TO {
            "projected"
        } else {
            "exact"
        }
    );
    println!(
        "fit vs true ratings (relative to the anchor; one virtual draw a pair pulls them together): rms error {:.1} Elo, max error {:.1} Elo, inside the 95% interval for {:.1}% of players",
        q.rms_error,
        q.max_error,
        100.0 * q.covered
    );
    println!(
        "optimality: largest |points - expected points| of a player {:.1e} games (one virtual draw a pair met, as rated)",
        q.largest_residual
    );
    println!("seconds {seconds:.3}");
    Ok(())
}

/// The engine's instruction-set level, which the move-generation and search figures
/// depend on.
fn print_kernels() {
    let levels: Vec<String> = engine::Isa::available()
        .iter()
        .map(|l| l.to_string())
        .collect();
    println!(
        "engine kernels: {} (this CPU runs {}; FLIPZERO_ISA=portable|avx2|avx512 caps it)",
        engine::Isa::current(),
        levels.join(", ")
    );
}

fn bench_search() -> anyhow::Result<()> {
    print_kernels();
    let mut k = 0;
    let lines = engine::bench::search_bench(|l| {
        k += 1;
        println!(
            "{k:>2} {:<20} depth {} nodes {:>10} best {:<6} score {:>6} {:>7.3} s",
            l.game, l.depth, l.nodes, l.best, l.score, l.seconds
        );
    })
    .map_err(anyhow::Error::msg)?;
    let nodes: u64 = lines.iter().map(|l| l.nodes).sum();
    let secs: f64 = lines.iter().map(|l| l.seconds).sum();
    println!(
        "total time {secs:.3} s, {:.0} nodes/s",
        nodes as f64 / secs.max(1e-9)
    );
    println!("nodes {nodes}");
    Ok(())
}

fn bench_selfplay() -> anyhow::Result<()> {
    // Removed when the benchmark ends, also when it fails.
    let dir = rundir::Scratch::temp("bench", "");
    for (game, cost_us) in [
        ("ataxx", 0u64),
        ("ataxx", 500),
        ("othello", 500),
        ("hexxagon", 500),
    ] {
        let cfg = selfplay::SelfplayConfig {
            game: game.into(),
            games: 8,
            threads: 1,
            games_per_thread: 8,
            simulations: 64,
            fast_simulations: 16,
            full_search_fraction: 0.25,
            ..selfplay::SelfplayConfig::default()
        };
        let per_position = std::time::Duration::from_micros(cost_us);
        let make = move || -> Box<dyn selfplay::Evaluator> {
            if cost_us == 0 {
                Box::new(selfplay::Uniform)
            } else {
                Box::new(selfplay::FixedCost::new(per_position))
            }
        };
        let t = Instant::now();
        let r = selfplay::run_selfplay(&cfg, &[], &make, &dir, &Default::default(), &|_| {})?;
        let secs = t.elapsed().as_secs_f64();
        let outside = 1.0 - r.eval_time.as_secs_f64() / r.worker_time.as_secs_f64().max(1e-9);
        println!(
            "{game:<9} evaluator {:>6} us/position: {:>8.0} simulations/s, {:>6.0} positions/s, {:.1}% of time outside the evaluator",
            cost_us,
            r.eval_positions as f64 / secs,
            r.positions as f64 / secs,
            100.0 * outside
        );
    }
    Ok(())
}

fn bench_net() -> anyhow::Result<()> {
    use burn::module::Module;
    use burn::optim::GradientsParams;
    let game: engine::Game = "ataxx".parse()?;
    let rows = train::data::random_rows(game, 512);
    for preset in ["tiny", "small"] {
        let cfg = train::TrainConfig {
            net: preset.into(),
            batch_size: 256,
            ..Default::default()
        };
        let device = burn::tensor::Device::flex().autodiff();
        let mut net = cfg.net_config(game).init_seeded(&device, 1);
        let mut optim = cfg.optimizer();
        let (warm, steps) = (2, 8);
        // Batches are made before timing, as the trainer's background thread makes them.
        let batches = (0..warm + steps)
            .map(|step| train::data::make_batch(game, &rows, 256, 1, step))
            .collect::<Result<Vec<_>, _>>()?;
        let mut t = Instant::now();
        for step in 0..warm + steps {
            if step == warm {
                t = Instant::now();
            }
            let b = &batches[step as usize];
            let (loss, _) = train::training::losses(&net, b, game, &cfg, &device);
            let grads = GradientsParams::from_grads(loss.backward(), &net);
            net = optim.step(1e-3, net, grads);
        }
        let train_rate = (steps * 256) as f64 / t.elapsed().as_secs_f64();
        println!(
            "{preset:<6} net ({}): training {train_rate:>7.0} samples/s at batch 256 with Burn Flex (forward, backward, AdamW)",
            describe(&cfg, game)
        );
        let mut cpu =
            train::backend::cpu::CpuTrainer::new(&net.valid(), &cfg.net_config(game), game, &cfg)?;
        let mut t = Instant::now();
        for step in 0..warm + steps {
            if step == warm {
                t = Instant::now();
            }
            cpu.step(&batches[step as usize], 1e-3);
        }
        let cpu_rate = (steps * 256) as f64 / t.elapsed().as_secs_f64();
        println!(
            "{preset:<6} net ({}): training {cpu_rate:>7.0} samples/s at batch 256 with the CPU engine ({:?}, {} threads)",
            describe(&cfg, game),
            cpu.kernel(),
            rayon::current_num_threads()
        );
        let model = train::LoadedModel {
            meta: train::ModelMeta::new(game, &cfg.net_config(game), 0, 0),
            game,
            net: net.valid().fork(&burn::tensor::Device::flex()),
            device: burn::tensor::Device::flex(),
        };
        let states: Vec<engine::State> = rows
            .iter()
            .map(|r| game.parse_position(&r.fen).expect("valid"))
            .collect();
        let mut line = format!("{preset:<6} net: inference positions/s:");
        for batch in [1usize, 16, 64, 256] {
            let reps = (512 / batch).clamp(4, 64);
            let _ = train::predict(&model, &states[..batch]);
            let t = Instant::now();
            for r in 0..reps {
                let start = (r * batch) % (states.len() - batch + 1);
                let _ = train::predict(&model, &states[start..start + batch]);
            }
            line += &format!(
                "  batch {batch}: {:.0}",
                (reps * batch) as f64 / t.elapsed().as_secs_f64()
            );
        }
        println!("{line}");
        for kernel in train::kernels::Kernel::available() {
            let mut fast = train::FastNet::with_kernel(&model, kernel);
            let mut line =
                format!("{preset:<6} net: fast path ({kernel:?}, 1 thread) positions/s:");
            for batch in [1usize, 16, 64, 256] {
                let reps = (512 / batch).clamp(4, 64);
                let _ = fast.predict(&states[..batch]);
                let t = Instant::now();
                for r in 0..reps {
                    let start = (r * batch) % (states.len() - batch + 1);
                    let _ = fast.predict(&states[start..start + batch]);
                }
                line += &format!(
                    "  batch {batch}: {:.0}",
                    (reps * batch) as f64 / t.elapsed().as_secs_f64()
                );
            }
            println!("{line}");
        }
    }
    Ok(())
}

fn describe(cfg: &train::TrainConfig, game: engine::Game) -> String {
    let n = cfg.net_config(game);
    format!("{}x{}", n.blocks, n.channels)
}

/// The web benchmark: see [`Suite::Web`]. The last line is `evaluations <n>`.
fn bench_web(model: &std::path::Path) -> anyhow::Result<()> {
    let (meta, weights) = fastnet::io::read_files(model)?;
    let mut p = web::player::WebPlayer::load(&meta, &weights, 2000, 1)
        .map_err(|e| anyhow::anyhow!("{}: {e}", model.display()))?;
    let t = Instant::now();
    let mut evaluations = 0;
    for _ in 0..30 {
        let a = p.call(r#"{"op":"think"}"#).map_err(anyhow::Error::msg)?;
        evaluations += a.evaluations;
        if a.view.outcome.is_some() {
            break;
        }
    }
    let s = t.elapsed().as_secs_f64();
    println!(
        "native, {:?}: {evaluations} evaluations in {s:.2} s, {:.0} evaluations/s",
        engine::Isa::current(),
        evaluations as f64 / s
    );
    println!("evaluations {evaluations}");
    Ok(())
}
