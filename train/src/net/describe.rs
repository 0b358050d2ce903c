//! A network's shape as a list: every tensor of its weights and running statistics, by
//! the name Burn's record and the safetensors export give it, with its shape; the
//! parameter count; and the cost of one position. `flipzero train --dry-run` prints it,
//! and a test holds it equal to the tensors of the Burn module that `NetConfig::init`
//! builds.

use std::fmt::Write as _;

use engine::Game;

use crate::net::{Head, NetConfig};

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

/// A convolution of the network: `k`×`k`, `c_in` → `c_out` channels, with a bias or
/// followed by BatchNorm (`name.conv.weight`, `name.bn.*`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConvSpec {
    /// Its name: the prefix of its tensors' names.
    pub name: String,
    /// Input channels.
    pub c_in: usize,
    /// Output channels.
    pub c_out: usize,
    /// Kernel size (1 or 3).
    pub k: usize,
    /// Followed by BatchNorm (then it has no bias) rather than with a bias.
    pub bn: bool,
}

impl ConvSpec {
    fn new(name: impl Into<String>, c_in: usize, c_out: usize, k: usize, bn: bool) -> ConvSpec {
        ConvSpec {
            name: name.into(),
            c_in,
            c_out,
            k,
            bn,
        }
    }

    /// The name of its weight tensor.
    pub fn weight(&self) -> String {
        if self.bn {
            format!("{}.conv.weight", self.name)
        } else {
            format!("{}.weight", self.name)
        }
    }

    /// The name of its bias (`None` with BatchNorm).
    pub fn bias(&self) -> Option<String> {
        (!self.bn).then(|| format!("{}.bias", self.name))
    }

    /// The name of one of its BatchNorm's tensors (`gamma`, `beta`, `running_mean`,
    /// `running_var`).
    pub fn bn(&self, tensor: &str) -> String {
        format!("{}.bn.{tensor}", self.name)
    }

    fn tensors(&self, out: &mut Vec<TensorSpec>) {
        out.push(TensorSpec {
            name: self.weight(),
            shape: vec![self.c_out, self.c_in, self.k, self.k],
            trained: true,
        });
        if let Some(bias) = self.bias() {
            out.push(TensorSpec {
                name: bias,
                shape: vec![self.c_out],
                trained: true,
            });
        }
        if self.bn {
            for (t, trained) in [
                ("gamma", true),
                ("beta", true),
                ("running_mean", false),
                ("running_var", false),
            ] {
                out.push(TensorSpec {
                    name: self.bn(t),
                    shape: vec![self.c_out],
                    trained,
                });
            }
        }
    }
}

/// A linear map `d_in` → `d_out` with a bias (Burn's layout: weight `[d_in, d_out]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinearSpec {
    /// Its name: the prefix of its tensors' names.
    pub name: String,
    /// Inputs.
    pub d_in: usize,
    /// Outputs.
    pub d_out: usize,
}

impl LinearSpec {
    fn new(name: impl Into<String>, d_in: usize, d_out: usize) -> LinearSpec {
        LinearSpec {
            name: name.into(),
            d_in,
            d_out,
        }
    }

    /// The name of its weight tensor.
    pub fn weight(&self) -> String {
        format!("{}.weight", self.name)
    }

    /// The name of its bias.
    pub fn bias(&self) -> String {
        format!("{}.bias", self.name)
    }

    fn tensors(&self, out: &mut Vec<TensorSpec>) {
        out.push(TensorSpec {
            name: self.weight(),
            shape: vec![self.d_in, self.d_out],
            trained: true,
        });
        out.push(TensorSpec {
            name: self.bias(),
            shape: vec![self.d_out],
            trained: true,
        });
    }
}

/// A residual block: two 3×3 conv-BN layers, and a global-pooling bias between them (a
/// 1×1 convolution with bias on the board means) where the config places one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockSpec {
    /// First conv-BN.
    pub a: ConvSpec,
    /// Second conv-BN.
    pub b: ConvSpec,
    /// The global-pooling bias.
    pub gpool: Option<ConvSpec>,
}

/// The opponent's-reply policy head: logits of the reply to the move about to be played,
/// laid out as the policy, from the policy head's features.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplySpec {
    /// Per-cell logits (1×1 convolution with bias).
    pub out: ConvSpec,
    /// The pass logit, from the board means of the policy features.
    pub pass: LinearSpec,
}

/// The network, layer by layer, in the module's order: the one description from which
/// the Burn module, the CPU training engine, the fast inference path and the tensor
/// names of checkpoints and exports all take their parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Input convolution (3×3, BatchNorm).
    pub stem: ConvSpec,
    /// The residual tower.
    pub blocks: Vec<BlockSpec>,
    /// Policy head: 1×1 conv-BN.
    pub policy_conv: ConvSpec,
    /// Policy logits per (slot, cell).
    pub policy_out: ConvSpec,
    /// Pass logit, from the board means of the policy features.
    pub pass_out: LinearSpec,
    /// Value head: 1×1 conv-BN.
    pub value_conv: ConvSpec,
    /// Value head's hidden layer, on the board means of the value features.
    pub value_fc: LinearSpec,
    /// Win/draw/loss logits.
    pub wdl_out: LinearSpec,
    /// Final score (before its tanh).
    pub score_out: LinearSpec,
    /// Auxiliary head: each cell's final owner (tanh), from the value features.
    pub ownership_out: Option<ConvSpec>,
    /// Auxiliary head: the opponent's reply policy.
    pub reply: Option<ReplySpec>,
}

impl NetConfig {
    /// Whether residual block `i` (from 0) has a global-pooling bias.
    pub fn has_gpool(&self, i: usize) -> bool {
        self.gpool_every > 0 && i % self.gpool_every == self.gpool_every - 1
    }

    /// The network, layer by layer.
    pub fn layout(&self) -> Layout {
        let (c, h) = (self.channels, self.head_channels);
        Layout {
            stem: ConvSpec::new("stem", self.in_planes, c, 3, true),
            blocks: (0..self.blocks)
                .map(|i| BlockSpec {
                    a: ConvSpec::new(format!("blocks.{i}.a"), c, c, 3, true),
                    b: ConvSpec::new(format!("blocks.{i}.b"), c, c, 3, true),
                    gpool: self
                        .has_gpool(i)
                        .then(|| ConvSpec::new(format!("blocks.{i}.gpool"), c, c, 1, false)),
                })
                .collect(),
            policy_conv: ConvSpec::new("policy_conv", c, h, 1, true),
            policy_out: ConvSpec::new("policy_out", h, self.policy_planes, 1, false),
            pass_out: LinearSpec::new("pass_out", h, 1),
            value_conv: ConvSpec::new("value_conv", c, h, 1, true),
            value_fc: LinearSpec::new("value_fc", h, self.value_hidden),
            wdl_out: LinearSpec::new("wdl_out", self.value_hidden, 3),
            score_out: LinearSpec::new("score_out", self.value_hidden, 1),
            ownership_out: self
                .has_head(Head::Ownership)
                .then(|| ConvSpec::new("ownership_out", h, 1, 1, false)),
            reply: self.has_head(Head::Reply).then(|| ReplySpec {
                out: ConvSpec::new("reply_out", h, self.policy_planes, 1, false),
                pass: LinearSpec::new("reply_pass_out", h, 1),
            }),
        }
    }

    /// Every tensor of the network, in the module's order.
    pub fn tensors(&self) -> Vec<TensorSpec> {
        let l = self.layout();
        let mut out = Vec::new();
        l.stem.tensors(&mut out);
        for b in &l.blocks {
            b.a.tensors(&mut out);
            b.b.tensors(&mut out);
            if let Some(g) = &b.gpool {
                g.tensors(&mut out);
            }
        }
        l.policy_conv.tensors(&mut out);
        l.policy_out.tensors(&mut out);
        l.pass_out.tensors(&mut out);
        l.value_conv.tensors(&mut out);
        l.value_fc.tensors(&mut out);
        l.wdl_out.tensors(&mut out);
        l.score_out.tensors(&mut out);
        if let Some(o) = &l.ownership_out {
            o.tensors(&mut out);
        }
        if let Some(r) = &l.reply {
            r.out.tensors(&mut out);
            r.pass.tensors(&mut out);
        }
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
        if self.has_head(Head::Ownership) {
            f += conv(h, 1, 1);
        }
        if self.has_head(Head::Reply) {
            f += conv(h, self.policy_planes as u64, 1) + 2 * h;
        }
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
             heads: policy ({} channels, {} policy planes + pass), value ({} channels, {} hidden; win/draw/loss and score){}\n  \
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
            self.aux_heads
                .iter()
                .map(|h| format!(", {h}"))
                .collect::<String>(),
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
