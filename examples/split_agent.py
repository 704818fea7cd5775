"""A player made of two or three: one agent bids, another plays the cards, a third may take
over the card play from a given trick on.

Where does a player lose to a stronger one: in the bidding, in the early tricks or in the late
ones? Give one of them the other's bids, or its last tricks, and measure again on the same deals::

    # the network's card play, with PIMC(32)'s bids, against PIMC(32)
    python evaluate.py examples.split_agent:SplitAgent,bidder=pimc:worlds=32,player=model:models/oracle/oracle.pt \\
        pimc:worlds=32 --deals 600 --matches 0 --seed 13

    # the network bids and plays the first two tricks; PIMC(32) plays the last three
    NET=model:agents/models/cuatrola.pt
    python evaluate.py examples.split_agent:SplitAgent,bidder=$NET,player=$NET,late=pimc:worlds=32,from_trick=2 \\
        pimc:worlds=32 --deals 1000 --matches 0 --seed 13

The specs are options of a plug-in agent, so each may hold at most one option of its own (a
comma ends it). Each part sees only the seat's view, like any agent. Tricks count from 0.
"""

from __future__ import annotations

from agents.base import Agent, SeatView
from agents.registry import make_agent
from cuatrola_env.engine import BIDDING
from cuatrola_env.rules import NUM_TRICKS


class SplitAgent(Agent):
    """Bids as ``bidder``, plays the cards as ``player``, and from trick ``from_trick`` on
    (counting from 0) as ``late`` when it is given."""

    def __init__(
        self,
        seed: int | None = None,
        bidder: str = "heuristic",
        player: str = "heuristic",
        late: str | None = None,
        from_trick: int = NUM_TRICKS,
    ):
        super().__init__(seed)
        from_trick = int(from_trick)
        if not 0 <= from_trick <= NUM_TRICKS:
            raise ValueError(f"from_trick must be between 0 and {NUM_TRICKS}, got {from_trick}")
        self.bidder = make_agent(bidder, seed=seed)
        self.player = make_agent(player, seed=seed)
        self.late = make_agent(late, seed=seed) if late else self.player
        self.from_trick = from_trick

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        for part in {id(p): p for p in (self.bidder, self.player, self.late)}.values():
            part.reset(seed)

    def act(self, view: SeatView) -> int:
        if view.phase == BIDDING:
            return self.bidder.act(view)
        return (self.late if view.trick_num >= self.from_trick else self.player).act(view)
