//! The two training engines behind one face: flipzero's CPU engine and Burn's autodiff.

use std::path::{Path, PathBuf};

use burn::module::Module;
use burn::optim::{GradientsParams, ModuleOptimizer};
use burn::prelude::*;
use engine::Game;

use crate::backend::cpu::CpuTrainer;
use crate::config::{TrainConfig, training_device};
use crate::data::Batch;
use crate::error::{TrainError, io};
use crate::net::{Net, NetConfig};
use crate::store::{CheckpointState, Digests, load_net, save_net, sha256_hex, write_atomic};
use crate::training::losses::{StepMetricsOnDevice, losses, losses_on_device};

/// What a run trains with: flipzero's CPU engine, or Burn's autodiff on a device.
pub(super) enum Engine {
    /// `device = "cpu"`.
    Cpu(Box<CpuTrainer>),
    /// `flex`, `cuda`, `wgpu`.
    Burn(Box<BurnRun>),
}

/// Burn's autodiff: the network, its optimizer and the device.
pub(super) struct BurnRun {
    net: Net,
    optim: ModuleOptimizer,
    device: Device,
}

/// The largest relative difference between the CPU engine's losses and Burn's on the
/// same batch that [`check_cpu_engine`] accepts. Observed: at most 1.3e-7 over the models
/// the training and export tests build (summation order);
/// a layer the engine misses or misreads moves them by far more.
pub const CPU_ENGINE_TOLERANCE: f32 = 1e-3;

/// Runs the CPU engine (a throwaway copy: the check moves no weight and no running
/// statistic of the run) and Burn's forward pass in training mode on eight positions of
/// `game` (the start and positions after random legal moves, fixed seed, uniform
/// policy targets) and compares their losses; a network the engine computes otherwise
/// is refused, naming the alternative.
fn check_cpu_engine(
    net: &Net,
    shape: &NetConfig,
    game: Game,
    cfg: &TrainConfig,
) -> Result<(), TrainError> {
    let rows: Vec<selfplay::Sample> = game
        .check_positions()
        .into_iter()
        .enumerate()
        .map(|(k, s)| {
            let legal: Vec<u16> = s
                .legal_moves()
                .iter()
                .map(|&m| s.policy_index(m) as u16)
                .collect();
            selfplay::Sample {
                variant: game.to_string(),
                fen: s.text(),
                policy: vec![1.0 / legal.len().max(1) as f32; legal.len()],
                played: legal.first().copied().unwrap_or(0),
                result: [1.0, 0.0, -1.0][k % 3],
                score: 0.25,
                full_search: true,
                legal,
                ..selfplay::Sample::default()
            }
        })
        .collect();
    let batch = crate::data::make_batch(game, &rows, rows.len(), 1, 0)?;
    let mut probe = CpuTrainer::new(net, shape, game, cfg)?;
    let ours = probe.forward_backward(&batch);
    let device = Device::flex().autodiff();
    let burn_net = shape.init(&device).load_record(net.clone().into_record());
    let (_, theirs) = losses(&burn_net, &batch, game, cfg, &device);
    // Loss, policy, value and score losses.
    let diff = ours[..4]
        .iter()
        .zip(&theirs[..4])
        .map(|(a, b)| (a - b).abs() / b.abs().max(1.0))
        .fold(
            0.0f32,
            |m, d| if d.is_nan() { f32::INFINITY } else { m.max(d) },
        );
    if diff > CPU_ENGINE_TOLERANCE {
        return Err(TrainError::Unsupported(format!(
            "the CPU training engine's losses differ from Burn's by {diff:.3e} (relative, more \
             than {CPU_ENGINE_TOLERANCE:e}) on this network; set train.device = \"flex\" to \
             train it with Burn"
        )));
    }
    Ok(())
}

/// The optimizer state's file in a checkpoint of the CPU engine.
const CPU_OPTIM: &str = "optim.bin";
/// The optimizer state's file in a checkpoint of Burn's engine.
const BURN_OPTIM: &str = "optim.bpk";

impl Engine {
    /// A fresh engine for `cfg` from `net` (weights on any device). The CPU engine must
    /// cover every trained tensor of the network's description, or it is refused.
    pub(super) fn new(
        cfg: &TrainConfig,
        game: Game,
        shape: &NetConfig,
        net: Net,
    ) -> Result<Engine, TrainError> {
        Ok(if cfg.device == "cpu" {
            let trainer = CpuTrainer::new(&net, shape, game, cfg)?;
            check_cpu_engine(&net, shape, game, cfg)?;
            Engine::Cpu(Box::new(trainer))
        } else {
            let device = training_device(&cfg.device)
                .map_err(|allowed| {
                    TrainError::Unsupported(format!("train.device = {:?}: {allowed}", cfg.device))
                })?
                .autodiff();
            // Loaded through a record, as from a file, so that the parameters are tracked
            // by the autodiff device.
            Engine::Burn(Box::new(BurnRun {
                net: shape.init(&device).load_record(net.into_record()),
                optim: cfg.optimizer(),
                device,
            }))
        })
    }

    /// One step; its loss and metrics when `metrics` asks for them (on a GPU, reading
    /// them back is a wait for the device; the CPU engine has them anyway).
    pub(super) fn step(
        &mut self,
        batch: &Batch,
        game: Game,
        cfg: &TrainConfig,
        lr: f64,
        metrics: bool,
    ) -> Option<[f32; 6]> {
        match self {
            Engine::Cpu(t) => Some(t.step(batch, lr)),
            Engine::Burn(run) => {
                let BurnRun { net, optim, device } = &mut **run;
                let (loss, m) = losses_on_device(net, batch, game, cfg, device, metrics);
                let grads = GradientsParams::from_grads(loss.backward(), net);
                *net = optim.step(lr, net.clone(), grads);
                m.map(StepMetricsOnDevice::read)
            }
        }
    }

    /// The network, for inference, on Flex.
    pub(super) fn net(&self) -> Net {
        match self {
            Engine::Cpu(t) => t.to_net(&Device::flex()),
            Engine::Burn(run) => run.net.valid().fork(&Device::flex()),
        }
    }

    /// Writes `model.bpk` and the optimizer state into `dir`; returns their digests.
    fn save(&self, dir: &Path) -> Result<Digests, TrainError> {
        let weights = save_net(&self.net(), &dir.join("model.bpk"))?;
        let (path, bytes) = match self {
            Engine::Cpu(t) => (dir.join(CPU_OPTIM), t.optimizer_bytes()),
            Engine::Burn(run) => {
                let path = dir.join(BURN_OPTIM);
                let bytes = run.optim.into_bytes().map_err(|e| TrainError::Checkpoint {
                    path: path.clone(),
                    message: e.to_string(),
                })?;
                (path, bytes.to_vec())
            }
        };
        write_atomic(&path, &bytes)?;
        Ok(Digests {
            weights,
            optimizer: sha256_hex(&bytes),
        })
    }

    /// The engine of checkpoint `dir`, its files checked against `digests` (when known).
    pub(super) fn load(
        cfg: &TrainConfig,
        game: Game,
        shape: &NetConfig,
        dir: &Path,
        digests: &Digests,
    ) -> Result<Engine, TrainError> {
        let known = |d: &str| (!d.is_empty()).then(|| d.to_string());
        let weights = known(&digests.weights);
        let net = load_net(
            shape,
            &dir.join("model.bpk"),
            weights.as_deref(),
            &Device::flex(),
        )?;
        let mut engine = Engine::new(cfg, game, shape, net)?;
        let path = dir.join(match &engine {
            Engine::Cpu(_) => CPU_OPTIM,
            Engine::Burn(_) => BURN_OPTIM,
        });
        let bytes = rundir::read_regular(&path, rundir::Limit::DATA).map_err(io(&path))?;
        if let Some(want) = known(&digests.optimizer)
            && !sha256_hex(&bytes).eq_ignore_ascii_case(&want)
        {
            return Err(TrainError::Checkpoint {
                path,
                message: "optimizer state does not match its recorded digest (corrupt file)".into(),
            });
        }
        match &mut engine {
            Engine::Cpu(t) => {
                t.load_optimizer(&bytes)
                    .map_err(|message| TrainError::Checkpoint {
                        path: path.clone(),
                        message,
                    })?;
            }
            Engine::Burn(run) => {
                run.optim = run
                    .optim
                    .clone()
                    .from_bytes(burn::tensor::Bytes::from_bytes_vec(bytes))
                    .map_err(|e| TrainError::Checkpoint {
                        path: path.clone(),
                        message: format!("corrupt optimizer state: {e}"),
                    })?;
            }
        }
        Ok(engine)
    }
}

fn checkpoint_dir(out: &Path, step: u64) -> PathBuf {
    out.join(crate::store::CHECKPOINTS)
        .join(format!("step-{step:08}"))
}

pub(super) fn write_checkpoint(
    out: &Path,
    engine: &Engine,
    state: &CheckpointState,
) -> Result<(), TrainError> {
    let root = out.join(crate::store::CHECKPOINTS);
    let dir = checkpoint_dir(out, state.step);
    let tmp = root.join(format!(".step-{:08}.tmp", state.step));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(io(&tmp))?;
    // A failed write (a full disk) leaves no temporary folder behind.
    let written = engine.save(&tmp).and_then(|digests| {
        let state = CheckpointState {
            digests,
            ..state.clone()
        };
        let json = serde_json::to_string_pretty(&state).expect("state serializes");
        write_atomic(&tmp.join("state.json"), json.as_bytes())
    });
    if let Err(e) = written {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e);
    }
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::rename(&tmp, &dir).map_err(io(&dir))?;
    // `latest` switches to the new checkpoint in one rename.
    write_atomic(
        &root.join("latest"),
        format!("step-{:08}\n", state.step).as_bytes(),
    )?;
    // Keep the two newest checkpoints.
    if let Ok(entries) = std::fs::read_dir(&root) {
        let mut steps: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("step-"))
            })
            .collect();
        steps.sort();
        for old in steps.iter().rev().skip(2) {
            let _ = std::fs::remove_dir_all(old);
        }
    }
    Ok(())
}
