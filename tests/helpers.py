"""Shared test helpers: deals drawn in the test, action pickers, state read-outs."""

from __future__ import annotations

import numpy as np


def draw_deals(rng: np.random.Generator, n: int):
    """n random deals drawn here, independently of the engine: hands (n, 4, 5), dealer, muestra."""
    perm = np.argsort(rng.random((n, 20)), axis=1)
    hands = perm.reshape(n, 4, 5)
    dealer = rng.integers(0, 4, size=n)
    muestra = hands[np.arange(n), dealer, rng.integers(0, 5, size=n)]
    return hands, dealer, muestra


def pick_actions(mask: np.ndarray, rng: np.random.Generator, pass_bias: float = 0.75) -> np.ndarray:
    """A random legal action per row of ``mask``; in bidding, pass with probability ``pass_bias``.

    Uniform bidding would end in quintola most of the time; the bias spreads the contracts.
    """
    scores = rng.random(mask.shape) * mask
    actions = scores.argmax(axis=1)
    bidding = mask[:, 20]
    take_pass = bidding & (rng.random(mask.shape[0]) < pass_bias)
    return np.where(take_pass, 20, actions)


def seat_cards(mask_row) -> list[list[int]]:
    """The four hand masks of one game as sorted card-id lists."""
    return [[c for c in range(20) if int(m) >> c & 1] for m in mask_row]
