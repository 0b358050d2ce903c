"""Reinforcement-learning environments over flipzero's games.

``AECEnv(game)``: a PettingZoo AEC environment of two agents, ``x`` and ``o``, taking
turns. Observations are dicts: ``observation``, the network's input planes of the
position (float32 [planes, height, width], as ``flipzero.encode`` gives them, from the
side to move's view), and ``action_mask``, int8 [policy_size], 1 at the legal moves'
policy indices of the agent to move (all 0 for the other agent). Actions are policy
indices (``Position.move_index``); a pass is a move with its own index. At the end the
winner gets +1, the loser -1 (0 each for a draw).

``SingleAgentEnv(game, opponent, side)``: a Gymnasium environment of one side against
a player the command line names (``random``, ``ab2``, ``mcts:DIR:sims=64``, ...), which
answers inside ``step``.

Both need ``pip install pettingzoo gymnasium``.
"""

from __future__ import annotations

import operator
from typing import Any, Optional

import numpy as np
from gymnasium import Env, spaces
from pettingzoo import AECEnv as _AECEnv

from ._flipzero import Game, Player, Position, encode


def _spaces(game: Game) -> tuple[spaces.Dict, spaces.Discrete]:
    planes = encode([game.start()]).shape[1:]
    obs = spaces.Dict(
        {
            "observation": spaces.Box(0.0, 1.0, shape=planes, dtype=np.float32),
            "action_mask": spaces.Box(0, 1, shape=(game.policy_size,), dtype=np.int8),
        }
    )
    return obs, spaces.Discrete(game.policy_size)


def _start(game: Game, options: Optional[dict]) -> Position:
    text = (options or {}).get("position")
    position = game.position(text) if text else game.start()
    if position.is_over:
        raise ValueError(f"the start position {position.text} is a finished game")
    return position


def _observe(position: Position, to_move: bool) -> dict[str, np.ndarray]:
    mask = np.zeros(position.game.policy_size, dtype=np.int8)
    if to_move:
        mask[position.legal_indices()] = 1
    return {"observation": encode([position])[0], "action_mask": mask}


def _move(position: Position, action: Any) -> str:
    try:
        index = operator.index(action)
    except TypeError:
        raise ValueError(f"action {action!r} is not a policy index (an integer)") from None
    move = position.index_move(index) if 0 <= index < position.game.policy_size else None
    if move is None:
        raise ValueError(
            f"action {action} is not a legal move in {position.text} "
            f"(legal: {position.legal_indices()})"
        )
    return move


class AECEnv(_AECEnv):
    """A flipzero game as a PettingZoo AEC environment (see the module's documentation)."""

    metadata = {"name": "flipzero_v0", "render_modes": ["ansi"], "is_parallelizable": False}

    def __init__(self, game: str = "ataxx", render_mode: Optional[str] = None):
        super().__init__()
        self.game = Game(game)
        self.possible_agents = ["x", "o"]
        self._obs_space, self._act_space = _spaces(self.game)
        self.render_mode = render_mode
        self.position = self.game.start()

    def observation_space(self, agent: str) -> spaces.Dict:
        return self._obs_space

    def action_space(self, agent: str) -> spaces.Discrete:
        return self._act_space

    def reset(self, seed: Optional[int] = None, options: Optional[dict] = None) -> None:
        self.position = _start(self.game, options)
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = self.position.side_to_move

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        return _observe(self.position, agent == self.position.side_to_move and not self.position.is_over)

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0.0
        self.position = self.position.play(_move(self.position, action))
        self.rewards = {a: 0.0 for a in self.agents}
        result = self.position.result()
        if result is not None:
            winner = result["winner"]
            for a in self.agents:
                self.rewards[a] = 0.0 if winner is None else (1.0 if a == winner else -1.0)
                self.terminations[a] = True
                self.infos[a] = {"result": result}
        else:
            self.agent_selection = self.position.side_to_move
        self._accumulate_rewards()

    def render(self) -> Optional[str]:
        if self.render_mode == "ansi":
            return f"{self.position.text}"
        return None

    def close(self) -> None:
        pass


class SingleAgentEnv(Env):
    """One side of a flipzero game against a fixed player (see the module's documentation)."""

    metadata = {"render_modes": ["ansi"]}

    def __init__(self, game: str = "ataxx", opponent: str = "random", side: str = "x",
                 seed: int = 0, render_mode: Optional[str] = None):
        if side not in ("x", "o"):
            raise ValueError(f"side {side!r}: expected 'x' or 'o'")
        self.game = Game(game)
        self.side = side
        self.opponent_spec = opponent
        self.opponent = Player(opponent, self.game, seed)
        self.observation_space, self.action_space = _spaces(self.game)
        self.render_mode = render_mode
        self.position = self.game.start()

    def _reply(self) -> None:
        while not self.position.is_over and self.position.side_to_move != self.side:
            self.position = self.position.play(self.opponent.choose(self.position))

    def _outcome(self) -> float:
        result = self.position.result()
        if result is None or result["winner"] is None:
            return 0.0
        return 1.0 if result["winner"] == self.side else -1.0

    def reset(self, seed: Optional[int] = None, options: Optional[dict] = None):
        super().reset(seed=seed)
        if seed is not None:
            self.opponent = Player(self.opponent_spec, self.game, seed)
        self.opponent.new_game()
        self.position = _start(self.game, options)
        self._reply()
        return _observe(self.position, not self.position.is_over), {}

    def step(self, action: Any):
        self.position = self.position.play(_move(self.position, action))
        self._reply()
        done = self.position.is_over
        obs = _observe(self.position, not done)
        info = {"result": self.position.result()} if done else {}
        return obs, self._outcome(), done, False, info

    def render(self) -> Optional[str]:
        return self.position.text if self.render_mode == "ansi" else None
