"""The batched Cuatrola core: a state of typed arrays and small pure-ish functions.

Every function works on a whole batch of games at once with bitwise operations on
20-bit card masks; there is no Python loop over games or cards. Functions mutate the
:class:`State` in place (for speed) and only after their input has been validated.

``new_state`` → ``DealPool.draw`` / ``start_hand`` → (``legal_action_mask`` → ``step``)* →
hand end (``hand_results``, ``seat_rewards``) → next hand. :class:`cuatrola_env.vector.VectorCuatrola`
is the thin public wrapper around these functions for batches, :class:`cuatrola_env.single.SingleGame`
runs the same rules (``cuatrola_env.core``) for one game on Python ints.

The state's fields (:data:`FIELDS`, each with its shape, dtype, value at a hand's start and
meaning) are declared once; the table below is written from that declaration.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from . import bitboards as bb
from . import core
from .cli import brief
from .core import BIDDING, DONE, NP, PLAYING
from .rules import (
    CUATROLA,
    HAND_SIZE,
    NUM_CARDS,
    NUM_RANKS,
    NUM_SEATS,
    NUM_TRICKS,
    PASS,
    QUINTOLA,
    SOLO,
    Rules,
)

I8, I16, U32 = np.int8, np.int16, np.uint32

_SEATS = np.arange(NUM_SEATS, dtype=I8)


@dataclasses.dataclass(frozen=True)
class Field:
    """One field of the state: per game, an array of ``shape`` and ``dtype``, set to ``fill`` when
    ``reset`` comes: ``"deal"`` (set by the deal itself), ``"hand"`` (each new hand), ``"trick"``
    (each new trick, and each hand) or ``"match"`` (a new match)."""

    name: str
    shape: tuple[int, ...]
    dtype: type
    fill: int
    reset: str
    meaning: str


#: every field of the batched state, once (``N`` games; seats are absolute, 0..3, in playing order)
FIELDS = (
    Field("hands", (4,), U32, 0, "deal", "unplayed cards of each seat (bit i = card i)"),
    Field("played", (), U32, 0, "hand", "every card played this hand"),
    Field("dealer", (), I8, 0, "deal", "dealer seat; la mano is (dealer + 1) % 4"),
    Field("muestra", (), I8, 0, "deal", "the dealer's face-up card; its suit is trump"),
    Field("trump", (), I8, 0, "deal", "trump suit (suit of the muestra)"),
    Field("phase", (), I8, 0, "deal", "0 bidding, 1 card play, 2 over (only without auto-reset)"),
    Field("current", (), I8, 0, "deal", "seat to act"),
    Field("bids", (4,), I8, -1, "hand", "bid of each seat: -1 not spoken yet, 0 pass, 1 solo, 2 cuatrola, 3 quintola"),
    Field("n_bids", (), I8, 0, "hand", "bids spoken so far (0..4)"),
    Field("high_bid", (), I8, 0, "hand", "highest bid so far (0 = nobody bid yet)"),
    Field("declarer", (), I8, -1, "hand", "highest bidder, -1 while nobody bid / under contract pass"),
    Field("sitter", (), I8, -1, "hand", "the declarer's partner, who sits out; -1 under pass"),
    Field("contract", (), I8, -1, "hand", "-1 during bidding, then 0 pass, 1 solo, 2 cuatrola, 3 quintola"),
    Field("trick_num", (), I8, 0, "hand", "index of the trick in play (0..4; 5 once the hand is over)"),
    Field("trick_len", (), I8, 0, "trick", "cards in the trick in play"),
    Field("trick_size", (), I8, 4, "hand", "cards per trick: 4, or 3 when a seat sits out"),
    Field("led", (), I8, -1, "trick", "suit led in the trick in play (-1 before the lead)"),
    Field("best_led", (), I8, -1, "trick", "highest card of the led suit in the trick (-1 none)"),
    Field("best_trump", (), I8, -1, "trick", "highest trump in a trick led in another suit (-1 none)"),
    Field("win_seat", (), I8, -1, "trick", "seat winning the trick in play so far"),
    Field("leaders", (5,), I8, -1, "hand", "leader of each trick (-1 not started)"),
    Field("winners", (5,), I8, -1, "hand", "winner of each trick (-1 not finished)"),
    Field("cantes", (5,), I8, -1, "hand", "suit sung right after each trick (-1 none)"),
    Field("seat_played", (4,), U32, 0, "hand", "cards each seat has played this hand"),
    Field("trick_played", (5,), U32, 0, "hand", "cards played in each trick"),
    Field("absent", (4,), U32, 0, "hand", "cards each seat has shown it does not hold (held beside a card it played, "
          "that play would have been illegal; core.shown_absent)"),
    Field("tricks_won", (4,), I8, 0, "hand", "tricks won by each seat this hand"),
    Field("points", (2,), I16, 0, "hand", "team points this hand: cards won + cantes + last trick"),
    Field("cante_pts", (2,), I16, 0, "hand", "the cantes part of ``points``"),
    Field("sung", (), U32, 0, "hand", "caballo bit of every suit already sung this hand"),
    Field("sung_by", (4,), I8, -1, "hand", "team that sang each suit (-1 not sung)"),
    Field("score", (2,), I16, 0, "match", "match score of teams 0 (seats 0, 2) and 1 (seats 1, 3)"),
)


def _field_table() -> str:
    """The fields as the reST table of this module's docstring."""
    rule = "=" * 12 + " " + "=" * 8 + " " + "=" * 6 + " " + "=" * 76
    rows = [rule, f"{'field':<12} {'shape':<8} {'dtype':<6} meaning", rule]
    rows += [f"{f.name:<12} {str(('N', *f.shape)).replace(chr(39), ''):<8} {np.dtype(f.dtype).str[1:]:<6} {f.meaning}"
             for f in FIELDS]
    return "\n".join([*rows, rule])


def _num_games(self) -> int:
    return self.hands.shape[0]


def _copy(self):
    return State(**{f.name: getattr(self, f.name).copy() for f in FIELDS})


def _take(self, idx):
    """Games ``idx`` of the batch: an index array gives a copy, a slice a view of the same arrays."""
    return State(**{f.name: getattr(self, f.name)[idx] for f in FIELDS})


#: the batched game state: one array per :data:`FIELDS` entry, first axis the game
State = dataclasses.make_dataclass(
    "State", [(f.name, np.ndarray) for f in FIELDS],
    namespace={"num_games": property(_num_games), "copy": _copy, "take": _take,
               "__doc__": "Batched game state: one array per field of :data:`FIELDS` (see the module docstring)."},
)
State.__module__ = __name__

if __doc__:
    __doc__ += "\n" + _field_table() + "\n"


def new_state(n: int) -> State:
    """An all-empty state of ``n`` games (deal before use)."""
    return State(**{f.name: np.full((n, *f.shape), f.fill, dtype=f.dtype) for f in FIELDS})


# --------------------------------------------------------------------------- dealing
_CARD_IDS_U32 = np.arange(NUM_CARDS, dtype=U32)


def _sorted_keys(rng: np.random.Generator, k: int) -> np.ndarray:
    """(k, 20) uint32 rows ``key << 5 | card`` sorted by a random 27-bit key per card.

    The low 5 bits of each row are a uniformly random permutation of the cards: one sort of
    packed integers, much cheaper than ``argsort``. Rows where two keys tie are drawn again,
    so every permutation is exactly equally likely.
    """
    raw = rng.bit_generator.random_raw(k * NUM_CARDS // 2)  # 64 random bits = 2 keys
    keys = raw.view(U32).reshape(k, NUM_CARDS)
    keys &= U32((1 << 27) - 1)
    keys <<= U32(5)
    keys |= _CARD_IDS_U32
    keys.sort(axis=1)
    high = keys >> U32(5)
    tie = high[:, 1:] == high[:, :-1]
    if tie.any():  # rare (about 1.4e-6 per row): draw those rows again
        again = np.flatnonzero(tie.any(axis=1))
        keys[again] = _sorted_keys(rng, again.size)
    return keys


def validate_deals(hands, dealer, muestra, n: int):
    """Check given deals; returns them as arrays or raises ValueError naming the problem."""
    hands = np.asarray(hands)
    dealer = np.asarray(dealer)
    muestra = np.asarray(muestra)
    if dealer.ndim == 0:
        dealer = np.full(n, dealer)
    if muestra.ndim == 0:
        muestra = np.full(n, muestra)
    if hands.shape != (n, NUM_SEATS, HAND_SIZE):
        raise ValueError(f"hands must have shape ({n}, 4, 5) (game, seat, card), got {hands.shape}")
    if dealer.shape != (n,) or muestra.shape != (n,):
        raise ValueError(f"dealer and muestra must have shape ({n},), got {dealer.shape} and {muestra.shape}")
    for name, arr in (("hands", hands), ("dealer", dealer), ("muestra", muestra)):
        if not np.issubdtype(arr.dtype, np.integer):
            raise ValueError(f"{name} must hold integers, got dtype {arr.dtype}")
    bad = np.flatnonzero((dealer < 0) | (dealer > 3))
    if bad.size:
        raise ValueError(f"dealer must be a seat 0..3; game {bad[0]} has dealer {dealer[bad[0]]}")
    sorted_cards = np.sort(hands.reshape(n, -1), axis=1)
    bad = np.flatnonzero((sorted_cards != np.arange(NUM_CARDS)).any(axis=1))
    if bad.size:
        g = bad[0]
        raise ValueError(
            f"the deal of game {g} is not a permutation of the 20 cards: {hands[g].tolist()}"
        )
    in_dealer_hand = (hands[np.arange(n), dealer] == muestra[:, None]).any(axis=1)
    bad = np.flatnonzero(~in_dealer_hand)
    if bad.size:
        g = bad[0]
        raise ValueError(
            f"the muestra must be in the dealer's hand: game {g} has muestra {muestra[g]} but dealer "
            f"{dealer[g]} holds {hands[g, dealer[g]].tolist()}"
        )
    return hands.astype(I8), dealer.astype(I8), muestra.astype(I8)


class DealPool:
    """Random deals drawn from ``rng`` in blocks (one packed sort per block), handed out in order.

    Drawing a few deals per step one call at a time costs more in call overhead than in
    shuffling; a block of many thousands amortises it. The stream of deals is fixed by
    the seed of ``rng``. Seat p receives cards ``perm[5p : 5p + 5]`` of a uniformly random
    permutation and the muestra is the last of the dealer's five: every deal with the
    muestra in the dealer's hand is equally likely.
    """

    def __init__(self, rng: np.random.Generator, block: int = 16384):
        self.rng = rng
        self.block = block
        self._masks = np.empty((0, NUM_SEATS), dtype=U32)
        self._last = np.empty((0, NUM_SEATS), dtype=I8)  # last card of each seat's five
        self._pos = 0

    def get_state(self) -> dict:
        """The pool's position in its stream of deals (its generator's state and the deals drawn ahead)."""
        return {"rng": self.rng.bit_generator.state, "masks": self._masks.copy(), "last": self._last.copy(),
                "pos": self._pos}

    def set_state(self, state: dict) -> None:
        """Continue the stream of deals exactly where :meth:`get_state` took it."""
        masks, last = np.asarray(state["masks"], U32), np.asarray(state["last"], I8)
        if masks.ndim != 2 or masks.shape[1:] != (NUM_SEATS,) or last.shape != masks.shape:
            raise ValueError(f"a deal pool state holds (k, 4) masks and last cards, got {masks.shape} and {last.shape}")
        if not 0 <= int(state["pos"]) <= len(masks):
            raise ValueError(f"deal pool position {state['pos']} is outside its {len(masks)} deals")
        self.rng.bit_generator.state = state["rng"]
        self._masks, self._last, self._pos = masks.copy(), last.copy(), int(state["pos"])

    def draw(self, dealer: np.ndarray):
        """Hand masks (k, 4) in seat order and muestras (k,) for games with these dealers."""
        k = dealer.shape[0]
        if self._pos + k > self._masks.shape[0]:
            m = max(self.block, k)
            cards = _sorted_keys(self.rng, m)
            cards &= U32(31)
            last = cards[:, HAND_SIZE - 1 :: HAND_SIZE].astype(I8)
            np.left_shift(U32(1), cards, out=cards)
            fresh = cards.reshape(m, NUM_SEATS, HAND_SIZE).sum(axis=2, dtype=U32)
            self._masks = np.concatenate([self._masks[self._pos :], fresh])
            self._last = np.concatenate([self._last[self._pos :], last])
            self._pos = 0
        sl = slice(self._pos, self._pos + k)
        self._pos += k
        muestra = self._last[sl].reshape(-1)[_flat_index(k, NUM_SEATS, dealer)]
        return self._masks[sl], muestra


#: (field, value) of what a new hand resets, and of what a new trick resets (already so when a hand ends)
_PER_HAND = tuple((f.name, f.fill) for f in FIELDS if f.reset == "hand")
_PER_TRICK = tuple((f.name, f.fill) for f in FIELDS if f.reset == "trick")


def check_seed(seed, name: str = "seed"):
    """``seed`` if it is ``None`` or a non-negative integer (what every dealing RNG of the project is
    seeded with), else ``ValueError`` naming it: a float, a boolean or a negative number is refused,
    not rounded or reinterpreted."""
    if seed is None:
        return None
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"{name} must be None or a non-negative integer, got {brief(seed, 40)}")
    return int(seed)


def validate_score(score, rules: Rules, n: int) -> np.ndarray:
    """A match score given as (2,) or (n, 2) integers below the target, as (n, 2) int16."""
    if score is None:
        return np.zeros((n, 2), dtype=I16)
    if any(isinstance(x, (bool, np.bool_)) for x in np.asarray(score, dtype=object).reshape(-1)):
        raise ValueError(f"score must be integers (game points), got {brief(score, 40)}")
    arr = np.asarray(score)
    if arr.shape == (2,):
        arr = np.broadcast_to(arr, (n, 2))
    if arr.shape != (n, 2) or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"score must be integers of shape (2,) or ({n}, 2), got shape {np.shape(score)}")
    if (arr < 0).any() or (arr >= rules.target).any():
        raise ValueError(f"score must be in 0..{rules.target - 1} (below the target {rules.target})")
    return arr.astype(I16)


def start_hand(
    s: State, idx: np.ndarray, hand_masks: np.ndarray, dealer: np.ndarray, muestra: np.ndarray,
    after_hand: bool = False,
) -> None:
    """Put freshly dealt hands (masks (k, 4) in seat order) into games ``idx``; the score is kept.

    ``after_hand=True`` skips the fields of the trick in play, which a finished hand has
    already cleared.
    """
    _rows(s.hands)[idx] = _rows(np.ascontiguousarray(hand_masks, dtype=U32))
    s.dealer[idx] = dealer
    s.muestra[idx] = muestra
    s.trump[idx] = muestra // NUM_RANKS
    s.phase[idx] = BIDDING
    s.current[idx] = core.mano(NP, np.asarray(dealer))  # la mano speaks first
    for name, fill in _PER_HAND if after_hand else _PER_HAND + _PER_TRICK:
        field = getattr(s, name)
        if field.ndim == 1:
            field[idx] = fill
        else:
            _rows(field)[idx] = _row_of(field, fill)


def _rows(a: np.ndarray) -> np.ndarray:
    """1-D view of a C-contiguous (n, k) array whose items are whole rows.

    Fancy-indexing rows through it is several times faster than ``a[idx] = ...`` on 2-D.
    """
    return a.view(np.dtype((np.void, a.itemsize * a.shape[1]))).reshape(a.shape[0])


def take_rows(a: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``a[idx]`` for a C-contiguous 2-D array, gathered through its row view (several times faster)."""
    return _rows(a)[idx].view(a.dtype).reshape(idx.size, a.shape[1])


_ROW_CACHE: dict = {}


def _row_of(a: np.ndarray, fill) -> np.ndarray:
    """A row of ``a``'s width and dtype full of ``fill``, as a void item for :func:`_rows`."""
    key = (a.dtype.str, a.shape[1], fill)
    row = _ROW_CACHE.get(key)
    if row is None:
        row = _ROW_CACHE[key] = _rows(np.full((1, a.shape[1]), fill, dtype=a.dtype))[0]
    return row


def _cell(a: np.ndarray, rows: np.ndarray, cols) -> np.ndarray:
    """Flat index of ``a[rows, cols]`` in ``a.reshape(-1)`` (1-D fancy indexing is cheaper)."""
    return rows * a.shape[1] + cols


# --------------------------------------------------------------------------- legal moves
def legal_action_mask(s: State, rules: Rules) -> np.ndarray:
    """(N,) uint32: bit a set when action a (0..23) is legal for the seat to act."""
    n = s.num_games
    hand = s.hands.reshape(-1)[_flat_index(n, NUM_SEATS, s.current)]
    team_score = s.score.reshape(-1)[_flat_index(n, 2, s.current & 1)] if rules.exact_target else 0
    mask = core.legal_actions(
        NP, rules, s.phase, hand, s.trick_len, s.led, s.best_led, s.best_trump, s.trump, s.high_bid, team_score
    )
    return mask.astype(U32, copy=False)


# --------------------------------------------------------------------------- step
def step(s: State, actions: np.ndarray, rules: Rules) -> np.ndarray:
    """Apply one (already validated, legal) action per game.

    Returns the indices of the games whose hand ended with this step; call
    :func:`hand_results` on them before dealing them a new hand.

    Both phases are computed over the whole batch with the other phase masked out:
    contiguous whole-batch operations cost less than gathering and scattering subsets.
    """
    a = actions.astype(I8, copy=False)
    playing = s.phase == PLAYING
    seat = s.current.astype(np.intp)
    at_seat = _flat_index(s.num_games, NUM_SEATS, seat)
    _step_bid(s, s.phase == BIDDING, seat, at_seat, a)
    return _step_play(s, playing, seat, at_seat, a, rules)


def _step_bid(s: State, bidding: np.ndarray, seat: np.ndarray, at_seat: np.ndarray, a: np.ndarray) -> None:
    bid = a - NUM_CARDS  # 0 pass, 1 solo, 2 cuatrola, 3 quintola (meaningless for card plays)
    bids = s.bids.reshape(-1)
    bids[at_seat] = np.where(bidding, bid, bids[at_seat])
    high, dec = core.bid(NP, np.where(bidding, bid, -1), s.current, s.high_bid, s.declarer)
    s.high_bid[:] = high
    s.declarer[:] = dec
    s.n_bids += bidding
    np.copyto(s.current, (s.current + 1) & 3, where=bidding)
    # ---- end of the bidding round --------------------------------------------------------
    e = np.flatnonzero(bidding & (s.n_bids == NUM_SEATS))
    if e.size == 0:
        return
    sitter, leader, size = core.end_of_bidding(NP, s.declarer[e], s.dealer[e])
    s.contract[e] = s.high_bid[e]
    s.sitter[e] = sitter
    s.trick_size[e] = size
    s.phase[e] = PLAYING
    s.current[e] = leader
    s.leaders.reshape(-1)[_cell(s.leaders, e, 0)] = leader


def _step_play(s: State, playing: np.ndarray, seat: np.ndarray, at_seat: np.ndarray, card: np.ndarray,
               rules: Rules) -> np.ndarray:
    """Card play, over the whole batch; for the games not playing, ``card`` is a bid id (20..23)
    (a finished game, phase DONE, is stepped with 20 and changes nothing)."""
    n = s.num_games
    cbit = (U32(1) << card.astype(U32)) & bb.FULL_DECK  # bids (bits 20..23) give no card
    hands = s.hands.reshape(-1)
    hands[at_seat] &= ~cbit
    s.played |= cbit
    seat_played = s.seat_played.reshape(-1)
    seat_played[at_seat] |= cbit
    trick_played = s.trick_played.reshape(-1)
    trick_played[_flat_index(n, NUM_TRICKS, np.minimum(s.trick_num, NUM_TRICKS - 1))] |= cbit
    shown = core.shown_absent(NP, rules, card, cbit, s.trick_len, s.led, s.best_led, s.best_trump, s.trump)
    s.absent.reshape(-1)[at_seat] |= np.where(playing, shown, U32(0)).astype(U32, copy=False)
    led, best_led, best_trump, win_seat = core.play(
        NP, card, s.current, playing, s.trick_len, s.led, s.best_led, s.best_trump, s.win_seat, s.trump
    )
    s.led[:] = led
    s.best_led[:] = best_led
    s.best_trump[:] = best_trump
    s.win_seat[:] = win_seat
    s.trick_len += playing
    np.copyto(s.current, core.next_seat(NP, s.current, s.sitter), where=playing)
    done_trick = np.flatnonzero(playing & (s.trick_len == s.trick_size))
    if done_trick.size == 0:
        return done_trick
    return _finish_trick(s, done_trick)


_ARANGE_CACHE: dict[tuple[int, int], np.ndarray] = {}


def _flat_index(n: int, width: int, col: np.ndarray) -> np.ndarray:
    """Flat index of ``[row, col[row]]`` in an (n, width) array."""
    base = _ARANGE_CACHE.get((n, width))
    if base is None:
        base = _ARANGE_CACHE[(n, width)] = np.arange(n, dtype=np.intp) * width
    return base + col


def _finish_trick(s: State, g: np.ndarray) -> np.ndarray:
    w = s.win_seat[g].astype(np.intp)
    team = w & 1
    t = s.trick_num[g].astype(np.intp)
    tricks_won, points = s.tricks_won.reshape(-1), s.points.reshape(-1)
    tricks_won[_cell(s.tricks_won, g, w)] += 1
    s.winners.reshape(-1)[_cell(s.winners, g, t)] = w
    score = core.trick_points(NP, s.trick_played.reshape(-1)[_cell(s.trick_played, g, t)], t)
    # ---- cantes: the winning team's playing seats -----------------------------------------
    hands = s.hands.reshape(-1)
    sitter = s.sitter[g]
    hand_a = np.where(sitter == team, U32(0), hands[_cell(s.hands, g, team)])
    hand_b = np.where(sitter == team + 2, U32(0), hands[_cell(s.hands, g, team + 2)])
    sing, cante_points, sung_suit = core.cante(NP, hand_a, hand_b, s.sung[g], s.trump[g], s.contract[g])
    s.sung[g] |= sing
    at_team = _cell(s.points, g, team)
    s.cante_pts.reshape(-1)[at_team] += cante_points.astype(I16)
    points[at_team] += (score + cante_points).astype(I16)
    s.cantes.reshape(-1)[_cell(s.cantes, g, t)] = sung_suit
    has = sung_suit >= 0
    s.sung_by.reshape(-1)[_cell(s.sung_by, g[has], sung_suit[has])] = team[has]
    # ---- next trick ------------------------------------------------------------------------
    t1 = t + 1
    s.trick_num[g] = t1
    s.trick_len[g] = 0
    s.led[g] = -1
    s.best_led[g] = -1
    s.best_trump[g] = -1
    s.win_seat[g] = -1
    s.current[g] = w
    more = t1 < NUM_TRICKS
    s.leaders.reshape(-1)[_cell(s.leaders, g[more], t1[more])] = w[more]
    # ---- is the result certain? -------------------------------------------------------------
    dec_tricks = tricks_won[_cell(s.tricks_won, g, np.maximum(s.declarer[g], 0))]
    return g[core.hand_over(NP, s.contract[g], t1, dec_tricks)]


# --------------------------------------------------------------------------- results
def hand_results(s: State, g: np.ndarray, rules: Rules):
    """Winning team (k,) and game points (k,) of the finished hands ``g``."""
    dec = s.declarer[g]
    return core.hand_winner(
        NP, rules, s.contract[g], dec, s.points[g, 0], s.points[g, 1], s.winners[g, NUM_TRICKS - 1],
        s.dealer[g], s.tricks_won[g, np.maximum(dec, 0)],
    )


def trick_in_play(s: State, i: int) -> list[tuple[int, int]]:
    """Game ``i``'s trick in play as ``(seat, card)`` in play order: from the trick's leader
    round the table, skipping a declarer's sitting-out partner; empty between tricks."""
    n = int(s.trick_len[i])
    if not n:
        return []
    t = min(int(s.trick_num[i]), 4)
    in_trick, seat, sitter = int(s.trick_played[i, t]), int(s.leaders[i, t]), int(s.sitter[i])
    plays = []
    for _ in range(n):
        plays.append((seat, (int(s.seat_played[i, seat]) & in_trick).bit_length() - 1))
        seat = core.next_seat(core.PY, seat, sitter)
    return plays


def seat_rewards(winner: np.ndarray, value) -> np.ndarray:
    """(k, 4) float32: +value for the seats of the winning team, -value for the others."""
    sign = np.where(_SEATS[None, :] % 2 == winner[:, None], 1.0, -1.0)
    return (sign * np.asarray(value, dtype=np.float32)[..., None]).astype(np.float32)


__all__ = [
    "State", "new_state", "DealPool", "take_rows", "validate_deals", "start_hand", "legal_action_mask",
    "step", "hand_results", "seat_rewards", "BIDDING", "PLAYING", "DONE", "PASS", "SOLO", "CUATROLA", "QUINTOLA",
]
