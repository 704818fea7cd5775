"""Cuatrola: PettingZoo AEC environment.

This page is the environment's documentation, in the manner of PettingZoo's classic games.

| | |
|---|---|
| Import | ``from cuatrola_env import env, raw_env`` |
| Actions | Discrete(24) |
| Agents | ``agents = ["player_0", "player_1", "player_2", "player_3"]`` |
| Parallel API | no (turn-based) |
| Manual control | no |
| Action shape | (1,) |
| Action values | 0..23 |
| Observation shape | ``{"observation": (OBS_DIM,), "action_mask": (24,)}`` |
| Observation values | ``observation`` in [0, 2] (float32, mostly 0/1), ``action_mask`` in {0, 1} (int8) |

Cuatrola is a Spanish trick-taking card game of the tute family for four players in two
pairs (``player_0`` + ``player_2`` against ``player_1`` + ``player_3``): one round of
bidding (pass, solo, cuatrola, quintola), then up to five tricks. ``docs/rules.md`` has the
rules and the two presets, ``online`` (default) and ``traditional``.

Arguments
---------
``env(rules="online", mode="hand", render_mode=None, result_in_info=False)``

- ``rules``: ``"online"``, ``"traditional"``, a ``Rules`` or a dict of its fields;
- ``mode``: ``"hand"`` (an episode is one hand) or ``"match"`` (a match to the target);
- ``render_mode``: ``None``, ``"ansi"`` (``render()`` returns a text table), ``"human"``
  (``render()`` prints it) or ``"rgb_array"`` (``render()`` returns a (480, 720, 3) uint8 picture
  of the table, :mod:`cuatrola_env.picture`). Both are a spectator's: every hand is shown;
- ``result_in_info``: also put the finished hand's result (record format: contract, declarer,
  points, tricks, cantes, score) in every agent's ``info["result"]`` at the end. Off by default:
  its lists vary in length from hand to hand, which frameworks that stack infos into arrays
  (Tianshou's ``Collector``) cannot store; ``env.unwrapped.last_result`` always has it.

Action space
------------
| id | action |
|---|---|
| 0..19 | play card id (5 × suit + rank; suits oros, copas, espadas, bastos; ranks sota, caballo, rey, tres, as) |
| 20 | pass |
| 21 | solo |
| 22 | cuatrola |
| 23 | quintola |

Every decision is asked, forced ones too; only the agent to act has a non-zero
``action_mask``.

Observation space
-----------------
``observation`` is the engine's flat vector seen by that agent's seat, with seats relative
to it (``docs/observation.md`` gives every offset): own hand, cards played by each seat and
in each trick, the trick in play, trick leaders, tricks won, muestra and trump, dealer and
la mano, bids, contract, declarer, who sits out, points, cantes, match score and target,
phase. It never holds another seat's unplayed card (the muestra aside); the tests prove
it. ``raw_env.perfect_information_observation(agent)`` is a separate view with every hand,
for critics and oracles in training only.

Rewards
-------
| mode | when | reward |
|---|---|---|
| hand | end of the hand | +game points (1, 2, 4 or 5) to each winning seat, − to the others (sitter too) |
| match | end of the match | +1 to the winning team's seats, −1 to the others |

Reset options
-------------
``reset(seed=None, options=None)``; ``options`` may hold
``{"hands": [[5 card ids] × 4 in seat order], "dealer": seat, "muestra": card id}`` to set a
deal, and ``{"score": [team 0, team 1]}`` to start from a match score.

Records
-------
``env.unwrapped.last_result`` is the last finished hand's result (``None`` before one ends);
``env.unwrapped.record()`` returns the episode as a JSON-able record and
``env.unwrapped.save_record(path)`` writes it; ``python -m cuatrola_env.replay FILE`` prints it.

Version history
---------------
* v0: initial release (observation version 1).
"""

from __future__ import annotations

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from .game import Game
from .observation import OBS_DIM
from .picture import render_rgb
from .records import save_record
from .render import render_text
from .rules import NUM_ACTIONS, RulesLike
from .vector import Mode

AGENTS = [f"player_{i}" for i in range(4)]
OPTION_KEYS = {"hands", "dealer", "muestra", "score"}


def env(**kwargs) -> AECEnv:
    """The AEC environment with PettingZoo's order-enforcing wrapper (use this one)."""
    return wrappers.OrderEnforcingWrapper(raw_env(**kwargs))


class raw_env(AECEnv):  # noqa: N801 - PettingZoo's naming
    """The unwrapped PettingZoo AEC environment; see the module docstring."""

    metadata = {"render_modes": ["human", "ansi", "rgb_array"], "name": "cuatrola_v0", "is_parallelizable": False,
                "render_fps": 2}

    def __init__(self, rules: RulesLike = "online", mode: Mode = "hand", render_mode: str | None = None,
                 result_in_info: bool = False):
        super().__init__()
        if not isinstance(result_in_info, bool):
            raise ValueError(f"result_in_info must be True or False, got {result_in_info!r}")
        self.result_in_info = result_in_info
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None, 'human', 'ansi' or 'rgb_array', got {render_mode!r}")
        self.game = Game(rules=rules, mode=mode)
        self.rules = self.game.rules
        self.mode = mode
        self.render_mode = render_mode
        self.possible_agents = list(AGENTS)
        self.agents = []
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(low=0.0, high=2.0, shape=(OBS_DIM,), dtype=np.float32),
                "action_mask": spaces.Box(low=0, high=1, shape=(NUM_ACTIONS,), dtype=np.int8),
            }
        )
        self.observation_spaces = {a: obs_space for a in AGENTS}
        self.action_spaces = {a: spaces.Discrete(NUM_ACTIONS) for a in AGENTS}
        self._zero_mask = np.zeros(NUM_ACTIONS, dtype=np.int8)

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ API
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        kw = {}
        if options:
            if not isinstance(options, dict):
                raise ValueError(f"options must be a dict, got {type(options).__name__}")
            unknown = set(options) - OPTION_KEYS
            if unknown:  # tolerated, as PettingZoo's api_test requires, but said
                gymnasium.logger.warn(f"ignoring unknown reset option(s) {sorted(unknown)}; known: {sorted(OPTION_KEYS)}")
            kw = {k: options[k] for k in OPTION_KEYS & set(options)}
        self.game.reset(seed=seed, **kw)  # validates; raises before anything changes
        self.agents = list(AGENTS)
        self.rewards = {a: 0.0 for a in AGENTS}
        self._cumulative_rewards = {a: 0.0 for a in AGENTS}
        self.terminations = {a: False for a in AGENTS}
        self.truncations = {a: False for a in AGENTS}
        self.infos = {a: {} for a in AGENTS}
        self.agent_selection = AGENTS[self.game.current_player]

    def observe(self, agent: str) -> dict:
        seat = self._seat(agent)
        mask = self._zero_mask
        if agent == self.agent_selection and not self.game.over:
            mask = self.game.legal_mask_int8()
        return {"observation": self.game.observe(seat), "action_mask": mask}

    @property
    def last_result(self) -> dict | None:
        """The last finished hand's result (record format), or ``None`` before one ends."""
        return self.game.last_result

    def perfect_information_observation(self, agent: str) -> np.ndarray:
        """The observation plus every seat's hidden hand: for critics and oracles, never for play."""
        return self.game.perfect_information(self._seat(agent))

    def step(self, action) -> None:
        if not self.agents:
            raise ValueError("the game is over and every agent is done: call reset()")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            return self._was_dead_step(action)
        if action is None:
            raise ValueError(f"{agent} is to act and must give an action, not None")
        seat = self._seat(agent)
        self._cumulative_rewards[agent] = 0.0
        rewards, over = self.game.step(_as_action(action))  # raises on an illegal action, changes nothing
        if over:
            for a in AGENTS:
                self.rewards[a] = float(rewards[self._seat(a)])
                self.terminations[a] = True
            if self.result_in_info:
                self.infos = {a: {"result": self.last_result} for a in AGENTS}
            self.agent_selection = AGENTS[(seat + 1) % 4]
        else:
            for a in AGENTS:
                self.rewards[a] = 0.0
            self.agent_selection = AGENTS[self.game.current_player]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def render(self):
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; use render_mode='ansi', 'human' or 'rgb_array'")
            return None
        if self.render_mode == "rgb_array":
            return render_rgb(self.game.state, self.rules, result=self.game.last_result if self.game.over else None)
        text = render_text(self.game.state, self.rules)
        if self.render_mode == "human":
            print(text + "\n")
            return None
        return text

    def close(self) -> None:
        pass

    # ------------------------------------------------------------------ records
    def record(self) -> dict:
        """The episode so far as a JSON-able record (``docs/records.md``)."""
        return self.game.record()

    def save_record(self, path) -> None:
        save_record(self.record(), path)

    # ------------------------------------------------------------------ helpers
    def _seat(self, agent: str) -> int:
        if agent not in AGENTS:
            raise ValueError(f"unknown agent {agent!r}; agents are {AGENTS}")
        return AGENTS.index(agent)


def _as_action(action) -> int:
    a = np.asarray(action)
    if a.shape not in ((), (1,)) or not np.issubdtype(a.dtype, np.integer):
        raise ValueError(f"action must be one integer id in 0..{NUM_ACTIONS - 1}, got {action!r}")
    return int(a.reshape(()))
