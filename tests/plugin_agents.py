"""Agents defined outside the project, for the plug-in tests: ``plugin_agents:LowestCard``."""

import os
import time
from pathlib import Path

from agents import Agent, SeatView


class LowestCard(Agent):
    """Plays its lowest legal action id; with ``always_pass`` it passes whenever it may bid."""

    def __init__(self, seed: int | None = None, always_pass: bool = True, depth: int = 1):
        super().__init__(seed)
        self.always_pass, self.depth = always_pass, depth

    def act(self, view: SeatView) -> int:
        legal = view.legal_actions
        if self.always_pass and 20 in legal:
            return 20
        return legal[0]


class DiesOnce(LowestCard):
    """Kills its own process the first time it acts in a run (a crashing worker), then plays as
    ``LowestCard``; ``marker`` is the file that remembers it has died."""

    def __init__(self, seed: int | None = None, marker: str = ""):
        super().__init__(seed)
        self.marker = Path(marker)

    def act(self, view: SeatView) -> int:
        if self.marker and not self.marker.exists():
            self.marker.write_text("died")
            os._exit(1)
        return super().act(view)


class FailsToAct(LowestCard):
    """Raises on its first decision: a bug in a user's agent, to be reported with its traceback."""

    def act(self, view: SeatView) -> int:
        raise RuntimeError("this agent cannot play")


def nap(seconds: float) -> float:
    """A task that only takes time (for the tests of stopping a parallel map)."""
    time.sleep(seconds)
    return seconds


class ChecksHistory(LowestCard):
    """Plays as ``LowestCard`` after checking that its view's history is the hand so far: every
    card played this hand exactly once, the trick in play as its last plays, and one bid per seat
    that has bid. Raises ``AssertionError`` (the run fails) where it is not."""

    def act(self, view: SeatView) -> int:
        cards = [(seat, a) for seat, a in view.history if a < 20]
        bids = [a for _, a in view.history if a >= 20]
        assert sorted(a for _, a in cards) == [c for c in range(20) if view.played >> c & 1], view.history
        assert tuple(cards[len(cards) - len(view.trick):]) == view.trick, (view.history, view.trick)
        assert len(bids) == sum(b >= 0 for b in view.bids), (view.history, view.bids)
        return super().act(view)
