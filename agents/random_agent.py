"""The random agent: a uniformly random legal action."""

from __future__ import annotations

import numpy as np

from .base import Agent, SeatView


class RandomAgent(Agent):
    """Uniformly random among the legal actions (seeded)."""

    OPTIONS: dict = {}

    def __init__(self, seed: int | None = None):
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def act(self, view: SeatView) -> int:
        legal = view.legal_actions
        return legal[int(self.rng.integers(len(legal)))]
