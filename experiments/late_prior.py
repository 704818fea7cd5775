"""Level ``expert`` with its card plays' near-ties broken by another network's preferences.

A late head taught PIMC's values finds every legal card equal in about four decisions of ten (each
card wins or loses the hand in every drawn deal), and then chooses among them almost at random,
where PIMC keeps the most card points. The network it started from was taught the actual deal's
values with a share of the card-point margin: does its preference, added at a small weight to the
late head's logits, break those ties better? ::

    python evaluate.py experiments.late_prior:LatePrior,late=EXPERT.onnx,beta=0.2 pimc:worlds=32 \
        --deals 2000 --matches 0 --seed 61 --workers 2
    python evaluate.py compare RESULT.json EXPERT_RESULT.json

Each card play's choice is the argmax of the model's logits plus ``beta`` times the ``prior``
model's log-probabilities; bids are the model's own. ONNX models, as the bot plays them.
"""

from __future__ import annotations

import numpy as np

from agents.base import Agent, SeatView
from agents.policy import ONNX_MODEL, OnnxPolicy, masked_softmax
from cuatrola_env.engine import BIDDING


class LatePrior(Agent):
    """The ONNX model at ``late``, greedy, its card plays' logits plus ``beta`` times the
    log-probabilities of the model at ``prior``."""

    def __init__(self, seed: int | None = None, late: str = "agents/models/cuatrola_expert.onnx",
                 prior: str = str(ONNX_MODEL), beta: float = 0.2):
        super().__init__(seed)
        self.late, self.prior, self.beta = OnnxPolicy.load(late), OnnxPolicy.load(prior), beta

    def act(self, view: SeatView) -> int:
        legal = view.legal_actions
        if len(legal) == 1:
            return legal[0]
        obs, mask = view.observation[None], view.legal_mask[None]
        logits = self.late.logits(obs, mask)[0].astype(np.float64)
        if view.phase != BIDDING:
            logits = logits + self.beta * log_softmax(self.prior.logits(obs, mask)[0], view.legal_mask)
        return int(np.where(view.legal_mask, logits, -np.inf).argmax())


def log_softmax(logits: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """Log-probabilities over the ``legal`` actions (0 elsewhere)."""
    p = masked_softmax(logits[None].astype(np.float64), legal[None], 1.0)[0]
    with np.errstate(divide="ignore"):
        return np.where(legal, np.log(p), 0.0)
