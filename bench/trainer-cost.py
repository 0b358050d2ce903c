#!/usr/bin/env python3
"""The trainer's cost per candidate as a run's data grows (docs/benchmarks.md, issue #18).

Reads a run directory's candidates (models/gen-NNNN/train.json: steps, the rows of its
training window, wall-clock seconds; candidate.json where the separate trainer wrote one)
and the positions the run had produced by then (candidate.json's rows_seen, or the sum
of metrics.csv's positions up to that generation for the synchronous loop), and prints
one line per candidate. With a fixed step count, a cost that stays flat while the run's
positions grow is what the windowed read promises; it may grow with the window only.

    python3 bench/trainer-cost.py RUN_DIR [EVERY]     (every EVERY-th candidate; default 1)

Standard library only.
"""
import csv
import json
import os
import sys


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    run = sys.argv[1]
    every = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    produced = {}
    metrics = os.path.join(run, "metrics.csv")
    if os.path.exists(metrics):
        total = 0
        with open(metrics, newline="") as f:
            for row in csv.DictReader(f):
                if row.get("positions"):
                    total += int(row["positions"])
                produced[int(row["generation"])] = total
    models = os.path.join(run, "models")
    gens = sorted(
        int(d[4:]) for d in os.listdir(models) if d.startswith("gen-") and d[4:].isdigit()
    )
    print(f"{'gen':>4} {'produced':>10} {'window':>9} {'steps':>6} {'seconds':>8} {'samples/s':>10}")
    for g in gens[::every]:
        d = os.path.join(models, f"gen-{g:04d}")
        try:
            with open(os.path.join(d, "train.json")) as f:
                t = json.load(f)
        except FileNotFoundError:
            continue
        seen = produced.get(g)
        cand = os.path.join(d, "candidate.json")
        if os.path.exists(cand):
            with open(cand) as f:
                seen = json.load(f)["rows_seen"]
        batch = 0
        cfg = os.path.join(run, "config.toml")
        if os.path.exists(cfg):
            in_train = False
            for line in open(cfg):
                line = line.strip()
                if line.startswith("["):
                    in_train = line == "[train]"
                elif in_train and line.startswith("batch_size"):
                    batch = int(line.split("=")[1])
        rate = t["steps"] * batch / t["seconds"] if batch else float("nan")
        print(
            f"{g:>4} {seen if seen is not None else '-':>10} {t['window_rows']:>9} "
            f"{t['steps']:>6} {t['seconds']:>8.1f} {rate:>10.0f}"
        )


if __name__ == "__main__":
    main()
