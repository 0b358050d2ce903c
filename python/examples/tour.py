# %% [markdown]
# # A tour of flipzero from Python
#
# A run started and read, its learning curve plotted, a trained network's view of a
# position, a game against alpha-beta, and the run's self-play as a table. This file is
# a notebook in the "percent" format (VS Code, PyCharm, Spyder and Jupytext open it as
# cells); `tour.ipynb` beside it holds the same cells for Jupyter. Run it whole with
# `python python/examples/tour.py` (it needs `pip install ./python matplotlib pyarrow`).
#
# `FLIPZERO_TOUR_RUN` names a run directory to read instead of starting a small one;
# `FLIPZERO_TOUR_OUT` is where the plots go (default: a temporary folder).

# %%
import csv
import io
import os
import pathlib
import tempfile

import matplotlib

matplotlib.use("Agg")  # plots to files; in Jupyter, delete this line to see them inline
import matplotlib.pyplot as plt
import numpy as np

import flipzero

out = pathlib.Path(os.environ.get("FLIPZERO_TOUR_OUT") or tempfile.mkdtemp(prefix="flipzero-tour-"))
out.mkdir(parents=True, exist_ok=True)
# The strength run's best network, kept in the repository: found from the working
# folder up (the checkout's root, or python/examples where Jupyter starts).
NET = os.environ.get("FLIPZERO_TOUR_NET") or next(
    str(d / "docs/strength/gen-0131") for d in [pathlib.Path.cwd(), *pathlib.Path.cwd().parents]
    if (d / "docs/strength/gen-0131/model.json").is_file()
)
print(flipzero.__version__, flipzero.games()[:4], "...")

# %% [markdown]
# ## A run
# `flipzero.run` is `flipzero run`: the same settings (`configs/*.toml`, `set=` for single
# keys), the same run directory, resumable. This one is tiny: three generations of a few
# self-play games, a few hundred training steps; `progress` receives what the command
# line prints.

# %%
run_dir = pathlib.Path(os.environ.get("FLIPZERO_TOUR_RUN") or out / "run")
if not os.environ.get("FLIPZERO_TOUR_RUN"):
    settings = [
        "run.generations=3", "selfplay.games=8", "selfplay.threads=1", "selfplay.games_per_thread=8",
        "selfplay.simulations=16", "selfplay.fast_simulations=8", "train.steps=60", "train.batch_size=32",
        "train.blocks=1", "run.export=false", "gate.max_pairs=2", "gate.batch_pairs=2",
        "gate.simulations=8", "anchor.pairs=2", 'anchor.ladder=["random", "ab1"]',
    ]
    lines = []
    summary = flipzero.run(run_dir, set=settings, progress=lambda kind, d: lines.append(d) if kind == "line" else None)
    print("\n".join(map(str, lines[-3:])))
run = flipzero.Run(run_dir)
print("best:", run.best, "| generations:", len(run.generations()))
print("self-play settings:", {k: run.config()["selfplay"][k] for k in ("games", "simulations")})

# %% [markdown]
# ## Its learning curve
# `metrics.csv` holds a line a generation: the training loss and the anchors' scores.

# %%
rows = list(csv.DictReader(io.StringIO(run.metrics_csv())))
gen = [int(r["generation"]) for r in rows]
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.2))
for key in ("loss", "policy_loss", "value_loss"):
    ax1.plot(gen, [float(r[key] or "nan") for r in rows], marker="o", label=key)
ax1.set_xlabel("generation")
ax1.legend()
for key in [k for k in rows[0] if k.startswith("elo_vs_")]:
    ax2.plot(gen, [float(r[key] or "nan") for r in rows], marker="o", label=key[4:])
ax2.set_xlabel("generation")
ax2.set_ylabel("Elo")
ax2.legend()
fig.tight_layout()
fig.savefig(out / "curve.png")
print("wrote", out / "curve.png")

# %% [markdown]
# ## What a trained network sees
# The strength run's best network (six blocks of 32 channels, two hours of training):
# its policy over the legal moves of a position, drawn on the board, and its value.

# %%
model = flipzero.Model(NET)
game = model.game
position = game.position("x5o/7/2x4/7/4o2/7/o5x x 0 3")
ranked = model.policy(position)
print(position.text, "| to move:", position.side_to_move)
for move, index, p in ranked[:5]:
    print(f"  {move:6} {p:.3f}")
value = float(model.predict([position])["value"][0])
print("value (win - loss) for the side to move:", round(value, 3))
# The probability each target cell gets (clones and jumps to it together).
h, w = game.board_shape
heat = np.zeros((h, w))
for move, index, p in ranked:
    target = move[-2:]
    heat[int(target[1:]) - 1, ord(target[0]) - ord("a")] += p
fig, ax = plt.subplots(figsize=(3.5, 3.5))
ax.imshow(heat, origin="lower", cmap="viridis")
ax.set_xticks(range(w), [chr(ord("a") + i) for i in range(w)])
ax.set_yticks(range(h), [str(i + 1) for i in range(h)])
ax.set_title("policy by target cell")
fig.savefig(out / "policy.png")
print("wrote", out / "policy.png")

# %% [markdown]
# ## A game
# Players are named as on the command line: `mcts:DIR:sims=N`, `ab3`, `random`, … Here
# the network's search (64 simulations a move) plays alpha-beta at depth 2.

# %%
players = {"x": flipzero.Player(f"mcts:{model.path}:sims=64", game, seed=1), "o": flipzero.Player("ab2", game)}
p, moves = game.start(), []
while not p.is_over:
    move = players[p.side_to_move].choose(p)
    moves.append(move)
    p = p.play(move)
print(" ".join(moves))
print("result:", p.result())

# %% [markdown]
# ## The run's self-play as a table
# Every position the run played, with its search's visits and the game's result
# (`flipzero.data.frame` gives a polars LazyFrame instead).

# %%
from flipzero import data  # noqa: E402

table = data.dataset(run_dir).to_table(columns=["game_id", "ply", "fen", "root_q", "result"])
print(table.num_rows, "positions")
for row in table.slice(0, 5).to_pylist():
    print(row)
