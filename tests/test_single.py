"""The single-game state layer against the batched engine: same deals, same actions, same
state after every decision, same observations from every seat."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from helpers import draw_deals, pick_actions

from cuatrola_env import VectorCuatrola, get_rules
from cuatrola_env.bitboards import from_cards
from cuatrola_env.observation import observe
from cuatrola_env.single import SingleGame


@pytest.mark.parametrize("rules", ["online", "traditional"])
@pytest.mark.parametrize("mode", ["hand", "match"])
def test_single_game_matches_the_batched_engine(rules, mode):
    n = 150
    rng = np.random.default_rng(17)
    hands, dealer, muestra = draw_deals(rng, n)
    score = rng.integers(0, 11, size=(n, 2)) if mode == "match" else np.zeros((n, 2), dtype=int)
    env = VectorCuatrola(num_envs=n, rules=rules, mode=mode, autoreset=False)
    env.reset(hands=hands, dealer=dealer, muestra=muestra, score=score)
    masks = from_cards(hands)
    games = []
    for i in range(n):
        g = SingleGame(get_rules(rules), mode, np.random.default_rng(i))
        g.score = [int(x) for x in score[i]]
        g.deal(masks[i], dealer[i], muestra[i])
        games.append(g)
    fields = [f.name for f in dataclasses.fields(env.state)]
    for _ in range(30):  # one hand, or the first hand of a match (its re-deal draws differently)
        live = [i for i in range(n) if env.state.phase[i] != 2 and games[i].trick_num < 5 and games[i].phase != 2]
        if not live:
            break
        bits = env.legal_bits
        for i in live:
            assert games[i].legal_mask() == int(bits[i]), f"game {i}: legal mask"
            s1 = games[i].to_state()
            for f in fields:
                assert np.array_equal(getattr(s1, f)[0], getattr(env.state, f)[i]), f"game {i}: field {f}"
            for seat in range(4):
                expect = observe(env.state, env.rules, np.full(n, seat, dtype=np.int8))[i]
                got = games[i].observe(seat)
                assert np.array_equal(got, expect), f"game {i}: seat {seat}: {_diff(got, expect)}"
        actions = pick_actions(env.action_mask, rng, pass_bias=0.6)
        for i in live:
            rewards, over, result = games[i].step(int(actions[i]))
            if result is not None:
                games[i].trick_num = 5  # stop comparing this game: a match re-deals from another stream
        actions[env.over] = 20
        env.step(actions)


def _diff(a, b):
    from cuatrola_env import OFFSETS

    idx = np.flatnonzero(a != b)
    return [(int(i), next(n for n, sl in OFFSETS.items() if sl.start <= i < sl.stop), a[i], b[i]) for i in idx]
