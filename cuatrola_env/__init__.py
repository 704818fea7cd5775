"""Cuatrola: a vectorised NumPy game engine for the Spanish trick-taking card game.

Quick start::

    from cuatrola_env import VectorCuatrola
    env = VectorCuatrola(num_envs=4096, rules="online", seed=0)
    mask = env.action_mask          # (4096, 24) bool
    obs = env.observe()             # (4096, OBS_DIM) float32
    rewards, done = env.step(actions)

Game metadata (OpenSpiel style) is in :data:`GAME_INFO`.
"""

from .observation import OBS_DIM, OBS_VERSION, OFFSETS
from .rules import (
    MAX_DECISIONS_PER_HAND,
    NUM_ACTIONS,
    NUM_CARDS,
    ONLINE,
    PRESETS,
    TRADITIONAL,
    Rules,
    action_name,
    card_name,
    get_rules,
)
from .vector import VectorCuatrola

__version__ = "0.1.0"

import gymnasium as _gymnasium  # noqa: E402

if "Cuatrola-v0" not in _gymnasium.registry:
    _gymnasium.register(id="Cuatrola-v0", entry_point="cuatrola_env.gym:CuatrolaGymEnv")

#: Explicit game metadata, in the manner of OpenSpiel's GameInfo.
GAME_INFO = {
    "num_players": 4,
    "num_distinct_actions": NUM_ACTIONS,
    "observation_size": OBS_DIM,
    "observation_version": OBS_VERSION,
    "max_game_length": MAX_DECISIONS_PER_HAND,  # decisions in the longest hand: 4 bids + 20 card plays
    "min_utility_hand": -5.0,
    "max_utility_hand": 5.0,
    "min_utility_match": -1.0,
    "max_utility_match": 1.0,
    "utility_sum_per_team": 0.0,
    "chance_mode": "explicit_stochastic (the deal)",
    "information": "imperfect",
}

__all__ = [
    "VectorCuatrola", "Rules", "ONLINE", "TRADITIONAL", "PRESETS", "get_rules", "card_name",
    "action_name", "OBS_DIM", "OBS_VERSION", "OFFSETS", "NUM_ACTIONS", "NUM_CARDS", "GAME_INFO",
]


def __getattr__(name):
    # the PettingZoo and Gymnasium wrappers load on first use, keeping `import cuatrola_env` light
    if name in ("env", "raw_env"):
        from . import aec

        return getattr(aec, name)
    raise AttributeError(f"module 'cuatrola_env' has no attribute {name!r}")
