"""The PettingZoo AEC environment: conformance, options, rewards, rendering, errors, no leak."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import draw_deals, scramble_hidden
from pettingzoo.test import api_test, seed_test
from scenario import cid

from cuatrola_env import env, raw_env
from cuatrola_env.observation import OBS_DIM, PERFECT_INFO_DIM

DEAL_A = [[cid(c) for c in h.split()] for h in ["Ro Sc Se Sb Cb", "So Ao Cc Ce Rb", "Co 3o Rc Re 3b", "3c Ac 3e Ae Ab"]]


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("mode", ["hand", "match"])
@pytest.mark.parametrize("rules", ["online", "traditional"])
def test_pettingzoo_api_test(mode, rules):
    api_test(env(rules=rules, mode=mode), num_cycles=300)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_pettingzoo_seed_test():
    seed_test(lambda: env(), num_cycles=300)
    seed_test(lambda: env(mode="match"), num_cycles=300)


def play_random(e, rng):
    for _agent in e.agent_iter():
        obs, reward, term, trunc, info = e.last()
        if term or trunc:
            e.step(None)
            continue
        e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))


def test_the_hands_result_is_in_the_final_infos_only_when_asked_and_always_on_the_env():
    """By default the infos stay empty (Tianshou stacks them into arrays); ``result_in_info=True``
    puts the record-format result in every agent's final info; ``last_result`` always has it."""
    for asked in (False, True):
        e = env(result_in_info=asked)
        e.reset(seed=4)
        assert e.unwrapped.last_result is None
        play_random(e, np.random.default_rng(4))
        result = e.unwrapped.last_result
        assert result["game_points"] in (1, 2, 4, 5)
        infos = e.unwrapped.infos
        assert all(infos[a] == ({"result": result} if asked else {}) for a in infos)
    with pytest.raises(ValueError, match="result_in_info must be True or False"):
        env(result_in_info="yes")


def test_loop_rewards_and_every_decision_asked():
    e = env()
    rng = np.random.default_rng(0)
    for hand in range(50):
        e.reset(seed=hand)
        decisions = 0
        final = {}
        for agent in e.agent_iter():
            obs, reward, term, trunc, info = e.last()
            assert obs["observation"].shape == (OBS_DIM,) and obs["observation"].dtype == np.float32
            if term or trunc:
                final[agent] = reward
                e.step(None)
                continue
            mask = obs["action_mask"]
            assert mask.dtype == np.int8 and mask.any()
            decisions += 1
            e.step(int(rng.choice(np.flatnonzero(mask))))
        assert 4 <= decisions <= 24
        assert final["player_0"] == final["player_2"] == -final["player_1"] == -final["player_3"]
        assert abs(final["player_0"]) in (1, 2, 4, 5)


def test_only_the_agent_to_act_has_a_mask():
    e = env()
    e.reset(seed=0)
    for a in e.agents:
        m = e.observe(a)["action_mask"]
        assert m.any() == (a == e.agent_selection)


def test_options_set_the_deal_and_score():
    e = env(mode="match", rules="traditional")
    e.reset(options={"hands": DEAL_A, "dealer": 3, "muestra": cid("Ab"), "score": [8, 0]})
    assert e.agent_selection == "player_0"
    hand = e.observe("player_0")["observation"][:20]
    assert set(np.flatnonzero(hand)) == set(DEAL_A[0])
    assert set(np.flatnonzero(e.observe("player_0")["action_mask"])) == {20, 21}, "exact target on 8 of 11"


def test_match_mode_plays_to_the_target():
    e = env(mode="match")
    rng = np.random.default_rng(1)
    e.reset(seed=3)
    finals = {}
    for agent in e.agent_iter():
        obs, reward, term, trunc, info = e.last()
        if term:
            finals[agent] = reward
            e.step(None)
        else:
            e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert sorted(finals.values()) == [-1, -1, 1, 1]
    rec = e.unwrapped.record()
    assert max(rec["match"]["final_score"]) >= 11 and len(rec["hands"]) >= 2


def test_render_ansi_and_human(capsys):
    e = env(render_mode="ansi")
    e.reset(options={"hands": DEAL_A, "dealer": 3, "muestra": cid("Ab")})
    for a in (20, 20, 20, 20, cid("Ro")):
        e.step(a)
    text = e.render()
    assert "rey de oros" in text and "Trick 1: player_0 rey de oros" in text and "trump bastos" in text
    h = env(render_mode="human")
    h.reset(seed=0)
    h.step(20)
    assert "To act: player_" in capsys.readouterr().out


def test_perfect_information_view_is_separate():
    e = env()
    e.reset(options={"hands": DEAL_A, "dealer": 3, "muestra": cid("Ab")})
    pi = e.unwrapped.perfect_information_observation("player_0")
    assert pi.shape == (PERFECT_INFO_DIM,)
    assert np.array_equal(pi[:OBS_DIM], e.observe("player_0")["observation"])
    hands = pi[OBS_DIM:].reshape(4, 20)
    assert set(np.flatnonzero(hands[1])) == set(DEAL_A[1]), "rel seat 1 = player_1"


# ------------------------------------------------------------------ errors
def test_illegal_action_raises_and_changes_nothing():
    e = env()
    e.reset(options={"hands": DEAL_A, "dealer": 3, "muestra": cid("Ab")})
    before = e.observe("player_0")["observation"].copy()
    with pytest.raises(ValueError, match=r"illegal action 4 \(as de oros\) for seat 0"):
        e.step(cid("Ao"))
    assert np.array_equal(before, e.observe("player_0")["observation"]) and e.agent_selection == "player_0"
    with pytest.raises(ValueError, match="out of range"):
        e.step(24)
    with pytest.raises(ValueError, match="one integer id"):
        e.step("pass")
    with pytest.raises(ValueError, match="must give an action, not None"):
        e.step(None)
    e.step(20)
    assert e.agent_selection == "player_1"


def test_wrong_agent_bad_options_and_step_after_end():
    e = raw_env()
    e.reset(seed=0)
    with pytest.raises(ValueError, match="unknown agent 'player_4'"):
        e.observe("player_4")
    bad = [list(h) for h in DEAL_A]
    bad[1][0] = bad[0][0]
    with pytest.raises(ValueError, match="not a permutation of the 20 cards"):
        e.reset(options={"hands": bad, "dealer": 3, "muestra": cid("Ab")})
    with pytest.raises(ValueError, match="muestra must be in the dealer's hand"):
        e.reset(options={"hands": DEAL_A, "dealer": 3, "muestra": cid("Ro")})
    with pytest.raises(ValueError, match="needs hands, dealer and muestra together"):
        e.reset(options={"hands": DEAL_A})
    with pytest.raises(ValueError, match="hands must be 4 lists of 5"):
        e.reset(options={"hands": DEAL_A[:3], "dealer": 3, "muestra": cid("Ab")})
    # still usable after the failed resets
    e.reset(seed=1)
    play_random(e, np.random.default_rng(0))
    assert not e.agents
    with pytest.raises(ValueError, match="the game is over"):
        e.step(20)
    e.reset(seed=2)
    assert len(e.agents) == 4


def test_dead_agent_must_step_none():
    e = raw_env()
    e.reset(options={"hands": DEAL_A, "dealer": 3, "muestra": cid("Ab")})
    e.step(23)  # quintola by player_0
    for _ in range(3):
        e.step(20)
    while not e.terminations[e.agent_selection]:
        obs = e.observe(e.agent_selection)
        e.step(int(np.flatnonzero(obs["action_mask"])[0]))
    with pytest.raises(ValueError, match="only valid action is None"):
        e.step(20)


# ------------------------------------------------------------------ no leak
def test_no_leak_through_the_aec_observation():
    """At every decision of played-out hands, scrambling the cards an agent cannot see leaves
    that agent's AEC observation identical."""
    rng = np.random.default_rng(3)
    scrambles = 0
    for rules in ("online", "traditional"):
        e = raw_env(rules=rules)
        for hand in range(25):
            e.reset(seed=hand)
            while not e.terminations[e.agent_selection]:
                for agent in e.agents:
                    p = int(agent[-1])
                    before = e.observe(agent)
                    g = e.game.single
                    saved = list(g.hands)
                    g.hands = scramble_hidden(g.hands, g.dealer, g.muestra, g.played, p, rng)
                    changed = g.hands != saved
                    after = e.observe(agent)
                    g.hands = saved
                    assert np.array_equal(before["observation"], after["observation"]), f"{agent} sees a hidden card"
                    assert np.array_equal(before["action_mask"], after["action_mask"])
                    scrambles += changed
                obs = e.observe(e.agent_selection)
                e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert scrambles > 500, "the scramble must actually move cards"


def test_no_leak_other_hands_during_bidding():
    rng = np.random.default_rng(4)
    hands, _, _ = draw_deals(rng, 30)
    for h in hands:
        a, b = raw_env(), raw_env()
        a.reset(options={"hands": h.tolist(), "dealer": 0, "muestra": int(h[0, 0])})
        b.reset(options={"hands": h[[0, 2, 3, 1]].tolist(), "dealer": 0, "muestra": int(h[0, 0])})
        for _ in range(4):
            assert np.array_equal(a.observe("player_0")["observation"], b.observe("player_0")["observation"])
            a.step(20)
            b.step(20)
        assert np.array_equal(a.observe("player_0")["observation"], b.observe("player_0")["observation"])


def test_render_lists_the_trick_in_play_order():
    """Rule 'la mano leads the first trick and play goes round the table': with seat 3 as la mano
    (dealer 2), the trick reads player_3, player_0, player_1, not in seat order."""
    from cuatrola_env.game import Game
    from cuatrola_env.render import render_text

    rng = np.random.default_rng(8)
    deck = rng.permutation(20)
    hands = [sorted(int(c) for c in deck[5 * p : 5 * p + 5]) for p in range(4)]
    g = Game()
    g.reset(hands=hands, dealer=2, muestra=hands[2][0])
    for _ in range(4):
        g.step(20)  # everyone passes
    for _ in range(3):
        g.step(g.legal_actions()[0])
    line = next(x for x in render_text(g.state, g.rules).splitlines() if x.startswith("Trick 1:"))
    seats = [int(part.split()[0].removeprefix("player_")) for part in line.removeprefix("Trick 1: ").split(", ")]
    assert seats == [3, 0, 1], line
