"""PyTorch CPU training speed for the same networks as `flipzero bench net` (samples/s),
for the side-by-side figure in docs/benchmarks.md.

The network is python/examples/torch_net.py's, which mirrors train/src/net/module.rs
(residual tower with a global-pooling bias every third block, convolutional policy head
plus a pass logit, win/draw/loss and score heads), and the step mirrors the trainer (masked policy cross-entropy, WDL
cross-entropy, score MSE, AdamW). Inputs are random Ataxx-shaped tensors made before
timing, so data preparation is not counted (nor is it in `flipzero bench net`, which
makes its batches before timing too).

Usage: python3 bench/torch_train_bench.py [THREADS] [--device cuda] [--batch 256,1024]
       [--nets tiny,small,standard]   (needs `pip install torch`; on a GPU, eager mode,
       50 timed steps after 5 of warm-up, no host read per step: bench/gpu.sh)
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
    # [THREADS] [--device cpu|cuda] [--batch N ...] [--nets tiny,small,standard]
    args = sys.argv[1:]
    threads, device, batches, nets = 2, "cpu", [256], "tiny,small"
    while args:
        a = args.pop(0)
        if a == "--device":
            device = args.pop(0)
        elif a == "--batch":
            batches = [int(b) for b in args.pop(0).split(",")]
        elif a == "--nets":
            nets = args.pop(0)
        else:
            threads = int(a)
    torch.set_num_threads(threads)
    sizes = {"tiny": (4, 32), "small": (6, 64), "standard": (10, 128)}
    for name in nets.split(","):
        blocks, c = sizes[name]
        for batch in batches:
            torch.manual_seed(1)
            x = (torch.rand(batch, PLANES, H, W) < 0.3).float()
            legal = (torch.rand(batch, POLICY) < 0.1).float()
            legal[:, 0] = 1.0
            target = legal * torch.rand(batch, POLICY)
            target = target / target.sum(1, keepdim=True)
            wdl = F.one_hot(torch.randint(0, 3, (batch,)), 3).float()
            score = torch.rand(batch) * 2 - 1
            x, legal, target, wdl, score = (t.to(device) for t in (x, legal, target, wdl, score))
            model = net(blocks, c).to(device)
            opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)

            def step():
                out = model(x)
                policy, w, s = out["policy"], out["wdl"], out["score"]
                logp = F.log_softmax(policy + (legal - 1.0) * 1e4, 1)
                loss = -(target * logp).sum(1).mean()
                loss = loss - (wdl * F.log_softmax(w, 1)).sum(1).mean() + ((s - score) ** 2).mean()
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()

            def sync():
                if device.startswith("cuda"):
                    torch.cuda.synchronize()

            for _ in range(5 if device != "cpu" else 3):
                step()
            sync()
            steps = 50 if device != "cpu" else 10
            t = time.perf_counter()
            for _ in range(steps):
                step()
            sync()
            rate = steps * batch / (time.perf_counter() - t)
            where = device if device != "cpu" else f"{threads} thread(s)"
            print(f"torch {torch.__version__}, {where}, {name} {blocks}x{c}: "
                  f"training {rate:.0f} samples/s at batch {batch}", flush=True)


if __name__ == "__main__":
    main()
