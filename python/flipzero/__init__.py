"""flipzero from Python: the games of the Ataxx family and the outflanking games, the
network's input encoding, trained networks and players, on the project's native core.

    >>> import flipzero
    >>> g = flipzero.Game("ataxx")
    >>> p = g.start().play("f2")
    >>> p.legal_moves()[:3], p.side_to_move
    (['b1', 'a2', 'b2'], 'o')

Refusals (an unknown game, a malformed position, an illegal move, a model of another
game) are ``ValueError`` with the command line's message. ``flipzero.data`` reads a run's shards with pyarrow or polars; ``flipzero.env`` holds the
PettingZoo and Gymnasium environments (``pip install pettingzoo gymnasium``).
"""

from ._flipzero import (
    Game,
    Model,
    Player,
    Position,
    Run,
    Shards,
    __version__,
    config,
    encode,
    games,
    play_match,
    run,
    shard_files,
)

__all__ = [
    "Game",
    "Model",
    "Player",
    "Position",
    "Run",
    "Shards",
    "config",
    "encode",
    "games",
    "play_match",
    "run",
    "shard_files",
    "__version__",
]
