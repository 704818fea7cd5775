"""A hand-written agent to start from: ``HighCard`` bids pass (or solo) and plays its highest legal card.

    python evaluate.py examples.my_agents:HighCard heuristic --deals 500 --seed 0
    python evaluate.py examples.my_agents:HighCard,greedy=false examples.my_agents:HighCard --deals 500

Run from the repository's root (``python evaluate.py`` puts it on the path, so ``examples`` is
importable); a copy of this file elsewhere is named ``my_agents:HighCard`` with ``PYTHONPATH=.``.
Writing agents: docs/agents.md.
"""

from __future__ import annotations

from agents import Agent, SeatView


class HighCard(Agent):
    """Bids pass (or solo, when legal and asked for), then plays its highest legal card (or, with
    ``greedy=false``, a random one)."""

    def __init__(self, seed: int | None = None, bid: str = "pass", greedy: bool = True):
        super().__init__(seed)
        if bid not in ("pass", "solo"):
            raise ValueError(f"bid must be pass or solo, got {bid!r}")
        self.bid, self.greedy = bid, greedy

    def act(self, view: SeatView) -> int:
        legal = view.legal_actions  # action ids: 0..19 cards, 20..23 bids
        if view.phase == 0:  # bidding
            wanted = {"pass": 20, "solo": 21}[self.bid]
            return wanted if wanted in legal else 20
        cards = [a for a in legal if a < 20]
        if self.greedy:
            return max(cards, key=lambda c: c % 5)  # rank within the suit: sota .. as
        return int(self.rng.choice(cards))
