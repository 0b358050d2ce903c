"""Shared paths: the repository, the binary `make test` built, the kept networks."""

import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
CNN = ROOT / "docs/strength/gen-0131"
FAST = ROOT / "docs/strength/fast-replay/best"


def flipzero_bin() -> pathlib.Path:
    return pathlib.Path(os.environ.get("FLIPZERO_BIN", ROOT / "target/tests/flipzero"))


@pytest.fixture
def cli():
    """Runs the flipzero binary; returns its stdout (a failure fails the test)."""

    def run(*args: str) -> str:
        out = subprocess.run([str(flipzero_bin()), *args], capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        return out.stdout

    return run


@pytest.fixture(scope="session")
def shards_dir(tmp_path_factory):
    """Four games of Ataxx self-play (the stand-in evaluator): a folder of shards."""
    out = tmp_path_factory.mktemp("selfplay")
    subprocess.run([str(flipzero_bin()), "selfplay", "--game", "ataxx", "--games", "4", "--out", str(out),
                    "--evaluator", "bootstrap", "--threads", "1", "--seed", "1", "--quiet"],
                   check=True, capture_output=True)
    return out
