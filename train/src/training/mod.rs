//! The training loop: AdamW or SGD with momentum, warm-up then cosine decay, gradient
//! clipping, weighted losses, a metrics CSV, and atomic checkpoints that a run resumes
//! from exactly (same optimizer state, step, data order and random draws).
//!
//! A model directory holds `model.bpk` (the weights, Burn's burnpack), `model.json`
//! (metadata, see `export`), `metrics.csv`, and `checkpoints/step-NNNNNNNN/` with
//! `model.bpk`, `optim.bpk` and `state.json`; `checkpoints/latest` names the newest.

mod losses;
mod trainer;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use burn::prelude::*;
use engine::Game;

pub use self::losses::{StepMetricsOnDevice, losses, losses_on_device};
use self::trainer::{Engine, write_checkpoint};
use crate::config::TrainConfig;
use crate::data::{batch_stream, epoch_rows, load_window};
use crate::error::{TrainError, io};
use crate::store::{
    CheckpointState, Digests, checkpoint_dirs, quarantine, read_state, remove_stale_temps,
    save_net, write_atomic,
};

/// Metrics of one training step.
#[derive(Clone, Debug, PartialEq)]
pub struct StepMetrics {
    /// Step number, from 1.
    pub step: u64,
    /// Learning rate used.
    pub lr: f64,
    /// Weighted total loss.
    pub loss: f32,
    /// Policy cross-entropy (full-search rows only).
    pub policy_loss: f32,
    /// Win/draw/loss cross-entropy.
    pub value_loss: f32,
    /// Final-score squared error.
    pub score_loss: f32,
    /// Entropy of the predicted policy over legal moves.
    pub policy_entropy: f32,
    /// Share of full-search rows whose top predicted move is the target's top move.
    pub policy_accuracy: f32,
    /// Samples per second of this step.
    pub samples_per_s: f32,
}

const METRICS_HEADER: &str =
    "step,lr,loss,policy_loss,value_loss,score_loss,policy_entropy,policy_accuracy,samples_per_s";

/// How to run `train`.
pub struct TrainOptions<'a> {
    /// Shard directories, oldest first.
    pub data: Vec<PathBuf>,
    /// The model directory to write.
    pub out: PathBuf,
    /// Continue from the newest checkpoint in `out`.
    pub resume: bool,
    /// Start from the weights of this model directory (a previous generation).
    pub init: Option<PathBuf>,
    /// Stop after this many steps of this run without finishing (tests: a crash).
    pub stop_after: Option<u64>,
    /// Called after every step.
    pub on_step: &'a dyn Fn(&StepMetrics),
    /// Called as soon as something goes wrong that does not stop training (a corrupt
    /// checkpoint moved aside); the same texts are in [`TrainReport::warnings`].
    pub on_warning: &'a dyn Fn(&str),
}

/// What a training run did.
#[derive(Clone, Debug, PartialEq)]
pub struct TrainReport {
    /// Steps completed in total.
    pub steps: u64,
    /// Metrics of the last step.
    pub last: Option<StepMetrics>,
    /// Rows in the window.
    pub window_rows: usize,
    /// Data files skipped.
    pub skipped: Vec<String>,
    /// What went wrong but did not stop the run (a corrupt checkpoint moved aside).
    pub warnings: Vec<String>,
    /// Whether the run finished (wrote model.bpk and model.json).
    pub finished: bool,
}

/// Keeps the rows of metrics.csv up to `step` (a killed run may have logged past its last
/// checkpoint); creates the file with its header if missing.
fn trim_metrics(path: &Path, step: u64) -> Result<(), TrainError> {
    let text = rundir::read_regular_text(path, rundir::Limit::TEXT).unwrap_or_default();
    let mut out = String::from(METRICS_HEADER);
    out.push('\n');
    for line in text.lines().skip(1) {
        if line
            .split(',')
            .next()
            .and_then(|s| s.parse::<u64>().ok())
            .is_some_and(|s| s <= step)
        {
            out.push_str(line);
            out.push('\n');
        }
    }
    write_atomic(path, out.as_bytes())
}

/// Trains a network for `game` on the shards of `opts.data`.
pub fn train(
    cfg: &TrainConfig,
    game: Game,
    opts: &TrainOptions,
) -> Result<TrainReport, TrainError> {
    cfg.validate()?;
    let window = load_window(&opts.data, cfg.window)?;
    if window.rows.is_empty() {
        let dirs: Vec<String> = opts.data.iter().map(|d| d.display().to_string()).collect();
        return Err(TrainError::NoData(dirs.join(", ")));
    }
    std::fs::create_dir_all(&opts.out).map_err(io(&opts.out))?;
    remove_stale_temps(&opts.out);
    remove_stale_temps(&opts.out.join(crate::store::CHECKPOINTS));
    let net_cfg = cfg.net_config(game);
    let flex = Device::flex();
    let mut engine = None;
    let mut start = 0;
    let metrics_path = opts.out.join("metrics.csv");
    let mut warnings = Vec::new();
    if opts.resume {
        // The newest intact checkpoint: a corrupt one (a flipped byte, a truncated file)
        // is moved aside with a warning and the one before it is tried.
        let (dirs, pointer) = checkpoint_dirs(&opts.out);
        if let Some(w) = pointer {
            (opts.on_warning)(&w);
            warnings.push(w);
        }
        for dir in dirs {
            let loaded = read_state(&dir).and_then(|state| {
                let want = CheckpointState {
                    step: state.step,
                    game: game.to_string(),
                    config: cfg.clone(),
                    window_rows: window.rows.len(),
                    digests: state.digests.clone(),
                };
                if state != want {
                    // Not a corrupt file: a checkpoint of another run's settings.
                    return Ok(Err(TrainError::Checkpoint {
                        path: dir.join("state.json"),
                        message: describe_mismatch(&state, &want),
                    }));
                }
                Engine::load(cfg, game, &net_cfg, &dir, &state.digests).map(|e| Ok((e, state.step)))
            });
            match loaded {
                Ok(Ok((e, step))) => {
                    engine = Some(e);
                    start = step;
                    break;
                }
                Ok(Err(mismatch)) => return Err(mismatch),
                Err(e) => {
                    let moved = quarantine(&dir).map_err(io(&dir))?;
                    let w = format!(
                        "checkpoint {} is unusable ({e}); moved to {} and resuming from the one before it",
                        dir.display(),
                        moved.display()
                    );
                    (opts.on_warning)(&w);
                    warnings.push(w);
                }
            }
        }
    }
    let mut engine = match engine {
        Some(e) => e,
        None => {
            let net = match &opts.init {
                Some(init) => crate::store::load_init(init, game, &net_cfg)?,
                None => net_cfg.init_seeded(&flex, cfg.seed),
            };
            Engine::new(cfg, game, &net_cfg, net)?
        }
    };
    trim_metrics(&metrics_path, start)?;
    let mut csv = std::fs::OpenOptions::new()
        .append(true)
        .open(&metrics_path)
        .map_err(io(&metrics_path))?;
    let rows = Arc::new(window.rows);
    let order = Arc::new(epoch_rows(&rows, cfg.surprise_weight, cfg.seed));
    let batches = batch_stream(
        game,
        rows.clone(),
        order,
        cfg.batch_size,
        cfg.seed,
        start,
        cfg.steps,
    );
    let mut last = None;
    let mut run_steps = 0;
    let every = cfg.metrics_interval();
    // The rate of a row is over the steps since the last row.
    let (mut since, mut samples) = (Instant::now(), 0usize);
    for step in start..cfg.steps {
        let batch = batches
            .recv()
            .expect("the batch thread lives until the last step")?;
        let lr = cfg.learning_rate_at(step);
        let done = step + 1;
        // A row every `every` steps, and at the last step of this call (a stop or the
        // end), so that a run's last losses are always written.
        let row = done % every == 0
            || done == cfg.steps
            || opts.stop_after == Some(run_steps + 1)
            || done % cfg.checkpoint_every == 0;
        samples += batch.size;
        run_steps += 1;
        // The CPU engine has its metrics every step; a row is written on row steps only.
        let Some(m) = engine.step(&batch, game, cfg, lr, row).filter(|_| row) else {
            continue;
        };
        let metrics = StepMetrics {
            step: done,
            lr,
            loss: m[0],
            policy_loss: m[1],
            value_loss: m[2],
            score_loss: m[3],
            policy_entropy: m[4],
            policy_accuracy: m[5],
            samples_per_s: samples as f32 / since.elapsed().as_secs_f32().max(1e-9),
        };
        (since, samples) = (Instant::now(), 0);
        writeln!(
            csv,
            "{},{:.6e},{:.6},{:.6},{:.6},{:.6},{:.6},{:.4},{:.1}",
            metrics.step,
            lr,
            metrics.loss,
            metrics.policy_loss,
            metrics.value_loss,
            metrics.score_loss,
            metrics.policy_entropy,
            metrics.policy_accuracy,
            metrics.samples_per_s
        )
        .map_err(io(&metrics_path))?;
        (opts.on_step)(&metrics);
        last = Some(metrics);
        if done % cfg.checkpoint_every == 0 || done == cfg.steps {
            csv.sync_data().map_err(io(&metrics_path))?;
            let state = CheckpointState {
                step: done,
                game: game.to_string(),
                config: cfg.clone(),
                window_rows: rows.len(),
                digests: Digests::default(),
            };
            write_checkpoint(&opts.out, &engine, &state)?;
        }
        if opts.stop_after == Some(run_steps) && done < cfg.steps {
            return Ok(TrainReport {
                steps: done,
                last,
                window_rows: rows.len(),
                skipped: window.skipped,
                warnings,
                finished: false,
            });
        }
    }
    let digest = save_net(&engine.net(), &opts.out.join("model.bpk"))?;
    crate::store::write_metadata(
        &opts.out,
        game,
        &net_cfg,
        cfg.steps,
        cfg.steps * cfg.batch_size as u64,
        &digest,
    )?;
    Ok(TrainReport {
        steps: cfg.steps,
        last,
        window_rows: rows.len(),
        skipped: window.skipped,
        warnings,
        finished: true,
    })
}

fn describe_mismatch(found: &CheckpointState, want: &CheckpointState) -> String {
    let mut diffs = vec![];
    if found.game != want.game {
        diffs.push(format!(
            "game {} (checkpoint) vs {} (now)",
            found.game, want.game
        ));
    }
    if found.window_rows != want.window_rows {
        diffs.push(format!(
            "training window of {} rows (checkpoint) vs {} (now)",
            found.window_rows, want.window_rows
        ));
    }
    let a = toml::Table::try_from(&found.config).unwrap_or_default();
    let b = toml::Table::try_from(&want.config).unwrap_or_default();
    for (k, v) in &a {
        if b.get(k) != Some(v) {
            diffs.push(format!(
                "train.{k} = {v} (checkpoint) vs {} (now)",
                b.get(k).map_or("unset".into(), |x| x.to_string())
            ));
        }
    }
    for k in b.keys().filter(|k| !a.contains_key(*k)) {
        diffs.push(format!("train.{k} is set now but not in the checkpoint"));
    }
    format!(
        "the checkpoint does not match this run: {}",
        diffs.join("; ")
    )
}
