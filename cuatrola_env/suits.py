"""Renaming the suits: a position and the same position with its suits renamed.

The rules treat the four suits alike: trump is whichever suit the muestra names, and the only
order among suits is that of two cantes due in the same trick. So renaming the suits of a seat's
observation and of its legal actions gives a position a perfect player plays the same way,
renamed. That gives a learner 24 positions for each one labelled (the suits renamed at random as
it fits), and a player 24 questions to average over (``experiments/averaged_policy.py``).

The renaming maps every card-indexed view of the observation (:data:`cuatrola_env.observation.VIEWS`),
the trump view and the cantes view; bids are not renamed. ``suits[s]`` is the new name of suit ``s``;
``obs[:, observation_columns(suits)]`` is the renamed observation and ``mask[:, action_columns(suits)]``
(or any per-action array) the renamed legal actions.

>>> import itertools
>>> renamings = list(itertools.permutations(range(4)))  # the identity first
>>> len(renamings), bool((action_columns(renamings[0]) == range(24)).all())
(24, True)
"""

from __future__ import annotations

import itertools

import numpy as np

from .observation import OBS_DIM, OFFSETS, VIEWS
from .rules import NUM_ACTIONS, NUM_CARDS, NUM_RANKS, NUM_SUITS

#: the views indexed by card id, 20 columns (one card each) per block
CARD_VIEWS = ("hand", "played_by", "played_in_trick", "current_trick", "muestra", "absent")

#: every renaming of the four suits, the identity first
RENAMINGS: tuple[tuple[int, ...], ...] = tuple(itertools.permutations(range(NUM_SUITS)))


def card_relabelling(suits: tuple[int, ...]) -> np.ndarray:
    """(20,) the card each card becomes when suit ``s`` is renamed ``suits[s]``."""
    return np.array([NUM_RANKS * suits[c // NUM_RANKS] + c % NUM_RANKS for c in range(NUM_CARDS)])


def observation_columns(suits: tuple[int, ...], width: int = OBS_DIM) -> np.ndarray:
    """(width,) column indices: ``obs[:, cols]`` is the observation (its first ``width`` columns,
    an earlier version's) with suit ``s`` renamed ``suits[s]``."""
    back = np.argsort(suits)  # the old suit of each new suit
    old_card = card_relabelling(tuple(back))
    cols = np.arange(OBS_DIM)
    for name, size in VIEWS:
        start = OFFSETS[name].start
        if name in CARD_VIEWS:
            for block in range(start, start + size, NUM_CARDS):
                cols[block: block + NUM_CARDS] = block + old_card
        elif name == "trump":
            cols[start: start + NUM_SUITS] = start + back
        elif name == "cantes":  # [suit, team]
            per_suit = size // NUM_SUITS
            cols[start: start + size] = (start + per_suit * back[:, None] + np.arange(per_suit)).reshape(-1)
    return cols[:width]


def action_columns(suits: tuple[int, ...]) -> np.ndarray:
    """(24,) action indices: ``mask[:, cols]`` is the legal mask with the suits renamed (bids unchanged)."""
    return np.r_[card_relabelling(tuple(np.argsort(suits))), np.arange(NUM_CARDS, NUM_ACTIONS)]
