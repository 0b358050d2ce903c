//! The policy/value network: a residual tower with optional global-pooling bias blocks,
//! a convolutional policy head laid out as the policy index, and a value head with
//! win/draw/loss logits and a final-score estimate. Fully convolutional (plus global
//! pooling), so one architecture serves every board size.

use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::{BatchNorm, BatchNormConfig, Linear, LinearConfig, PaddingConfig2d};
use burn::prelude::*;
use burn::tensor::activation::{relu, tanh};

use crate::net::NetConfig;

impl NetConfig {
    /// Builds the network on `device` (weights from the device's random seed).
    pub fn init(&self, device: &Device) -> Net {
        let conv_bn = |i: usize, o: usize, k: usize| ConvBn {
            conv: Conv2dConfig::new([i, o], [k, k])
                .with_padding(PaddingConfig2d::Explicit(k / 2, k / 2, k / 2, k / 2))
                .with_bias(false)
                .init(device),
            bn: BatchNormConfig::new(o).init(device),
        };
        let c = self.channels;
        Net {
            stem: conv_bn(self.in_planes, c, 3),
            blocks: (0..self.blocks)
                .map(|i| ResBlock {
                    a: conv_bn(c, c, 3),
                    b: conv_bn(c, c, 3),
                    gpool: self
                        .has_gpool(i)
                        .then(|| Conv2dConfig::new([c, c], [1, 1]).init(device)),
                })
                .collect(),
            policy_conv: conv_bn(c, self.head_channels, 1),
            policy_out: Conv2dConfig::new([self.head_channels, self.policy_planes], [1, 1])
                .init(device),
            pass_out: LinearConfig::new(self.head_channels, 1).init(device),
            value_conv: conv_bn(c, self.head_channels, 1),
            value_fc: LinearConfig::new(self.head_channels, self.value_hidden).init(device),
            wdl_out: LinearConfig::new(self.value_hidden, 3).init(device),
            score_out: LinearConfig::new(self.value_hidden, 1).init(device),
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
}

/// What the network outputs for a batch.
pub struct NetOutput {
    /// `[batch, policy_planes * height * width + 1]` logits in policy-index order.
    pub policy: Tensor<2>,
    /// `[batch, 3]` win/draw/loss logits.
    pub wdl: Tensor<2>,
    /// `[batch, 1]` final score in [−1, 1].
    pub score: Tensor<2>,
}

impl Net {
    /// Runs the network on `[batch, planes, height, width]` inputs.
    pub fn forward(&self, input: Tensor<4>) -> NetOutput {
        let mut x = relu(self.stem.forward(input));
        for b in &self.blocks {
            x = b.forward(x);
        }
        let p = relu(self.policy_conv.forward(x.clone()));
        let pooled: Tensor<2> = board_mean(p.clone()).flatten(1, 3);
        let cells: Tensor<2> = self.policy_out.forward(p).flatten(1, 3);
        let policy = Tensor::cat(vec![cells, self.pass_out.forward(pooled)], 1);
        let v = relu(self.value_conv.forward(x));
        let v: Tensor<2> = board_mean(v).flatten(1, 3);
        let v = relu(self.value_fc.forward(v));
        NetOutput {
            policy,
            wdl: self.wdl_out.forward(v.clone()),
            score: tanh(self.score_out.forward(v)),
        }
    }
}
