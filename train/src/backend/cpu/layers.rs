//! The engine's parameters: built from a Burn network, in the order of the network's
//! description, and written back to one; the prepared convolutions and the dense layers.

use std::collections::HashMap;

use burn::prelude::*;

use super::shapes::{Block, Bn, Conv, Dense, Layers, Op, TILE};
use super::state::CpuTrainer;
use crate::infer::fast::transpose;
use crate::kernels::winograd::Winograd;
use crate::kernels::{LANES, Packed};
use crate::net::{ConvSpec, Layout, LinearSpec, NamedTensors, Net};

impl CpuTrainer {
    /// The network as Burn's module (weights and running statistics), on `device`: every
    /// tensor of the description, by name.
    pub fn to_net(&self, device: &Device) -> Net {
        let mut named = NamedTensors::default();
        let shapes: HashMap<String, Vec<usize>> = self
            .net
            .tensors()
            .into_iter()
            .map(|t| (t.name, t.shape))
            .collect();
        for (i, name) in self.names.iter().enumerate() {
            let shape = shapes[name].clone();
            named.insert(name.clone(), shape, self.burn_layout(i, &self.values[i]));
        }
        for bn in self.layers.batch_norms() {
            for (t, v) in [("running_mean", &bn.mean), ("running_var", &bn.var)] {
                named.insert(format!("{}.bn.{t}", bn.name), vec![bn.c], v.clone());
            }
        }
        named
            .into_net(&self.net, device)
            .expect("the engine holds every tensor of its description (checked when built)")
    }

    /// Parameter `i`'s values (or gradient) in Burn's layout.
    pub(super) fn burn_layout(&self, i: usize, data: &[f32]) -> Vec<f32> {
        let l = &self.layers;
        let mut convs = vec![l.stem, l.policy_conv, l.policy_out, l.value_conv];
        convs.extend(l.ownership_out);
        for b in &l.blocks {
            convs.extend([b.a, b.b]);
        }
        if let Some(c) = convs.iter().find(|c| c.w == i) {
            return unpack(c, data);
        }
        let dense = [l.pass_out, l.value_fc, l.wdl_out, l.score_out];
        if let Some(d) = dense.iter().find(|d| d.w == i) {
            // Burn's Linear stores [in, out].
            return transpose(data, d.d_out, d.d_in);
        }
        data.to_vec()
    }
}

/// Collects the parameters of a network in the order of its description, taking each
/// tensor by its name in the description.
pub(super) struct Builder<'a> {
    pub(super) names: Vec<String>,
    pub(super) values: Vec<Vec<f32>>,
    named: &'a NamedTensors,
    /// BatchNorm's ε and momentum (not tensors: the module's settings).
    eps: f32,
    momentum: f32,
}

impl<'a> Builder<'a> {
    pub(super) fn new(named: &'a NamedTensors, eps: f32, momentum: f32) -> Builder<'a> {
        Builder {
            names: Vec::new(),
            values: Vec::new(),
            named,
            eps,
            momentum,
        }
    }

    fn add(&mut self, name: String, v: Vec<f32>) -> usize {
        self.names.push(name);
        self.values.push(v);
        self.values.len() - 1
    }

    fn conv(&mut self, s: &ConvSpec) -> Conv {
        let w = self.named.get(&s.weight(), &[s.c_out, s.c_in, s.k, s.k]);
        let packed = Packed::new(s.c_out, s.c_in, s.k, w, &vec![0.0; s.c_out]);
        let c_pad = packed.c_pad();
        let w = self.add(s.weight(), packed.into_weights());
        let bias = s.bias().map(|b| {
            let v = self.named.get(&b, &[s.c_out]).to_vec();
            self.add(b, v)
        });
        Conv {
            k: s.k,
            c_in: s.c_in,
            c_out: s.c_out,
            c_pad,
            w,
            bias,
        }
    }

    fn conv_bn(&mut self, s: &ConvSpec) -> (Conv, Bn) {
        let conv = self.conv(s);
        let c = s.c_out;
        let take = |b: &mut Self, t: &str| {
            let v = b.named.get(&s.bn(t), &[c]).to_vec();
            b.add(s.bn(t), v)
        };
        let gamma = take(self, "gamma");
        let beta = take(self, "beta");
        let bn = Bn {
            name: s.name.clone(),
            c,
            gamma,
            beta,
            mean: self.named.get(&s.bn("running_mean"), &[c]).to_vec(),
            var: self.named.get(&s.bn("running_var"), &[c]).to_vec(),
            eps: self.eps,
            momentum: self.momentum,
        };
        (conv, bn)
    }

    fn linear(&mut self, s: &LinearSpec) -> Dense {
        // Burn stores Linear weights as [in, out]; the engine as [out][in].
        let w = transpose(
            self.named.get(&s.weight(), &[s.d_in, s.d_out]),
            s.d_in,
            s.d_out,
        );
        let w = self.add(s.weight(), w);
        let bias = self.named.get(&s.bias(), &[s.d_out]).to_vec();
        let b = self.add(s.bias(), bias);
        Dense {
            d_in: s.d_in,
            d_out: s.d_out,
            w,
            b,
        }
    }

    /// A 1×1 convolution with bias on one value per channel, as a dense layer: its
    /// `[out, in, 1, 1]` weights are already `[out][in]`.
    fn pointwise(&mut self, s: &ConvSpec) -> Dense {
        let w = self
            .named
            .get(&s.weight(), &[s.c_out, s.c_in, 1, 1])
            .to_vec();
        let w = self.add(s.weight(), w);
        let bias = s.bias().expect("a global-pooling bias has a bias");
        let v = self.named.get(&bias, &[s.c_out]).to_vec();
        let b = self.add(bias, v);
        Dense {
            d_in: s.c_in,
            d_out: s.c_out,
            w,
            b,
        }
    }

    /// The layers this engine runs, from the description. The opponent's-reply head is
    /// not among them: [`CpuTrainer::uncovered`] names it.
    pub(super) fn layers(&mut self, l: &Layout) -> Layers {
        let (stem, stem_bn) = self.conv_bn(&l.stem);
        let blocks = l
            .blocks
            .iter()
            .map(|b| {
                let (a, a_bn) = self.conv_bn(&b.a);
                let (bc, b_bn) = self.conv_bn(&b.b);
                let gpool = b.gpool.as_ref().map(|g| self.pointwise(g));
                Block {
                    a,
                    a_bn,
                    b: bc,
                    b_bn,
                    gpool,
                }
            })
            .collect();
        let (policy_conv, policy_bn) = self.conv_bn(&l.policy_conv);
        let policy_out = self.conv(&l.policy_out);
        let pass_out = self.linear(&l.pass_out);
        let (value_conv, value_bn) = self.conv_bn(&l.value_conv);
        let value_fc = self.linear(&l.value_fc);
        let wdl_out = self.linear(&l.wdl_out);
        let score_out = self.linear(&l.score_out);
        let ownership_out = l.ownership_out.as_ref().map(|o| self.conv(o));
        Layers {
            stem,
            stem_bn,
            blocks,
            policy_conv,
            policy_bn,
            policy_out,
            pass_out,
            value_conv,
            value_bn,
            value_fc,
            wdl_out,
            score_out,
            ownership_out,
        }
    }
}

/// Packed weights `[tap][c_in][c_pad]` back to PyTorch's `[c_out][c_in][k][k]`.
pub(super) fn unpack(c: &Conv, data: &[f32]) -> Vec<f32> {
    let taps = c.k * c.k;
    let mut w = vec![0.0; c.c_out * c.c_in * taps];
    for o in 0..c.c_out {
        for i in 0..c.c_in {
            for t in 0..taps {
                w[(o * c.c_in + i) * taps + t] = data[(t * c.c_in + i) * c.c_pad + o];
            }
        }
    }
    w
}

/// The forward convolution of `c` with the current weights.
pub(super) fn prepared(values: &[Vec<f32>], c: &Conv) -> Op {
    let mut bias = vec![0.0; c.c_pad];
    if let Some(b) = c.bias {
        bias[..c.c_out].copy_from_slice(&values[b]);
    }
    let packed = Packed::from_packed(c.c_in, c.c_out, c.k * c.k, values[c.w].clone(), bias);
    if c.k == 3 {
        Op::Winograd(Winograd::with_tile(&packed, TILE))
    } else {
        Op::Direct(packed)
    }
}

/// The convolution that gives `c`'s input gradient from its output gradient: weights
/// transposed (`c_out` → `c_in`) and taps reversed, no bias.
pub(super) fn transposed(values: &[Vec<f32>], c: &Conv) -> Op {
    let taps = c.k * c.k;
    let c_pad = c.c_in.next_multiple_of(LANES);
    let w = &values[c.w];
    let mut t = vec![0.0; taps * c.c_out * c_pad];
    for tap in 0..taps {
        for o in 0..c.c_out {
            for i in 0..c.c_in {
                t[(tap * c.c_out + o) * c_pad + i] =
                    w[((taps - 1 - tap) * c.c_in + i) * c.c_pad + o];
            }
        }
    }
    let packed = Packed::from_packed(c.c_out, c.c_in, taps, t, vec![0.0; c_pad]);
    if c.k == 3 {
        Op::Winograd(Winograd::with_tile(&packed, TILE))
    } else {
        Op::Direct(packed)
    }
}

/// `x` `[n][d_in]` through a dense layer: `[n][d_out]`.
pub(super) fn dense_forward(values: &[Vec<f32>], d: &Dense, x: &[f32], relu: bool) -> Vec<f32> {
    let (w, b) = (&values[d.w], &values[d.b]);
    x.chunks(d.d_in)
        .flat_map(|row| {
            w.chunks(d.d_in).zip(b).map(move |(w, b)| {
                let y = b + w.iter().zip(row).map(|(a, b)| a * b).sum::<f32>();
                if relu { y.max(0.0) } else { y }
            })
        })
        .collect()
}

/// Accumulates a dense layer's weight and bias gradients from its input `x` and output
/// gradient `dy`; returns the input gradient.
pub(super) fn dense_backward(
    values: &[Vec<f32>],
    grads: &mut [Vec<f32>],
    d: &Dense,
    x: &[f32],
    dy: &[f32],
) -> Vec<f32> {
    let n = dy.len() / d.d_out;
    let w = &values[d.w];
    let mut dx = vec![0.0; n * d.d_in];
    let [dw, db] = grads
        .get_disjoint_mut([d.w, d.b])
        .expect("distinct parameters");
    for s in 0..n {
        let xs = &x[s * d.d_in..][..d.d_in];
        let dxs = &mut dx[s * d.d_in..][..d.d_in];
        for o in 0..d.d_out {
            let g = dy[s * d.d_out + o];
            if g == 0.0 {
                continue;
            }
            db[o] += g;
            let wo = &w[o * d.d_in..][..d.d_in];
            let dwo = &mut dw[o * d.d_in..][..d.d_in];
            for i in 0..d.d_in {
                dwo[i] += g * xs[i];
                dxs[i] += g * wo[i];
            }
        }
    }
    dx
}

impl Layers {
    /// Every BatchNorm, in the order of the description.
    pub(super) fn batch_norms(&self) -> Vec<&Bn> {
        let mut out = vec![&self.stem_bn];
        for b in &self.blocks {
            out.extend([&b.a_bn, &b.b_bn]);
        }
        out.extend([&self.policy_bn, &self.value_bn]);
        out
    }

    /// Layers of the tower, input first.
    pub(super) fn tower_len(&self) -> usize {
        1 + 2 * self.blocks.len()
    }

    /// Tower layer `i`: the stem (0), then each block's first (odd) and second (even)
    /// layer; its convolution, BatchNorm and the global pooling that follows it.
    pub(super) fn tower(&self, i: usize) -> (&Conv, &Bn, Option<&Dense>) {
        if i == 0 {
            return (&self.stem, &self.stem_bn, None);
        }
        let b = &self.blocks[(i - 1) / 2];
        if i % 2 == 1 {
            (&b.a, &b.a_bn, b.gpool.as_ref())
        } else {
            (&b.b, &b.b_bn, None)
        }
    }

    /// The BatchNorm of tower layer `i`.
    pub(super) fn tower_bn_mut(&mut self, i: usize) -> &mut Bn {
        if i == 0 {
            return &mut self.stem_bn;
        }
        let b = &mut self.blocks[(i - 1) / 2];
        if i % 2 == 1 { &mut b.a_bn } else { &mut b.b_bn }
    }
}

/// Whether tower layer `i` is a block's second layer, whose output adds the block's
/// input (the output of layer `i − 2`).
pub(super) fn ends_block(i: usize) -> bool {
    i >= 2 && i.is_multiple_of(2)
}
