"""The Python package's speed against the CLI on the same work (issue #31's targets):
perft through Python and `flipzero perft` (one thread), batch encoding of 100,000
positions, and a network's predict at batch 256 through Python against the same call's
time inside Rust (`flipzero bench net` measures Burn's inference on its own nets).

    .venv/bin/python bench/python-speed.py [target/release/flipzero]
"""

import random
import subprocess
import sys
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
