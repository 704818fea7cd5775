"""The rules of Cuatrola, once: pure elementwise kernels over 20-bit card masks.

Every decision the rules make (what is legal, who takes a trick, what a trick and a cante
score, when a hand is over, who won it) is one small function here. Each takes a *kit*
first: :data:`NP` runs it on NumPy arrays, for a whole batch of games at once
(:mod:`cuatrola_env.engine`), and :data:`PY` runs the very same code on plain Python ints,
for one game with no array overhead (:mod:`cuatrola_env.single`). The two state layers only
store what these kernels return; neither makes a rule decision of its own.

Kernels use only ``& | ^ >> << + - // ==`` and comparisons, the kit's ``where`` and its
lookup tables, so the same source works for both representations. Boolean negation is
always written as a comparison (``x < 0``), never ``~``, which differs between them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from . import bitboards as bb
from .rules import (
    CANTE_PLAIN,
    CANTE_TRUMP,
    CONTRACT_VALUE,
    CUATROLA,
    LAST_TRICK_BONUS,
    NUM_CARDS,
    NUM_RANKS,
    NUM_TRICKS,
    QUINTOLA,
    SOLO,
    Rules,
)

BIDDING, PLAYING, DONE = 0, 1, 2

#: BIDS_ABOVE[h]: action bits of pass and of every bid strictly higher than bid h
_BIDS_ABOVE = [(1 << NUM_CARDS) | sum(1 << (NUM_CARDS + b) for b in range(h + 1, 4)) for h in range(4)]
#: BIDS_FIT[r]: pass and the bids whose game points fit in r points of room to the target
_BIDS_FIT = [(1 << NUM_CARDS) | sum(1 << (NUM_CARDS + b) for b in (1, 2, 3) if CONTRACT_VALUE[b] <= r) for r in range(6)]
#: SUIT_OR_NONE[s]: the suit's mask; index -1 (no suit led yet) gives 0
SUIT_OR_NONE = [int(m) for m in bb.SUIT_MASK] + [0]
CABALLO_OF_SUIT = [1 << (NUM_RANKS * s + 1) for s in range(4)]
_PTS_LO, _PTS_HI = bb.PTS_LO.tolist(), bb.PTS_HI.tolist()  # the bitboards tables as Python ints


@dataclasses.dataclass(frozen=True)
class Kit:
    """Arithmetic and tables for one representation (NumPy arrays or Python ints)."""

    where: Callable[[Any, Any, Any], Any]
    clip: Callable[[Any, int, int], Any]
    lowest_bit: Callable[[Any], Any]
    lowest_index: Callable[[Any], Any]
    mask_points: Callable[[Any], Any]
    suit_or_none: Any
    above: Any
    bids_above: Any
    bids_fit: Any
    caballo_of_suit: Any
    contract_value: Any
    caballo_bits: int


NP = Kit(
    where=np.where,
    clip=np.clip,
    lowest_bit=bb.lowest_bit,
    lowest_index=bb.lowest_index,
    mask_points=bb.mask_points,
    suit_or_none=np.array(SUIT_OR_NONE, dtype=np.uint32),
    above=bb.ABOVE,
    bids_above=np.array(_BIDS_ABOVE, dtype=np.uint32),
    bids_fit=np.array(_BIDS_FIT, dtype=np.uint32),
    caballo_of_suit=np.array(CABALLO_OF_SUIT, dtype=np.uint32),
    contract_value=CONTRACT_VALUE,
    caballo_bits=bb.CABALLO_BITS,
)

PY = Kit(
    where=lambda c, a, b: a if c else b,
    clip=lambda x, lo, hi: lo if x < lo else hi if x > hi else x,
    lowest_bit=lambda m: m & -m,
    lowest_index=lambda m: (m & -m).bit_length() - 1,
    mask_points=lambda m: _PTS_LO[m & 0x3FF] + _PTS_HI[(m >> 10) & 0x3FF],
    suit_or_none=tuple(SUIT_OR_NONE),
    above=tuple(int(x) for x in bb.ABOVE),
    bids_above=tuple(_BIDS_ABOVE),
    bids_fit=tuple(_BIDS_FIT),
    caballo_of_suit=tuple(CABALLO_OF_SUIT),
    contract_value=tuple(int(v) for v in CONTRACT_VALUE),
    caballo_bits=int(bb.CABALLO_BITS),
)


# ----------------------------------------------------------------------------- legal moves
def legal_play(K: Kit, rules: Rules, hand, trick_len, led, best_led, best_trump, trump):
    """Mask of the cards the seat to act may play (docs/rules.md "Legal plays").

    ``led`` is -1 before the lead; ``best_led`` the highest led-suit card in the trick;
    ``best_trump`` the highest trump in a trick led in another suit (-1: none yet).
    """
    follow = hand & K.suit_or_none[led]                    # asistir
    higher = follow & K.above[best_led]                    # montar
    if rules.overtake_when_trumped:
        follow_legal = K.where(higher != 0, higher, follow)
    else:  # once trumped, just follow suit
        follow_legal = K.where((higher != 0) & (best_trump < 0), higher, follow)
    trumps = hand & K.suit_or_none[trump]
    over_trump = trumps & K.above[best_trump]              # above[-1] is the whole deck
    if rules.must_trump:
        no_trump_yet = K.where(trumps != 0, trumps, hand)
    else:
        no_trump_yet = hand
    void = K.where(best_trump >= 0, K.where(over_trump != 0, over_trump, hand), no_trump_yet)
    return K.where(trick_len == 0, hand, K.where(follow != 0, follow_legal, void))


def shown_absent(K: Kit, rules: Rules, card, card_bit, trick_len, led, best_led, best_trump, trump):
    """Mask of the cards a seat shows it does not hold by playing ``card`` (bit ``card_bit``) into
    a trick in the state given (before the card enters it): every card that, held beside it, would
    have made the play illegal under :func:`legal_play`.

    Followed suit without overtaking when overtaking was compulsory: no higher card of the suit.
    Did not follow: none of the led suit; and, where trumping (``must_trump``) or over-trumping was
    compulsory and the card does not do it, none of the trumps that would have.
    A lead shows nothing.
    """
    led_suit = K.suit_or_none[led]
    higher = led_suit & K.above[best_led]
    follows = card // NUM_RANKS == led
    kept_under = follows & ((card_bit & higher) == 0)
    if not rules.overtake_when_trumped:  # once trumped, following suit is enough
        kept_under = kept_under & (best_trump < 0)
    trumps_above = K.suit_or_none[trump] & K.above[best_trump]  # above[-1] is the whole deck
    trump_forced = (best_trump >= 0) | rules.must_trump
    skipped_trump = trump_forced & ((card_bit & trumps_above) == 0)
    not_following = led_suit | K.where(skipped_trump, trumps_above, 0)
    shown = K.where(follows, K.where(kept_under, higher, 0), not_following)
    return K.where(trick_len == 0, 0, shown)


def legal_bids(K: Kit, rules: Rules, high_bid, team_score):
    """Action bits of the legal bids: pass, and every bid above ``high_bid`` (within the
    target when the exact-target rule is on)."""
    bids = K.bids_above[high_bid]
    if rules.exact_target:
        bids = bids & K.bids_fit[K.clip(rules.target - team_score, 0, 5)]
    return bids


def legal_actions(K: Kit, rules: Rules, phase, hand, trick_len, led, best_led, best_trump, trump, high_bid, team_score):
    """24-bit mask of the legal actions of the seat to act (bits 0..19 cards, 20..23 bids)."""
    play = legal_play(K, rules, hand, trick_len, led, best_led, best_trump, trump)
    return K.where(phase == BIDDING, legal_bids(K, rules, high_bid, team_score), play)


# ----------------------------------------------------------------------------- bidding
def bid(K: Kit, bid, seat, high_bid, declarer):
    """A bid (0 pass .. 3 quintola) raises the contract only if strictly higher.
    Returns the new (high_bid, declarer)."""
    raised = bid > high_bid
    return K.where(raised, bid, high_bid), K.where(raised, seat, declarer)


def mano(K: Kit, dealer):
    """La mano, the seat after the dealer: it speaks first, and leads unless it sits out."""
    return (dealer + 1) & 3


def next_dealer(K: Kit, dealer):
    """The dealer of the next hand of a match: the deal passes on to the next seat."""
    return (dealer + 1) & 3


def trick_size(K: Kit, sitter):
    """Cards in each trick: 4, or 3 when the declarer's partner sits out."""
    return K.where(sitter >= 0, 3, 4)


def end_of_bidding(K: Kit, declarer, dealer):
    """After the four bids: (sitter, leader of trick 1, cards per trick).

    The declarer's partner sits out (-1 if all passed); la mano leads unless it sits out,
    then the next seat does.
    """
    sitter = K.where(declarer >= 0, (declarer + 2) & 3, -1)
    first = mano(K, dealer)
    leader = K.where(first == sitter, (first + 1) & 3, first)
    return sitter, leader, trick_size(K, sitter)


# ----------------------------------------------------------------------------- card play
def play(K: Kit, card, seat, playing, trick_len, led, best_led, best_trump, win_seat, trump):
    """A card enters the trick. Returns the new (led, best_led, best_trump, win_seat).

    The highest trump takes the trick, else the highest card of the led suit. ``playing``
    masks out games that are not in card play (their ``card`` is a bid id, suit 4).
    """
    suit = card // NUM_RANKS
    led = K.where(playing & (trick_len == 0), suit, led)
    beats_led = (suit == led) & (card > best_led)  # best_led is -1 before the lead
    new_trump = (suit == trump) & (led != trump) & (card > best_trump)
    takes = new_trump | (beats_led & (best_trump < 0))
    return led, K.where(beats_led, card, best_led), K.where(new_trump, card, best_trump), K.where(takes, seat, win_seat)


def trick_state(trick, trump: int) -> tuple[int, int, int, int]:
    """(led, best_led, best_trump, win_seat) of one game's trick given as (seat, card) pairs in
    play order: :func:`play` folded over it, on Python ints."""
    led = best_led = best_trump = win_seat = -1
    for k, (seat, card) in enumerate(trick):
        led, best_led, best_trump, win_seat = play(PY, card, seat, True, k, led, best_led, best_trump, win_seat, trump)
    return led, best_led, best_trump, win_seat


def next_seat(K: Kit, seat, sitter):
    """The next seat in play order that plays this hand."""
    nxt = (seat + 1) & 3
    return (nxt + (nxt == sitter)) & 3


def trick_points(K: Kit, trick_cards, trick_index):
    """Card points of a finished trick, plus the 10 of the last trick."""
    return K.mask_points(trick_cards) + K.where(trick_index == NUM_TRICKS - 1, LAST_TRICK_BONUS, 0)


def cante(K: Kit, hand_a, hand_b, sung, trump, contract):
    """The cante (if any) right after a trick, for the winning team.

    ``hand_a`` and ``hand_b`` are the unplayed hands of the winning team's two seats (0 for a
    seat that sits out); ``sung`` holds the caballo bit of each suit already sung. At most
    one per trick, trump first, then suits in id order; only under pass and solo.
    Returns (caballo bit of the suit sung or 0, points 0/20/40, suit sung or -1).
    """
    pairs = ((hand_a & (hand_a >> 1)) | (hand_b & (hand_b >> 1))) & K.caballo_bits & ~sung
    pairs = K.where(contract <= SOLO, pairs, 0)
    trump_cab = K.caballo_of_suit[trump]
    sing = K.where((pairs & trump_cab) != 0, trump_cab, K.lowest_bit(pairs))
    points = K.where(sing == 0, 0, K.where(sing == trump_cab, CANTE_TRUMP, CANTE_PLAIN))
    suit = K.where(sing == 0, -1, K.lowest_index(sing) // NUM_RANKS)
    return sing, points, suit


def hand_over(K: Kit, contract, tricks_played, declarer_tricks):
    """Is the hand over? Pass and solo play 5 tricks; cuatrola and quintola stop as soon as
    the result is certain (cuatrola: 4 won or 2 lost; quintola: 1 lost)."""
    lost = tricks_played - declarer_tricks
    return (
        (tricks_played == NUM_TRICKS)
        | ((contract == CUATROLA) & ((declarer_tricks >= 4) | (lost >= 2)))
        | ((contract == QUINTOLA) & (lost >= 1))
    )


def tricks_needed(K: Kit, contract):
    """Tricks a declarer of cuatrola (4) or quintola (all 5) must win."""
    return K.where(contract == CUATROLA, 4, NUM_TRICKS)


def hand_winner(K: Kit, rules: Rules, contract, declarer, points0, points1, last_trick_winner, dealer, declarer_tricks):
    """(winning team, game points) of a finished hand.

    Pass and solo: more points wins; a tie goes to the last trick's team (``online``) or to
    la mano's team (``traditional``). Cuatrola: the declarer needs 4 tricks; quintola 5.
    """
    if rules.tie_rule == "last_trick":
        tie = last_trick_winner & 1
    else:
        tie = mano(K, dealer) & 1
    by_points = K.where(points0 > points1, 0, K.where(points1 > points0, 1, tie))
    declarer_team = declarer & 1
    made = declarer_tricks >= tricks_needed(K, contract)
    by_tricks = K.where(made, declarer_team, 1 - declarer_team)
    return K.where(contract <= SOLO, by_points, by_tricks), K.contract_value[contract]


# ----------------------------------------------------------------------------- the match
def match_after_hand(K: Kit, rules: Rules, winner_score, value):
    """(the winning team's new match score, whether the match is over) after a hand worth ``value``
    game points: the first team to reach the target wins the match."""
    score = winner_score + value
    return score, score >= rules.target
