"""A flipzero network trained in PyTorch, and back: the weights go both ways.

    python python/examples/roundtrip_torch.py --shards RUN --init docs/strength/gen-0131 --out /tmp/torch-net

1. ``flipzero.Model(--init).tensors("pytorch")`` loads into the PyTorch module below
   (``load_state_dict``), whose forward pass then answers as ``Model.predict`` does;
2. the module trains on the run's shards (``flipzero.Shards``, with board symmetries) on
   the trainer's loss: policy cross-entropy over the legal moves, win/draw/loss
   cross-entropy, score and ownership squared error, reply cross-entropy, at the weights
   of ``[train]``'s defaults;
3. ``safetensors.torch.save_file(module.state_dict())`` writes the weights under the
   project's PyTorch names, ``flipzero.Model.import_weights`` (``flipzero import`` on the
   command line) makes them a model folder, which answers as the module does and plays.

Needs ``pip install torch safetensors`` beside flipzero. The module (torch_net.py) mirrors
train/src/net/module.rs: its submodules carry the names of the project's tensors.
"""

from __future__ import annotations

import pathlib
import sys

import numpy as np
import torch
from safetensors.torch import save_file

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import roundtrip  # noqa: E402
import torch_net  # noqa: E402
from torch_net import Net  # noqa: E402

import flipzero  # noqa: E402


def loss(net: Net, b: dict) -> torch.Tensor:
    return torch_net.loss(net, {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in b.items()}, WEIGHTS)


WEIGHTS = roundtrip.loss_weights()


def answers(net: Net, positions) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    net.eval()
    with torch.no_grad():
        out = net(torch.from_numpy(flipzero.encode(positions)))
    return out["policy"].numpy(), out["wdl"].numpy(), out["score"].numpy()


def main(args) -> dict:
    torch.manual_seed(args.seed)
    data = roundtrip.Batches(args.shards, args.seed)
    game = data.game
    shape, weights = roundtrip.network_of(args, game)
    net = Net(shape)
    probe = roundtrip.probe_positions(game)
    report = {"network": shape}
    if weights is not None:
        # flipzero -> PyTorch: the state_dict, but for BatchNorm's update counters.
        missing, unexpected = net.load_state_dict({k: torch.from_numpy(v) for k, v in weights.items()}, strict=False)
        assert not unexpected and all(k.endswith("num_batches_tracked") for k in missing), (missing, unexpected)
        report["init_gap"] = roundtrip.same_answers(flipzero.Model(args.init), probe, *answers(net, probe), "--init in PyTorch")
    held = data.fixed(256)
    net.eval()
    with torch.no_grad():
        report["loss_before"] = float(loss(net, held))
    opt = torch.optim.Adam(net.parameters(), lr=args.lr)
    net.train()
    for step in range(args.steps):
        opt.zero_grad()
        loss(net, data.draw(args.batch, step)).backward()
        opt.step()
    net.eval()
    with torch.no_grad():
        report["loss_after"] = float(loss(net, held))
    # PyTorch -> flipzero.
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    weights_file = out / "torch.safetensors"
    save_file({k: v.contiguous() for k, v in net.state_dict().items()}, str(weights_file))
    model = flipzero.Model.import_weights(weights_file, game, out)
    report["import_gap"] = roundtrip.same_answers(model, probe, *answers(net, probe), "the imported net")
    report.update(roundtrip.play(out, game, args.games))
    return report


if __name__ == "__main__":
    for k, v in main(roundtrip.arguments("PyTorch")).items():
        print(f"{k}: {v}")
