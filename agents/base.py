"""The agent interface: what a seat may see, and a decision.

An agent sees exactly what its seat may see under the rules: a :class:`SeatView` holds the
observation vector and the legal-action mask, plus a decoded copy of the same public
information (and the seat's own hand) for hand-written bots. It returns one action id.

Agents are named by *specs*, strings usable on the command line::

    random                 uniformly random legal actions
    heuristic              the rule-based player (agents/heuristic.py)
    pimc:worlds=32         Perfect-Information Monte Carlo with 32 sampled worlds
    bot:level=master       the shipped ONNX model with search at play time (agents/search.py)

:func:`make_agent` turns a spec into an agent and explains what is wrong with a bad one.
"""

from __future__ import annotations

import numpy as np

from cuatrola_env.view import SeatView, batch_views, seat_view  # the views live with the game; agents take them


class Agent:
    """Base class: override :meth:`act`. ``spec`` is the string that made the agent;
    ``rng`` is the agent's own seeded random generator."""

    spec: str = "agent"
    #: the same view always gets the same action (no use of ``rng``): such an agent can serve as a
    #: model of another seat in :class:`agents.search.SearchAgent` (``opponent=``)
    deterministic: bool = False

    def __init__(self, seed: int | None = None):
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        """Called before each hand or match with a seed for the agent's own randomness."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def act(self, view: SeatView) -> int:
        raise NotImplementedError

    def act_batch(self, views: list[SeatView]) -> list[int]:
        """One action per view (games at once); vectorised agents override this."""
        return [self.act(v) for v in views]

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.spec}>"

__all__ = ["Agent", "SeatView", "batch_views", "seat_view"]
