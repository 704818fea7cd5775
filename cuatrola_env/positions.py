"""A batch of positions: games dealt and played to some point of a hand, stepped by the engine.

>>> import numpy as np
>>> from cuatrola_env.positions import Positions
>>> from cuatrola_env.rules import ONLINE
>>> pos = Positions.deal([[0b11111, 0b11111 << 5, 0b11111 << 10, 0b11111 << 15]], dealer=0, muestra=4, rules=ONLINE)
>>> pos.current.tolist(), len(pos)                    # la mano (seat 1) speaks first
([1], 1)
>>> for _ in range(4):
...     _ = pos.step(np.full(1, 20))                  # every seat passes: the hand is played as "pass"
>>> pos.phase.tolist()
[1]

What the search, the expert's labels and the bot build on, instead of driving
:mod:`cuatrola_env.engine` by hand: :meth:`Positions.deal` (or :meth:`Positions.replay`, a hand
from its actions), :meth:`take` and :meth:`concat` to choose and join games, :attr:`legal_bits`,
:meth:`legal_mask` and :meth:`observe` of the seat to act, and :meth:`step`, after which a
finished hand stays exactly as it ended (whatever action it is then given) with its result in
:meth:`results`. :meth:`play_out` plays every hand to its end with a policy. The rules are the
engine's; this class only holds the batch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from . import bitboards as bb
from . import engine
from .observation import observe
from .rules import NUM_ACTIONS, NUM_CARDS, Rules


def _pool_deals(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The first ``n`` deals of a :class:`~cuatrola_env.engine.DealPool` seeded with ``seed``, dealers
    rotating from seat 0: hand masks (n, 4), dealers (n,), muestras (n,)."""
    if n < 0:
        raise ValueError(f"the number of deals must be at least 0, got {n}")
    dealer = (np.arange(n) % 4).astype(np.int8)
    masks, muestra = engine.DealPool(np.random.default_rng(seed), block=max(n, 1)).draw(dealer)
    return masks, dealer, muestra.astype(np.int8)


def random_deals(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``n`` deals from the engine's one deal generator (:class:`~cuatrola_env.engine.DealPool`),
    seeded with ``seed``: hands (n, 4, 5) card ids (each hand in increasing order), dealers
    rotating 0, 1, 2, 3, 0, ... and the muestras (n,), each in its dealer's hand.

    >>> hands, dealer, muestra = random_deals(3, seed=0)
    >>> hands.shape, dealer.tolist(), bool((hands[np.arange(3), dealer] == muestra[:, None]).any(axis=1).all())
    ((3, 4, 5), [0, 1, 2], True)
    """
    masks, dealer, muestra = _pool_deals(n, seed)
    bits = (masks[:, :, None] >> np.arange(NUM_CARDS, dtype=np.uint32)) & 1
    return np.nonzero(bits)[2].reshape(n, 4, 5).astype(np.int8), dealer, muestra


class Positions:
    """``len(self)`` games of one rules set (:class:`~cuatrola_env.engine.State` ``state``, each
    at some point of a hand; a finished one has phase DONE)."""

    def __init__(self, state: engine.State, rules: Rules):
        self.state, self.rules = state, rules

    @classmethod
    def deal(cls, hands, dealer, muestra, rules: Rules, score=None) -> Positions:
        """New hands: ``hands`` (n, 4) card masks in seat order, ``dealer`` and ``muestra`` (n,) or
        one for all, ``score`` the match score before the hand ((2,) or (n, 2); default 0-0)."""
        hands = np.asarray(hands, dtype=np.uint32)
        n = len(hands)
        s = engine.new_state(n)
        engine.start_hand(s, np.arange(n), hands, np.broadcast_to(np.asarray(dealer, np.int8), (n,)),
                          np.broadcast_to(np.asarray(muestra, np.int8), (n,)))
        if score is not None:
            s.score[:] = score
        return cls(s, rules)

    @classmethod
    def random(cls, n: int, rules: Rules, seed: int, score=None) -> Positions:
        """``n`` new hands dealt as :func:`random_deals` deals them (the same deals for the same seed)."""
        return cls.deal(*_pool_deals(n, seed), rules, score)

    @classmethod
    def replay(cls, hands, dealer, muestra, rules: Rules, actions: np.ndarray, score=None) -> Positions:
        """The hands dealt, then ``actions`` (n, T) played in order (-1 once a hand is over; before,
        ``ValueError``)."""
        pos = cls.deal(hands, dealer, muestra, rules, score)
        for column in np.asarray(actions).T:
            pos.step(column)
        return pos

    @classmethod
    def concat(cls, parts: Sequence[Positions]) -> Positions:
        """The games of ``parts`` (of one rules set), in order, as one batch."""
        fields = vars(parts[0].state)
        return cls(engine.State(**{k: np.concatenate([getattr(p.state, k) for p in parts]) for k in fields}),
                   parts[0].rules)

    def __len__(self) -> int:
        return self.state.num_games

    def take(self, idx) -> Positions:
        """Games ``idx`` (indices, in any order and with repeats) as a new batch."""
        return Positions(self.state.take(np.asarray(idx)), self.rules)

    # ------------------------------------------------------------------ what the seat to act sees
    @property
    def current(self) -> np.ndarray:
        """(n,) the seat to act."""
        return self.state.current

    @property
    def phase(self) -> np.ndarray:
        """(n,) 0 bidding, 1 card play, 2 over."""
        return self.state.phase

    @property
    def done(self) -> np.ndarray:
        """(n,) whether the hand is over."""
        return self.state.phase == engine.DONE

    @property
    def legal_bits(self) -> np.ndarray:
        """(n,) the legal actions of the seat to act, one bit each (bits 0..23; computed on each use)."""
        return engine.legal_action_mask(self.state, self.rules)

    def legal_mask(self, bits: np.ndarray | None = None) -> np.ndarray:
        """(n, 24) bool: the legal actions (of ``bits``, if already computed)."""
        return bb.to_bools(self.legal_bits if bits is None else bits, NUM_ACTIONS)

    def observe(self) -> np.ndarray:
        """(n, OBS_DIM) float32: the observation of the seat to act."""
        return observe(self.state, self.rules)

    @property
    def hands(self) -> np.ndarray:
        """(n, 4) uint32: each seat's unplayed cards, one bit each."""
        return self.state.hands

    def hand_lists(self) -> list[list[int]]:
        """Each game's four unplayed hands as plain ints (a double-dummy solver's input)."""
        return [[int(h) for h in row] for row in self.state.hands]

    # ------------------------------------------------------------------ moving on
    def step(self, actions) -> np.ndarray:
        """One action per game (legal for the seat to act; any value for a finished hand, which stays
        as it is); the indices of the hands that ended with it."""
        live = ~self.done
        actions = np.asarray(actions)
        missing = np.flatnonzero(live & (actions < 0))
        if missing.size:
            raise ValueError(f"game {missing[0]}: its hand is in play, so it needs an action, got {actions[missing[0]]}")
        a = np.where(live, actions, NUM_CARDS).astype(np.int8)
        ended = engine.step(self.state, a, self.rules)
        ended = ended[live[ended]]
        self.state.phase[ended] = engine.DONE
        return ended

    def results(self, rows) -> tuple[np.ndarray, np.ndarray]:
        """(winning team, game points) of the finished hands ``rows``."""
        return engine.hand_results(self.state, np.asarray(rows), self.rules)

    def play_out(self, policy: Callable[[Positions, np.ndarray, np.ndarray], np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """Every hand played to its end, ``policy(positions, live, legal_bits)`` giving the actions of
        the live games ``live`` (indices); (winning team, game points) of each game."""
        n = len(self)
        while not self.done.all():
            live = np.flatnonzero(~self.done)
            bits = self.legal_bits
            actions = np.full(n, NUM_CARDS)
            actions[live] = policy(self, live, bits)
            self.step(actions)
        return self.results(np.arange(n))  # a finished hand stays as it ended: its result is read once, here


__all__ = ["Positions"]
