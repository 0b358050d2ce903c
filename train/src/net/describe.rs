//! A network's shape as a list: every tensor of its weights and running statistics, by
//! the name Burn's record and the safetensors export give it, with its shape; the
//! parameter count; and the cost of one position. `flipzero train --dry-run` prints it,
//! and a test holds it equal to the tensors of the Burn module that `NetConfig::init`
//! builds.

use std::fmt::Write as _;

use engine::Game;

use crate::net::NetConfig;

/// One tensor of a network.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorSpec {
    /// Its name, as in Burn's record and `model.safetensors` (e.g. `blocks.0.a.conv.weight`).
    pub name: String,
    /// Its shape (Burn's layout: convolutions `[out, in, k, k]`, linear maps `[in, out]`).
    pub shape: Vec<usize>,
    /// Whether training changes it by gradient (`false`: a BatchNorm running statistic).
    pub trained: bool,
}

impl TensorSpec {
    /// Its number of values.
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// Whether it holds no value.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The tensors of a `k`×`k` convolution without bias followed by BatchNorm.
fn conv_bn(out: &mut Vec<TensorSpec>, name: &str, c_in: usize, c_out: usize, k: usize) {
    conv(out, &format!("{name}.conv"), c_in, c_out, k, false);
    for (t, trained) in [
        ("gamma", true),
        ("beta", true),
        ("running_mean", false),
        ("running_var", false),
    ] {
        out.push(TensorSpec {
            name: format!("{name}.bn.{t}"),
            shape: vec![c_out],
            trained,
        });
    }
}

fn conv(out: &mut Vec<TensorSpec>, name: &str, c_in: usize, c_out: usize, k: usize, bias: bool) {
    out.push(TensorSpec {
        name: format!("{name}.weight"),
        shape: vec![c_out, c_in, k, k],
        trained: true,
    });
    if bias {
        out.push(TensorSpec {
            name: format!("{name}.bias"),
            shape: vec![c_out],
            trained: true,
        });
    }
}

fn linear(out: &mut Vec<TensorSpec>, name: &str, d_in: usize, d_out: usize) {
    out.push(TensorSpec {
        name: format!("{name}.weight"),
        shape: vec![d_in, d_out],
        trained: true,
    });
    out.push(TensorSpec {
        name: format!("{name}.bias"),
        shape: vec![d_out],
        trained: true,
    });
}

impl NetConfig {
    /// Whether residual block `i` (from 0) has a global-pooling bias.
    pub fn has_gpool(&self, i: usize) -> bool {
        self.gpool_every > 0 && i % self.gpool_every == self.gpool_every - 1
    }

    /// Every tensor of the network, in the module's order.
    pub fn tensors(&self) -> Vec<TensorSpec> {
        let (c, h) = (self.channels, self.head_channels);
        let mut out = Vec::new();
        conv_bn(&mut out, "stem", self.in_planes, c, 3);
        for i in 0..self.blocks {
            conv_bn(&mut out, &format!("blocks.{i}.a"), c, c, 3);
            conv_bn(&mut out, &format!("blocks.{i}.b"), c, c, 3);
            if self.has_gpool(i) {
                conv(&mut out, &format!("blocks.{i}.gpool"), c, c, 1, true);
            }
        }
        conv_bn(&mut out, "policy_conv", c, h, 1);
        conv(&mut out, "policy_out", h, self.policy_planes, 1, true);
        linear(&mut out, "pass_out", h, 1);
        conv_bn(&mut out, "value_conv", c, h, 1);
        linear(&mut out, "value_fc", h, self.value_hidden);
        linear(&mut out, "wdl_out", self.value_hidden, 3);
        linear(&mut out, "score_out", self.value_hidden, 1);
        out
    }

    /// The number of trained parameters.
    pub fn parameter_count(&self) -> usize {
        self.tensors()
            .iter()
            .filter(|t| t.trained)
            .map(TensorSpec::len)
            .sum()
    }

    /// Floating-point operations of one position on a grid of `cells` cells (the network
    /// runs on the whole `width` × `height` grid): two per
    /// multiply-add of the convolutions and linear maps (the bulk of the work), one per
    /// cell and channel of the board means; BatchNorm, ReLU and the softmax are left out.
    pub fn flops_per_position(&self, cells: usize) -> u64 {
        let (c, h, v) = (
            self.channels as u64,
            self.head_channels as u64,
            self.value_hidden as u64,
        );
        let n = cells as u64;
        let conv = |c_in: u64, c_out: u64, k: u64| 2 * k * k * c_in * c_out * n;
        let mut f = conv(self.in_planes as u64, c, 3);
        for i in 0..self.blocks {
            f += 2 * conv(c, c, 3);
            if self.has_gpool(i) {
                f += c * n + 2 * c * c + c * n;
            }
        }
        f += conv(c, h, 1) + conv(h, self.policy_planes as u64, 1) + h * n + 2 * h;
        f += conv(c, h, 1) + h * n + 2 * h * v + 2 * v * 3 + 2 * v;
        f
    }

    /// A table of the network for people: its layers, tensors, parameter count and cost
    /// per position on `game`'s board.
    pub fn describe(&self, game: Game) -> String {
        let (w, h) = game.grid();
        let cells = w * h;
        let mut s = String::new();
        let gpool: Vec<String> = (0..self.blocks)
            .filter(|&i| self.has_gpool(i))
            .map(|i| i.to_string())
            .collect();
        let _ = writeln!(
            s,
            "network for {game} ({w}x{h} grid)\n  \
             {} residual blocks of {} channels (3x3 convolutions, BatchNorm, ReLU)\n  \
             global pooling in blocks: {}\n  \
             heads: policy ({} channels, {} policy planes + pass), value ({} channels, {} hidden; win/draw/loss and score)\n  \
             input planes: {}",
            self.blocks,
            self.channels,
            if gpool.is_empty() {
                "none".into()
            } else {
                gpool.join(", ")
            },
            self.head_channels,
            self.policy_planes,
            self.head_channels,
            self.value_hidden,
            self.in_planes
        );
        let _ = writeln!(s, "tensors:");
        for t in self.tensors() {
            let dims: Vec<String> = t.shape.iter().map(|d| d.to_string()).collect();
            let _ = writeln!(
                s,
                "  {:<28} [{}]{}",
                t.name,
                dims.join(", "),
                if t.trained {
                    ""
                } else {
                    "  (running statistic)"
                }
            );
        }
        let _ = writeln!(s, "parameters {}", self.parameter_count());
        let _ = write!(
            s,
            "flops per position {} ({:.2} M, on the {w}x{h} grid)",
            self.flops_per_position(cells),
            self.flops_per_position(cells) as f64 / 1e6
        );
        s
    }
}
