"""A flipzero network trained in JAX, and back: the weights go both ways.

    python python/examples/roundtrip_jax.py --shards RUN --init docs/strength/gen-0131 --out /tmp/jax-net

The JAX twin of roundtrip_torch.py (read that one first), on the project's own names and
layouts: ``flipzero.Model.tensors("burn")`` is a dict of arrays that the pure functions
below take as parameters (convolutions ``[out, in, k, k]`` on NCHW planes, Linear weights
``[in, out]``), trained by a hand-written Adam; ``safetensors.numpy.save_file`` writes them
back, and ``flipzero.Model.import_weights`` (``flipzero import``) reads Burn's names as it
reads PyTorch's. Needs ``pip install "jax[cpu]" safetensors``. `make test` runs this one
(python/tests/test_roundtrip.py): PyTorch's CPU wheels are not on PyPI.
"""

from __future__ import annotations

import pathlib
import sys

import jax
import jax.numpy as jnp
import numpy as np
from safetensors.numpy import save_file

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import roundtrip  # noqa: E402

import flipzero  # noqa: E402

STATS = ("running_mean", "running_var")
WEIGHTS = roundtrip.loss_weights()
MOMENTUM, EPS = 0.1, 1e-5


def conv(x, w, b=None):
    y = jax.lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NCHW", "OIHW", "NCHW"))
    return y if b is None else y + b[None, :, None, None]


def conv_bn(p, stats, new, name, x, train):
    """Convolution, then BatchNorm: on the batch's statistics in training (recording the
    running ones in `new`), on the running ones otherwise."""
    y = conv(x, p[f"{name}.conv.weight"])
    if train:
        mean, var = y.mean((0, 2, 3)), y.var((0, 2, 3))
        n = y.shape[0] * y.shape[2] * y.shape[3]
        new[f"{name}.bn.running_mean"] = (1 - MOMENTUM) * stats[f"{name}.bn.running_mean"] + MOMENTUM * mean
        new[f"{name}.bn.running_var"] = (1 - MOMENTUM) * stats[f"{name}.bn.running_var"] + MOMENTUM * var * n / (n - 1)
    else:
        mean, var = stats[f"{name}.bn.running_mean"], stats[f"{name}.bn.running_var"]
    y = (y - mean[None, :, None, None]) / jnp.sqrt(var[None, :, None, None] + EPS)
    return y * p[f"{name}.bn.gamma"][None, :, None, None] + p[f"{name}.bn.beta"][None, :, None, None]


def forward(p, stats, x, train=False):
    """train/src/net/module.rs's forward pass; returns the outputs and the new running
    statistics."""
    new = dict(stats)
    relu = jax.nn.relu
    x = relu(conv_bn(p, stats, new, "stem", x, train))
    i = 0
    while f"blocks.{i}.a.conv.weight" in p:
        h = relu(conv_bn(p, stats, new, f"blocks.{i}.a", x, train))
        if f"blocks.{i}.gpool.weight" in p:
            h = h + conv(h.mean((2, 3), keepdims=True), p[f"blocks.{i}.gpool.weight"], p[f"blocks.{i}.gpool.bias"])
        x = relu(conv_bn(p, stats, new, f"blocks.{i}.b", h, train) + x)
        i += 1
    pol = relu(conv_bn(p, stats, new, "policy_conv", x, train))
    pooled = pol.mean((2, 3))
    n = x.shape[0]
    out = {
        "policy": jnp.concatenate(
            [conv(pol, p["policy_out.weight"], p["policy_out.bias"]).reshape(n, -1),
             pooled @ p["pass_out.weight"] + p["pass_out.bias"]], 1)
    }
    if "reply_out.weight" in p:
        out["reply"] = jnp.concatenate(
            [conv(pol, p["reply_out.weight"], p["reply_out.bias"]).reshape(n, -1),
             pooled @ p["reply_pass_out.weight"] + p["reply_pass_out.bias"]], 1)
    v = relu(conv_bn(p, stats, new, "value_conv", x, train))
    if "ownership_out.weight" in p:
        out["ownership"] = jnp.tanh(conv(v, p["ownership_out.weight"], p["ownership_out.bias"]).reshape(n, -1))
    v = relu(v.mean((2, 3)) @ p["value_fc.weight"] + p["value_fc.bias"])
    out["wdl"] = v @ p["wdl_out.weight"] + p["wdl_out.bias"]
    out["score"] = jnp.tanh(v @ p["score_out.weight"] + p["score_out.bias"])[:, 0]
    return out, new


def loss(p, stats, b, train=True):
    """The trainer's loss at its default weights (train/src/training/losses.rs)."""
    out, new = forward(p, stats, b["inputs"], train)
    w = WEIGHTS

    def weighted(rows, weight):
        return (rows * weight).sum() / jnp.maximum(weight.sum(), 1)

    logits = out["policy"] + (b["legal"] - 1) * 1e4
    total = w["policy"] * weighted(-(b["policy"] * jax.nn.log_softmax(logits, 1)).sum(1), b["policy_weight"])
    total += w["wdl"] * -(b["wdl"] * jax.nn.log_softmax(out["wdl"], 1)).sum(1).mean()
    total += w["score"] * ((out["score"] - b["score"]) ** 2).mean()
    if "ownership" in out:
        total += w["ownership"] * weighted(((out["ownership"] - b["ownership"].reshape(out["ownership"].shape)) ** 2).mean(1), b["ownership_weight"])
    if "reply" in out:
        total += w["reply"] * weighted(-(b["reply_policy"] * jax.nn.log_softmax(out["reply"], 1)).sum(1), b["reply_weight"])
    return total, new


def adam_step(lr, b1=0.9, b2=0.999, eps=1e-8):
    @jax.jit
    def step(p, stats, m, v, t, batch):
        (value, new), g = jax.value_and_grad(loss, has_aux=True)(p, stats, batch)
        m = jax.tree_util.tree_map(lambda m, g: b1 * m + (1 - b1) * g, m, g)
        v = jax.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, v, g)
        scale = lr * jnp.sqrt(1 - b2**t) / (1 - b1**t)
        p = jax.tree_util.tree_map(lambda p, m, v: p - scale * m / (jnp.sqrt(v) + eps), p, m, v)
        return p, new, m, v, value

    return step


def answers(p, stats, positions):
    out, _ = forward(p, stats, jnp.asarray(flipzero.encode(positions)))
    return np.asarray(out["policy"]), np.asarray(out["wdl"]), np.asarray(out["score"])


def split(t: dict) -> tuple[dict, dict]:
    """Trained parameters and BatchNorm's running statistics."""
    p = {k: jnp.asarray(v) for k, v in t.items() if not k.endswith(STATS)}
    return p, {k: jnp.asarray(v) for k, v in t.items() if k.endswith(STATS)}


def main(args) -> dict:
    data = roundtrip.Batches(args.shards, args.seed)
    game = data.game
    shape, _ = roundtrip.network_of(args, game)
    report = {"network": shape}
    probe = roundtrip.probe_positions(game)
    if args.init:
        init = flipzero.Model(args.init)
        p, stats = split(init.tensors("burn"))  # flipzero -> JAX
        report["init_gap"] = roundtrip.same_answers(init, probe, *answers(p, stats, probe), "--init in JAX")
    else:
        p, stats = split(roundtrip.fresh(shape, args.seed))
    held = {k: jnp.asarray(v) for k, v in data.fixed(256).items()}
    # The loss with the running statistics, as the net plays.
    eval_loss = jax.jit(lambda p, stats: loss(p, stats, held, train=False)[0])
    report["loss_before"] = float(eval_loss(p, stats))
    step = adam_step(args.lr)
    m = jax.tree_util.tree_map(jnp.zeros_like, p)
    v = jax.tree_util.tree_map(jnp.zeros_like, p)
    for t in range(1, args.steps + 1):
        batch = {k: jnp.asarray(a) for k, a in data.draw(args.batch, t).items()}
        p, stats, m, v, _ = step(p, stats, m, v, t, batch)
    report["loss_after"] = float(eval_loss(p, stats))
    # JAX -> flipzero.
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    weights_file = out / "jax.safetensors"
    save_file({k: np.asarray(a, np.float32) for k, a in {**p, **stats}.items()}, str(weights_file))
    model = flipzero.Model.import_weights(weights_file, game, out)
    report["import_gap"] = roundtrip.same_answers(model, probe, *answers(p, stats, probe), "the imported net")
    report.update(roundtrip.play(out, game, args.games))
    return report


if __name__ == "__main__":
    for k, v in main(roundtrip.arguments("JAX")).items():
        print(f"{k}: {v}")
