//! The engine's parameters: built from a Burn network, in the order of the network's
//! description, and written back to one; the prepared convolutions and the dense layers.

use super::*;

impl CpuTrainer {
    /// The network as Burn's module (weights and running statistics), on `device`.
    pub fn to_net(&self, device: &Device) -> Net {
        let mut net = self.net.init(device);
        let p1 = |i: usize, dims: [usize; 1]| {
            Param::from_tensor(Tensor::from_data(
                TensorData::new(self.burn_layout(i, &self.values[i]), dims),
                device,
            ))
        };
        let running = |v: &[f32]| {
            RunningState::new(Tensor::from_data(
                TensorData::new(v.to_vec(), [v.len()]),
                device,
            ))
        };
        let conv_w = |c: &Conv| {
            Param::from_tensor(Tensor::<4>::from_data(
                TensorData::new(
                    self.burn_layout(c.w, &self.values[c.w]),
                    [c.c_out, c.c_in, c.k, c.k],
                ),
                device,
            ))
        };
        let set_conv_bn = |cb: &mut ConvBn, c: &Conv, bn: &Bn| {
            cb.conv.weight = conv_w(c);
            cb.bn.gamma = p1(bn.gamma, [bn.c]);
            cb.bn.beta = p1(bn.beta, [bn.c]);
            cb.bn.running_mean = running(&bn.mean);
            cb.bn.running_var = running(&bn.var);
        };
        let linear = |l: &mut burn::nn::Linear, d: &Dense| {
            l.weight = Param::from_tensor(Tensor::from_data(
                TensorData::new(self.burn_layout(d.w, &self.values[d.w]), [d.d_in, d.d_out]),
                device,
            ));
            l.bias = Some(p1(d.b, [d.d_out]));
        };
        let l = &self.layers;
        set_conv_bn(&mut net.stem, &l.stem, &l.stem_bn);
        for (nb, b) in net.blocks.iter_mut().zip(&l.blocks) {
            set_conv_bn(&mut nb.a, &b.a, &b.a_bn);
            set_conv_bn(&mut nb.b, &b.b, &b.b_bn);
            if let (Some(conv), Some(d)) = (nb.gpool.as_mut(), &b.gpool) {
                conv.weight = Param::from_tensor(Tensor::from_data(
                    TensorData::new(self.values[d.w].clone(), [d.d_out, d.d_in, 1, 1]),
                    device,
                ));
                conv.bias = Some(p1(d.b, [d.d_out]));
            }
        }
        set_conv_bn(&mut net.policy_conv, &l.policy_conv, &l.policy_bn);
        net.policy_out.weight = conv_w(&l.policy_out);
        net.policy_out.bias = l.policy_out.bias.map(|b| p1(b, [l.policy_out.c_out]));
        linear(&mut net.pass_out, &l.pass_out);
        set_conv_bn(&mut net.value_conv, &l.value_conv, &l.value_bn);
        linear(&mut net.value_fc, &l.value_fc);
        linear(&mut net.wdl_out, &l.wdl_out);
        linear(&mut net.score_out, &l.score_out);
        net
    }

    /// Parameter `i`'s values (or gradient) in Burn's layout.
    pub(super) fn burn_layout(&self, i: usize, data: &[f32]) -> Vec<f32> {
        let l = &self.layers;
        let mut convs = vec![l.stem, l.policy_conv, l.policy_out, l.value_conv];
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

/// Collects the parameters of a Burn network in a fixed order.
#[derive(Default)]
pub(super) struct Builder {
    pub(super) names: Vec<String>,
    pub(super) values: Vec<Vec<f32>>,
}

impl Builder {
    pub(super) fn add(&mut self, name: String, v: Vec<f32>) -> usize {
        self.names.push(name);
        self.values.push(v);
        self.values.len() - 1
    }

    pub(super) fn conv(&mut self, name: &str, conv: &burn::nn::conv::Conv2d) -> Conv {
        let [c_out, c_in, k, _] = conv.weight.val().dims();
        let zero = vec![0.0; c_out];
        let packed = Packed::new(c_out, c_in, k, &values(conv.weight.val()), &zero);
        let c_pad = packed.c_pad();
        let w = self.add(format!("{name}.weight"), packed.into_weights());
        let bias = conv
            .bias
            .as_ref()
            .map(|b| self.add(format!("{name}.bias"), values(b.val())));
        Conv {
            k,
            c_in,
            c_out,
            c_pad,
            w,
            bias,
        }
    }

    pub(super) fn bn(&mut self, name: &str, bn: &burn::nn::BatchNorm) -> Bn {
        let gamma = self.add(format!("{name}.gamma"), values(bn.gamma.val()));
        let beta = self.add(format!("{name}.beta"), values(bn.beta.val()));
        Bn {
            c: self.values[gamma].len(),
            gamma,
            beta,
            mean: values(bn.running_mean.value()),
            var: values(bn.running_var.value()),
            eps: bn.epsilon as f32,
            momentum: bn.momentum as f32,
        }
    }

    pub(super) fn conv_bn(&mut self, name: &str, cb: &ConvBn) -> (Conv, Bn) {
        (
            self.conv(&format!("{name}.conv"), &cb.conv),
            self.bn(&format!("{name}.bn"), &cb.bn),
        )
    }

    pub(super) fn linear(&mut self, name: &str, l: &burn::nn::Linear) -> Dense {
        // Burn stores Linear weights as [in, out]; the engine as [out][in].
        let [d_in, d_out] = l.weight.val().dims();
        let w = transpose(&values(l.weight.val()), d_in, d_out);
        let w = self.add(format!("{name}.weight"), w);
        let b = self.add(format!("{name}.bias"), bias_or_zero(&l.bias, d_out));
        Dense { d_in, d_out, w, b }
    }

    pub(super) fn layers(&mut self, net: &Net) -> Layers {
        let (stem, stem_bn) = self.conv_bn("stem", &net.stem);
        let blocks = net
            .blocks
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let (a, a_bn) = self.conv_bn(&format!("blocks.{i}.a"), &b.a);
                let (bc, b_bn) = self.conv_bn(&format!("blocks.{i}.b"), &b.b);
                let gpool = b.gpool.as_ref().map(|conv| {
                    let [d_out, d_in, _, _] = conv.weight.val().dims();
                    let w = self.add(
                        format!("blocks.{i}.gpool.weight"),
                        values(conv.weight.val()),
                    );
                    let bias = bias_or_zero(&conv.bias, d_out);
                    let b = self.add(format!("blocks.{i}.gpool.bias"), bias);
                    Dense { d_in, d_out, w, b }
                });
                Block {
                    a,
                    a_bn,
                    b: bc,
                    b_bn,
                    gpool,
                }
            })
            .collect();
        let (policy_conv, policy_bn) = self.conv_bn("policy_conv", &net.policy_conv);
        let policy_out = self.conv("policy_out", &net.policy_out);
        let pass_out = self.linear("pass_out", &net.pass_out);
        let (value_conv, value_bn) = self.conv_bn("value_conv", &net.value_conv);
        let value_fc = self.linear("value_fc", &net.value_fc);
        let wdl_out = self.linear("wdl_out", &net.wdl_out);
        let score_out = self.linear("score_out", &net.score_out);
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
