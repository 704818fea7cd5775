"""20-bit card masks: named masks, lookup tables built at import, tiny bit helpers.

A hand is a ``uint32`` whose bit ``i`` is card id ``i`` (``5 * suit + rank``), so
a suit is a 5-bit block and "higher in the same suit" is "a higher bit in the block".
All helpers work on scalars and on NumPy arrays alike.
"""

from __future__ import annotations

import numpy as np

from .rules import CABALLO, CARD_POINTS, NUM_CARDS, NUM_RANKS, NUM_SUITS, REY

U32 = np.uint32
FULL_DECK = U32((1 << NUM_CARDS) - 1)

#: SUIT_MASK[s]: the five cards of suit s
SUIT_MASK = np.array([((1 << NUM_RANKS) - 1) << (NUM_RANKS * s) for s in range(NUM_SUITS)], dtype=U32)

#: ABOVE[c]: cards of c's suit that beat c (higher rank). ABOVE[20] (= "no card", index -1) is
#: the whole deck so that "beats nothing" lookups stay branch-free.
ABOVE = np.zeros(NUM_CARDS + 1, dtype=U32)
for _c in range(NUM_CARDS):
    _s = _c // NUM_RANKS
    ABOVE[_c] = SUIT_MASK[_s] & ~U32((1 << (_c + 1)) - 1)
ABOVE[NUM_CARDS] = FULL_DECK
del _c, _s

#: CABALLO_BITS: the caballo of every suit; ``pairs = h & (h >> 1) & CABALLO_BITS`` keeps the
#: caballo bit of each suit whose rey and caballo are both in h (rey = caballo + 1).
assert REY == CABALLO + 1
CABALLO_BITS = U32(sum(1 << (NUM_RANKS * s + CABALLO) for s in range(NUM_SUITS)))

#: bit i of a 24-bit action mask is action i; bits 20..23 are the bids

# popcount of every 12-bit value, for a two-lookup popcount of a 24-bit mask
_POP12 = np.array([bin(i).count("1") for i in range(1 << 12)], dtype=np.int8)
_DEBRUIJN = U32(0x077CB531)
_DEBRUIJN_INDEX = np.zeros(32, dtype=np.int8)
for _i in range(32):
    _DEBRUIJN_INDEX[((0x077CB531 << _i) & 0xFFFFFFFF) >> 27] = _i
del _i
# card points of every 10-bit half of a mask (low half: cards 0..9, high half: 10..19)
PTS_LO = np.array([sum(int(CARD_POINTS[b]) for b in range(10) if i >> b & 1) for i in range(1 << 10)], dtype=np.int16)
PTS_HI = np.array([sum(int(CARD_POINTS[b + 10]) for b in range(10) if i >> b & 1) for i in range(1 << 10)], dtype=np.int16)
_BIT_ARANGE = np.arange(32, dtype=U32)



def popcount(mask):
    """Number of set bits of a 24-bit mask (cards or actions; vectorised)."""
    m = np.asarray(mask, dtype=U32)
    return _POP12[m & U32(0xFFF)] + _POP12[(m >> U32(12)) & U32(0xFFF)]


def mask_points(mask):
    """Card points of the cards in a 20-bit mask (vectorised)."""
    m = np.asarray(mask, dtype=U32)
    return PTS_LO[m & U32(0x3FF)] + PTS_HI[(m >> U32(10)) & U32(0x3FF)]


def lowest_bit(mask):
    """Mask of the lowest set bit (0 where the mask is empty)."""
    m = np.asarray(mask, dtype=U32)
    return m & (~m + U32(1))


def lowest_index(mask):
    """Index of the lowest set bit of a 32-bit mask (-1 where the mask is empty)."""
    m = np.asarray(mask, dtype=U32)
    # de Bruijn multiplication: (low * B) >> 27 is unique for each power of two (wraps mod 2^32)
    return _DEBRUIJN_INDEX[((lowest_bit(m) * _DEBRUIJN) & U32(0xFFFFFFFF)) >> U32(27)] | np.where(m == 0, np.int8(-1), np.int8(0))


def random_bit(mask, rng: np.random.Generator):
    """Index of a uniformly random set bit of each mask (masks hold at most 5 bits, never 0).

    The sampler used by random play: k = floor(u * popcount), then drop the k lowest bits.
    """
    m = np.asarray(mask, dtype=U32)
    k = (rng.random(m.shape, dtype=np.float32) * popcount(m)).astype(np.int8)
    for j in range(int(k.max(initial=0))):
        m = np.where(k > j, m & (m - U32(1)), m)
    return lowest_index(m)


def to_bools(mask, width: int = NUM_CARDS) -> np.ndarray:
    """(..., width) bool array of the bits of a mask array."""
    m = np.asarray(mask, dtype=U32)
    return ((m[..., None] >> _BIT_ARANGE[:width]) & U32(1)).astype(bool)


def from_cards(cards) -> np.ndarray:
    """Mask of distinct card ids along the last axis (ids < 0 are ignored)."""
    c = np.asarray(cards)
    bits = np.where(c >= 0, U32(1) << np.clip(c, 0, 31).astype(U32), U32(0))
    # the ids along the axis are distinct, so the sum of their bits is their OR
    return bits.sum(axis=-1, dtype=U32)


def cards_of(mask) -> list[int]:
    """Sorted card ids of one scalar mask (plain Python, for display and tests)."""
    m = int(mask)
    return [i for i in range(32) if m >> i & 1]
