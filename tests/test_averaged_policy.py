"""Renaming the suits (cuatrola_env.suits) of a seat's observation is renaming them in the game; the averaged policy."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

pytest.importorskip("torch")

from agents.base import seat_view  # noqa: E402
from agents.registry import make_agent  # noqa: E402
from cuatrola_env.bitboards import cards_of  # noqa: E402
from cuatrola_env.game import Game  # noqa: E402
from cuatrola_env.suits import action_columns, card_relabelling, observation_columns  # noqa: E402

SHIPPED = "agents/models/cuatrola.pt"


def relabelled(g: Game, suits) -> Game:
    """A new game of ``g``'s deal (dealer, muestra, score) with suit ``s`` renamed ``suits[s]``."""
    v, new = seat_view(g), card_relabelling(suits)
    h = Game(g.rules)
    h.reset(hands=[[int(new[c]) for c in cards_of(int(m))] for m in g.hands], dealer=v.dealer,
            muestra=int(new[v.muestra]), score=list(v.score))
    return h


@pytest.mark.parametrize("preset", ["online", "traditional"])
def test_the_relabelled_observation_is_that_of_the_relabelled_game(preset):
    """Suits are alike (dealing, trump from the muestra, following and trumping, cantes): a deal
    drawn here and the same deal with its suits renamed, played with the same moves renamed, give at
    every decision the observation and legal mask the column maps make of the original's."""
    rng = np.random.default_rng(7)
    labels = list(itertools.permutations(range(4)))
    checked = 0
    for seed in range(40):
        suits = labels[int(rng.integers(1, 24))]
        g = Game(preset, seed=seed)
        h = relabelled(g, suits)
        obs_cols, act_cols, new = observation_columns(suits), action_columns(suits), card_relabelling(suits)
        while not g.over:
            v, w = seat_view(g), seat_view(h)
            assert np.array_equal(v.observation[obs_cols], w.observation), (seed, suits, len(v.history))
            assert np.array_equal(v.legal_mask[act_cols], w.legal_mask)
            a = int(rng.choice(g.legal_actions()))
            g.step(a)
            h.step(int(new[a]) if a < 20 else a)
            checked += 1
    assert checked > 300


def test_averaging_over_every_relabelling_plays_the_same_move_renamed():
    """With all 24 relabellings averaged, the player's values of a renamed position are its values of
    the original, renamed; with none, the network's own choice."""
    every = make_agent("experiments.averaged_policy:AveragedPolicy,paths=" + SHIPPED + ",suits=24")
    alone = make_agent("experiments.averaged_policy:AveragedPolicy,paths=" + SHIPPED)
    model = make_agent("model:" + SHIPPED)
    suits = (2, 0, 3, 1)
    g = Game(seed=5)
    h = relabelled(g, suits)
    new, cols = card_relabelling(suits), action_columns(suits)
    while not g.over:
        v, w = seat_view(g), seat_view(h)
        a, b = every.log_probabilities(v.observation[None], v.legal_mask[None])[0], \
            every.log_probabilities(w.observation[None], w.legal_mask[None])[0]
        assert np.allclose(a[cols], b, atol=1e-5)
        assert alone.act(v) == model.act(v)
        move = every.act(v)
        g.step(move)
        h.step(int(new[move]) if move < 20 else move)
