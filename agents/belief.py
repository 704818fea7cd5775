"""Belief sampling: deals of the hidden cards consistent with everything a seat has seen.

What the rules reveal is the engine's own kernel (:func:`cuatrola_env.core.shown_absent`), never
re-stated here: for every card a seat played, each hidden card that, had that seat held it,
would have made the played card illegal is a card the seat did not hold then, and so does not
hold now. This captures every inference
of docs/rules.md: a seat that did not follow is void in the led suit; one that followed without
overtaking holds nothing higher in that suit (when overtaking was compulsory); one that did
not over-trump holds no higher trump; one that did not trump when it had to holds no trump.
The muestra stays in the dealer's hand until played.

Samples are drawn by assigning the hidden cards most-constrained first, each to an eligible
seat with probability proportional to its free places, restarting on a dead end; every
sample is checked against all constraints before it is returned.

:func:`any_world` finds one consistent deal without chance, as a matching of the hidden cards to
the seats' free places (what the bot needs to replay a JSON state); it fails only when no deal fits.
"""

from __future__ import annotations

import numpy as np

from cuatrola_env import core
from cuatrola_env.bitboards import popcount
from cuatrola_env.core import PY

from .base import SeatView


class Inconsistent(ValueError):
    """No deal of the hidden cards fits what was seen (a bug upstream, or a wrong history)."""


def constraints(view: SeatView) -> tuple[list[int], list[int], int]:
    """For each seat: (cards it must still hold, cards it cannot hold), and the hidden cards.

    Returns ``(need, forbidden, hidden)``: ``need[q]`` is how many unplayed cards seat q holds,
    ``forbidden[q]`` a mask of hidden cards q cannot hold, ``hidden`` the mask of cards whose
    place ``view.seat`` does not know.
    """
    rules, trump, me = view.rules, view.trump, view.seat
    forbidden = [0, 0, 0, 0]
    played_by = [0, 0, 0, 0]
    led = best_led = best_trump = win = -1
    trick_len = 0
    size = 4
    n_bids = 0
    for seat, a in view.history:
        if a >= 20:
            n_bids += 1
            if n_bids == 4:
                size = core.trick_size(PY, view.sitter)
            continue
        forbidden[seat] |= core.shown_absent(PY, rules, a, 1 << a, trick_len, led, best_led, best_trump, trump)
        played_by[seat] |= 1 << a
        led, best_led, best_trump, win = core.play(PY, a, seat, True, trick_len, led, best_led, best_trump, win, trump)
        trick_len += 1
        if trick_len == size:
            led = best_led = best_trump = win = -1
            trick_len = 0
    played = played_by[0] | played_by[1] | played_by[2] | played_by[3]
    hidden = ((1 << 20) - 1) & ~played & ~view.hand
    need = [5 - bin(played_by[q]).count("1") for q in range(4)]
    need[me] = 0
    forbidden[me] = hidden
    if view.muestra_held and view.dealer != me:
        m = 1 << view.muestra
        hidden &= ~m
        need[view.dealer] -= 1
        for q in range(4):
            forbidden[q] &= ~m
    for q in range(4):
        forbidden[q] &= hidden
    return need, forbidden, hidden


def _placement(view: SeatView) -> tuple[list[int], list[int], list[int], dict[int, list[int]]]:
    """What a deal of the hidden cards must respect: :func:`constraints`' ``need`` and ``forbidden``,
    the cards whose place is known (the seat's hand, the dealer's unplayed muestra) as four masks,
    and for each hidden card (increasing) the seats that may hold it."""
    need, forbidden, hidden = constraints(view)
    known = [0, 0, 0, 0]
    known[view.seat] = view.hand
    if view.muestra_held and view.dealer != view.seat:
        known[view.dealer] |= 1 << view.muestra
    seats_of = {c: [q for q in range(4) if need[q] > 0 and not forbidden[q] >> c & 1]
                for c in range(20) if hidden >> c & 1}
    return need, forbidden, known, seats_of


def sample_worlds(view: SeatView, n: int, rng: np.random.Generator, max_restarts: int = 200) -> list[list[int]]:
    """``n`` full deals (four unplayed-hand masks, seat order) consistent with ``view``."""
    return sample_world_array(view, n, rng, max_restarts).tolist()


def sample_world_array(view: SeatView, n: int, rng: np.random.Generator, max_restarts: int = 200) -> np.ndarray:
    """(n, 4) int64: :func:`sample_worlds` as an array, every deal drawn at once (a NumPy row each).

    Each hidden card, most-constrained first, goes to one of the seats that may hold it and have a
    free place, with probability proportional to its free places; a row that meets a dead end is
    drawn again. Raises :class:`Inconsistent` after ``max_restarts * n`` dead ends."""
    need, forbidden, known, seats_of = _placement(view)
    base = np.array(known, np.int64)
    cards = list(seats_of)
    eligible = np.array([[q in seats_of[c] for q in range(4)] for c in cards], np.int64).reshape(-1, 4)
    order = np.argsort(eligible.sum(1), kind="stable")  # the most-constrained cards first
    kept, got, failed = [], 0, 0
    rate = 1.0  # the share of rows that reach the end; more rows are drawn when it is low
    while got < n:
        rows = int(np.ceil((n - got) / max(rate, 0.05)))
        hands, ok = _draw_rows(rows, base, np.array(need, np.int64), [cards[i] for i in order], eligible[order], rng)
        ok &= _fits(hands, view, need, forbidden)
        kept.append(hands[ok])
        got += int(ok.sum())
        failed += rows - int(ok.sum())
        rate = ok.mean()
        if got < n and failed > max_restarts * n:
            raise Inconsistent(f"no consistent deal found for seat {view.seat} after {failed} tries")
    return np.concatenate(kept)[:n]


def any_world(view: SeatView) -> list[int]:
    """One deal (four unplayed-hand masks, seat order) consistent with ``view``, found without chance:
    the hidden cards placed on the seats by augmenting paths (a bipartite matching of cards to the
    seats' free places, at most a few hundred steps), so that a deal is found whenever one exists and
    :class:`Inconsistent` is raised, at the same small cost, when none does."""
    need, _, hands, seats_of = _placement(view)
    if sum(max(n, 0) for n in need) != len(seats_of) or min(need) < 0:
        raise Inconsistent(f"seat {view.seat}: {len(seats_of)} hidden cards for {need} places")
    owner: dict[int, int] = {}
    held_by: list[list[int]] = [[], [], [], []]
    for c in sorted(seats_of, key=lambda c: len(seats_of[c])):
        if not _place(c, seats_of, need, owner, held_by, set()):
            raise Inconsistent(f"no consistent deal for seat {view.seat}: card {c} fits no seat")
    for c, q in owner.items():
        hands[q] |= 1 << c
    return hands


def _place(card: int, seats_of: dict, need: list[int], owner: dict, held_by: list[list[int]], seen: set) -> bool:
    """Put ``card`` on a seat that may hold it and has a free place or can make one (an augmenting
    path, each seat visited once); whether it found a place."""
    for q in seats_of[card]:
        if q in seen:
            continue
        seen.add(q)
        if len(held_by[q]) < need[q] or _make_room(q, seats_of, need, owner, held_by, seen):
            owner[card] = q
            held_by[q].append(card)
            return True
    return False


def _make_room(seat: int, seats_of: dict, need: list[int], owner: dict, held_by: list[list[int]], seen: set) -> bool:
    """Move one of ``seat``'s cards to another seat that may hold it; whether one moved."""
    for other in list(held_by[seat]):
        if _place(other, seats_of, need, owner, held_by, seen):
            held_by[seat].remove(other)
            return True
    return False


def _draw_rows(rows: int, base: np.ndarray, need: np.ndarray, cards: list[int], eligible: np.ndarray,
               rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``rows`` deals drawn card by card (``cards`` in order, ``eligible`` (cards, 4) the seats that may
    hold each): the hands (rows, 4) and whether each row placed every card."""
    hands = np.tile(base, (rows, 1))
    free = np.tile(need, (rows, 1))
    alive = np.ones(rows, bool)
    at = np.arange(rows)
    for c, seats in zip(cards, eligible, strict=True):
        weight = np.maximum(free, 0) * seats
        total = weight.sum(1)
        alive &= total > 0
        r = rng.random(rows) * total
        q = (np.cumsum(weight, 1) > r[:, None]).argmax(1)
        hands[at, q] |= 1 << c
        free[at, q] -= 1
    return hands, alive & (free == 0).all(1)


def _fits(hands: np.ndarray, view: SeatView, need: list[int], forbidden: list[int]) -> np.ndarray:
    """(rows,) whether each deal agrees with everything ``view`` has seen (:func:`consistent`, on arrays)."""
    unplayed = ((1 << 20) - 1) & ~view.played
    ok = (hands[:, 0] | hands[:, 1] | hands[:, 2] | hands[:, 3]) == unplayed
    ok &= sum(popcount(hands[:, q]) for q in range(4)) == bin(unplayed).count("1")
    ok &= hands[:, view.seat] == view.hand
    for q in range(4):
        if q == view.seat:
            continue
        held = hands[:, q]
        if view.muestra_held and q == view.dealer:
            ok &= (held >> view.muestra & 1) == 1
            held = held & ~(1 << view.muestra)
        ok &= (popcount(held) == need[q]) & (held & forbidden[q] == 0)
    return ok


def consistent(view: SeatView, hands: list[int], need=None, forbidden=None) -> bool:
    """Does a full deal of unplayed hands agree with everything ``view`` has seen?"""
    if need is None:
        need, forbidden, _ = constraints(view)
    return bool(_fits(np.array([hands], np.int64), view, need, forbidden)[0])
