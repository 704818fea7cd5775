"""Bad input gets a clear error naming what is wrong, and the engine state is not touched."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from helpers import draw_deals

from cuatrola_env import Rules, VectorCuatrola, get_rules
from cuatrola_env.game import Game


def snapshot(env):
    return {f.name: getattr(env.state, f.name).copy() for f in dataclasses.fields(env.state)}


def assert_unchanged(env, snap):
    for k, v in snap.items():
        assert np.array_equal(getattr(env.state, k), v), f"state field {k} changed"


@pytest.fixture
def env():
    e = VectorCuatrola(num_envs=8, seed=0)
    rng = np.random.default_rng(0)
    for _ in range(6):  # into card play for most games
        m = e.action_mask
        e.step(np.array([rng.choice(np.flatnonzero(r)) for r in m]))
    return e


def test_illegal_action(env):
    snap = snapshot(env)
    mask = env.action_mask
    actions = np.array([np.flatnonzero(r)[0] for r in mask])
    bad_game = 3
    actions[bad_game] = np.flatnonzero(~mask[bad_game])[0]
    with pytest.raises(ValueError, match=rf"illegal action {actions[bad_game]} .* in game {bad_game}"):
        env.step(actions)
    assert_unchanged(env, snap)
    env.step(np.array([np.flatnonzero(r)[0] for r in mask]))  # still usable


@pytest.mark.parametrize("value", [-1, 24, 1000])
def test_action_out_of_range(env, value):
    snap = snapshot(env)
    actions = np.array([np.flatnonzero(r)[0] for r in env.action_mask])
    actions[5] = value
    with pytest.raises(ValueError, match=r"out of range 0\.\.23"):
        env.step(actions)
    assert_unchanged(env, snap)


@pytest.mark.parametrize("shape", [(7,), (9,), (8, 1), ()])
def test_wrong_shaped_actions(env, shape):
    snap = snapshot(env)
    with pytest.raises(ValueError, match=r"actions must have shape \(8,\)"):
        env.step(np.zeros(shape, dtype=int))
    assert_unchanged(env, snap)


def test_non_integer_actions(env):
    with pytest.raises(ValueError, match="integers"):
        env.step(np.full(8, 0.5))


def test_deal_not_a_permutation(env):
    snap = snapshot(env)
    hands, dealer, muestra = draw_deals(np.random.default_rng(1), 8)
    hands[2, 1, 0] = hands[2, 0, 0]  # a duplicated card, another missing
    with pytest.raises(ValueError, match="game 2 is not a permutation of the 20 cards"):
        env.reset(hands=hands, dealer=dealer, muestra=hands[np.arange(8), dealer, 0])
    assert_unchanged(env, snap)


def test_deal_wrong_shape_and_card_range(env):
    hands, dealer, muestra = draw_deals(np.random.default_rng(1), 8)
    with pytest.raises(ValueError, match=r"hands must have shape \(8, 4, 5\)"):
        env.reset(hands=hands[:4], dealer=dealer, muestra=muestra)
    bad = hands.copy()
    bad[0, 0, 0] = 25
    with pytest.raises(ValueError, match="not a permutation"):
        env.reset(hands=bad, dealer=dealer, muestra=muestra)


def test_muestra_not_in_dealers_hand(env):
    snap = snapshot(env)
    hands, dealer, muestra = draw_deals(np.random.default_rng(1), 8)
    muestra[4] = hands[4, (dealer[4] + 1) % 4, 0]
    with pytest.raises(ValueError, match="muestra must be in the dealer's hand: game 4"):
        env.reset(hands=hands, dealer=dealer, muestra=muestra)
    assert_unchanged(env, snap)


def test_bad_dealer(env):
    hands, dealer, muestra = draw_deals(np.random.default_rng(1), 8)
    dealer[0] = 4
    with pytest.raises(ValueError, match="dealer must be a seat 0..3"):
        env.reset(hands=hands, dealer=dealer, muestra=muestra)
    with pytest.raises(ValueError, match="dealer must be seats in 0..3"):
        env.reset(dealer=7)


def test_incomplete_deal_and_bad_score(env):
    hands, dealer, muestra = draw_deals(np.random.default_rng(1), 8)
    with pytest.raises(ValueError, match="needs hands, dealer and muestra together"):
        env.reset(hands=hands, dealer=dealer)
    with pytest.raises(ValueError, match="below the target"):
        env.reset(score=[11, 0])
    with pytest.raises(ValueError, match="score must be integers"):
        env.reset(score=[1, 2, 3])


def test_unknown_preset_and_bad_options():
    with pytest.raises(ValueError, match="unknown rules preset 'tradicional'"):
        VectorCuatrola(num_envs=2, rules="tradicional")
    with pytest.raises(ValueError, match="tie_rule"):
        Rules(tie_rule="dealer")
    with pytest.raises(ValueError, match="target"):
        get_rules("online", target=0)
    with pytest.raises(ValueError, match="target must be an integer"):
        get_rules({"name": "online", "target": True})  # a boolean is not a number
    with pytest.raises(ValueError, match="name must be a name of 1 to 64"):
        get_rules({"name": "x" * 10_000})
    with pytest.raises(ValueError, match=r"unknown rules option\(s\) \['trumps'\]"):
        get_rules({"name": "online", "trumps": 3})
    with pytest.raises(ValueError, match="num_envs"):
        VectorCuatrola(num_envs=0)
    with pytest.raises(ValueError, match="mode"):
        VectorCuatrola(num_envs=2, mode="tournament")


def test_options_are_arguments():
    r = get_rules("traditional", target=21)
    assert r.target == 21 and r.must_trump and not r.overtake_when_trumped
    assert get_rules({"name": "online", "target": 5}).target == 5
    env = VectorCuatrola(num_envs=2, rules=r, mode="match")
    assert env.rules.target == 21


def test_a_game_starts_on_a_given_deal_as_reset_sets_it_and_refuses_a_bad_one():
    """``Game(hands=..., dealer=..., muestra=..., score=...)`` is the game ``reset`` gives on that deal
    (no random hand drawn first); a deal or score ``reset`` refuses is refused with the same words."""
    hands, dealer, muestra = draw_deals(np.random.default_rng(4), 1)
    deal = {"hands": hands[0].tolist(), "dealer": int(dealer[0]), "muestra": int(muestra[0]), "score": [3, 7]}
    given = Game("traditional", **deal)
    reset = Game("traditional", seed=9)
    reset.reset(**deal)
    assert list(given.single.hands) == list(reset.single.hands) and given.single.score == [3, 7]
    np.testing.assert_array_equal(given.observe(), reset.observe())
    bad = dict(deal, muestra=(deal["hands"][(deal["dealer"] + 1) % 4][0]))
    with pytest.raises(ValueError, match="muestra"):
        Game("online", **bad)
    with pytest.raises(ValueError, match="below the target"):
        Game("online", **dict(deal, score=[11, 0]))
    with pytest.raises(ValueError, match="needs hands, dealer and muestra together"):
        Game("online", hands=deal["hands"])
