"""The observation: one flat float32 vector per seat, seats relative to that seat.

It holds exactly what docs/rules.md "What a seat may see" lists: the seat's own cards; the
muestra and whether the dealer still holds it; dealer and la mano; every bid; contract,
declarer and who sits out; every card played, by whom and in which trick (the leader of
each trick gives the order inside it); tricks won per seat; points and cantes so far; the
match score and target; and what the plays show of the hands: for every seat, the unplayed
cards it cannot hold, because holding one beside a card it played would have made that play
illegal (docs/rules.md "What a seat may see"), something everyone at the table can work out.
Never another seat's unplayed cards (the muestra aside, which is public anyway and shown in its
own block).

"rel" below means a seat relative to the observer: 0 = the observer, 1 = next to play
after it, 2 = its partner, 3 = the seat before it. Teams are relative too: 0 = the
observer's team, 1 = the other team. All blocks are 0/1 unless said otherwise.

Layout (``OBS_VERSION`` 2)
--------------------------
======================= ====== ======= ===================================================
view                    offset size    meaning
======================= ====== ======= ===================================================
hand                    0      20      own unplayed cards (by card id)
played_by               20     80      [rel seat, card]: cards each seat has played
played_in_trick         100    100     [trick 0..4, card]: cards that fell in each trick
current_trick           200    80      [rel seat, card]: cards in the trick in play
trick_leaders           280    20      [trick, rel seat]: leader of each trick begun
tricks_won              300    4       [rel seat]: tricks won / 5
muestra                 304    20      the muestra (card id)
muestra_in_hand         324    1       1 while the dealer still holds the muestra
trump                   325    4       trump suit
dealer                  329    4       [rel seat] the dealer
mano                    333    4       [rel seat] la mano
bids                    337    20      [rel seat, not yet / pass / solo / cuatrola / quintola]
contract                357    5       undecided / pass / solo / cuatrola / quintola
declarer                362    4       [rel seat]
sits_out                366    4       [rel seat]
points                  370    2       [rel team] points this hand (cards + cantes + last) / 130
cantes                  372    8       [suit, rel team]: suit sung by that team
score                   380    2       [rel team] match score / target
target                  382    1       target / 21
phase                   383    2       bidding, card play (both 0 once the episode is over)
to_act                  385    1       1 when the observed seat is the seat to act
absent                  386    80      [rel seat, card]: unplayed cards that seat has shown
                                       by its plays it does not hold
======================= ====== ======= ===================================================
``OBS_DIM`` = 466. Each version's observation begins with the whole of the one before
(:data:`OBS_DIMS`): version 1 is the first 386 columns, so a network trained on it reads that
prefix and plays on. The order of the cards inside a trick follows from its leader and the
seat order; the winner of a trick is the leader of the next one.
"""

from __future__ import annotations

import sys

import numpy as np

from .engine import State
from .rules import NUM_CARDS, NUM_SEATS, NUM_TRICKS, Rules

OBS_VERSION = 2

#: (name, size) of each view, in order; offsets follow
VIEWS = (
    ("hand", 20), ("played_by", 80), ("played_in_trick", 100), ("current_trick", 80),
    ("trick_leaders", 20), ("tricks_won", 4), ("muestra", 20), ("muestra_in_hand", 1),
    ("trump", 4), ("dealer", 4), ("mano", 4), ("bids", 20), ("contract", 5), ("declarer", 4),
    ("sits_out", 4), ("points", 2), ("cantes", 8), ("score", 2), ("target", 1), ("phase", 2),
    ("to_act", 1), ("absent", 80),
)
OFFSETS: dict[str, slice] = {}
_o = 0
for _name, _size in VIEWS:
    OFFSETS[_name] = slice(_o, _o + _size)
    _o += _size
OBS_DIM = _o
del _o, _name, _size
#: the width of every observation version; each begins with the whole of the one before
OBS_DIMS = {1: OFFSETS["absent"].start, 2: OBS_DIM}

_R4 = np.arange(NUM_SEATS, dtype=np.int64)
_O = {name: sl.start for name, sl in OFFSETS.items()}
#: hand, played_by x4, played_in_trick x5, current_trick x4: the card-mask views, first in the layout
_MASK_VIEWS = 1 + NUM_SEATS + NUM_TRICKS + NUM_SEATS
#: the columns those views fill, one per card of each (the observation's first columns)
CARD_MASK_COLUMNS = _MASK_VIEWS * NUM_CARDS
assert OFFSETS["trick_leaders"].start == CARD_MASK_COLUMNS, "the card-mask views come first"
assert sys.byteorder == "little", "the observation builder unpacks uint32 masks as little-endian bytes"


#: one-hot categories written by the scatter: (view, number of categories, width of each)
_CATEGORIES = (
    ("trick_leaders", 5, 4), ("muestra", 1, 20), ("muestra_in_hand", 1, 1), ("trump", 1, 4),
    ("dealer", 1, 4), ("mano", 1, 4), ("bids", 4, 5), ("contract", 1, 5), ("declarer", 1, 4),
    ("sits_out", 1, 4), ("cantes", 4, 2), ("phase", 1, 2), ("to_act", 1, 1),
)
#: width of one category of each one-hot view (seats 4, bids 5, teams 2, ...)
CATEGORY_WIDTH = {name: width for name, _, width in _CATEGORIES}

#: the scalar views' columns, in the order of :func:`scalar_scales`
SCALAR_COLUMNS = np.r_[OFFSETS["tricks_won"], OFFSETS["points"], OFFSETS["score"], OFFSETS["target"]]
MAX_HAND_POINTS = 130  #: points divide by this: 120 in the cards, 10 for the last trick (cantes can add more)
MAX_TARGET = 21  #: the target divides by this: the largest match target
_SCALES: dict[int, np.ndarray] = {}


def scalar_scales(target: int) -> np.ndarray:
    """float32 factors of the scalar views (both builders use these): tricks won / 5, points /
    :data:`MAX_HAND_POINTS`, match score / target, and the target itself / :data:`MAX_TARGET`."""
    if target not in _SCALES:
        _SCALES[target] = np.array([1 / NUM_TRICKS] * NUM_SEATS + [1 / MAX_HAND_POINTS] * 2 + [1 / target] * 2
                                   + [target / MAX_TARGET], dtype=np.float32)
    return _SCALES[target]


_CAT_AT: dict[str, slice | int] = {}
_cat_offsets = []
for _name, _k, _w in _CATEGORIES:
    assert _k * _w == OFFSETS[_name].stop - OFFSETS[_name].start, _name
    _CAT_AT[_name] = slice(len(_cat_offsets), len(_cat_offsets) + _k) if _k > 1 else len(_cat_offsets)
    _cat_offsets += [_O[_name] + _w * _i for _i in range(_k)]
_CAT_OFFSET = np.array(_cat_offsets, dtype=np.intp)
_CAT_COLS = len(_cat_offsets)
del _name, _k, _w, _cat_offsets


def observe(s: State, rules: Rules, seats: np.ndarray | None = None) -> np.ndarray:
    """(N, OBS_DIM) float32 observations of ``seats`` (default: each game's seat to act).

    Built as bytes, then converted once: the 14 card-mask views are unpacked to bits in
    one pass, every one-hot category is written by one scatter, and the few scalars are
    written into the float array last.
    """
    n = s.num_games
    seat = (s.current if seats is None else np.asarray(seats)).astype(np.int8)
    if seat.shape != (n,):
        raise ValueError(f"seats must have shape ({n},), got {seat.shape}")
    ar = np.arange(n)
    # flat index of [game, absolute seat of relative seat r] for (n, 4) per-seat fields
    rot = (ar * NUM_SEATS)[:, None] + ((seat[:, None] + _R4) & 3)
    bytes_ = np.zeros((n, OBS_DIM), dtype=np.uint8)  # every 0/1 entry is built as a byte first

    # ---- card masks: hand, played_by[rel], played_in_trick[trick], current_trick[rel] (the
    # first 280 columns), then absent[rel] (the last 80); 18 masks unpacked to bits in one pass
    masks = np.empty((n, _MASK_VIEWS + NUM_SEATS), dtype=np.uint32)
    masks[:, 0] = s.hands.reshape(-1)[rot[:, 0]]
    masks[:, 1:5] = s.seat_played.reshape(-1)[rot]
    masks[:, 5:10] = s.trick_played
    cur = s.trick_played.reshape(-1)[ar * NUM_TRICKS + np.minimum(s.trick_num, NUM_TRICKS - 1)]
    masks[:, 10:14] = masks[:, 1:5] & np.where(s.trick_len > 0, cur, np.uint32(0))[:, None]
    masks[:, 14:18] = s.absent.reshape(-1)[rot] & ~s.played[:, None]
    bits = np.unpackbits(masks.view(np.uint8), bitorder="little").reshape(n, _MASK_VIEWS + NUM_SEATS, 32)
    bytes_[:, :CARD_MASK_COLUMNS].reshape(n, _MASK_VIEWS, NUM_CARDS)[:] = bits[:, :_MASK_VIEWS, :NUM_CARDS]
    bytes_[:, OFFSETS["absent"]].reshape(n, NUM_SEATS, NUM_CARDS)[:] = bits[:, _MASK_VIEWS:, :NUM_CARDS]

    # ---- one-hot categories: one scatter of flat positions (-1 = nothing to set)
    def rel(x):  # absolute seats -> relative to the observer; -1 (none) stays negative
        return np.where(x < 0, np.int8(-1), (x - seat.reshape((n,) + (1,) * (x.ndim - 1))) & 3)

    team = seat & 1
    vals = np.empty((n, _CAT_COLS), dtype=np.int32)
    c = _CAT_AT
    vals[:, c["trick_leaders"]] = rel(s.leaders)
    vals[:, c["muestra"]] = s.muestra
    vals[:, c["muestra_in_hand"]] = ((s.played >> s.muestra.astype(np.uint32)) & np.uint32(1)).view(np.int32) * -1
    vals[:, c["trump"]] = s.trump
    vals[:, c["dealer"]] = (s.dealer - seat) & 3
    vals[:, c["mano"]] = (s.dealer + 1 - seat) & 3
    vals[:, c["bids"]] = s.bids.reshape(-1)[rot] + 1
    vals[:, c["contract"]] = s.contract + 1
    vals[:, c["declarer"]] = rel(s.declarer)
    vals[:, c["sits_out"]] = rel(s.sitter)
    vals[:, c["cantes"]] = np.where(s.sung_by < 0, np.int8(-1), (s.sung_by ^ team[:, None]))
    vals[:, c["phase"]] = np.where(s.phase <= 1, s.phase, np.int8(-1))  # a finished game (2) shows neither
    vals[:, c["to_act"]] = np.where((seat == s.current) & (s.phase <= 1), np.int8(0), np.int8(-1))
    flat = vals + (_CAT_OFFSET + (ar * OBS_DIM)[:, None])
    bytes_.reshape(-1)[flat[vals >= 0]] = 1
    out = bytes_.astype(np.float32)

    # ---- scalars, in the order of scalar_scales
    tcols = (ar * 2)[:, None] + np.stack([team, team ^ 1], axis=1)  # flat [game, abs team of rel team]
    values = np.concatenate([s.tricks_won.reshape(-1)[rot], s.points.reshape(-1)[tcols], s.score.reshape(-1)[tcols],
                             np.ones((n, 1), np.int16)], axis=1).astype(np.float32)
    out[:, SCALAR_COLUMNS] = values * scalar_scales(rules.target)
    return out


#: size of the perfect-information view: the observation followed by every seat's hand
PERFECT_INFO_DIM = OBS_DIM + NUM_SEATS * NUM_CARDS


def trick_number(obs: np.ndarray) -> np.ndarray:
    """(N,) the trick in play (from 0) of each observation row (N, at least version 1's width): the
    tricks begun, whose leaders the observation holds, less one; -1 during the bidding."""
    return obs[:, OFFSETS["trick_leaders"]].sum(1).round().astype(np.int64) - 1


def hidden_hands(s: State, seats: np.ndarray | None = None) -> np.ndarray:
    """(N, 80) float32 ``[rel seat, card]``: every seat's unplayed hand. Shows hidden cards:
    for critics and oracles in training only, never for a policy that plays."""
    n = s.num_games
    seat = (s.current if seats is None else np.asarray(seats)).astype(np.int8)
    rot = (np.arange(n) * NUM_SEATS)[:, None] + ((seat[:, None] + _R4) & 3)
    hands = s.hands.reshape(-1)[rot]
    bits = np.unpackbits(hands.view(np.uint8), bitorder="little").reshape(n, NUM_SEATS, 32)[:, :, :NUM_CARDS]
    return bits.reshape(n, -1).astype(np.float32)


def observe_perfect_information(s: State, rules: Rules, seats: np.ndarray | None = None) -> np.ndarray:
    """(N, PERFECT_INFO_DIM) float32: :func:`observe` followed by :func:`hidden_hands`.

    For critics and oracles during training only: it shows every hidden card. It is a
    separate, explicitly named function so that it can never be mixed into the normal
    observation by accident.
    """
    return np.concatenate([observe(s, rules, seats), hidden_hands(s, seats)], axis=1)
