"""Tianshou's ``Collector`` over its ``PettingZooEnv`` wrapper of the AEC environment, as it is: four
random masked players on vectorised environments (skipped where Tianshou is not installed)."""

from __future__ import annotations

import numpy as np
import pytest

import cuatrola_env

tianshou = pytest.importorskip("tianshou")
from tianshou.algorithm.multiagent.marl import MultiAgentOffPolicyAlgorithm  # noqa: E402
from tianshou.algorithm.random import MARLRandomDiscreteMaskedOffPolicyAlgorithm  # noqa: E402
from tianshou.data import Collector, VectorReplayBuffer  # noqa: E402
from tianshou.env import DummyVectorEnv, PettingZooEnv  # noqa: E402


def make(mode: str = "hand") -> PettingZooEnv:
    return PettingZooEnv(cuatrola_env.env(mode=mode))


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("mode", ["hand", "match"])
def test_tianshous_collector_plays_whole_episodes_with_legal_moves_and_zero_sum_returns(mode):
    one = make(mode)
    players = [MARLRandomDiscreteMaskedOffPolicyAlgorithm(one.action_space) for _ in one.agents]
    algorithm = MultiAgentOffPolicyAlgorithm(algorithms=players, env=one)
    envs = DummyVectorEnv([lambda: make(mode) for _ in range(4)])
    collector = Collector(algorithm, envs, VectorReplayBuffer(20_000, len(envs)))
    collector.reset()
    episodes = 8 if mode == "match" else 40
    stats = collector.collect(n_episode=episodes)
    assert stats.n_collected_episodes == episodes
    returns = np.asarray(stats.returns)  # (episodes, 4): each seat's return; the two teams' sum to zero
    assert returns.shape == (episodes, 4)
    assert np.allclose(returns[:, 0], returns[:, 2]) and np.allclose(returns[:, 0], -returns[:, 1])
    assert set(np.abs(returns[:, 0])) <= ({1.0} if mode == "match" else {1.0, 2.0, 4.0, 5.0})
