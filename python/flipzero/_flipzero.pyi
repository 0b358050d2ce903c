"""Type stubs of the native module (python/src/)."""

from collections.abc import Callable, Sequence
from os import PathLike
from pathlib import Path
from typing import Any, Optional, TypedDict

import numpy as np
import numpy.typing as npt

__version__: str

def games() -> list[str]:
    """The name of every game (``ataxx``, ``othello``, ``hexxagon``, ``annexation64/misere``, ...)."""

class Result(TypedDict):
    winner: Optional[str]
    result: str
    counts: tuple[int, int]
    score: int
    reason: str

class Game:
    """A game: its board, its start and its positions."""

    def __init__(self, name: str) -> None: ...
    @property
    def name(self) -> str: ...
    @property
    def policy_size(self) -> int:
        """Entries of the policy vector (every move of the game has one index)."""
    @property
    def board_shape(self) -> tuple[int, int]:
        """(height, width): the encoding's spatial shape."""
    @property
    def misere(self) -> bool: ...
    def start(self) -> Position: ...
    def position(self, text: str) -> Position:
        """The position of this text; a malformed one is a ValueError that says why."""
    def symmetries(self) -> list[list[int]]:
        """The board's symmetries (identity first): each cell index's image."""

class Position:
    """A position of a game. Positions are values: ``play`` returns a new one."""

    @property
    def game(self) -> Game: ...
    @property
    def text(self) -> str: ...
    @property
    def side_to_move(self) -> str:
        """``x`` or ``o``."""
    @property
    def counts(self) -> tuple[int, int]: ...
    @property
    def zobrist(self) -> int: ...
    @property
    def is_over(self) -> bool: ...
    def legal_moves(self) -> list[str]: ...
    def legal_indices(self) -> list[int]:
        """The legal moves' policy indices, in the order of ``legal_moves()``."""
    def move_index(self, move: str) -> int: ...
    def index_move(self, index: int) -> Optional[str]: ...
    def play(self, move: str) -> Position: ...
    def result(self) -> Optional[Result]: ...
    def perft(self, depth: int) -> int: ...
    def transform(self, symmetry: Sequence[int]) -> Position: ...

def encode(positions: Sequence[Position]) -> npt.NDArray[np.float32]:
    """The network's input planes, float32 [N, planes, height, width]."""

class Prediction(TypedDict):
    policy_logits: npt.NDArray[np.float32]
    wdl: npt.NDArray[np.float32]
    value: npt.NDArray[np.float32]
    score: npt.NDArray[np.float32]

class Model:
    """A trained network: a model folder, or a run directory's best."""

    def __init__(self, path: str | PathLike[str]) -> None: ...
    @staticmethod
    def import_weights(
        weights: str | PathLike[str], game: Game | str, out: str | PathLike[str]
    ) -> Model:
        """Makes weights trained elsewhere (safetensors, Burn's or PyTorch's names) a model folder `out` and loads it."""
    @property
    def game(self) -> Game: ...
    @property
    def path(self) -> Path: ...
    def predict(self, positions: Sequence[Position]) -> Prediction:
        """The same numbers as ``flipzero infer``."""
    def tensors(self, naming: str = "pytorch") -> dict[str, npt.NDArray[np.float32]]:
        """The weights by name: PyTorch's names and layouts, or ``naming="burn"``."""
    def policy(self, position: Position) -> list[tuple[str, int, float]]:
        """(move, policy index, probability) over the legal moves, most likely first."""

Evaluator = Callable[[list[Position]], tuple[Any, Any]]

class Player:
    """A player the command line names (``random``, ``ab3``, ``mcts:DIR:sims=400``, ...)."""

    def __init__(self, spec: str, game: Game | str, seed: int = 0) -> None: ...
    @staticmethod
    def mcts(
        evaluator: Evaluator, game: Game | str, sims: int = 400, seed: int = 0, batch: int = 8
    ) -> Player:
        """The project's tree search over a Python evaluator returning (policy logits [N, policy_size], values [N])."""
    @property
    def game(self) -> Game: ...
    def new_game(self) -> None: ...
    def choose(self, position: Position) -> str: ...

def shard_files(path: str | PathLike[str]) -> list[Path]:
    """The Parquet shards of a shard file, a folder of shards or a run directory, oldest first."""

class Shards:
    """Training rows read from shards (the newest ``max_rows``)."""

    def __init__(self, *paths: str | PathLike[str], max_rows: int = 1_000_000) -> None: ...
    def __len__(self) -> int: ...
    @property
    def game(self) -> Game: ...
    @property
    def skipped(self) -> list[str]: ...
    def arrays(
        self, indices: Optional[Sequence[int]] = None, augment: bool = False, seed: int = 0
    ) -> dict[str, npt.NDArray[np.float32]]:
        """The trainer's arrays: inputs, policy, legal, policy_weight, wdl, score, ownership, ownership_weight, reply_policy, reply_weight."""
    def row(self, i: int) -> dict[str, Any]: ...

class Run:
    """A run directory, read."""

    def __init__(self, path: str | PathLike[str]) -> None: ...
    @property
    def path(self) -> Path: ...
    @property
    def best(self) -> Optional[str]: ...
    def config(self) -> dict[str, Any]: ...
    def generations(self) -> list[dict[str, Any]]: ...
    def metrics_csv(self) -> str: ...
    def ratings(self, anchor: Optional[str] = None) -> list[dict[str, Any]]: ...

def config(path: Optional[str | PathLike[str]] = None, set: Sequence[str] = ()) -> dict[str, Any]:
    """A run's settings as ``flipzero run`` reads them (default: the built-in defaults), with ``set`` applied."""

def run(
    path: str | PathLike[str],
    config: Optional[str | PathLike[str]] = None,
    set: Sequence[str] = (),
    force: bool = False,
    progress: Optional[Callable[[str, Any], None]] = None,
) -> dict[str, Any]:
    """Starts or resumes a run as ``flipzero run`` does; returns table, best, report."""

def play_match(
    a: str, b: str, game: Game | str, pairs: int = 10, seed: int = 0, threads: int = 1,
    clock: Optional[str] = None,
) -> dict[str, Any]:
    """A paired match: A's wdl, pentanomial, score, elo, ci95, and the games as pgn."""
