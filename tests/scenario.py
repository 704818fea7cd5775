"""A tiny language for rule scenarios: deals written as card names, played one step at a time.

Card names: rank letter + suit letter. Ranks S sota, C caballo, R rey, 3 tres, A as;
suits o oros, c copas, e espadas, b bastos. ``"Ab"`` is the as de bastos (card 19).
Bids: ``"pass"``, ``"solo"``, ``"cuatrola"``, ``"quintola"``.
"""

from __future__ import annotations

import numpy as np

from cuatrola_env import VectorCuatrola

RANKS = "SCR3A"
SUITS = "oceb"
BIDS = {"pass": 20, "solo": 21, "cuatrola": 22, "quintola": 23}


def cid(name: str) -> int:
    """Card id of a short name like "Ab"."""
    return 5 * SUITS.index(name[1]) + RANKS.index(name[0])


def aid(name: str) -> int:
    """Action id of a card name or a bid."""
    return BIDS[name] if name in BIDS else cid(name)


def name_of(action: int) -> str:
    if action >= 20:
        return {v: k for k, v in BIDS.items()}[action]
    return RANKS[action % 5] + SUITS[action // 5]


class Scenario:
    """One game (batch of 1) set up from named hands."""

    def __init__(self, hands: list[str], dealer: int, muestra: str, rules="online", mode="hand", score=None):
        cards = np.array([[cid(c) for c in h.split()] for h in hands])
        self.env = VectorCuatrola(num_envs=1, rules=rules, mode=mode, seed=0)
        self.env.reset(hands=cards[None], dealer=[dealer], muestra=[cid(muestra)], score=score)
        self.rewards = None
        self.done = False
        self.results = {}

    @property
    def state(self):
        return self.env.state

    @property
    def to_act(self) -> int:
        return int(self.env.current_player[0])

    def legal(self) -> set[str]:
        return {name_of(a) for a in np.flatnonzero(self.env.action_mask[0])}

    def play(self, *moves: str, seat: int | None = None):
        """Play moves in turn; each is checked to be legal. Returns self."""
        for m in moves:
            if seat is not None:
                assert self.to_act == seat, f"expected seat {seat} to act, got {self.to_act}"
            assert m in self.legal(), f"{m} not legal for seat {self.to_act}: {sorted(self.legal())}"
            self.rewards, done = self.env.step(np.array([aid(m)]))
            self.done = bool(done[0])
            if self.env.last_results:
                self.results = {k: v[0] for k, v in self.env.last_results.items()}
        return self
