"""What the two round-trip examples share (roundtrip_torch.py, roundtrip_jax.py): their
arguments, the training batches from a run's shards, the losses' targets, the check that
two networks answer alike, and the games the trained network plays through flipzero.

Each example: takes a flipzero model's weights into the framework (``Model.tensors``) and
checks that the framework's forward pass answers as flipzero does; trains on a run's
shards (``flipzero.Shards``); saves the weights as safetensors under the project's names;
makes them a model folder (``Model.import_weights``, or ``flipzero import`` on the command
line), checks again, and plays it with flipzero, from Python and from the command line.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess

import numpy as np

import flipzero



def loss_weights() -> dict[str, float]:
    """The weights of the trainer's loss terms, `[train]`'s defaults."""
    train = flipzero.config()["train"]
    return {h: train[f"{'value' if h == 'wdl' else h}_loss_weight"] for h in ("policy", "wdl", "score", "ownership", "reply")}


def arguments(framework: str) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=f"Train a flipzero network in {framework} on a run's shards and play it with flipzero."
    )
    p.add_argument("--shards", required=True, help="a run directory, a folder of shards or a shard file")
    p.add_argument("--init", help="a model folder (or run) whose weights to start from; default: a fresh net")
    p.add_argument("--blocks", type=int, default=2, help="a fresh net's residual blocks")
    p.add_argument("--channels", type=int, default=16, help="a fresh net's channels")
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True, help="the model folder to write (must not hold a model)")
    p.add_argument("--games", type=int, default=2, help="game pairs of the closing match against ab1")
    return p.parse_args()


def network_of(args, game: flipzero.Game) -> tuple[dict, dict | None]:
    """The network's shape (model.json's `network`) and, with --init, its weights in
    PyTorch's names and layouts."""
    if args.init:
        model = flipzero.Model(args.init)
        if model.game != game:
            raise SystemExit(f"--init {args.init} plays {model.game.name}, the shards {game.name}")
        meta = json.loads((model.path / "model.json").read_text())
        return meta["network"], model.tensors("pytorch")
    planes = flipzero.encode([game.start()]).shape[1]
    policy_planes = (game.policy_size - 1) // (game.board_shape[0] * game.board_shape[1])
    return {
        "blocks": args.blocks,
        "channels": args.channels,
        "gpool_every": 3,
        "head_channels": 16,
        "value_hidden": 32,
        "in_planes": planes,
        "policy_planes": policy_planes,
        "aux_heads": [],
    }, None


def fresh(shape: dict, seed: int) -> dict[str, np.ndarray]:
    """A new network of `shape` (model.json's `network`, without auxiliary heads): its
    tensors under Burn's names, He-initialised weights, zero biases, BatchNorm at
    identity. `flipzero train --dry-run` lists the same names and shapes."""
    rng = np.random.default_rng(seed)
    c, h, v, planes = shape["channels"], shape["head_channels"], shape["value_hidden"], shape["policy_planes"]
    t = {}

    def he(name, dims, fan_in):
        t[name] = (rng.standard_normal(dims) * np.sqrt(2 / fan_in)).astype(np.float32)

    def conv_bn_(name, c_in, c_out, k):
        he(f"{name}.conv.weight", (c_out, c_in, k, k), c_in * k * k)
        for s, val in [("gamma", 1), ("beta", 0), ("running_mean", 0), ("running_var", 1)]:
            t[f"{name}.bn.{s}"] = np.full(c_out, val, np.float32)

    def biased(name, dims, fan_in):
        he(f"{name}.weight", dims, fan_in)
        t[f"{name}.bias"] = np.zeros(dims[0] if len(dims) == 4 else dims[1], np.float32)

    conv_bn_("stem", shape["in_planes"], c, 3)
    g = shape["gpool_every"]
    for i in range(shape["blocks"]):
        conv_bn_(f"blocks.{i}.a", c, c, 3)
        conv_bn_(f"blocks.{i}.b", c, c, 3)
        if g > 0 and i % g == g - 1:
            biased(f"blocks.{i}.gpool", (c, c, 1, 1), c)
    conv_bn_("policy_conv", c, h, 1)
    biased("policy_out", (planes, h, 1, 1), h)
    biased("pass_out", (h, 1), h)
    conv_bn_("value_conv", c, h, 1)
    biased("value_fc", (h, v), h)
    biased("wdl_out", (v, 3), v)
    biased("score_out", (v, 1), v)
    return t


class Batches:
    """Training batches drawn from a run's shards: the trainer's arrays
    (``Shards.arrays``: planes, policy target, legal moves, win/draw/loss, score,
    ownership), each row under a random board symmetry."""

    def __init__(self, path, seed: int):
        self.rows = flipzero.Shards(path)
        if len(self.rows) == 0:
            raise SystemExit(f"no positions in {path}")
        self.rng = np.random.default_rng(seed)
        self.seed = seed

    @property
    def game(self) -> flipzero.Game:
        return self.rows.game

    def draw(self, n: int, step: int) -> dict[str, np.ndarray]:
        idx = self.rng.integers(0, len(self.rows), size=n).tolist()
        return self.rows.arrays(idx, augment=True, seed=self.seed * 1_000_003 + step)

    def fixed(self, n: int) -> dict[str, np.ndarray]:
        """The same `n` rows every time (no symmetry): where the loss is measured."""
        return self.rows.arrays(list(range(min(n, len(self.rows)))))


def probe_positions(game: flipzero.Game) -> list[flipzero.Position]:
    """Positions on which two networks must answer alike: the start, a few plies of
    play, and some from the middle of a game."""
    out = [game.start()]
    p = game.start()
    rng = np.random.default_rng(7)
    for _ in range(40):
        moves = p.legal_moves()
        if p.is_over or not moves:
            break
        p = p.play(moves[rng.integers(len(moves))])
        out.append(p)
    return out[::5]


def same_answers(
    model: flipzero.Model, positions, policy: np.ndarray, wdl: np.ndarray, score: np.ndarray, what: str, tol=2e-4
) -> float:
    """Checks that the framework's outputs (policy logits, win/draw/loss logits, score)
    equal flipzero's on `positions`, up to float rounding; returns the largest gap."""
    want = model.predict(positions)
    wdl_p = np.exp(wdl - wdl.max(1, keepdims=True))
    wdl_p /= wdl_p.sum(1, keepdims=True)
    gaps = {
        "policy logits": np.abs(want["policy_logits"] - policy).max(),
        "win/draw/loss": np.abs(want["wdl"] - wdl_p).max(),
        "score": np.abs(want["score"] - score).max(),
    }
    for name, gap in gaps.items():
        if not gap <= tol:
            raise AssertionError(f"{what}: {name} differ by {gap:.2e} (tolerance {tol:.0e})")
    return float(max(gaps.values()))


def play(out: pathlib.Path, game: flipzero.Game, pairs: int) -> dict:
    """The imported network plays: a move from Python, and a match against ab1 through
    the command line (`flipzero match`): its summary and its games' results."""
    player = flipzero.Player(f"mcts:{out}:sims=32", game)
    first = player.choose(game.start())
    assert first in game.start().legal_moves()
    exe = os.environ.get("FLIPZERO_BIN", "flipzero")
    pgn = out.parent / f"{out.name}-vs-ab1.pgn"  # beside the model: a match never writes into a player's folder
    cmd = [exe, "match", "--game", game.name, "--a", f"mcts:{out}:sims=32", "--b", "ab1",
           "--games", str(2 * pairs), "--seed", "1", "--pgn", str(pgn), "--quiet"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {done.stderr.strip()}")
    results = [line.split('"')[1] for line in pgn.read_text().splitlines() if line.startswith("[Result ")]
    return {"first_move": first, "summary": done.stdout.strip(), "results": results}
