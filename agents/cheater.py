"""``cheater``: a player who sees every card, for measurement only.

It bids and plays as PIMC does with one world, the actual deal: each bid valued by the hand solved
double-dummy under the contract it leads to, each card by the position solved after it. No honest
player can reach it, so it bounds from above what any agent can score on the same deals; the gap
from a baseline to it is a scale on which progress reads (``evaluate.py --gap-to cheater``).

Only the duplicate evaluator seats it: it alone hands a player every seat's cards
(:meth:`CheaterAgent.act_seeing`). Its :meth:`~CheaterAgent.act`, given only what a seat may see,
refuses; the bot and the service play levels, and have none that cheats.
"""

from __future__ import annotations

from .base import SeatView
from .pimc import PIMCAgent


class CheaterAgent(PIMCAgent):
    """Sees every card: PIMC whose only world is the actual deal."""

    OPTIONS: dict = {}
    #: the evaluator calls :meth:`act_seeing` with every seat's unplayed cards instead of :meth:`act`
    sees_all = True

    def __init__(self, seed: int | None = None):
        super().__init__(seed=seed, worlds=1)

    def act(self, view: SeatView) -> int:
        raise ValueError("the cheater sees every card: only the duplicate evaluator (evaluate.py) can seat it, "
                         "handing it the deal; it has no place in play against people")

    def act_seeing(self, view: SeatView, hands: list[int]) -> int:
        """The action of the best outcome when the hand is played out double-dummy on ``hands``
        (every seat's unplayed cards, seat order, as 20-bit masks)."""
        legal = view.legal_actions
        if len(legal) == 1:
            return legal[0]
        world = [[int(h) for h in hands]]
        return self.choose_bid(view, legal, world) if view.phase == 0 else self.choose_card(view, legal, world)


__all__ = ["CheaterAgent"]
