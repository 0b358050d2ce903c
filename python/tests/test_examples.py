"""The notebook-style tour (python/examples/tour.py, and tour.ipynb made from it) runs
from start to end and draws its plots."""

import os
import subprocess
import sys

from conftest import ROOT

EXAMPLES = ROOT / "python/examples"


def test_the_tour_runs_and_draws_its_plots(tmp_path):
    env = dict(os.environ, FLIPZERO_TOUR_OUT=str(tmp_path), MPLBACKEND="Agg")
    done = subprocess.run([sys.executable, str(EXAMPLES / "tour.py")], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "best: " in out and "| generations: 3" in out, out
    assert "result: {" in out and " positions\n" in out, out
    for png in ("curve.png", "policy.png"):
        assert (tmp_path / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # The run it started is a run the command line reads.
    assert (tmp_path / "run/config.toml").is_file()


def test_the_notebook_is_the_tour_script():
    done = subprocess.run([sys.executable, str(EXAMPLES / "notebook.py"), "--check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
