import json

import numpy as np
import pytest

import flipzero

from conftest import CNN


def test_encoding_is_the_clis_bit_for_bit(cli, tmp_path):
    s = flipzero.Game("ataxx").start().play("f2").play("b2")
    planes = flipzero.encode([s, s.play("g2")])
    assert planes.dtype == np.float32 and planes.shape[0] == 2 and planes.shape[2:] == (7, 7)
    npy = tmp_path / "input.npy"
    cli("infer", "--model", str(CNN), "--position", s.text, "--dump-input", str(npy))
    assert np.array_equal(np.load(npy)[0], planes[0])
    with pytest.raises(ValueError, match="a position of othello among positions of ataxx"):
        flipzero.encode([s, flipzero.Game("othello").start()])
    with pytest.raises(ValueError, match="no positions"):
        flipzero.encode([])


def test_predict_is_flipzero_infer_bit_for_bit(cli):
    model = flipzero.Model(CNN)
    assert model.game == flipzero.Game("ataxx")
    g = model.game
    positions = [g.start(), g.start().play("f2"), g.position("x5o/7/7/3x3/7/7/o5x o 0 3")]
    out = model.predict(positions)
    assert out["policy_logits"].shape == (3, g.policy_size) and out["wdl"].shape == (3, 3)
    for i, p in enumerate(positions):
        want = json.loads(cli("infer", "--model", str(CNN), "--position", p.text))
        assert np.float32(want["value"]) == out["value"][i]
        assert np.array_equal(np.float32(want["wdl"]), out["wdl"][i])
        assert np.float32(want["score"]) == out["score"][i]
        got = model.policy(p)
        assert [(m, i) for m, i, _ in got] == [(e["move"], e["index"]) for e in want["policy"]]
        assert [np.float32(pr) for _, _, pr in got] == [np.float32(e["prob"]) for e in want["policy"]]


def test_a_model_refuses_another_games_positions_and_a_missing_folder():
    model = flipzero.Model(CNN)
    with pytest.raises(ValueError, match="is for game ataxx, not hexxagon"):
        model.predict([flipzero.Game("hexxagon").start()])
    with pytest.raises(ValueError):
        flipzero.Model(CNN / "no-such-model")
