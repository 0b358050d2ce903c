import numpy as np
import pytest

import flipzero
from flipzero import data


def test_rows_become_the_trainers_arrays(shards_dir):
    rows = flipzero.Shards(shards_dir)
    n = len(rows)
    assert n > 100 and rows.game == flipzero.Game("ataxx") and rows.skipped == []
    a = rows.arrays()
    g = rows.game
    assert a["inputs"].shape == (n,) + flipzero.encode([g.start()]).shape[1:]
    assert a["policy"].shape == a["legal"].shape == (n, g.policy_size)
    for i in [0, 1, n // 2, n - 1]:
        r = rows.row(i)
        pos = g.position(r["position"])
        assert np.array_equal(a["inputs"][i], flipzero.encode([pos])[0])
        assert sorted(np.flatnonzero(a["legal"][i])) == sorted(pos.legal_indices())
        assert a["legal"][i][r["played"]] == 1
        if r["full_search"]:
            assert a["policy_weight"][i] == 1 and abs(a["policy"][i].sum() - 1) < 1e-5
        assert a["wdl"][i].tolist() == {1.0: [1, 0, 0], 0.0: [0, 1, 0], -1.0: [0, 0, 1]}[r["result"]]


def test_augmentation_is_a_board_symmetry_drawn_from_the_seed(shards_dir):
    rows = flipzero.Shards(shards_dir)
    idx = list(range(0, len(rows), 7))
    plain = rows.arrays(idx)
    one, two = rows.arrays(idx, augment=True, seed=5), rows.arrays(idx, augment=True, seed=5)
    assert all(np.array_equal(one[k], two[k]) for k in one)
    assert not np.array_equal(one["inputs"], plain["inputs"])
    g = rows.game
    for slot, i in enumerate(idx[:10]):
        pos = g.position(rows.row(i)["position"])
        images = [flipzero.encode([pos.transform(s)])[0] for s in g.symmetries()]
        assert any(np.array_equal(one["inputs"][slot], im) for im in images)
        assert np.isclose(one["policy"][slot].sum(), plain["policy"][slot].sum())


def test_a_runs_shards_as_a_pyarrow_dataset(shards_dir):
    pytest.importorskip("pyarrow")  # listed in python/requirements-test.txt
    table = data.dataset(shards_dir).to_table()
    assert table.num_rows == len(flipzero.Shards(shards_dir))
    assert {"game_id", "ply", "fen", "policy", "result"} <= set(table.column_names)


def test_unreadable_shards_are_listed_and_no_rows_is_refused(shards_dir, tmp_path):
    bad = tmp_path / "shards"
    bad.mkdir()
    for f in flipzero.shard_files(shards_dir):
        (bad / f.name).write_bytes(f.read_bytes())
    (bad / "zz-corrupt.parquet").write_bytes(b"not parquet")
    rows = flipzero.Shards(bad)
    assert len(rows) == len(flipzero.Shards(shards_dir))
    assert len(rows.skipped) == 1 and "zz-corrupt.parquet" in rows.skipped[0]
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match="no rows in"):
        flipzero.Shards(empty)
    with pytest.raises(ValueError, match="row 999999"):
        rows.arrays([999999])
