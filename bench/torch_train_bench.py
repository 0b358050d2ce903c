"""PyTorch CPU training speed for the same networks as `flipzero bench net` (samples/s),
for the side-by-side figure in docs/benchmarks.md.

The network is python/examples/torch_net.py's, which mirrors train/src/net/module.rs
(residual tower with a global-pooling bias every third block, convolutional policy head
plus a pass logit, win/draw/loss and score heads), and the step mirrors the trainer (masked policy cross-entropy, WDL
cross-entropy, score MSE, AdamW). Inputs are random Ataxx-shaped tensors made before
timing, so data preparation is not counted (nor is it in `flipzero bench net`, which
makes its batches before timing too).

Usage: python3 bench/torch_train_bench.py [THREADS]   (needs `pip install torch`)
"""
import pathlib
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "python/examples"))
from torch_net import Net  # noqa: E402

PLANES, H, W, SLOTS = 7, 7, 7, 17  # Ataxx: 1 clone plane + 16 jump offsets
POLICY = SLOTS * H * W + 1


def net(blocks, c):
    """The preset's network (`tiny`, `small`: global pooling every third block, 32 head
    channels, 64 value units), as python/examples/torch_net.py defines it."""
    return Net({"blocks": blocks, "channels": c, "gpool_every": 3, "head_channels": 32, "value_hidden": 64,
                "in_planes": PLANES, "policy_planes": SLOTS, "aux_heads": []})


def main():
    threads = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    batch = 256
    x = (torch.rand(batch, PLANES, H, W) < 0.3).float()
    legal = (torch.rand(batch, POLICY) < 0.1).float()
    legal[:, 0] = 1.0
    target = legal * torch.rand(batch, POLICY)
    target = target / target.sum(1, keepdim=True)
    wdl = F.one_hot(torch.randint(0, 3, (batch,)), 3).float()
    score = torch.rand(batch) * 2 - 1
    for name, blocks, c in (("tiny", 4, 32), ("small", 6, 64)):
        model = net(blocks, c)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)

        def step():
            out = model(x)
            policy, w, s = out["policy"], out["wdl"], out["score"]
            logp = F.log_softmax(policy + (legal - 1.0) * 1e4, 1)
            loss = -(target * logp).sum(1).mean()
            loss = loss - (wdl * F.log_softmax(w, 1)).sum(1).mean() + ((s - score) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()

        for _ in range(3):
            step()
        steps = 10
        t = time.perf_counter()
        for _ in range(steps):
            step()
        rate = steps * batch / (time.perf_counter() - t)
        print(f"torch {torch.__version__}, {threads} thread(s), {name} {blocks}x{c}: "
              f"training {rate:.0f} samples/s at batch {batch}")


if __name__ == "__main__":
    main()
