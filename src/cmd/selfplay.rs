//! `flipzero selfplay`: play games with MCTS or alpha-beta (`selfplay.search`) and write
//! training positions as Parquet.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use selfplay::BuiltinEvaluator;

/// Arguments of `flipzero selfplay`.
#[derive(Args)]
pub struct SelfplayArgs {
    #[arg(long, help = super::GAMES_HELP)]
    game: Option<String>,
    /// Games to play.
    #[arg(long)]
    games: Option<u64>,
    /// Directory for the Parquet shards (created if missing).
    #[arg(long)]
    out: PathBuf,
    /// Evaluator: uniform, random (hash-seeded) or bootstrap (piece-gain priors and a
    /// shallow alpha-beta value).
    #[arg(long)]
    evaluator: Option<BuiltinEvaluator>,
    /// A trained model directory (or a run directory, for its best network) to play with
    /// instead of --evaluator; its game is the default of --game.
    #[arg(long, conflicts_with = "evaluator")]
    model: Option<PathBuf>,
    /// Worker threads.
    #[arg(long)]
    threads: Option<usize>,
    /// Seed; the same seed and settings replay the same games.
    #[arg(long)]
    seed: Option<u64>,
    /// A flipzero config file; its `[selfplay]` table, laid over the built-in
    /// configs/default.toml as `flipzero run` lays it, sets the defaults of this run
    /// (without a file: the built-in one's).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Override a `[selfplay]` setting, e.g. `--set selfplay.simulations=64`
    /// (repeatable; the options above override both).
    #[arg(long = "set", value_name = "selfplay.KEY=VALUE")]
    set: Vec<String>,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
}

/// Runs self-play and prints a summary.
pub fn run(a: SelfplayArgs) -> anyhow::Result<()> {
    // One config path: the table laid over the built-in config, as every command does.
    let sets = pipeline::Override::parse_all(&a.set, Some("selfplay"))?;
    let mut cfg = pipeline::load_with(a.config.as_deref(), &sets)?.selfplay;
    let model_dir = match &a.model {
        Some(p) => match eval::resolve_net(p)? {
            eval::ResolvedNet::Model(dir) => Some(dir),
            eval::ResolvedNet::Bootstrap => anyhow::bail!(
                "{} is a run whose best is still the bootstrap evaluator: use --evaluator bootstrap",
                p.display()
            ),
        },
        None => None,
    };
    // A model's game is the default unless a file or an override names one.
    let game_set = a.config.is_some() || sets.iter().any(|o| o.sets("selfplay", "game"));
    if let (Some(dir), None, false) = (&model_dir, &a.game, game_set) {
        cfg.game = eval::model_game(dir)?.to_string();
    }
    if let Some(g) = a.game {
        cfg.game = g;
    }
    if let Some(n) = a.games {
        cfg.games = n;
    }
    if let Some(e) = a.evaluator {
        cfg.evaluator = e;
    }
    if let Some(t) = a.threads {
        cfg.threads = t;
    }
    if let Some(s) = a.seed {
        cfg.seed = s;
    }
    cfg.validate()?;
    let game: engine::Game = cfg.game.parse()?;
    let (openings, metadata) = super::selfplay_inputs(&cfg, game)?;

    let bar = if a.quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(cfg.games)
    };
    bar.set_style(
        ProgressStyle::with_template(
            "selfplay [{bar:30}] {pos}/{len} games  {msg}  {elapsed} elapsed, ETA {eta}",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    let positions = AtomicU64::new(0);
    let start = Instant::now();
    let evaluator = cfg.evaluator;
    let make = pipeline::inputs::selfplay_evaluators(model_dir.as_deref(), game, &cfg, evaluator)?;
    let report = selfplay::run_selfplay(&cfg, &openings, &make, &a.out, &metadata, &|g| {
        let p = positions.fetch_add(g.positions as u64, Ordering::Relaxed) + g.positions as u64;
        bar.set_message(format!(
            "{:.0} positions/s",
            p as f64 / start.elapsed().as_secs_f64()
        ));
        bar.inc(1);
    })?;
    bar.finish_and_clear();
    let secs = start.elapsed().as_secs_f64();
    let [x, o, d] = report.results;
    let eval_share = report.eval_time.as_secs_f64() / report.worker_time.as_secs_f64().max(1e-9);
    let who = match model_dir.as_deref().and_then(|d| d.file_name()) {
        Some(name) => format!("model {}", name.to_string_lossy()),
        None => format!("evaluator {}", evaluator_name(cfg.evaluator)),
    };
    println!("game {}  {who}  seed {}", cfg.game, cfg.seed);
    println!(
        "games {}  positions {}  average length {:.1} plies",
        report.games,
        report.positions,
        report.plies as f64 / report.games.max(1) as f64
    );
    println!(
        "results: x wins {x}, o wins {o}, draws {d}; resignations {}",
        report.resignations
    );
    if cfg.search == selfplay::SearchKind::AlphaBeta {
        // An alpha-beta worker's evaluations are its nodes, its time all search.
        println!(
            "time {secs:.1} s  {:.0} positions/s  {:.0} nodes/s",
            report.positions as f64 / secs,
            report.eval_positions as f64 / secs,
        );
    } else {
        println!(
            "time {secs:.1} s  {:.0} positions/s  {:.0} evaluations/s  {:.1}% of the time outside the evaluator",
            report.positions as f64 / secs,
            report.eval_positions as f64 / secs,
            100.0 * (1.0 - eval_share)
        );
    }
    println!("{} shards in {}", report.files.len(), a.out.display());
    Ok(())
}

fn evaluator_name(e: BuiltinEvaluator) -> &'static str {
    match e {
        BuiltinEvaluator::Uniform => "uniform",
        BuiltinEvaluator::Random => "random",
        BuiltinEvaluator::Bootstrap => "bootstrap",
    }
}
