"""A player that averages policies: several networks, and each one over relabellings of the suits.

Are a network's mistakes noise, which averaging removes, or shared, which it does not? Two ways to
average, each measured against the network alone on the same deals::

    # one network, its log-probabilities averaged over all 24 relabellings of the four suits
    python evaluate.py experiments.averaged_policy:AveragedPolicy,paths=agents/models/cuatrola.pt,suits=24 \\
        pimc:worlds=32 --deals 1000 --matches 0 --seed 13 --workers 2
    # three networks trained apart, their log-probabilities averaged
    python evaluate.py "experiments.averaged_policy:AveragedPolicy,paths=A.pt;B.pt;C.pt" pimc:worlds=32 ...

The rules treat the four suits alike (trump is whichever suit the muestra names; the only suit order
is that of two cantes due in the same trick), so renaming the suits in a seat's observation and
legal actions gives a position a perfect player plays the same way, renamed. A network is not
exactly that symmetric: each relabelling it sees is a slightly different question. The relabelling
is :mod:`cuatrola_env.suits`.
"""

from __future__ import annotations

import numpy as np
import torch

from agents.base import Agent, SeatView
from agents.torch_agent import load_network
from cuatrola_env.observation import OBS_DIM
from cuatrola_env.rules import NUM_ACTIONS
from cuatrola_env.suits import RENAMINGS, action_columns, observation_columns


class AveragedPolicy(Agent):
    """Plays the legal action whose log-probability, averaged over the networks at ``paths``
    (``;``-separated) and, for each, over the first ``suits`` relabellings of the suits (1: none;
    24: all), is highest."""

    def __init__(self, seed: int | None = None, paths: str = "agents/models/cuatrola.pt", suits: int = 1):
        super().__init__(seed)
        if not 1 <= suits <= 24:
            raise ValueError(f"suits must be between 1 and 24 (the relabellings of four suits), got {suits}")
        self.nets = [load_network(p) for p in paths.split(";")]
        labels = RENAMINGS[:suits]  # the identity first
        self.obs_cols = np.stack([observation_columns(s) for s in labels])
        self.act_cols = np.stack([action_columns(s) for s in labels])

    def act(self, view: SeatView) -> int:
        return self.act_batch([view])[0]

    def act_batch(self, views: list[SeatView]) -> list[int]:
        return self.log_probabilities(np.stack([v.observation for v in views]),
                                      np.stack([v.legal_mask for v in views])).argmax(-1).tolist()

    def log_probabilities(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """(N, 24) the averaged log-probabilities, -inf off the legal actions."""
        n, k = len(obs), len(self.obs_cols)
        o = torch.from_numpy(np.ascontiguousarray(obs[:, self.obs_cols].reshape(n * k, OBS_DIM)))
        m = torch.from_numpy(np.ascontiguousarray(mask[:, self.act_cols].reshape(n * k, NUM_ACTIONS)))
        with torch.no_grad():
            logp = torch.stack([torch.log_softmax(net.policy(o, m), -1) for net in self.nets]).mean(0)
        renamed = logp.numpy().reshape(n, k, NUM_ACTIONS)
        out = np.zeros((n, NUM_ACTIONS))
        for j in range(k):  # each relabelling's values back on the original actions
            out[:, self.act_cols[j]] += renamed[:, j] / k
        return np.where(mask, out, -np.inf)
