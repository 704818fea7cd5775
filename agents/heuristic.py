"""A rule-based Cuatrola player: the baseline every learned bot should beat.

Bidding, from hand strength (what a careful human counts):

* *sure tricks*: the unbroken run of top trumps from the as down, plus a share for further
  trumps and for side aces (worth more when the hand can draw trumps);
* quintola with about 5 sure tricks, cuatrola with about 4, solo with enough card strength
  (trumps weighted by rank, side aces and covered treses); otherwise pass. Only legal bids
  are considered, so the exact-target rule is respected.

Card play:

* leading: a declarer of cuatrola/quintola, or a hand strong in trumps (as or tres of trump
  and three trumps), leads its highest trump to draw the others' (arrastre); else a side as;
  else its cheapest card, keeping rey and caballo of an unsung suit together for a cante;
* following, partner winning the trick: if the partner's card should hold, load points
  onto the partner's trick (the dearest card that is not a top trump); else play cheap;
* following, opponent winning: take the trick with the cheapest card that wins when it is
  worth it (10+ points in the trick, or tricks matter under cuatrola/quintola, or last to
  play); otherwise throw the cheapest card.
"""

from __future__ import annotations

from cuatrola_env import core
from cuatrola_env.core import PY
from cuatrola_env.rules import CUATROLA, NUM_CARDS, NUM_RANKS, PASS, QUINTOLA, RANK_POINTS, SOLO

from .base import Agent, SeatView

AS, TRES, REY, CABALLO = 4, 3, 2, 1


def suit(c: int) -> int:
    return c // NUM_RANKS


def rank(c: int) -> int:
    return c % NUM_RANKS


def cards(mask: int) -> list[int]:
    return [c for c in range(NUM_CARDS) if mask >> c & 1]


class HeuristicAgent(Agent):
    """The rule-based player described in the module docstring."""

    deterministic = True

    OPTIONS = {"solo": float, "cuatrola": float, "quintola": float}

    def __init__(self, seed: int | None = None, solo: float = 7.0, cuatrola: float = 3.9, quintola: float = 4.9):
        super().__init__(seed)
        self.solo_threshold = solo
        self.cuatrola_threshold = cuatrola
        self.quintola_threshold = quintola

    # ------------------------------------------------------------------ bidding
    def hand_strength(self, hand: int, trump: int) -> tuple[float, float]:
        """(estimated sure tricks, card strength) of a hand."""
        mine = cards(hand)
        trumps = sorted((rank(c) for c in mine if suit(c) == trump), reverse=True)
        top = 0
        for want, r in zip(range(AS, -1, -1), trumps, strict=False):
            if r != want:
                break
            top += 1
        side_aces = sum(1 for c in mine if suit(c) != trump and rank(c) == AS)
        side_covered_treses = sum(
            1 for c in mine if suit(c) != trump and rank(c) == TRES and (hand >> (c + 1)) & 1
        )
        drawn = len(trumps) >= 3
        tricks = top + 0.55 * (len(trumps) - top) + side_aces * (0.9 if drawn else 0.55) + 0.4 * side_covered_treses
        weights = {AS: 3.0, TRES: 2.5, REY: 1.7, CABALLO: 1.4, 0: 1.2}
        strength = sum(weights[r] for r in trumps) + 1.6 * side_aces + 0.8 * side_covered_treses
        return tricks, strength

    def bid(self, view: SeatView) -> int:
        tricks, strength = self.hand_strength(view.hand, view.trump)
        wanted = [
            (NUM_CARDS + QUINTOLA, tricks >= self.quintola_threshold),
            (NUM_CARDS + CUATROLA, tricks >= self.cuatrola_threshold),
            (NUM_CARDS + SOLO, strength >= self.solo_threshold),
        ]
        for action, ok in wanted:
            if ok and view.legal >> action & 1:
                return action
        return NUM_CARDS + PASS

    # ------------------------------------------------------------------ card play
    def act(self, view: SeatView) -> int:
        if view.phase == 0:
            return self.bid(view)
        legal = [a for a in view.legal_actions if a < NUM_CARDS]
        if len(legal) == 1:
            return legal[0]
        trump = view.trump
        pairs = self._cante_pairs(view)

        def cheap(c):  # cost of giving a card away: its points, trumps and cante cards dearer
            return RANK_POINTS[rank(c)] + (12 + rank(c) if suit(c) == trump else 0) + (6 if c in pairs else 0)

        if not view.trick:
            return self._lead(view, legal, cheap)
        me, partner = view.seat, view.seat ^ 2
        led, best_led, best_trump, win_seat = core.trick_state(view.trick, trump)
        win_card = best_trump if best_trump >= 0 else best_led
        playing = 3 if view.sitter >= 0 else 4
        last = len(view.trick) == playing - 1
        tricks_matter = view.contract >= CUATROLA
        trick_points = sum(RANK_POINTS[rank(c)] for _, c in view.trick)
        n = len(view.trick)  # the cards that would take the trick, by the engine's own rule
        winners = [c for c in legal if core.play(PY, c, me, True, n, led, best_led, best_trump, win_seat, trump)[3] == me]
        if win_seat == partner:
            holds = last or suit(win_card) == trump or rank(win_card) == AS or self._is_top(win_card, view)
            if holds and not tricks_matter:
                # load points onto the partner's trick, sparing top trumps and cante cards
                gifts = [c for c in legal if not (suit(c) == trump and rank(c) >= TRES) and c not in pairs]
                if gifts:
                    return max(gifts, key=lambda c: (RANK_POINTS[rank(c)], -rank(c)))
            return min(legal, key=cheap)
        if winners:
            declarer_side = view.declarer >= 0 and (view.declarer & 1) == (me & 1)
            worth = trick_points >= 10 or tricks_matter or last or (declarer_side and view.contract == SOLO)
            if worth:
                if last:
                    return min(winners, key=cheap)
                # not last: a top card of the led suit holds; otherwise trump cheaply
                return min(winners, key=lambda c: (not self._is_top(c, view), cheap(c)))
        return min(legal, key=cheap)

    def _lead(self, view: SeatView, legal: list[int], cheap) -> int:
        trump = view.trump
        trumps = [c for c in legal if suit(c) == trump]
        declaring_alone = view.declarer == view.seat and view.contract >= CUATROLA
        strong = len(trumps) >= 3 and any(rank(c) >= TRES for c in trumps)
        if trumps and (declaring_alone or strong):
            return max(trumps, key=rank)
        aces = [c for c in legal if rank(c) == AS and suit(c) != trump]
        if aces:
            return aces[0]
        tops = [c for c in legal if suit(c) != trump and self._is_top(c, view)]
        if tops:
            return max(tops, key=lambda c: RANK_POINTS[rank(c)])
        return min(legal, key=cheap)

    @staticmethod
    def _is_top(card: int, view: SeatView) -> bool:
        """Is ``card`` the highest card of its suit still out (not yet played)?"""
        gone = view.played | (view.hand & ~(1 << card))
        for r in range(rank(card) + 1, NUM_RANKS):
            higher = suit(card) * NUM_RANKS + r
            if not (gone >> higher) & 1:
                return False
        return True

    @staticmethod
    def _cante_pairs(view: SeatView) -> set[int]:
        """Rey and caballo of unsung suits held together (worth keeping for a cante)."""
        if view.contract > SOLO or view.contract < 0:
            return set()
        out = set()
        for s in range(4):
            cab, rey = s * NUM_RANKS + CABALLO, s * NUM_RANKS + REY
            if (view.hand >> cab) & 1 and (view.hand >> rey) & 1 and not (view.sung >> cab) & 1:
                out |= {cab, rey}
        return out


__all__ = ["HeuristicAgent"]
