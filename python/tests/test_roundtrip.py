"""The round trip to another framework (python/examples/roundtrip_*.py): a flipzero model's
weights into JAX (and PyTorch where it is installed), trained on shards, and back into
flipzero, which answers as the framework does and plays the net."""

import argparse
import importlib
import sys

import numpy as np
import pytest

import flipzero

from conftest import CNN, ROOT, flipzero_bin

sys.path.insert(0, str(ROOT / "python/examples"))
OUTCOMES = {"1-0", "0-1", "1/2-1/2"}


def args(shards, out, **kw):
    a = dict(shards=str(shards), init=str(CNN), blocks=2, channels=16, steps=40, batch=32, lr=1e-3,
             seed=0, out=str(out), games=1)
    a.update(kw)
    return argparse.Namespace(**a)


def check(report, out, game_name="ataxx"):
    # Weights in: the framework answered as flipzero (same_answers raises otherwise).
    # Trained: the loss on the first 256 rows fell.
    assert report["loss_after"] < 0.97 * report["loss_before"], report
    # Weights out: the imported folder answers as the framework, and plays.
    assert report["import_gap"] <= 2e-4
    assert report["first_move"] in flipzero.Game(game_name).start().legal_moves()
    assert len(report["results"]) == 2 and set(report["results"]) <= OUTCOMES, report
    assert (out / "model.json").is_file() and (out / "model.bpk").is_file()


@pytest.fixture
def bin_env(monkeypatch):
    monkeypatch.setenv("FLIPZERO_BIN", str(flipzero_bin()))


def test_jax_round_trip_from_a_model_and_from_scratch(shards_dir, tmp_path, bin_env):
    pytest.importorskip("jax", reason="make test installs jax (python/requirements-test.txt)")
    jx = importlib.import_module("roundtrip_jax")
    report = jx.main(args(shards_dir, tmp_path / "tuned"))
    assert report["init_gap"] <= 2e-4 and report["network"]["aux_heads"] == ["ownership"]
    check(report, tmp_path / "tuned")
    tuned = flipzero.Model(tmp_path / "tuned")
    assert tuned.tensors("burn").keys() == flipzero.Model(CNN).tensors("burn").keys()
    fresh = jx.main(args(shards_dir, tmp_path / "fresh", init=None, steps=30, lr=3e-3))
    assert "init_gap" not in fresh and fresh["network"]["blocks"] == 2
    check(fresh, tmp_path / "fresh")
    # Importing over a model is refused, and the model stays.
    before = (tmp_path / "fresh/model.bpk").read_bytes()
    with pytest.raises(ValueError, match="already exists"):
        flipzero.Model.import_weights(tmp_path / "fresh/jax.safetensors", "ataxx", tmp_path / "fresh")
    assert (tmp_path / "fresh/model.bpk").read_bytes() == before


def test_torch_round_trip(shards_dir, tmp_path, bin_env):
    # PyTorch's wheels on PyPI carry CUDA (gigabytes), so `make test` does not install
    # it; with torch present this runs the PyTorch example as the JAX one runs.
    pytest.importorskip("torch", reason="pip install torch")
    report = importlib.import_module("roundtrip_torch").main(args(shards_dir, tmp_path / "torch"))
    assert report["init_gap"] <= 2e-4
    check(report, tmp_path / "torch")


def test_tensors_name_the_weights_as_pytorch_and_burn_do():
    model = flipzero.Model(CNN)
    burn, torch_names = model.tensors("burn"), model.tensors()
    assert burn["stem.bn.gamma"].shape == (32,) and "stem.bn.weight" in torch_names
    assert burn["value_fc.weight"].shape == (32, 64)
    assert np.array_equal(torch_names["value_fc.weight"], burn["value_fc.weight"].T)
    assert np.array_equal(torch_names["stem.bn.bias"], burn["stem.bn.beta"])
    assert {"stem.bn.running_var", "ownership_out.weight"} <= burn.keys()
    renamed = {k.replace(".bn.gamma", ".bn.weight").replace(".bn.beta", ".bn.bias") for k in burn}
    assert renamed == torch_names.keys()
    with pytest.raises(ValueError, match="naming `onnx`"):
        model.tensors("onnx")
