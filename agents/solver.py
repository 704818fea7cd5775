"""Double-dummy solver: the exact value of a Cuatrola position with every hand visible.

Alpha-beta minimax over bitmask states, with a transposition table at trick boundaries,
compiled with numba. Contract-aware:

* pass and solo: the value is the rest of the hand's points of team 0 minus team 1
  (cards won, cantes and the last trick's 10); team 0 maximises;
* cuatrola and quintola: the value is the number of the remaining tricks the declarer wins;
  the declarer maximises (made when its total reaches 4, or 5).

The rules come from the engine: legal play, the trick's winner, the next seat, a trick's
points and the cante are :mod:`cuatrola_env.core`'s kernels compiled by numba from their own
source (:mod:`agents.kernels`). ``tests/test_solver.py`` checks the moves against the engine's
legal moves on random positions, under each preset with each card-play option flipped, and the
values against an exhaustive minimax that plays through the engine itself.

>>> from cuatrola_env.game import Game
>>> from agents.solver import Position
>>> g = Game(seed=1)
>>> for _ in range(4):
...     _ = g.step(20)                                           # all pass: the hand is played as "pass"
>>> Position.from_game(g).solve()                                # exact team-0 minus team-1 points
-170
"""

from __future__ import annotations

import dataclasses

import numpy as np
from numba import njit

from cuatrola_env.core import trick_state
from cuatrola_env.rules import CUATROLA, Rules, get_rules

from .kernels import cante, legal_play, next_seat, play, trick_points, trick_size

ALL = (1 << 20) - 1
TT_BITS = 13
EXACT, LOWER, UPPER = 0, 1, 2
INF = 10_000


@njit(cache=False)  # a cached recursive function crashed numba 0.68 on reload: compile per process
def _search(hands, seat, trick_len, led, best_led, best_trump, win_seat, trick_mask, trick_num, sung,
            trump, sitter, contract, declarer, otw, mt, alpha, beta, tt_keys, tt_vals, tt_flags, only=ALL):
    """Minimax value of the rest of the hand (see the module docstring), alpha-beta.

    ``only`` restricts the moves tried at this node (the root): the value of one card,
    the trick it may complete included."""
    if trick_num == 5:
        return 0
    by_tricks = contract >= CUATROLA
    # the maximising side: team 0 for points, the declarer's team for tricks
    maximise = (seat & 1) == 0 if not by_tricks else (seat & 1) == (declarer & 1)
    key = -1
    slot = 0
    if trick_len == 0 and only == ALL:
        remaining = hands[0] | hands[1] | hands[2] | hands[3]
        key = remaining | (seat << 20) | (sung << 22)
        slot = (key * 0x9E3779B1) & ((1 << TT_BITS) - 1)
        if tt_keys[slot] == key:
            v = tt_vals[slot]
            f = tt_flags[slot]
            if f == EXACT:
                return v
            if f == LOWER and v >= beta:
                return v
            if f == UPPER and v <= alpha:
                return v
    a0, b0 = alpha, beta
    best = -INF if maximise else INF
    hand = hands[seat]
    moves = legal_play(otw, mt, hand, trick_len, led, best_led, best_trump, trump) & only
    size = trick_size(sitter)
    c = 19
    while c >= 0:
        if not (moves >> c) & 1:
            c -= 1
            continue
        cbit = 1 << c
        n_led, n_best_led, n_best_trump, n_win = play(c, seat, True, trick_len, led, best_led, best_trump, win_seat, trump)
        hands[seat] = hand & ~cbit
        if trick_len + 1 < size:
            v = _search(hands, next_seat(seat, sitter), trick_len + 1, n_led, n_best_led, n_best_trump, n_win,
                        trick_mask | cbit, trick_num, sung, trump, sitter, contract, declarer, otw, mt, alpha, beta,
                        tt_keys, tt_vals, tt_flags)
        else:
            # the trick is complete: score it, then the cante, then the rest of the hand
            tm = trick_mask | cbit
            team = n_win & 1
            gain = 0
            n_sung = sung
            if by_tricks:
                if (n_win & 1) == (declarer & 1):
                    gain = 1
            else:  # the trick's points, then the cante of the team that took it (the engine's kernels)
                ha = hands[team] if sitter != team else 0
                hb = hands[team + 2] if sitter != team + 2 else 0
                sing, sung_points, suit = cante(ha, hb, sung_bits(sung), trump, contract)
                if sing:
                    n_sung = sung | (1 << suit)
                pts = trick_points(tm, trick_num) + sung_points
                gain = pts if team == 0 else -pts
            v = gain + _search(hands, n_win, 0, -1, -1, -1, -1, 0, trick_num + 1, n_sung, trump, sitter,
                               contract, declarer, otw, mt,
                               alpha - gain, beta - gain, tt_keys, tt_vals, tt_flags)
        hands[seat] = hand
        if maximise:
            if v > best:
                best = v
            if best > alpha:
                alpha = best
        else:
            if v < best:
                best = v
            if best < beta:
                beta = best
        if alpha >= beta:
            break
        c -= 1
    if key >= 0:
        tt_keys[slot] = key
        tt_vals[slot] = best
        tt_flags[slot] = UPPER if best <= a0 else (LOWER if best >= b0 else EXACT)
    return best


@njit(cache=True)
def sung_bits(sung_suits):
    """Caballo bits of the suits in a 4-bit set of sung suits."""
    out = 0
    for s in range(4):
        if (sung_suits >> s) & 1:
            out |= 1 << (5 * s + 1)
    return out


def new_table():
    """An empty transposition table (keys, values, bound flags)."""
    return (np.full(1 << TT_BITS, -1, dtype=np.int64), np.zeros(1 << TT_BITS, dtype=np.int64),
            np.zeros(1 << TT_BITS, dtype=np.int64))


@dataclasses.dataclass
class Position:
    """A position with every hand visible: the solver's input."""

    hands: list[int]  # unplayed cards of each seat (the sitter's too; they are never played)
    seat: int  # to act
    trick: list[tuple[int, int]]  # (seat, card) of the trick in play
    trick_num: int
    sung: int  # caballo bits of the suits sung
    trump: int
    sitter: int
    contract: int
    declarer: int
    rules: Rules

    @classmethod
    def from_game(cls, game) -> Position:
        """The current position of a :class:`cuatrola_env.game.Game` (card play only)."""
        v = game.seat_view()
        return cls(game.hands, v.seat, list(v.trick), v.trick_num, v.sung, v.trump, v.sitter, v.contract, v.declarer,
                   game.rules)

    def _trick_state(self):
        led, best_led, best_trump, win = trick_state(self.trick, self.trump)
        return led, best_led, best_trump, win, sum(1 << c for _, c in self.trick)

    def legal(self) -> int:
        led, best_led, best_trump, _, _ = self._trick_state()
        return int(legal_play(self.rules.overtake_when_trumped, self.rules.must_trump, self.hands[self.seat],
                              len(self.trick), led, best_led, best_trump, self.trump))

    def solve(self, tt=None, only: int = ALL, alpha: int = -INF, beta: int = INF) -> int:
        """The exact value (see the module docstring). ``tt`` (from :func:`new_table`) may be
        shared between positions of the same deal, contract and rules; ``only`` restricts
        the first move to these cards. With a window (``alpha``, ``beta``) the search is cut
        to what the window asks: a value inside it is exact, one at or below ``alpha`` says only
        that the exact value is at most that, one at or above ``beta`` only that it is at least
        that (much faster when only a threshold matters, as for a hand's winner)."""
        led, best_led, best_trump, win, mask = self._trick_state()
        hands = np.array(self.hands, dtype=np.int64)
        tt_keys, tt_vals, tt_flags = new_table() if tt is None else tt
        sung_suits = sum(1 << s for s in range(4) if self.sung >> (5 * s + 1) & 1)
        return int(_search(hands, self.seat, len(self.trick), led, best_led, best_trump, win, mask, self.trick_num,
                           sung_suits, self.trump, self.sitter, self.contract, self.declarer,
                           self.rules.overtake_when_trumped, self.rules.must_trump, alpha, beta,
                           tt_keys, tt_vals, tt_flags, only))

    def move_values(self, alpha: int = -INF, beta: int = INF) -> dict[int, int]:
        """The value of playing each legal card now (the trick it completes included), exact or
        bounded by the window as :meth:`solve` says, one transposition table shared between them."""
        tt = new_table()
        legal = self.legal()
        return {c: self.solve(tt, 1 << c, alpha, beta) for c in range(20) if legal >> c & 1}


def warm_up() -> None:
    """Compile the solver now (a few seconds, once per process) by solving a small position."""
    Position([0b11111, 0b11111 << 5, 0b11111 << 10, 0b11111 << 15], 0, [], 0, 0, 0, -1, 0, -1, get_rules("online")).solve()
