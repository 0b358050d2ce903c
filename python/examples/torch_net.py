"""The flipzero network as a PyTorch module, and the trainer's loss: the module mirrors
train/src/net/module.rs, and its submodules carry the names of the project's tensors, so
that `Model.tensors("pytorch")` loads into it (`load_state_dict`) and its `state_dict`,
saved with safetensors, is what `flipzero import` reads. Used by roundtrip_torch.py and
bench/torch_train_bench.py; needs only torch.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

class ConvBn(nn.Module):
    def __init__(self, c_in: int, c_out: int, k: int):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, k, padding=k // 2, bias=False)
        self.bn = nn.BatchNorm2d(c_out)

    def forward(self, x):
        return self.bn(self.conv(x))


class ResBlock(nn.Module):
    def __init__(self, c: int, gpool: bool):
        super().__init__()
        self.a = ConvBn(c, c, 3)
        self.b = ConvBn(c, c, 3)
        # The global-pooling bias: the board means through a 1x1 convolution.
        self.gpool = nn.Conv2d(c, c, 1) if gpool else None

    def forward(self, x):
        h = F.relu(self.a(x))
        if self.gpool is not None:
            h = h + self.gpool(h.mean((2, 3), keepdim=True))
        return F.relu(self.b(h) + x)


class Net(nn.Module):
    """The network of model.json's `network` settings."""

    def __init__(self, n: dict):
        super().__init__()
        c, h, v = n["channels"], n["head_channels"], n["value_hidden"]
        g = n["gpool_every"]
        self.stem = ConvBn(n["in_planes"], c, 3)
        self.blocks = nn.ModuleList(ResBlock(c, g > 0 and i % g == g - 1) for i in range(n["blocks"]))
        self.policy_conv = ConvBn(c, h, 1)
        self.policy_out = nn.Conv2d(h, n["policy_planes"], 1)
        self.pass_out = nn.Linear(h, 1)
        self.value_conv = ConvBn(c, h, 1)
        self.value_fc = nn.Linear(h, v)
        self.wdl_out = nn.Linear(v, 3)
        self.score_out = nn.Linear(v, 1)
        heads = n.get("aux_heads", [])
        self.ownership_out = nn.Conv2d(h, 1, 1) if "ownership" in heads else None
        if "reply" in heads:
            self.reply_out = nn.Conv2d(h, n["policy_planes"], 1)
            self.reply_pass_out = nn.Linear(h, 1)
        else:
            self.reply_out = self.reply_pass_out = None

    def forward(self, x):
        x = F.relu(self.stem(x))
        for b in self.blocks:
            x = b(x)
        p = F.relu(self.policy_conv(x))
        pooled = p.mean((2, 3))
        out = {"policy": torch.cat([self.policy_out(p).flatten(1), self.pass_out(pooled)], 1)}
        if self.reply_out is not None:
            out["reply"] = torch.cat([self.reply_out(p).flatten(1), self.reply_pass_out(pooled)], 1)
        v = F.relu(self.value_conv(x))
        if self.ownership_out is not None:
            out["ownership"] = torch.tanh(self.ownership_out(v).flatten(1))
        v = F.relu(self.value_fc(v.mean((2, 3))))
        out["wdl"] = self.wdl_out(v)
        out["score"] = torch.tanh(self.score_out(v)).squeeze(1)
        return out


def loss(net: Net, b: dict, w: dict) -> torch.Tensor:
    """The trainer's loss (train/src/training/losses.rs) with the terms' weights `w`
    (`policy`, `wdl`, `score`, `ownership`, `reply`) on a batch of tensors named as
    `flipzero.Shards.arrays` names its arrays."""
    t = b
    out = net(t["inputs"])

    def weighted(rows, weight):
        return (rows * weight).sum() / weight.sum().clamp(min=1)

    logits = out["policy"] + (t["legal"] - 1) * 1e4  # the legal moves' softmax
    total = w["policy"] * weighted(-(t["policy"] * F.log_softmax(logits, 1)).sum(1), t["policy_weight"])
    total = total + w["wdl"] * -(t["wdl"] * F.log_softmax(out["wdl"], 1)).sum(1).mean()
    total = total + w["score"] * ((out["score"] - t["score"]) ** 2).mean()
    if "ownership" in out:
        rows = ((out["ownership"] - t["ownership"].flatten(1)) ** 2).mean(1)
        total = total + w["ownership"] * weighted(rows, t["ownership_weight"])
    if "reply" in out:
        rows = -(t["reply_policy"] * F.log_softmax(out["reply"], 1)).sum(1)
        total = total + w["reply"] * weighted(rows, t["reply_weight"])
    return total
