//! The engine's sizes and shapes: the task and cache-block sizes, the layers of the
//! network (where each parameter lies among the values), the board geometry, the
//! prepared convolutions, and the per-task partial sums.

use crate::kernels::winograd::{Grid, Tile, Winograd};
use crate::kernels::{Kernel, LANES, Packed};
use crate::net::PLANES;

/// Samples per parallel task.
pub(super) const TASK: usize = 16;

/// The Winograd tiling of the 3×3 convolutions and their weight gradients.
pub(super) const TILE: Tile = Tile::F4;

/// Samples per cache block of a weight gradient (its input and output gradient, or their
/// Winograd transforms, stay in L2 while every channel group streams over them).
pub(super) const SUB: usize = 8;

/// Floats per cell of the encoded input: the planes, padded to whole vectors (zeros).
pub(super) const INPUT_STRIDE: usize = PLANES.next_multiple_of(LANES);

/// A convolution without bias unless `bias` names one: weights packed `[tap][c_in][c_pad]`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Conv {
    pub(super) k: usize,
    pub(super) c_in: usize,
    pub(super) c_out: usize,
    pub(super) c_pad: usize,
    pub(super) w: usize,
    pub(super) bias: Option<usize>,
}

/// BatchNorm: learned scale and shift, running statistics.
#[derive(Clone, Debug)]
pub(super) struct Bn {
    /// The conv-BN's name in the description (`stem`, `blocks.0.a`, …).
    pub(super) name: String,
    pub(super) c: usize,
    pub(super) gamma: usize,
    pub(super) beta: usize,
    pub(super) mean: Vec<f32>,
    pub(super) var: Vec<f32>,
    pub(super) eps: f32,
    pub(super) momentum: f32,
}

/// A dense layer, weights `[out][in]`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Dense {
    pub(super) d_in: usize,
    pub(super) d_out: usize,
    pub(super) w: usize,
    pub(super) b: usize,
}

#[derive(Clone, Debug)]
pub(super) struct Block {
    pub(super) a: Conv,
    pub(super) a_bn: Bn,
    pub(super) b: Conv,
    pub(super) b_bn: Bn,
    pub(super) gpool: Option<Dense>,
}

#[derive(Clone, Debug)]
pub(super) struct Layers {
    pub(super) stem: Conv,
    pub(super) stem_bn: Bn,
    pub(super) blocks: Vec<Block>,
    pub(super) policy_conv: Conv,
    pub(super) policy_bn: Bn,
    pub(super) policy_out: Conv,
    pub(super) pass_out: Dense,
    pub(super) value_conv: Conv,
    pub(super) value_bn: Bn,
    pub(super) value_fc: Dense,
    pub(super) wdl_out: Dense,
    pub(super) score_out: Dense,
    /// The ownership head (1×1 convolution with bias, tanh), if the net has one.
    pub(super) ownership_out: Option<Conv>,
}

/// Board geometry, shared read-only by the parallel tasks.
pub(super) struct Geometry {
    pub(super) kernel: Kernel,
    pub(super) grid: Grid,
    /// Cells of one sample's bordered grid.
    pub(super) g: usize,
    /// Board cells.
    pub(super) area: usize,
    /// The board's cells in one sample's grid, row by row.
    pub(super) interior: Vec<usize>,
    /// Board cells of [`TASK`] consecutive samples.
    pub(super) task_cells: Vec<usize>,
    /// Runs of board cells (one per board row) of [`SUB`] consecutive samples.
    pub(super) runs: Vec<(usize, usize)>,
}

/// A prepared convolution: Winograd for 3×3, the direct kernel for 1×1.
pub(super) enum Op {
    Winograd(Winograd),
    Direct(Packed),
}

/// Per-task partial sums over the batch, per channel, in f64: reduced in task order.
pub(super) type Partial = (Vec<f64>, Vec<f64>);
