"""A player made of two: one agent bids, another plays the cards.

Where does a player lose to a stronger one: in the bidding or in the card play? Give one of
them the other's bids and measure again, on the same deals::

    # the network's card play, with PIMC(32)'s bids, against PIMC(32)
    python evaluate.py examples.split_agent:SplitAgent,bidder=pimc:worlds=32,player=model:models/oracle/oracle.pt \\
        pimc:worlds=32 --deals 600 --matches 0 --seed 13

The two specs are options of a plug-in agent, so each may hold at most one option of its own
(a comma ends it). Each part sees only the seat's view, like any agent.
"""

from __future__ import annotations

from agents.base import Agent, SeatView
from agents.registry import make_agent
from cuatrola_env.engine import BIDDING


class SplitAgent(Agent):
    """Bids as ``bidder`` and plays the cards as ``player`` (both agent specs)."""

    def __init__(self, seed: int | None = None, bidder: str = "heuristic", player: str = "heuristic"):
        super().__init__(seed)
        self.bidder = make_agent(bidder, seed=seed)
        self.player = make_agent(player, seed=seed)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.bidder.reset(seed)
        self.player.reset(seed)

    def act(self, view: SeatView) -> int:
        return (self.bidder if view.phase == BIDDING else self.player).act(view)
