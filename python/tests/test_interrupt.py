"""Ctrl-C stops the long native calls: perft, predict over many positions, a match. Each
call would run for minutes; SIGINT arrives after half a second, and KeyboardInterrupt
must follow within a second or two (a match lets its games under way finish)."""

import os
import signal
import threading
import time

import pytest

import flipzero

from conftest import CNN


def interrupted_after(call, delay=0.5) -> float:
    # Python leaves SIGINT ignored when it started ignored (a background job's): Ctrl-C's
    # handler, as an interactive session has it.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(delay, lambda: os.kill(os.getpid(), signal.SIGINT))
    start = time.perf_counter()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            call()
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    return time.perf_counter() - start


def test_ctrl_c_stops_perft():
    s = flipzero.Game("ataxx").start()
    assert interrupted_after(lambda: s.perft(9)) < 1.5  # perft 9 alone: hours


def test_ctrl_c_stops_a_long_predict():
    model = flipzero.Model(CNN)
    g = model.game
    positions = [g.start(), g.start().play("f2")] * 100_000  # about a minute's work
    assert interrupted_after(lambda: model.predict(positions)) < 2.0
    # And the model still answers.
    assert model.predict(positions[:2])["wdl"].shape == (2, 3)


def test_ctrl_c_stops_a_match_between_games():
    g = flipzero.Game("ataxx")
    assert interrupted_after(lambda: flipzero.play_match("ab2", "ab2", g, pairs=10_000)) < 3.0
