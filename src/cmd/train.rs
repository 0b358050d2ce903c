//! `flipzero train`, `flipzero export` and `flipzero infer`.

use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use train::TrainConfig;

/// Arguments of `flipzero train`.
#[derive(Args)]
pub struct TrainArgs {
    /// Directories of Parquet shards, oldest first (repeat the flag for several).
    #[arg(long, required = true)]
    data: Vec<PathBuf>,
    /// Model directory to write (weights, model.json, metrics.csv, checkpoints).
    #[arg(long)]
    out: PathBuf,
    /// A flipzero config file; its `[train]` table sets the defaults of this run.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Override a `[train]` setting, e.g. `--set steps=200` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Continue from the newest checkpoint in --out.
    #[arg(long)]
    resume: bool,
    /// Start from the weights of this model directory.
    #[arg(long)]
    init: Option<PathBuf>,
    #[arg(long, help = super::GAMES_HELP, long_help = "Game of the data (default: the game recorded in the first shard)")]
    game: Option<String>,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
    /// Print the network the settings describe (its tensors, parameter count and
    /// floating-point operations per position) and the effective [train] table, then
    /// exit without reading data (the game: --game, else the data's, else ataxx).
    #[arg(long)]
    dry_run: bool,
    /// `fast`: train a CPU-shaped net (fastnet), with the `[fastnet]` table of --config
    /// (or the built-in one) and `--set` keys of that table (epochs, batch_size, lr,
    /// final_lr_fraction, policy_weight, result_weight, holdout_every, seed, hidden);
    /// --init names a fast net to train further.
    #[arg(long, value_parser = ["fast"])]
    net: Option<String>,
}

/// The `[train]` table of a config file (the whole file is validated), then `--set`
/// overrides (`steps=300` or `train.steps=300`); without a file, the built-in defaults
/// of `[train]`.
pub fn load_train_config(path: Option<&PathBuf>, sets: &[String]) -> anyhow::Result<TrainConfig> {
    Ok(pipeline::load_table(path.map(|p| p.as_path()), sets, "train")?.train)
}

fn data_game(dirs: &[PathBuf]) -> anyhow::Result<engine::Game> {
    for d in dirs {
        if let Some(row) = selfplay::ShardStream::open(d)?.next() {
            return Ok(row.variant.parse()?);
        }
    }
    bail!(
        "no readable training positions in {}",
        dirs.iter()
            .map(|d| d.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// Runs training.
pub fn run(a: TrainArgs) -> anyhow::Result<()> {
    if a.net.is_some() {
        let game = match &a.game {
            Some(g) => g.parse()?,
            None => data_game(&a.data)?,
        };
        if a.resume || a.dry_run {
            bail!(
                "--net fast takes no --resume or --dry-run: a fast net trains in seconds to minutes, from scratch or from --init"
            );
        }
        let cfg = pipeline::load_table(a.config.as_deref(), &a.set, "fastnet")?.fastnet;
        let job = fastnet::train::Job {
            data: &a.data,
            game,
            out: &a.out,
            window: None,
            init: a.init.as_deref(),
            new_positions: None,
            cache: None,
            quantised: true,
        };
        let m = fastnet::train::train_to_dir(&job, &cfg, |m| {
            if !a.quiet {
                eprintln!("{m}");
            }
        })?;
        println!("{}", serde_json::to_string(&m)?);
        return Ok(());
    }
    let cfg = load_train_config(a.config.as_ref(), &a.set)?;
    if a.dry_run {
        let game: engine::Game = match &a.game {
            Some(g) => g.parse()?,
            None => data_game(&a.data).unwrap_or(engine::Game::Ataxx(engine::Rules::ATAXX)),
        };
        println!("{}", cfg.net_config(game).describe(game));
        println!("\n[train]\n{}", toml::to_string(&cfg)?);
        return Ok(());
    }
    let game = match &a.game {
        Some(g) => g.parse()?,
        None => data_game(&a.data)?,
    };
    let bar = if a.quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(cfg.steps)
    };
    bar.set_style(
        ProgressStyle::with_template("train [{bar:30}] {pos}/{len} steps  {msg}  ETA {eta}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    let on_step = |m: &train::StepMetrics| {
        bar.set_position(m.step);
        bar.set_message(format!(
            "loss {:.3} (policy {:.3}, value {:.3})  {:.0} samples/s",
            m.loss, m.policy_loss, m.value_loss, m.samples_per_s
        ));
    };
    let opts = train::TrainOptions {
        data: a.data.clone(),
        out: a.out.clone(),
        resume: a.resume,
        init: a.init.clone(),
        stop_after: None,
        on_step: &on_step,
        on_warning: &|w| eprintln!("warning: {w}"),
    };
    let report = train::train(&cfg, game, &opts)?;
    bar.finish_and_clear();
    for s in &report.skipped {
        eprintln!("warning: skipped {s}");
    }
    if let Some(m) = &report.last {
        println!(
            "game {game}  net {}  steps {}  window {} positions",
            cfg.net, report.steps, report.window_rows
        );
        println!(
            "last step: loss {:.4}  policy {:.4}  value {:.4}  score {:.4}  entropy {:.3}  accuracy {:.3}  {:.0} samples/s",
            m.loss,
            m.policy_loss,
            m.value_loss,
            m.score_loss,
            m.policy_entropy,
            m.policy_accuracy,
            m.samples_per_s
        );
    } else {
        println!("nothing to do: {} steps already trained", report.steps);
    }
    println!("model written to {}", a.out.display());
    Ok(())
}

/// Arguments of `flipzero export`.
#[derive(Args)]
pub struct ExportArgs {
    /// Model directory (model.json + model.bpk: ONNX and safetensors; a fast net's
    /// folder: its quantised weights, fastnet-quant.safetensors; with --web, a fast
    /// net's folder, or a run directory whose best is one).
    #[arg(long)]
    model: PathBuf,
    /// Output directory.
    #[arg(long)]
    out: PathBuf,
    /// Write a static web page that plays the net in any browser, without a server
    /// (HTML, JavaScript, the engine and the search in WebAssembly, the net); see
    /// docs/web.md. Plays fast nets (`flipzero train --net fast`).
    #[arg(long)]
    web: bool,
    /// With --web: simulations of the search a move (the page can change them).
    #[arg(long, default_value_t = 400, requires = "web")]
    sims: u32,
    /// With --web: the seed of the search's random choices.
    #[arg(long, default_value_t = 1, requires = "web")]
    seed: u64,
    /// With --web: the page's title (default: "flipzero · GAME").
    #[arg(long, requires = "web")]
    title: Option<String>,
}

/// Runs export.
pub fn export(a: ExportArgs) -> anyhow::Result<()> {
    let written = if a.web {
        export_web(&a)?
    } else {
        // A model folder, or a run's best; a network the run's retention removed says so.
        let model = match eval::resolve_net(&a.model)? {
            eval::ResolvedNet::Model(dir) => dir,
            eval::ResolvedNet::Bootstrap => bail!(
                "{} is a run whose best is still the bootstrap evaluator: no network to export",
                a.model.display()
            ),
        };
        if fastnet::io::is_fastnet(&model) {
            fastnet::io::export(&model, &a.out)?
        } else {
            train::export(&model, &a.out)?
        }
    };
    for f in written {
        println!("wrote {}", f.display());
    }
    Ok(())
}

/// `export --web`: see [`pipeline::export_web`].
fn export_web(a: &ExportArgs) -> anyhow::Result<Vec<PathBuf>> {
    let dir = match eval::resolve_net(&a.model)? {
        eval::ResolvedNet::Model(dir) => dir,
        eval::ResolvedNet::Bootstrap => bail!(
            "{} is a run whose best is still the bootstrap evaluator: no network to export",
            a.model.display()
        ),
    };
    Ok(pipeline::export_web(
        &dir,
        &a.out,
        a.sims,
        a.seed,
        a.title.as_deref(),
    )?)
}

/// Arguments of `flipzero import`.
#[derive(Args)]
pub struct ImportArgs {
    /// The weights: a safetensors file under Burn's names (an export's model.safetensors)
    /// or PyTorch's (model.pytorch.safetensors; a PyTorch state_dict saved with
    /// safetensors), see docs/export.md. The network's shape is read off the tensors.
    #[arg(long)]
    weights: PathBuf,
    #[arg(long, help = super::GAMES_HELP, long_help = "The game the network plays")]
    game: String,
    /// The model directory to write (model.json + model.bpk); a model already there is
    /// never overwritten.
    #[arg(long)]
    out: PathBuf,
}

/// Makes weights trained elsewhere a model directory.
pub fn import(a: ImportArgs) -> anyhow::Result<()> {
    let game: engine::Game = a.game.parse()?;
    let imported = train::import_weights(&a.weights, game, &a.out)?;
    let n = &imported.network;
    println!(
        "imported a {}x{} network for {game} ({} names, {} parameters) into {}",
        n.blocks,
        n.channels,
        match imported.naming {
            train::Naming::Burn => "Burn's",
            train::Naming::PyTorch => "PyTorch's",
        },
        n.parameter_count(),
        a.out.display()
    );
    Ok(())
}

/// Arguments of `flipzero infer`.
#[derive(Args)]
pub struct InferArgs {
    /// Model directory, or a run directory for its best network.
    #[arg(long)]
    model: PathBuf,
    /// Position in the game's text format (`startpos` for the start).
    #[arg(long, allow_hyphen_values = true)]
    position: String,
    #[arg(long, help = super::GAMES_HELP, long_help = "The position's game (default: the model's game; another game is refused)")]
    game: Option<String>,
    /// Also write the encoded input tensor [1, planes, height, width] as a NumPy file.
    #[arg(long)]
    dump_input: Option<PathBuf>,
}

/// Runs one position through the network and prints JSON.
pub fn infer(a: InferArgs) -> anyhow::Result<()> {
    if let Some(p) = &a.dump_input {
        super::check_output(p, &[a.model.as_path()])?;
    }
    let dir = match eval::resolve_net(&a.model)? {
        eval::ResolvedNet::Model(dir) => dir,
        eval::ResolvedNet::Bootstrap => bail!(
            "{} is a run whose best is still the bootstrap evaluator: no network to run",
            a.model.display()
        ),
    };
    let model = train::load_model(&dir)?;
    if let Some(g) = &a.game {
        let game: engine::Game = g.parse()?;
        if game != model.game {
            bail!(
                "model {} is for game {}, not {game}",
                a.model.display(),
                model.game
            );
        }
    }
    let state = model
        .game
        .parse_position(&a.position)
        .with_context(|| format!("bad position for {}", model.game))?;
    if let Some(p) = &a.dump_input {
        let bytes = train::store::npy_bytes(p, &train::net::encode_batch(&[state]))?;
        super::write_output(p, &bytes)?;
    }
    let pred = train::predict(&model, &[state]).remove(0);
    let policy: Vec<serde_json::Value> = train::ranked_moves(&state, &pred.policy_logits)
        .into_iter()
        .map(|(m, p)| serde_json::json!({"move": state.move_to_string(m), "index": state.policy_index(m), "prob": p}))
        .collect();
    let out = serde_json::json!({
        "value": pred.wdl[0] - pred.wdl[2],
        "wdl": pred.wdl,
        "score": pred.score,
        "policy": policy,
    });
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(())
}
