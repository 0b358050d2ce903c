//! The trainer's state: the network's values and gradients, the optimizer's state and
//! settings, and the tape of activations and gradient buffers with their batch
//! statistics.

use engine::Game;

use super::shapes::{Geometry, Layers};
use crate::config::OptimizerKind;
use crate::kernels::winograd;
use crate::net::NetConfig;

/// Batch statistics of one BatchNorm.
#[derive(Clone, Debug, Default)]
pub(super) struct Stats {
    pub(super) mean: Vec<f32>,
    pub(super) inv_std: Vec<f32>,
}

/// Per-task scratch, kept between steps so that no step allocates or faults in pages.
#[derive(Default)]
pub(super) struct TaskScratch {
    pub(super) winograd: winograd::Scratch,
    /// This task's share of a weight gradient.
    pub(super) partial: Vec<f32>,
}

/// One layer of the tower in the tape.
#[derive(Default)]
pub(super) struct LayerTape {
    /// The convolution's output.
    pub(super) z: Vec<f32>,
    /// Its batch statistics.
    pub(super) stats: Stats,
    /// The BatchNorm's output (after the residual sum and ReLU).
    pub(super) a: Vec<f32>,
    /// With global pooling after the layer: `a` plus the pooled bias, and the means.
    pub(super) a2: Vec<f32>,
    pub(super) gmean: Vec<f32>,
}

/// Activations of the forward pass and gradient buffers, sized for one batch size.
/// Only board cells are ever written, so the border cells stay zero between steps.
#[derive(Default)]
pub(super) struct Tape {
    pub(super) n: usize,
    pub(super) input: Vec<f32>,
    /// The stem, then each block's two layers.
    pub(super) tower: Vec<LayerTape>,
    pub(super) pz: Vec<f32>,
    pub(super) p_stats: Stats,
    pub(super) p: Vec<f32>,
    pub(super) pooled: Vec<f32>,
    pub(super) q: Vec<f32>,
    pub(super) logits: Vec<f32>,
    pub(super) vz: Vec<f32>,
    pub(super) v_stats: Stats,
    pub(super) v: Vec<f32>,
    pub(super) vm: Vec<f32>,
    pub(super) hidden: Vec<f32>,
    pub(super) wdl: Vec<f32>,
    pub(super) score: Vec<f32>,
    /// The ownership head's convolution output (its stride) and its tanh per cell
    /// `[n][area]`; the gradient of the convolution output.
    pub(super) oz: Vec<f32>,
    pub(super) own: Vec<f32>,
    pub(super) doz: Vec<f32>,
    // Gradients: tower stride.
    pub(super) da: Vec<f32>,
    pub(super) da2: Vec<f32>,
    pub(super) dpre: Vec<f32>,
    pub(super) dz: Vec<f32>,
    // Gradients: head stride.
    pub(super) dhead: Vec<f32>,
    pub(super) dzh: Vec<f32>,
    // Gradient: policy-plane stride.
    pub(super) dq: Vec<f32>,
    pub(super) tasks: Vec<TaskScratch>,
}

/// Optimizer state, per parameter.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum OptimState {
    Adamw { m: Vec<Vec<f32>>, v: Vec<Vec<f32>> },
    Sgd { velocity: Vec<Vec<f32>> },
}

/// The network, its optimizer state and the training buffers.
pub struct CpuTrainer {
    pub(super) game: Game,
    pub(super) net: NetConfig,
    pub(super) geo: Geometry,
    pub(super) names: Vec<String>,
    pub(super) values: Vec<Vec<f32>>,
    pub(super) grads: Vec<Vec<f32>>,
    pub(super) layers: Layers,
    pub(super) optim: OptimState,
    /// Optimizer steps taken.
    pub(super) time: u64,
    pub(super) settings: OptimSettings,
    pub(super) tape: Tape,
}

#[derive(Clone, Copy, Debug)]
pub(super) struct OptimSettings {
    pub(super) kind: OptimizerKind,
    pub(super) weight_decay: f32,
    pub(super) momentum: f32,
    pub(super) clip: f32,
    /// Loss weights: policy, win/draw/loss, score, ownership.
    pub(super) weights: [f32; 4],
}
