"""Cuatrola: a vectorised NumPy game engine for the Spanish trick-taking card game.

Quick start::

    from cuatrola_env import VectorCuatrola
    env = VectorCuatrola(num_envs=4096, rules="online", seed=0)
    mask = env.action_mask          # (4096, 24) bool
    obs = env.observe()             # (4096, OBS_DIM) float32
    rewards, done = env.step(actions)

Game metadata (OpenSpiel style) is in :data:`GAME_INFO`.
"""

import importlib.abc
import importlib.util
import sys

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


def _register_with(gymnasium) -> None:
    """``gymnasium.make("Cuatrola-v0")``: the environment's id, with where to find it."""
    if "Cuatrola-v0" not in gymnasium.registry:
        gymnasium.register(id="Cuatrola-v0", entry_point="cuatrola_env.gym:CuatrolaGymEnv")


class _RegisterWhenGymnasiumLoads(importlib.abc.MetaPathFinder):
    """Registers ``Cuatrola-v0`` the moment Gymnasium is imported, so that importing the engine (and
    the bot and service built on it) never loads Gymnasium, in whatever order a program imports the two."""

    def find_spec(self, name, path=None, target=None):
        if name != "gymnasium":
            return None
        sys.meta_path.remove(self)  # once: the search below, and any later import, go the usual way
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        load = spec.loader.exec_module

        def load_then_register(module):
            load(module)
            _register_with(module)

        spec.loader.exec_module = load_then_register
        return spec


if "gymnasium" in sys.modules:
    _register_with(sys.modules["gymnasium"])
elif not any(isinstance(f, _RegisterWhenGymnasiumLoads) for f in sys.meta_path):
    sys.meta_path.insert(0, _RegisterWhenGymnasiumLoads())

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
