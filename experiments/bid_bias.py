"""A network that bids more or less boldly: constants added to its bid logits.

Against a stronger defence a declarer makes fewer of its contracts; would the network gain by
declaring less often than it learnt to against itself? Shift its bids and measure, on the same
deals as the network unchanged::

    python evaluate.py experiments.bid_bias:BidBias,solo=-1,cuatrola=-1 pimc:worlds=32 --deals 1000 --matches 0 \
        --seed 13 --workers 2
    python evaluate.py compare RESULT.json SHIPPED_RESULT.json

Card play is the network's, unchanged.
"""

from __future__ import annotations

import numpy as np
import torch

from agents.base import Agent, SeatView
from agents.torch_agent import load_network
from cuatrola_env.engine import BIDDING
from cuatrola_env.rules import CUATROLA, NUM_ACTIONS, NUM_CARDS, QUINTOLA, SOLO


class BidBias(Agent):
    """The network at ``path``, greedy, with ``solo``, ``cuatrola`` and ``quintola`` added to those
    bids' logits."""

    def __init__(self, seed: int | None = None, path: str = "agents/models/cuatrola.pt", solo: float = 0.0,
                 cuatrola: float = 0.0, quintola: float = 0.0):
        super().__init__(seed)
        self.net = load_network(path)
        self.bias = np.zeros(NUM_ACTIONS, np.float32)
        self.bias[NUM_CARDS + np.array([SOLO, CUATROLA, QUINTOLA])] = (solo, cuatrola, quintola)

    def act(self, view: SeatView) -> int:
        mask = torch.from_numpy(view.legal_mask[None])
        with torch.no_grad():
            logits = self.net.policy(torch.from_numpy(view.observation[None]), mask)[0].numpy()
        if view.phase == BIDDING:
            logits = logits + self.bias
        return int(np.where(view.legal_mask, logits, -np.inf).argmax())
