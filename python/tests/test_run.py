import pytest

import flipzero

MICRO = [
    "run.generations=2", "selfplay.games=4", "selfplay.threads=1", "selfplay.games_per_thread=4",
    "selfplay.simulations=8", "selfplay.fast_simulations=4", "train.steps=4", "train.batch_size=16",
    "train.blocks=1", "run.export=false", "gate.max_pairs=1", "gate.batch_pairs=1",
    "gate.simulations=4", "anchor.pairs=1", 'anchor.ladder=["random"]',
]


def test_a_run_started_reported_read_and_resumed(tmp_path):
    events = []
    summary = flipzero.run(tmp_path / "r", set=MICRO, progress=lambda kind, data: events.append((kind, data)))
    assert summary["best"].startswith("gen-") or summary["best"] == "bootstrap"
    assert len(summary["table"].splitlines()) == 3
    kinds = {k for k, _ in events}
    assert {"line", "progress"} <= kinds
    tasks = {d["task"] for k, d in events if k == "progress"}
    assert {"selfplay", "train"} <= tasks
    run = flipzero.Run(tmp_path / "r")
    assert run.best == summary["best"]
    assert run.config()["selfplay"]["games"] == 4
    gens = run.generations()
    assert [g["generation"] for g in gens] == [0, 1] and gens[-1]["train"]["steps"] == 4
    assert len(run.metrics_csv().splitlines()) == 1 + len(gens)
    ratings = run.ratings()
    assert any(r["player"] == "random" and r["elo"] == 0 for r in ratings)
    # Resumed: nothing left to do, the same summary.
    again = flipzero.run(tmp_path / "r", set=MICRO)
    assert again["table"] == summary["table"]


def test_bad_settings_and_directories_are_refused_with_the_cli_message(tmp_path):
    with pytest.raises(ValueError, match="selfplay.gamez"):
        flipzero.run(tmp_path / "x", set=["selfplay.gamez=4"])
    with pytest.raises(ValueError):
        flipzero.Run(tmp_path)


def test_a_progress_callbacks_exception_reaches_the_caller(tmp_path):
    def fail(kind, data):
        raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        flipzero.run(tmp_path / "r", set=["run.generations=1"] + MICRO[1:], progress=fail)


def test_a_match_between_two_players():
    g = flipzero.Game("ataxx")
    m = flipzero.play_match("greedy", "random", g, pairs=2, seed=3)
    assert sum(m["wdl"]) == 4 and sum(m["pentanomial"]) == 2
    assert 0 <= m["score"] <= 1 and m["pgn"].count("[Event ") == 4
    with pytest.raises(ValueError, match="nonsense"):
        flipzero.play_match("nonsense", "random", g)


def test_a_progress_that_is_not_callable_is_refused_before_the_run_starts(tmp_path):
    with pytest.raises(TypeError, match="progress must be a callable"):
        flipzero.run(tmp_path / "r", set=MICRO, progress=5)
    assert not (tmp_path / "r").exists()
