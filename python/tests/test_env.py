import numpy as np
import pytest

pettingzoo = pytest.importorskip("pettingzoo")  # listed in python/requirements-test.txt
from pettingzoo.test import api_test  # noqa: E402

from flipzero.env import AECEnv, SingleAgentEnv  # noqa: E402


@pytest.mark.parametrize("game", ["ataxx", "othello", "hexxagon", "annexation64"])
def test_the_aec_environment_passes_pettingzoos_api_test(game):
    api_test(AECEnv(game), num_cycles=200)


def test_a_whole_game_with_action_masks():
    env = AECEnv("ataxx")
    env.reset(seed=1)
    rng = np.random.default_rng(1)
    steps, finals = 0, {}
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        if term or trunc:
            finals[agent] = reward
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        assert len(legal) > 0 and agent == env.position.side_to_move
        env.step(int(rng.choice(legal)))
        steps += 1
    assert steps > 20
    assert sorted(finals.values()) in ([-1.0, 1.0], [0.0, 0.0])
    with pytest.raises(ValueError, match="not a legal move"):
        env.reset()
        env.step(env.game.policy_size - 1)


def test_the_single_agent_environment_plays_against_a_ladder_player():
    env = SingleAgentEnv("ataxx", opponent="greedy", side="o", seed=2)
    obs, _ = env.reset(seed=3)
    assert env.observation_space.contains(obs)
    assert env.position.side_to_move == "o" and len(env.position.text) > 0
    done, total = False, 0.0
    while not done:
        action = int(np.flatnonzero(obs["action_mask"])[0])
        obs, reward, done, trunc, info = env.step(action)
        assert env.observation_space.contains(obs) and not trunc
        total += reward
    assert total in (-1.0, 0.0, 1.0) and info["result"] is not None
    with pytest.raises(ValueError, match="side 'y'"):
        SingleAgentEnv(side="y")


def test_actions_that_are_not_legal_indices_and_finished_starts_are_refused():
    env = AECEnv("ataxx")
    env.reset()
    for bad in (-1, 5.9, "3", 10**9):
        with pytest.raises(ValueError, match="not"):
            env.step(bad)
    with pytest.raises(ValueError, match="finished game"):
        env.reset(options={"position": "x6/7/7/7/7/7/7 o 0 1"})
    with pytest.raises(ValueError, match="finished game"):
        SingleAgentEnv("ataxx").reset(options={"position": "x6/7/7/7/7/7/7 o 0 1"})
