"""A run's self-play shards as tables: ``dataset(run)`` is a ``pyarrow.dataset.Dataset``
(``pip install pyarrow``), ``frame(run)`` a lazy ``polars.LazyFrame``
(``pip install polars``), over the files of ``flipzero.shard_files(run)``: a shard file,
a folder of shards, or a run directory (every generation's self-play). The columns are
those of docs/export.md ("Self-play shards"). For the trainer's arrays of the rows
(planes, policy and value targets, symmetries), use ``flipzero.Shards``.
"""

from __future__ import annotations

import os

from ._flipzero import shard_files


def dataset(path: str | os.PathLike):
    """The shards of ``path`` as a pyarrow dataset."""
    import pyarrow.dataset as ds

    return ds.dataset([str(f) for f in shard_files(path)], format="parquet")


def frame(path: str | os.PathLike):
    """The shards of ``path`` as a polars LazyFrame."""
    import polars as pl

    return pl.scan_parquet([str(f) for f in shard_files(path)])
