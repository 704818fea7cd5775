"""The random agent: a uniformly random legal action."""

from __future__ import annotations

from .base import Agent, SeatView


class RandomAgent(Agent):
    """Uniformly random among the legal actions (seeded)."""

    OPTIONS: dict = {}

    def act(self, view: SeatView) -> int:
        legal = view.legal_actions
        return legal[int(self.rng.integers(len(legal)))]
