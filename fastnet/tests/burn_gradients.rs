//! The trainer's hand-written gradients against Burn's autodiff: the same loss (mean
//! value error plus the policy cross-entropy, over a batch) written with Burn's tensor
//! operations, differentiated by Burn, on an Ataxx and an Othello net.

use burn::prelude::*;
use burn::tensor::activation::{log_softmax, relu};
use engine::{Game, Rng};
use fastnet::data::Examples;
use fastnet::features::Layout;
use fastnet::{FastNetConfig, FloatNet};

fn examples(game: Game, positions: usize, seed: u64) -> Examples {
    let layout = Layout::new(game);
    let cells = layout.cells();
    let mut ex = Examples {
        tuples: layout.tuples(),
        ..Examples::default()
    };
    let mut r = Rng::new(seed);
    let mut feats = Vec::new();
    let mut s = game.startpos();
    let mut g = 0;
    while ex.len() < positions {
        if s.is_game_over() {
            s = game.startpos();
            g += 1;
        }
        let moves = s.legal_moves();
        layout.active(&layout.cell_states(&s), s.side_to_move(), &mut feats);
        ex.features.extend_from_slice(&feats);
        ex.value.push(r.next_f64() as f32 * 2.0 - 1.0);
        let start = ex.slots.len() as u32;
        let mut t: Vec<f32> = moves.iter().map(|_| r.next_f64() as f32 + 0.05).collect();
        let sum: f32 = t.iter().sum();
        t.iter_mut().for_each(|x| *x /= sum);
        for (m, p) in moves.iter().zip(t) {
            if let Some((f, to)) = fastnet::net::move_slots(*m, cells) {
                ex.slots.push((f as u16, to as u16));
                ex.target.push(p);
            }
        }
        ex.moves.push((start, ex.slots.len() as u32));
        ex.game_id.push(g);
        s.play(moves[r.below(moves.len() as u64) as usize]);
    }
    ex
}

fn leaf<const D: usize>(v: &[f32], shape: [usize; D], device: &Device) -> Tensor<D> {
    Tensor::<D>::from_data(TensorData::new(v.to_vec(), shape), device).require_grad()
}

fn values<const D: usize>(t: Tensor<D>) -> Vec<f32> {
    t.into_data().try_to_vec::<f32>().unwrap()
}

#[test]
fn gradients_equal_burn_autodiff() {
    for (name, positions) in [("ataxx", 12), ("othello", 10)] {
        let game: Game = name.parse().unwrap();
        let net = FloatNet::init(FastNetConfig::for_game(game, 64), 5).unwrap();
        let (h, d, r) = (net.cfg.hidden, net.cfg.policy_dim, net.cfg.policy_rank);
        let ex = examples(game, positions, 3);
        let batch: Vec<usize> = (0..ex.len()).collect();
        let ours = fastnet::train::gradients(&net, &ex, &batch, 1.0);

        let device = Device::flex().autodiff();
        let inputs = net.l1_w.len() / h;
        let subnets = net.p_b.len() / d;
        let w1 = leaf(&net.l1_w, [inputs, h], &device);
        let b1 = leaf(&net.l1_b, [1, h], &device);
        let vw = leaf(&net.v_w, [h, 1], &device);
        let vb = leaf(&[net.v_b], [1, 1], &device);
        let proj = leaf(&net.p_proj, [r, h], &device);
        let pw = leaf(&net.p_w, [subnets * d, r], &device);
        let pb = leaf(&net.p_b, [1, subnets * d], &device);

        // The features as a dense 0/1 matrix: the accumulator is a matrix product.
        let n = ex.len();
        let mut x = vec![0f32; n * inputs];
        for i in 0..n {
            for &f in ex.features_of(i) {
                x[i * inputs + f as usize] += 1.0;
            }
        }
        let x = Tensor::<2>::from_data(TensorData::new(x, [n, inputs]), &device);
        let acc = x.matmul(w1.clone()) + b1.clone();
        let a = acc.clamp(0.0, 1.0);
        let v = (a.clone().powi_scalar(2).matmul(vw.clone()) + vb.clone()).tanh();
        let t = Tensor::<2>::from_data(TensorData::new(ex.value.clone(), [n, 1]), &device);
        let value_loss = (v - t).powi_scalar(2).sum().div_scalar(n as f32);
        let z = a.matmul(proj.clone().transpose());
        let e = relu(z.matmul(pw.clone().transpose()) + pb.clone());
        let mut policy_loss: Option<Tensor<1>> = None;
        for i in 0..n {
            let (s, end) = (ex.moves[i].0 as usize, ex.moves[i].1 as usize);
            if end == s {
                continue;
            }
            let logits: Vec<Tensor<1>> = (s..end)
                .map(|m| {
                    let (f, to) = (usize::from(ex.slots[m].0), usize::from(ex.slots[m].1));
                    let ef = e.clone().slice([i..i + 1, f * d..(f + 1) * d]);
                    let et = e.clone().slice([i..i + 1, to * d..(to + 1) * d]);
                    (ef * et).sum()
                })
                .collect();
            let logits = Tensor::cat(logits, 0).reshape([1, end - s]);
            let target = Tensor::<2>::from_data(
                TensorData::new(ex.target[s..end].to_vec(), [1, end - s]),
                &device,
            );
            let ce = (target * log_softmax(logits, 1))
                .sum()
                .neg()
                .div_scalar(n as f32);
            policy_loss = Some(match policy_loss {
                None => ce,
                Some(p) => p + ce,
            });
        }
        let loss = value_loss + policy_loss.expect("positions with moves");
        let grads = loss.backward();
        let theirs = [
            values(w1.grad(&grads).unwrap()),
            values(b1.grad(&grads).unwrap()),
            values(vw.grad(&grads).unwrap()),
            values(vb.grad(&grads).unwrap()),
            values(proj.grad(&grads).unwrap()),
            values(pw.grad(&grads).unwrap()),
            values(pb.grad(&grads).unwrap()),
        ];
        for (k, (a, b)) in ours.iter().zip(&theirs).enumerate() {
            assert_eq!(a.len(), b.len(), "{name} tensor {k}");
            let norm = |v: &mut dyn Iterator<Item = f32>| {
                v.map(|x| f64::from(x).powi(2)).sum::<f64>().sqrt()
            };
            let err = norm(&mut a.iter().zip(b).map(|(x, y)| x - y))
                / norm(&mut b.iter().copied()).max(1e-12);
            assert!(
                norm(&mut b.iter().copied()) > 0.0,
                "{name} tensor {k}: Burn gives no gradient"
            );
            assert!(err < 1e-4, "{name} tensor {k}: relative error {err:.2e}");
        }
    }
}
