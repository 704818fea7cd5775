"""One game on plain Python ints: the low-latency state layer for single-game interfaces.

The batched engine pays NumPy's per-call overhead on every operation, which dominates
when a batch holds one game. :class:`SingleGame` keeps one game's state in Python ints and
runs the same rule kernels (:mod:`cuatrola_env.core`, kit :data:`~cuatrola_env.core.PY`):
it makes no rule decision of its own. It mirrors the batched
:class:`~cuatrola_env.engine.State` field for field (:meth:`SingleGame.to_state` converts),
and the test suite steps both side by side to prove they agree, observations included.
"""

from __future__ import annotations

import numpy as np

from . import core, engine
from .core import BIDDING, DONE, PLAYING, PY
from .observation import CARD_MASK_COLUMNS, CATEGORY_WIDTH, OBS_DIM, OFFSETS, SCALAR_COLUMNS, scalar_scales
from .rules import NUM_CARDS, NUM_SEATS, NUM_TRICKS, Rules

_O = {name: sl.start for name, sl in OFFSETS.items()}
_ROT = [tuple((seat + r) & 3 for r in range(4)) for seat in range(4)]
_MUESTRA, _TRUMP, _DEALER, _MANO, _CONTRACT = (_O[k] for k in ("muestra", "trump", "dealer", "mano", "contract"))
_BIDS = _O["bids"] + 1  # column of "pass" is bid code 0 + 1
_BW = CATEGORY_WIDTH["bids"]
_LEADERS = [_O["trick_leaders"] + CATEGORY_WIDTH["trick_leaders"] * k for k in range(NUM_TRICKS)]
_CANTES = [_O["cantes"] + CATEGORY_WIDTH["cantes"] * k for k in range(4)]
_MUESTRA_IN_HAND, _DECLARER, _SITS_OUT, _PHASE, _TO_ACT = (
    _O[k] for k in ("muestra_in_hand", "declarer", "sits_out", "phase", "to_act")
)
_ABSENT = OFFSETS["absent"]
_ABSENT_BYTES = NUM_SEATS * NUM_CARDS // 8
#: fields of the state, in the order of engine.State; (name, length or None for a scalar)
FIELDS = tuple((f.name, f.shape[0] if f.shape else None) for f in engine.FIELDS)
#: (field, value at a hand's start) of what a new hand resets (the trick's fields included)
_NEW_HAND = tuple((f.name, f.fill, f.shape[0] if f.shape else None) for f in engine.FIELDS if f.reset in ("hand", "trick"))


class SingleGame:
    """One game's state and transitions; see the module docstring.

    ``step`` returns ``(rewards, episode_over, result)`` where ``result`` describes the hand
    that just ended (or is None). Actions are assumed legal: check them with
    :meth:`legal_mask` first (:class:`cuatrola_env.game.Game` does).
    """

    __slots__ = tuple(name for name, _ in FIELDS) + ("rules", "mode", "rng", "deals")

    def __init__(self, rules: Rules, mode: str = "hand", rng: np.random.Generator | None = None):
        self.rules = rules
        self.mode = mode
        self.rng = rng if rng is not None else np.random.default_rng()
        self.deals = engine.DealPool(self.rng, block=64)
        self.score = [0, 0]

    # ------------------------------------------------------------------ dealing
    def deal(self, hand_masks, dealer: int, muestra: int) -> None:
        """Start a hand with these hands (4 masks, seat order); the match score is kept."""
        self.hands = [int(m) for m in hand_masks]
        self.dealer, self.muestra = int(dealer), int(muestra)
        self.trump = self.muestra // 5
        self.phase, self.current = BIDDING, core.mano(PY, self.dealer)
        for name, fill, length in _NEW_HAND:
            setattr(self, name, fill if length is None else [fill] * length)

    def deal_random(self, dealer: int | None = None) -> None:
        d = int(self.rng.integers(NUM_SEATS)) if dealer is None else int(dealer)
        masks, muestra = self.deals.draw(np.array([d], dtype=np.int8))
        self.deal(masks[0], d, int(muestra[0]))

    # ------------------------------------------------------------------ rules, via the kernels
    def legal_mask(self) -> int:
        """24-bit mask of the legal actions (0 once the episode is over)."""
        if self.phase == DONE:
            return 0
        return core.legal_actions(
            PY, self.rules, self.phase, self.hands[self.current], self.trick_len, self.led, self.best_led,
            self.best_trump, self.trump, self.high_bid, self.score[self.current & 1],
        )

    def step(self, a: int):
        seat = self.current
        if self.phase == BIDDING:
            b = a - NUM_CARDS
            self.bids[seat] = b
            self.high_bid, self.declarer = core.bid(PY, b, seat, self.high_bid, self.declarer)
            self.n_bids += 1
            self.current = (seat + 1) & 3
            if self.n_bids == NUM_SEATS:
                self.sitter, self.current, self.trick_size = core.end_of_bidding(PY, self.declarer, self.dealer)
                self.contract, self.phase = self.high_bid, PLAYING
                self.leaders[0] = self.current
            return None, False, None
        cbit = 1 << a
        self.hands[seat] &= ~cbit
        self.played |= cbit
        self.seat_played[seat] |= cbit
        self.trick_played[self.trick_num] |= cbit
        self.absent[seat] |= core.shown_absent(PY, self.rules, a, cbit, self.trick_len, self.led, self.best_led,
                                               self.best_trump, self.trump)
        self.led, self.best_led, self.best_trump, self.win_seat = core.play(
            PY, a, seat, True, self.trick_len, self.led, self.best_led, self.best_trump, self.win_seat, self.trump
        )
        self.trick_len += 1
        self.current = core.next_seat(PY, seat, self.sitter)
        if self.trick_len < self.trick_size:
            return None, False, None
        return self._finish_trick()

    def _finish_trick(self):
        w, t = self.win_seat, self.trick_num
        team = w & 1
        self.tricks_won[w] += 1
        self.winners[t] = w
        score = core.trick_points(PY, self.trick_played[t], t)
        hand_a = 0 if self.sitter == team else self.hands[team]
        hand_b = 0 if self.sitter == team + 2 else self.hands[team + 2]
        sing, cante_points, suit = core.cante(PY, hand_a, hand_b, self.sung, self.trump, self.contract)
        self.sung |= sing
        self.cante_pts[team] += cante_points
        self.points[team] += score + cante_points
        self.cantes[t] = suit
        if suit >= 0:
            self.sung_by[suit] = team
        t1 = t + 1
        self.trick_num, self.trick_len, self.current = t1, 0, w
        self.led = self.best_led = self.best_trump = self.win_seat = -1
        if t1 < NUM_TRICKS:
            self.leaders[t1] = w
        dec_tricks = self.tricks_won[max(self.declarer, 0)]
        if not core.hand_over(PY, self.contract, t1, dec_tricks):
            return None, False, None
        return self._finish_hand(dec_tricks)

    def _finish_hand(self, dec_tricks):
        winner, value = core.hand_winner(
            PY, self.rules, self.contract, self.declarer, self.points[0], self.points[1], self.winners[4],
            self.dealer, dec_tricks,
        )
        if self.mode == "hand":
            over, reward = True, value
        else:
            self.score[winner], over = core.match_after_hand(PY, self.rules, self.score[winner], value)
            reward = 1
        result = {
            "contract": self.contract, "declarer": self.declarer, "winner": winner, "value": value,
            "points": list(self.points), "cante_points": list(self.cante_pts), "tricks_won": list(self.tricks_won),
            "winners": list(self.winners), "cantes": list(self.cantes), "score": list(self.score), "match_over": over,
        }
        if over:
            self.phase = DONE
            rewards = [reward if p & 1 == winner else -reward for p in range(NUM_SEATS)]
            return rewards, True, result
        self.deal_random(core.next_dealer(PY, self.dealer))  # the match goes on
        return None, False, result

    # ------------------------------------------------------------------ views
    def observe(self, seat: int) -> np.ndarray:
        """(OBS_DIM,) float32: the same vector as :func:`cuatrola_env.observation.observe`."""
        out = np.zeros(OBS_DIM, dtype=np.float32)
        r0, r1, r2, r3 = _ROT[seat]
        sp = self.seat_played
        cur = self.trick_played[self.trick_num] if self.trick_len > 0 else 0  # trick_num < 5 mid-trick
        p0, p1, p2, p3 = sp[r0], sp[r1], sp[r2], sp[r3]
        # the 14 card-mask views as one integer of CARD_MASK_COLUMNS bits, 20 each, unpacked in one call
        tp = self.trick_played
        stream = (
            self.hands[seat] | p0 << 20 | p1 << 40 | p2 << 60 | p3 << 80 | tp[0] << 100 | tp[1] << 120
            | tp[2] << 140 | tp[3] << 160 | tp[4] << 180 | (p0 & cur) << 200 | (p1 & cur) << 220
            | (p2 & cur) << 240 | (p3 & cur) << 260
        )
        out[:CARD_MASK_COLUMNS] = np.unpackbits(np.frombuffer(stream.to_bytes(CARD_MASK_COLUMNS // 8, "little"), np.uint8),
                                                bitorder="little")
        ab, unseen = self.absent, ~self.played
        shown = (ab[r0] & unseen) | (ab[r1] & unseen) << 20 | (ab[r2] & unseen) << 40 | (ab[r3] & unseen) << 60
        out[_ABSENT] = np.unpackbits(np.frombuffer(shown.to_bytes(_ABSENT_BYTES, "little"), np.uint8), bitorder="little")
        b = self.bids
        dealer = self.dealer
        ones = [
            _MUESTRA + self.muestra, _TRUMP + self.trump, _DEALER + ((dealer - seat) & 3),
            _MANO + ((dealer + 1 - seat) & 3), _CONTRACT + self.contract + 1,
            _BIDS + b[r0], _BIDS + _BW + b[r1], _BIDS + 2 * _BW + b[r2], _BIDS + 3 * _BW + b[r3],
        ]
        ones += [at + ((p - seat) & 3) for at, p in zip(_LEADERS, self.leaders, strict=True) if p >= 0]
        if self.sung:
            team = seat & 1
            ones += [at + (tm ^ team) for at, tm in zip(_CANTES, self.sung_by, strict=True) if tm >= 0]
        if not (self.played >> self.muestra) & 1:
            ones.append(_MUESTRA_IN_HAND)
        if self.declarer >= 0:  # the highest bidder so far, during bidding too
            ones.append(_DECLARER + ((self.declarer - seat) & 3))
        if self.sitter >= 0:  # set once the bidding is over
            ones.append(_SITS_OUT + ((self.sitter - seat) & 3))
        if self.phase <= PLAYING:
            ones.append(_PHASE + self.phase)
            if seat == self.current:
                ones.append(_TO_ACT)
        out[ones] = 1.0
        # scalars: float32 products with the batched builder's float32 scales
        team = seat & 1
        tw, pts, sc = self.tricks_won, self.points, self.score
        values = np.array([tw[r0], tw[r1], tw[r2], tw[r3], pts[team], pts[team ^ 1], sc[team], sc[team ^ 1], 1], np.float32)
        out[SCALAR_COLUMNS] = values * scalar_scales(self.rules.target)
        return out

    def to_state(self) -> engine.State:
        """This game as a batched :class:`~cuatrola_env.engine.State` of one (a copy)."""
        s = engine.new_state(1)
        for name, _ in FIELDS:
            getattr(s, name)[0] = getattr(self, name)
        return s
