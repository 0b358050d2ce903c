import threading

import numpy as np
import pytest

import flipzero

from conftest import FAST


def play_out(a, b, position, plies):
    moves = []
    for k in range(plies):
        if position.is_over:
            break
        m = (a if k % 2 == 0 else b).choose(position)
        moves.append(m)
        position = position.play(m)
    return moves, position


def test_players_the_cli_names_play_legal_moves_and_bad_names_are_refused():
    g = flipzero.Game("ataxx")
    s = g.start()
    for spec in ["random", "greedy", "ab2", f"mcts:{FAST}:sims=16", f"abnet:{FAST}:depth=2"]:
        p = flipzero.Player(spec, g, seed=3)
        assert p.choose(s) in s.legal_moves(), spec
    with pytest.raises(ValueError, match="nonsense"):
        flipzero.Player("nonsense", "ataxx")
    with pytest.raises(ValueError, match="this player plays ataxx, not othello"):
        flipzero.Player("random", g).choose(flipzero.Game("othello").start())
    with pytest.raises(ValueError, match="the game is over"):
        flipzero.Player("random", g).choose(g.position("x6/7/7/7/7/7/7 o 0 1"))


def test_the_same_seed_gives_the_same_game():
    spec = f"mcts:{FAST}:sims=32"
    g = flipzero.Game("ataxx")
    one = play_out(flipzero.Player(spec, g, 5), flipzero.Player(spec, g, 6), g.start(), 20)
    two = play_out(flipzero.Player(spec, g, 5), flipzero.Player(spec, g, 6), g.start(), 20)
    assert one[0] == two[0] and len(one[0]) == 20


def test_the_tree_search_calls_a_python_evaluator_in_batches():
    g = flipzero.Game("ataxx")
    calls = []

    def evaluator(positions):
        calls.append(len(positions))
        policy = np.zeros((len(positions), g.policy_size), dtype=np.float32)
        # Prefers cloning (the first legal moves' indices) and values piece counts.
        value = np.array([np.tanh((p.counts[0] - p.counts[1]) / 10) * (1 if p.side_to_move == "x" else -1)
                          for p in positions], dtype=np.float32)
        return policy, value

    p = flipzero.Player.mcts(evaluator, g, sims=64, seed=1, batch=4)
    s = g.start()
    assert p.choose(s) in s.legal_moves()
    assert sum(calls) >= 16 and max(calls) <= 4


def test_an_evaluators_exception_and_wrong_shapes_reach_the_caller():
    g = flipzero.Game("ataxx")

    def broken(positions):
        raise RuntimeError("my net crashed")

    with pytest.raises(RuntimeError, match="my net crashed"):
        flipzero.Player.mcts(broken, g, sims=16).choose(g.start())

    def short(positions):
        return np.zeros((len(positions), 3)), np.zeros(len(positions))

    with pytest.raises(ValueError, match=rf"expected \[1, {g.policy_size}\]"):
        flipzero.Player.mcts(short, g, sims=16, batch=1).choose(g.start())
    with pytest.raises(ValueError, match="sims 0"):
        flipzero.Player.mcts(short, g, sims=0)


def test_a_long_search_leaves_the_interpreter_free():
    g = flipzero.Game("ataxx")
    p = flipzero.Player(f"mcts:{FAST}:sims=20000", g, 1)
    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(1)
            stop.wait(0.001)

    t = threading.Thread(target=tick)
    t.start()
    p.choose(g.start())
    stop.set()
    t.join()
    assert len(ticks) > 20


def test_a_failed_search_leaves_no_trace_and_a_busy_player_refuses_calls():
    g = flipzero.Game("ataxx")
    fail = [False]

    def evaluator(positions):
        if fail[0]:
            raise RuntimeError("once")
        policy = np.zeros((len(positions), g.policy_size), dtype=np.float32)
        for i, p in enumerate(positions):
            policy[i, p.legal_indices()[-1]] = 8.0
        return policy, np.zeros(len(positions), dtype=np.float32)

    fresh = flipzero.Player.mcts(evaluator, g, sims=100, seed=1).choose(g.start())
    p = flipzero.Player.mcts(evaluator, g, sims=100, seed=1)
    fail[0] = True
    with pytest.raises(RuntimeError, match="once"):
        p.choose(g.start())
    fail[0] = False
    assert p.choose(g.start()) == fresh

    def reentrant(positions):
        q.choose(positions[0])

    q = flipzero.Player.mcts(reentrant, g, sims=8)
    with pytest.raises(ValueError, match="busy"):
        q.choose(g.start())


def test_positions_and_games_pickle_as_values():
    import copy
    import pickle

    s = flipzero.Game("hexxagon").start()
    s = s.play(s.legal_moves()[0])
    assert pickle.loads(pickle.dumps(s)) == s and copy.deepcopy(s) == s
    assert pickle.loads(pickle.dumps(s.game)) == s.game
