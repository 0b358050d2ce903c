import pytest

import flipzero


def test_every_game_by_name_and_an_unknown_one_refused_with_the_cli_message():
    names = flipzero.games()
    assert {"ataxx", "othello", "hexxagon", "annexation64", "ataxx/misere"} <= set(names)
    assert len(names) == 24
    for n in names:
        assert flipzero.Game(n).name == n
    with pytest.raises(ValueError, match="unknown game `go`; known games: ataxx"):
        flipzero.Game("go")


def test_perft_matches_the_published_counts():
    ataxx = flipzero.Game("ataxx").start()
    assert [ataxx.perft(d) for d in range(1, 5)] == [16, 256, 6460, 155888]
    othello = flipzero.Game("othello").start()
    assert [othello.perft(d) for d in range(1, 6)] == [4, 12, 56, 244, 1396]


def test_positions_are_values_and_round_trip_through_text():
    g = flipzero.Game("ataxx")
    start = g.start()
    after = start.play("f2")
    assert start == g.start() and after != start
    assert start.side_to_move == "x" and after.side_to_move == "o"
    assert after.counts == (3, 2)
    assert g.position(after.text) == after
    assert hash(g.position(after.text)) == hash(after)
    assert after.zobrist != start.zobrist and g.position(after.text).zobrist == after.zobrist
    assert repr(after).startswith("Position('ataxx', ")


def test_bad_positions_and_moves_say_what_is_wrong():
    g = flipzero.Game("ataxx")
    with pytest.raises(ValueError, match="bad position `nonsense` for ataxx"):
        g.position("nonsense")
    s = g.start()
    with pytest.raises(ValueError, match="illegal move `a1g7`"):
        s.play("a1g7")
    with pytest.raises(ValueError, match="illegal move `zz9`"):
        s.play("zz9")
    over = g.position("x6/7/7/7/7/7/7 o 0 1")
    assert over.is_over and over.legal_moves() == []
    with pytest.raises(ValueError, match="illegal move"):
        over.play("a2")


def test_policy_indices_and_moves_correspond():
    s = flipzero.Game("ataxx").start().play("f2")
    moves, indices = s.legal_moves(), s.legal_indices()
    assert len(moves) == len(indices) == len(set(indices))
    assert all(0 <= i < s.game.policy_size for i in indices)
    for m, i in zip(moves, indices):
        assert s.move_index(m) == i and s.index_move(i) == m
    free = set(range(s.game.policy_size)) - set(indices)
    assert s.index_move(min(free)) is None


def test_results_of_finished_games():
    g = flipzero.Game("ataxx")
    r = g.position("x6/7/7/7/7/7/7 o 0 1").result()
    assert r == {"winner": "x", "result": "1-0", "counts": (1, 0), "score": 49, "reason": "wipe-out"}
    assert g.start().result() is None
    m = flipzero.Game("ataxx/misere").position(
        "xxxxxxx/xxxxxxx/xxxxxxx/xxxxxxx/xxxxxxx/xxxxxxx/xxxxxoo x 0 1")
    assert m.result()["winner"] == "o" and m.game.misere


def test_symmetries_keep_the_game_and_refuse_what_is_not_one():
    g = flipzero.Game("ataxx")
    syms = g.symmetries()
    assert len(syms) == 8
    s = g.start().play("f2").play("b2")
    images = [s.transform(t) for t in syms]
    assert images[0] == s
    assert len({i.text for i in images}) == 8
    for i in images:
        assert i.counts == s.counts and i.perft(2) == s.perft(2)
    with pytest.raises(ValueError, match="not a symmetry of ataxx"):
        s.transform([0] * len(syms[0]))
