"""What one seat may see at a decision: :class:`SeatView`, of a single game or of a batch.

>>> from cuatrola_env.game import Game
>>> view = Game(seed=0).seat_view()            # the seat to act (la mano, bidding)
>>> view.seat, view.phase, len(view.legal_actions)
(0, 0, 4)

A view holds the observation vector and the legal-action mask (:mod:`cuatrola_env.observation`)
and a decoded copy of the same public information with the seat's own hand, for hand-written
players. It never holds another seat's unplayed card. :meth:`Game.seat_view
<cuatrola_env.game.Game.seat_view>` builds one from a game (with its history), :func:`batch_views`
from the batched engine (:class:`~cuatrola_env.VectorCuatrola`, :class:`~cuatrola_env.positions.Positions`).
"""

from __future__ import annotations

import dataclasses
from functools import cached_property

import numpy as np

from . import core
from .engine import trick_in_play
from .rules import MAX_DECISIONS_PER_HAND, NUM_ACTIONS, NUM_CARDS, Rules


@dataclasses.dataclass(frozen=True)
class SeatView:
    """Everything one seat may see at a decision (never another seat's unplayed card).

    Card sets are 20-bit masks (bit i = card id i); seats are absolute (0..3).
    """

    seat: int
    rules: Rules
    hand: int  #: own unplayed cards
    legal: int  #: legal actions, 24-bit mask
    phase: int  #: 0 bidding, 1 card play
    dealer: int
    muestra: int
    trump: int
    muestra_held: bool  #: the dealer still holds the muestra (public)
    bids: tuple[int, ...]  #: per seat: -1 not spoken yet, 0 pass, 1 solo, 2 cuatrola, 3 quintola
    contract: int  #: -1 during bidding
    declarer: int  #: -1 if none (so far)
    sitter: int  #: -1 if none
    history: tuple[tuple[int, int], ...]  #: (seat, action) of every decision this hand, in order
    trick: tuple[tuple[int, int], ...]  #: (seat, card) of the trick in play, in order
    trick_num: int
    tricks_won: tuple[int, ...]
    points: tuple[int, int]  #: team points so far this hand (cards + cantes + last trick)
    sung: int  #: caballo bit of each suit sung
    score: tuple[int, int]  #: match score
    played: int = 0  #: every card played so far this hand
    _game: object = dataclasses.field(repr=False, compare=False, default=None)  #: the Game it came from
    _obs: np.ndarray | None = dataclasses.field(repr=False, compare=False, default=None)

    @property
    def mano(self) -> int:
        return core.mano(core.PY, self.dealer)

    @property
    def high_bid(self) -> int:
        """The highest bid so far (0 when none: all passed or nobody has spoken)."""
        return max(max(self.bids), 0)

    def declares(self, action: int) -> bool:
        """Whether ``action`` is a bid above the highest so far: this seat would become the declarer."""
        return action - NUM_CARDS > self.high_bid

    @property
    def legal_actions(self) -> list[int]:
        return [a for a in range(NUM_ACTIONS) if self.legal >> a & 1]

    @property
    def legal_mask(self) -> np.ndarray:
        return np.array([self.legal >> a & 1 for a in range(NUM_ACTIONS)], dtype=bool)

    @cached_property
    def observation(self) -> np.ndarray:
        """The seat's observation vector (``cuatrola_env.observation``), built on first use."""
        return self._obs if self._obs is not None else self._game.observe(self.seat)


def seat_view(game, seat: int | None = None) -> SeatView:
    """The view of ``seat`` (default: the seat to act) of a :class:`~cuatrola_env.game.Game`
    (:meth:`Game.seat_view <cuatrola_env.game.Game.seat_view>`)."""
    g = game.single
    seat = g.current if seat is None else seat
    return SeatView(
        seat=seat,
        rules=game.rules,
        hand=g.hands[seat],
        legal=game.legal_bits if seat == g.current else 0,
        phase=g.phase,
        dealer=g.dealer,
        muestra=g.muestra,
        trump=g.trump,
        muestra_held=not (g.played >> g.muestra) & 1,
        bids=tuple(g.bids),
        contract=g.contract,
        declarer=g.declarer,
        sitter=g.sitter,
        history=tuple(game.history),
        trick=tuple(game.trick),
        trick_num=g.trick_num,
        tricks_won=tuple(g.tricks_won),
        points=(g.points[0], g.points[1]),
        sung=g.sung,
        score=(g.score[0], g.score[1]),
        played=g.played,
        _game=game,
    )


class HandHistories:
    """The hand's ``(seat, action)`` pairs so far in each of ``n`` batched games, which the
    batched state does not keep: :meth:`record` every step, :meth:`clear` a game whose hand ended
    (a new hand starts with an empty history), and give it to :func:`batch_views` for players that
    read the history (PIMC's belief sampler).

    >>> h = HandHistories(2)
    >>> h.record(np.array([0, 1]), np.array([3, 0]), np.array([20, 21]))
    >>> h.of(1), h.of(0)
    (((0, 21),), ((3, 20),))
    """

    def __init__(self, n: int):
        self.seat = np.full((n, MAX_DECISIONS_PER_HAND), -1, np.int8)  #: who made each action
        self.action = np.full((n, MAX_DECISIONS_PER_HAND), -1, np.int8)  #: the actions, in order
        self.length = np.zeros(n, np.int64)  #: actions so far this hand

    def record(self, games: np.ndarray, seats: np.ndarray, actions: np.ndarray) -> None:
        """Games ``games`` each took one more action: ``actions`` by ``seats``."""
        at = self.length[games]
        if (at >= MAX_DECISIONS_PER_HAND).any():
            raise ValueError(f"a hand has at most {MAX_DECISIONS_PER_HAND} actions: clear() the games whose hand ended")
        self.seat[games, at], self.action[games, at] = seats, actions
        self.length[games] = at + 1

    def clear(self, games: np.ndarray) -> None:
        """Games ``games`` start a new hand."""
        self.length[games] = 0
        self.seat[games], self.action[games] = -1, -1

    def of(self, game: int) -> tuple[tuple[int, int], ...]:
        """Game ``game``'s history as :attr:`SeatView.history` holds it."""
        n = int(self.length[game])
        return tuple(zip(self.seat[game, :n].tolist(), self.action[game, :n].tolist(), strict=True))

    def get_state(self) -> dict:
        """Plain arrays, for a checkpoint."""
        return {"seat": self.seat.copy(), "action": self.action.copy(), "length": self.length.copy()}

    def set_state(self, state: dict) -> None:
        """Continue from :meth:`get_state`; arrays of another shape raise ``ValueError`` and change nothing."""
        for k in ("seat", "action", "length"):
            if np.shape(state[k]) != getattr(self, k).shape:
                raise ValueError(f"the histories' {k!r} has shape {np.shape(state[k])}, these games {getattr(self, k).shape}")
        for k in ("seat", "action", "length"):
            getattr(self, k)[...] = state[k]


def batch_views(env, games, legal_bits=None, obs=None, history: HandHistories | None = None) -> list[SeatView]:
    """Views of the seats to act in games ``games`` of a :class:`~cuatrola_env.VectorCuatrola`.

    The batched state keeps no decision history, so ``history`` is empty unless the games'
    :class:`HandHistories` are given; everything else (hand, trick in play in order, played
    cards, bids, contract, points) is filled in. ``obs`` (rows for ``games``) may be given to
    avoid rebuilding observations.
    """
    s = env.state
    bits = env.legal_bits if legal_bits is None else legal_bits
    out = []
    for k, i in enumerate(games):
        i = int(i)
        seat = int(s.current[i])
        trick = tuple(trick_in_play(s, i))
        out.append(SeatView(
            seat=seat, rules=env.rules, hand=int(s.hands[i, seat]), legal=int(bits[i]), phase=int(s.phase[i]),
            dealer=int(s.dealer[i]), muestra=int(s.muestra[i]), trump=int(s.trump[i]),
            muestra_held=not (int(s.played[i]) >> int(s.muestra[i])) & 1, bids=tuple(int(b) for b in s.bids[i]),
            contract=int(s.contract[i]), declarer=int(s.declarer[i]), sitter=int(s.sitter[i]),
            history=() if history is None else history.of(i),
            trick=trick, trick_num=int(s.trick_num[i]), tricks_won=tuple(int(x) for x in s.tricks_won[i]),
            points=(int(s.points[i, 0]), int(s.points[i, 1])), sung=int(s.sung[i]),
            score=(int(s.score[i, 0]), int(s.score[i, 1])), played=int(s.played[i]),
            _obs=None if obs is None else obs[k],
        ))
    return out


__all__ = ["HandHistories", "SeatView", "batch_views", "seat_view"]
