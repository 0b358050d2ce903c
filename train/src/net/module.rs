//! The policy/value network: a residual tower with optional global-pooling bias blocks,
//! a convolutional policy head laid out as the policy index, and a value head with
//! win/draw/loss logits and a final-score estimate. Fully convolutional (plus global
//! pooling), so one architecture serves every board size.

use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::{BatchNorm, BatchNormConfig, Linear, LinearConfig, PaddingConfig2d};
use burn::prelude::*;
use burn::tensor::activation::{relu, tanh};

use crate::net::{ConvSpec, LinearSpec, NetConfig};

/// Burn's random state is one per process (Flex keeps it behind a global lock), so a
/// seeded initialisation must not interleave with another thread's: every `init` holds
/// this lock while it draws, and `init_seeded` holds it from the seed to the last draw.
static INIT_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Burn initialises parameters lazily, at their first read; `net` is returned with every
/// parameter drawn, so that the draws happen under [`INIT_LOCK`] and not at some later
/// read on another thread's turn.
fn materialized(net: Net) -> Net {
    struct Draw;
    impl burn::module::ModuleVisitor for Draw {
        fn visit_float<const D: usize>(&mut self, param: &burn::module::Param<Tensor<D>>) {
            let _ = param.val();
        }
    }
    net.visit(&mut Draw);
    net
}

impl NetConfig {
    /// Builds the network of [`NetConfig::layout`] on `device` with weights drawn from
    /// `seed`: the same seed gives the same weights, whatever other threads initialise
    /// at the same time.
    pub fn init_seeded(&self, device: &Device, seed: u64) -> Net {
        let _guard = INIT_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        device.seed(seed);
        materialized(self.build(device))
    }

    /// Builds the network of [`NetConfig::layout`] on `device`, its weights drawn from
    /// Burn's process-wide random state (use [`NetConfig::init_seeded`] to reproduce them).
    pub fn init(&self, device: &Device) -> Net {
        let _guard = INIT_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        materialized(self.build(device))
    }

    fn build(&self, device: &Device) -> Net {
        let l = self.layout();
        // "Same" padding for the conv-BN layers; a plain 1×1 convolution (policy logits,
        // global pooling, auxiliary heads) pads nothing, and is left at Burn's `Valid`:
        // an explicit zero padding costs Flex a padding pass per call.
        let conv = |s: &ConvSpec| {
            let p = s.k / 2;
            let padding = if s.bn || p > 0 {
                PaddingConfig2d::Explicit(p, p, p, p)
            } else {
                PaddingConfig2d::Valid
            };
            Conv2dConfig::new([s.c_in, s.c_out], [s.k, s.k])
                .with_padding(padding)
                .with_bias(!s.bn)
                .init(device)
        };
        let conv_bn = |s: &ConvSpec| ConvBn {
            conv: conv(s),
            bn: BatchNormConfig::new(s.c_out).init(device),
        };
        let linear = |s: &LinearSpec| LinearConfig::new(s.d_in, s.d_out).init(device);
        Net {
            stem: conv_bn(&l.stem),
            blocks: l
                .blocks
                .iter()
                .map(|b| ResBlock {
                    a: conv_bn(&b.a),
                    b: conv_bn(&b.b),
                    gpool: b.gpool.as_ref().map(conv),
                })
                .collect(),
            policy_conv: conv_bn(&l.policy_conv),
            policy_out: conv(&l.policy_out),
            pass_out: linear(&l.pass_out),
            value_conv: conv_bn(&l.value_conv),
            value_fc: linear(&l.value_fc),
            wdl_out: linear(&l.wdl_out),
            score_out: linear(&l.score_out),
            ownership_out: l.ownership_out.as_ref().map(conv),
            reply_out: l.reply.as_ref().map(|r| conv(&r.out)),
            reply_pass_out: l.reply.as_ref().map(|r| linear(&r.pass)),
        }
    }
}

/// Convolution (no bias) followed by batch normalization.
#[derive(Module, Debug)]
pub struct ConvBn {
    /// The convolution.
    pub conv: Conv2d,
    /// Its batch normalization.
    pub bn: BatchNorm,
}

impl ConvBn {
    fn forward(&self, x: Tensor<4>) -> Tensor<4> {
        self.bn.forward(self.conv.forward(x))
    }
}

/// A residual block: two 3×3 conv-BN layers, with an optional global-pooling bias
/// (the mean over the board, through a linear map, added to every cell) between them.
/// The linear map is a 1×1 convolution on the `[batch, channels, 1, 1]` means, so no
/// reshape names the batch size and the ONNX export keeps a dynamic batch axis.
#[derive(Module, Debug)]
pub struct ResBlock {
    /// First conv-BN.
    pub a: ConvBn,
    /// Second conv-BN.
    pub b: ConvBn,
    /// Global-pooling bias (a 1×1 convolution on the board means).
    pub gpool: Option<Conv2d>,
}

impl ResBlock {
    fn forward(&self, x: Tensor<4>) -> Tensor<4> {
        let mut h = relu(self.a.forward(x.clone()));
        if let Some(g) = &self.gpool {
            h = h.clone() + g.forward(board_mean(h));
        }
        relu(self.b.forward(h) + x)
    }
}

/// The mean over the board of each channel, `[batch, channels, 1, 1]`. Written as sums
/// (which the ONNX exporter lowers) rather than a mean (which it does not yet).
fn board_mean(x: Tensor<4>) -> Tensor<4> {
    let [_, _, h, w] = x.dims();
    x.sum_dim(3).sum_dim(2) / (h * w) as f32
}

/// The network.
#[derive(Module, Debug)]
pub struct Net {
    /// Input convolution.
    pub stem: ConvBn,
    /// Residual tower.
    pub blocks: Vec<ResBlock>,
    /// Policy head hidden layer.
    pub policy_conv: ConvBn,
    /// Policy logits per (slot, cell).
    pub policy_out: Conv2d,
    /// Pass logit, from the pooled policy features.
    pub pass_out: Linear,
    /// Value head hidden layer.
    pub value_conv: ConvBn,
    /// Value head fully connected layer.
    pub value_fc: Linear,
    /// Win/draw/loss logits.
    pub wdl_out: Linear,
    /// Final score estimate (tanh).
    pub score_out: Linear,
    /// Auxiliary: each cell's final owner (tanh), from the value features.
    pub ownership_out: Option<Conv2d>,
    /// Auxiliary: the opponent's reply policy per (slot, cell), from the policy features.
    pub reply_out: Option<Conv2d>,
    /// Auxiliary: the opponent's reply pass logit.
    pub reply_pass_out: Option<Linear>,
}

/// What the network outputs for a batch.
pub struct NetOutput {
    /// `[batch, policy_planes * height * width + 1]` logits in policy-index order.
    pub policy: Tensor<2>,
    /// `[batch, 3]` win/draw/loss logits.
    pub wdl: Tensor<2>,
    /// `[batch, 1]` final score in [−1, 1].
    pub score: Tensor<2>,
    /// `[batch, height * width]` final owner of each cell in [−1, 1], if the net has
    /// the head.
    pub ownership: Option<Tensor<2>>,
    /// `[batch, policy_size]` logits of the opponent's reply, if the net has the head.
    pub reply: Option<Tensor<2>>,
}

impl Net {
    /// Runs the network on positions of one game ([`crate::net::encode_batch`]), on
    /// `device`, where the network lives.
    pub fn forward_states(&self, states: &[engine::State], device: &Device) -> NetOutput {
        let planes = crate::net::encode_batch(states);
        let shape: [usize; 4] = planes.dim().into();
        let (input, _) = planes.into_raw_vec_and_offset();
        self.forward(Tensor::<4>::from_data(
            TensorData::new(input, shape),
            device,
        ))
    }

    /// Runs the network on `[batch, planes, height, width]` inputs.
    pub fn forward(&self, input: Tensor<4>) -> NetOutput {
        let mut x = relu(self.stem.forward(input));
        for b in &self.blocks {
            x = b.forward(x);
        }
        let p = relu(self.policy_conv.forward(x.clone()));
        let pooled: Tensor<2> = board_mean(p.clone()).flatten(1, 3);
        let reply = match (&self.reply_out, &self.reply_pass_out) {
            (Some(out), Some(pass)) => Some(Tensor::cat(
                vec![
                    out.forward(p.clone()).flatten(1, 3),
                    pass.forward(pooled.clone()),
                ],
                1,
            )),
            _ => None,
        };
        let cells: Tensor<2> = self.policy_out.forward(p).flatten(1, 3);
        let policy = Tensor::cat(vec![cells, self.pass_out.forward(pooled)], 1);
        let v = relu(self.value_conv.forward(x));
        let ownership = self
            .ownership_out
            .as_ref()
            .map(|o| tanh(o.forward(v.clone()).flatten(1, 3)));
        let v: Tensor<2> = board_mean(v).flatten(1, 3);
        let v = relu(self.value_fc.forward(v));
        NetOutput {
            policy,
            wdl: self.wdl_out.forward(v.clone()),
            score: tanh(self.score_out.forward(v)),
            ownership,
            reply,
        }
    }
}
