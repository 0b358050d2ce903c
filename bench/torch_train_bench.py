"""PyTorch CPU training speed for the same networks as `flipzero bench net` (samples/s),
for the side-by-side figure in docs/benchmarks.md.

The network mirrors train/src/model.rs (residual tower with a global-pooling bias every
third block, convolutional policy head plus a pass logit, win/draw/loss and score heads),
and the step mirrors train/src/training.rs (masked policy cross-entropy, WDL
cross-entropy, score MSE, AdamW). Inputs are random Ataxx-shaped tensors made before
timing, so data preparation is not counted (nor is it in `flipzero bench net`, which
makes its batches before timing too).

Usage: python3 bench/torch_train_bench.py [THREADS]   (needs `pip install torch`)
"""
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

PLANES, H, W, SLOTS = 7, 7, 7, 17  # Ataxx: 1 clone plane + 16 jump offsets
POLICY = SLOTS * H * W + 1


def conv_bn(i, o, k):
    return nn.Sequential(nn.Conv2d(i, o, k, padding=k // 2, bias=False), nn.BatchNorm2d(o))


class Block(nn.Module):
    def __init__(self, c, gpool):
        super().__init__()
        self.a, self.b = conv_bn(c, c, 3), conv_bn(c, c, 3)
        self.gpool = nn.Conv2d(c, c, 1) if gpool else None

    def forward(self, x):
        h = F.relu(self.a(x))
        if self.gpool is not None:
            h = h + self.gpool(h.mean(dim=(2, 3), keepdim=True))
        return F.relu(self.b(h) + x)


class Net(nn.Module):
    def __init__(self, blocks, c, head=32, hidden=64):
        super().__init__()
        self.stem = conv_bn(PLANES, c, 3)
        self.blocks = nn.ModuleList(Block(c, i % 3 == 2) for i in range(blocks))
        self.policy_conv = conv_bn(c, head, 1)
        self.policy_out = nn.Conv2d(head, SLOTS, 1)
        self.pass_out = nn.Linear(head, 1)
        self.value_conv = conv_bn(c, head, 1)
        self.value_fc = nn.Linear(head, hidden)
        self.wdl_out = nn.Linear(hidden, 3)
        self.score_out = nn.Linear(hidden, 1)

    def forward(self, x):
        x = F.relu(self.stem(x))
        for b in self.blocks:
            x = b(x)
        p = F.relu(self.policy_conv(x))
        policy = torch.cat([self.policy_out(p).flatten(1), self.pass_out(p.mean(dim=(2, 3)))], 1)
        v = F.relu(self.value_fc(F.relu(self.value_conv(x)).mean(dim=(2, 3))))
        return policy, self.wdl_out(v), torch.tanh(self.score_out(v))


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
    score = torch.rand(batch, 1) * 2 - 1
    for name, blocks, c in (("tiny", 4, 32), ("small", 6, 64)):
        net = Net(blocks, c)
        opt = torch.optim.AdamW(net.parameters(), lr=1e-3, weight_decay=1e-4)

        def step():
            policy, w, s = net(x)
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
