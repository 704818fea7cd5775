"""Invariants over random play, with inputs drawn by hypothesis."""

from __future__ import annotations

import numpy as np
from helpers import draw_deals, pick_actions
from hypothesis import given, settings
from hypothesis import strategies as st

from cuatrola_env import VectorCuatrola
from cuatrola_env.bitboards import FULL_DECK, mask_points, popcount

settings.register_profile("ci", max_examples=25, deadline=None)
settings.load_profile("ci")


@given(
    seed=st.integers(0, 2**31 - 1),
    rules=st.sampled_from(["online", "traditional"]),
    pass_bias=st.floats(0.0, 1.0),
    mode=st.sampled_from(["hand", "match"]),
)
def test_invariants_hold_at_every_step(seed, rules, pass_bias, mode):
    """Cards are conserved, masks are never empty, rewards are zero-sum per team, and every
    finished hand's points add up: cards played + 10 for the last trick + cantes."""
    n = 64
    rng = np.random.default_rng(seed)
    env = VectorCuatrola(num_envs=n, rules=rules, mode=mode, seed=seed)
    s = env.state
    for _ in range(60):
        # conservation: the four hands and the played cards partition the deck
        h = s.hands
        union = h[:, 0] | h[:, 1] | h[:, 2] | h[:, 3] | s.played
        assert (union == FULL_DECK).all()
        assert (popcount(h).sum(axis=1) + popcount(s.played) == 20).all()
        assert (s.seat_played.sum(axis=1, dtype=np.uint32) == s.played).all()
        mask = env.action_mask
        assert mask.any(axis=1).all(), "a game with no legal action before its end"
        sitter_cards = np.where(s.sitter >= 0, s.hands[np.arange(n), np.maximum(s.sitter, 0)], 0)
        rewards, done = env.step(pick_actions(mask, rng, pass_bias))
        assert (rewards[:, 0] == rewards[:, 2]).all() and (rewards[:, 1] == rewards[:, 3]).all()
        assert (rewards[:, 0] == -rewards[:, 1]).all()
        assert (rewards[~done] == 0).all()
        r = env.last_results
        if r:
            full = r["tricks_won"].sum(axis=1) == 5
            idx = r["index"]
            unplayed = mask_points(sitter_cards[idx].astype(np.uint32))
            expected = 120 - unplayed + 10 + r["cante_points"].sum(axis=1)
            assert (r["points"].sum(axis=1)[full] == expected[full]).all()
            assert (r["tricks_won"].sum(axis=1) <= 5).all()
            assert np.isin(r["value"], [1, 2, 4, 5]).all()
            cantes_ok = (r["contract"] <= 1) | (r["cante_points"].sum(axis=1) == 0)
            assert cantes_ok.all(), "cantes only under pass and solo"


@given(seed=st.integers(0, 2**31 - 1), rules=st.sampled_from(["online", "traditional"]))
def test_given_deals_are_dealt_as_given(seed, rules):
    rng = np.random.default_rng(seed)
    hands, dealer, muestra = draw_deals(rng, 16)
    env = VectorCuatrola(num_envs=16, rules=rules)
    env.reset(hands=hands, dealer=dealer, muestra=muestra)
    expect = (1 << hands).sum(axis=2)
    assert (env.state.hands == expect).all()
    assert (env.state.trump == muestra // 5).all()
    assert (env.current_player == (dealer + 1) % 4).all()


def test_same_seed_same_games_and_different_seed_differs():
    def run(seed):
        env = VectorCuatrola(num_envs=32, seed=seed)
        rng = np.random.default_rng(0)
        out = []
        for _ in range(50):
            r, _ = env.step(pick_actions(env.action_mask, rng))
            out.append(r.copy())
        return np.stack(out), env.state.hands.copy()

    a, ha = run(3)
    b, hb = run(3)
    _, hc = run(4)
    assert np.array_equal(a, b) and np.array_equal(ha, hb)
    assert not np.array_equal(ha, hc)


def test_random_deals_are_uniform_enough():
    """Each card lands in each seat about a quarter of the time, and the muestra is the dealer's."""
    env = VectorCuatrola(num_envs=20000, seed=1)
    s = env.state
    bits = (s.hands[:, :, None] >> np.arange(20, dtype=np.uint32)) & 1  # (n, seat, card)
    freq = bits.mean(axis=0)
    assert np.abs(freq - 0.25).max() < 0.02
    assert ((s.hands[np.arange(20000), s.dealer] >> s.muestra.astype(np.uint32)) & 1).all()


def test_threads_give_the_same_rules():
    """Sharded stepping (num_threads=2) plays the same rules as one thread on the same deals."""
    rng = np.random.default_rng(0)
    hands, dealer, muestra = draw_deals(rng, 500)
    envs = [VectorCuatrola(num_envs=500, seed=1, num_threads=t) for t in (1, 2)]
    for e in envs:
        e.reset(hands=hands, dealer=dealer, muestra=muestra)
    finished = np.zeros(500, dtype=bool)
    while not finished.all():
        live = ~finished  # finished games are re-dealt from each shard's own stream
        m0, m1 = envs[0].action_mask, envs[1].action_mask
        assert np.array_equal(m0[live], m1[live])
        assert np.array_equal(envs[0].observe()[live], envs[1].observe()[live])
        a0 = pick_actions(m0, rng)
        a1 = np.where(live, a0, pick_actions(m1, rng))
        r0, d0 = envs[0].step(a0)
        r1, d1 = envs[1].step(a1)
        assert np.array_equal(r0[live], r1[live]) and np.array_equal(d0[live], d1[live])
        finished |= d0
