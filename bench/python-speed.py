"""The Python package's speed against the CLI on the same work (issue #31's targets):
perft through Python and `flipzero perft` (one thread), batch encoding of 100,000
positions, and a network's predict at batch 256 through Python against the same call's
time inside Rust (`flipzero bench net`, on the same nets made model folders by
`Model.import_weights`).

    .venv/bin/python bench/python-speed.py [target/release/flipzero]
"""

import pathlib
import random
import shutil
import subprocess
import sys
import tempfile
import time

import flipzero

binary = sys.argv[1] if len(sys.argv) > 1 else "target/release/flipzero"
g = flipzero.Game("ataxx")
s = g.start()

for depth in (6, 7):
    t = time.perf_counter()
    n = s.perft(depth)
    py = time.perf_counter() - t
    out = subprocess.run([binary, "perft", "--depth", str(depth)], capture_output=True, text=True, check=True).stdout
    assert f"nodes {n}" in out, out
    cli = float(out.split("time ")[1].split(" s")[0])
    print(f"perft {depth}: {n} nodes; Python {py:.3f} s, CLI {cli:.3f} s (its own timing), Python/CLI {py / cli:.2f}")

rng = random.Random(1)
positions = []
p = s
while len(positions) < 100_000:
    if p.is_over:
        p = s
    positions.append(p)
    p = p.play(rng.choice(p.legal_moves()))
t = time.perf_counter()
planes = flipzero.encode(positions)
print(f"encode 100,000 positions: {time.perf_counter() - t:.3f} s, {planes.nbytes / 1e6:.0f} MB float32 {planes.shape}")

model = flipzero.Model("docs/strength/gen-0131")
batch = positions[:256]
model.predict(batch)
t = time.perf_counter()
for _ in range(5):
    model.predict(batch)
print(f"predict, batch 256, the 2-hour CNN: {5 * 256 / (time.perf_counter() - t):.0f} positions/s")

# The same nets as `flipzero bench net` (the tiny and small presets, untrained weights:
# speed does not depend on them), made model folders by import, against that command's
# own inference figure at batch 256 (the same `train::predict`, called from Rust).
sys.path.insert(0, "python/examples")
import roundtrip  # noqa: E402
from safetensors.numpy import save_file  # noqa: E402

out = subprocess.run([binary, "bench", "net"], capture_output=True, text=True, check=True).stdout
work = pathlib.Path(tempfile.mkdtemp(prefix="python-speed-"))
for name, blocks, channels in (("tiny", 4, 32), ("small", 6, 64)):
    shape = {"blocks": blocks, "channels": channels, "gpool_every": 3, "head_channels": 32, "value_hidden": 64,
             "in_planes": planes.shape[1], "policy_planes": 17, "aux_heads": []}
    save_file(roundtrip.fresh(shape, 1), str(work / f"{name}.safetensors"))
    net = flipzero.Model.import_weights(work / f"{name}.safetensors", g, work / name)
    rates = []
    for rep in range(5):
        t = time.perf_counter()
        for r in range(8):
            net.predict(positions[(rep * 8 + r) * 256:(rep * 8 + r + 1) * 256])
        rates.append(8 * 256 / (time.perf_counter() - t))
    line = next(x for x in out.splitlines() if x.startswith(f"{name:<6} net: inference"))
    cli = float(line.split("batch 256: ")[1].split()[0])
    best = max(rates)
    print(f"predict, batch 256, {name} {blocks}x{channels}: Python {best:.0f} positions/s (best of 5), "
          f"flipzero bench net {cli:.0f}, Python/CLI {best / cli:.2f}")
shutil.rmtree(work)
