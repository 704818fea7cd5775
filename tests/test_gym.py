"""The Gymnasium single-agent environment."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from helpers import draw_deals, play_random_episodes, scramble_hidden
from scenario import cid

import cuatrola_env  # noqa: F401  (registers Cuatrola-v0)
from cuatrola_env.gym import CuatrolaGymEnv
from cuatrola_env.observation import OBS_DIM, OFFSETS

DEAL_A = [[cid(c) for c in h.split()] for h in ["Ro Sc Se Sb Cb", "So Ao Cc Ce Rb", "Co 3o Rc Re 3b", "3c Ac 3e Ae Ab"]]


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("mode", ["hand", "match"])
def test_check_env(mode):
    """Gymnasium's checker steps random (possibly illegal) actions: it passes on the defaults."""
    check_env(gymnasium.make("Cuatrola-v0", mode=mode).unwrapped)
    check_env(CuatrolaGymEnv(mode=mode, seat="random"))


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_gymnasium_and_stable_baselines3_checkers_pass_with_no_arguments():
    """``check_env`` of Gymnasium and of Stable-Baselines3 on ``gymnasium.make("Cuatrola-v0")`` as it
    is: both step random actions, illegal ones included."""
    sb3_checker = pytest.importorskip("stable_baselines3.common.env_checker")
    check_env(gymnasium.make("Cuatrola-v0"))
    sb3_checker.check_env(gymnasium.make("Cuatrola-v0"), warn=False)


def test_episodes_rewards_and_masks():
    env = gymnasium.make("Cuatrola-v0", seat=2)
    rng = np.random.default_rng(0)
    rewards = []
    for ep in range(100):
        obs, info = env.reset(seed=ep)
        assert obs.shape == (OBS_DIM,) and info["seat"] == 2
        assert env.observation_space.contains(obs)
        done = False
        while not done:
            mask = env.unwrapped.action_masks()
            assert np.array_equal(mask, info["action_mask"]) and mask.any()
            assert obs[OFFSETS["to_act"]][0] == 1.0, "the learning seat is the one to act"
            obs, r, done, trunc, info = env.step(int(rng.choice(np.flatnonzero(mask))))
            assert not trunc
        rewards.append(r)
    assert set(np.abs(rewards)) <= {1, 2, 4, 5}


def test_given_policies_play_the_other_seats():
    calls = {"partner": 0, "opp": 0}

    def partner(obs, mask):
        calls["partner"] += 1
        return int(np.flatnonzero(mask)[0])

    def opp(obs, mask):
        calls["opp"] += 1
        return int(np.flatnonzero(mask)[-1])

    env = CuatrolaGymEnv(seat=0, partner=partner, opponents=opp)
    obs, info = env.reset(options={"hands": DEAL_A, "dealer": 3, "muestra": cid("Ab")})
    obs, r, done, _, info = env.step(20)
    assert calls == {"partner": 1, "opp": 2}, "after seat 0 passes, seats 1, 2, 3 bid"
    rec = env.record()["hands"][0]
    assert rec["actions"][:4] == [20, 23, 20, 20] and rec["seats"][:4] == [0, 1, 2, 3]


def test_same_seed_same_episode():
    def run():
        env = CuatrolaGymEnv(seat="random")
        obs, info = env.reset(seed=42)
        trace = [obs]
        done = False
        while not done:
            obs, r, done, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
            trace.append(obs)
        return np.stack(trace), r

    a, ra = run()
    b, rb = run()
    assert np.array_equal(a, b) and ra == rb


def test_errors():
    with pytest.raises(ValueError, match="seat must be 0..3 or 'random'"):
        CuatrolaGymEnv(seat=4)
    with pytest.raises(ValueError, match="partner must be 'random', a callable .* or an agent with act"):
        CuatrolaGymEnv(partner="heuristic")
    with pytest.raises(ValueError, match="illegal_action"):
        CuatrolaGymEnv(illegal_action="ignore")
    env = CuatrolaGymEnv(seat=0, illegal_action="raise")
    env.reset(options={"hands": DEAL_A, "dealer": 3, "muestra": cid("Ab")})
    before = env.game.observe(0).copy()
    with pytest.raises(ValueError, match=r"illegal action 4 \(as de oros\)"):
        env.step(cid("Ao"))
    assert np.array_equal(before, env.game.observe(0))
    with pytest.raises(ValueError, match="unknown reset option"):
        env.reset(options={"seat": 1})
    env.reset(seed=0)
    done = False
    while not done:
        _, _, done, _, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
    with pytest.raises(ValueError, match="episode is over"):
        env.step(20)
    lose = CuatrolaGymEnv(seat=0)  # the default: an illegal action loses the episode
    lose.reset(options={"hands": DEAL_A, "dealer": 3, "muestra": cid("Ab")})
    _, r, done, _, info = lose.step(cid("Ao"))
    assert done and r == -5 and info["illegal_action"] == cid("Ao")


def test_no_leak_through_the_gym_observation():
    rng = np.random.default_rng(8)
    moved = 0
    for seat in range(4):
        env = CuatrolaGymEnv(seat=seat)
        for ep in range(10):
            obs, info = env.reset(seed=ep)
            done = False
            while not done:
                g = env.game.single
                saved = list(g.hands)
                g.hands = scramble_hidden(g.hands, g.dealer, g.muestra, g.played, seat, rng)
                moved += g.hands != saved
                assert np.array_equal(obs, env.game.observe(seat)), "the learning seat sees a hidden card"
                g.hands = saved
                obs, r, done, _, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
    assert moved > 50, "the scramble must actually move cards"


def test_no_leak_other_hands_during_bidding():
    rng = np.random.default_rng(4)
    hands, _, _ = draw_deals(rng, 20)
    for h in hands:
        pol = lambda obs, mask: 20  # noqa: E731 - everyone passes
        a = CuatrolaGymEnv(seat=0, partner=pol, opponents=pol)
        b = CuatrolaGymEnv(seat=0, partner=pol, opponents=pol)
        oa, _ = a.reset(options={"hands": h.tolist(), "dealer": 0, "muestra": int(h[0, 0])})
        ob, _ = b.reset(options={"hands": h[[0, 3, 1, 2]].tolist(), "dealer": 0, "muestra": int(h[0, 0])})
        assert np.array_equal(oa, ob), "seat 0 bids last; the three passes before it reveal nothing"


@pytest.mark.parametrize("role, bad", [("partner", 99), ("opponents", "quintola"), ("partner", 2.0), ("opponents", None)])
def test_an_illegal_action_from_another_seats_policy_names_the_seat_and_reset_recovers(role, bad):
    """A user's partner or opponent policy that returns an illegal action (the first time it is
    asked, mid-``reset``, then legal ones): a clear error naming the seat, then ``step`` refuses
    until ``reset``, and ``reset`` gives a normal episode."""
    from cuatrola_env.gym import PolicyError

    calls = []

    def flaky(obs, mask):
        calls.append(1)
        return bad if len(calls) == 1 else int(np.flatnonzero(mask)[0])

    # seat 3 learns; la mano is the seat after the dealer, so the partner (seat 1) or an opponent acts first
    for dealer in range(4):
        calls.clear()
        env = CuatrolaGymEnv(seat=3, **{role: flaky})
        first = (dealer + 1) % 4
        if first == 3 or (role == "partner") != (first == 1):
            continue
        with pytest.raises(PolicyError, match=rf"the {role.rstrip('s')} policy \(seat {first}\) returned"):
            env.reset(options={"hands": [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9], [10, 11, 12, 13, 14], [15, 16, 17, 18, 19]],
                               "dealer": dealer, "muestra": 5 * dealer})
        with pytest.raises(ValueError, match="call reset"):
            env.step(20)
        obs, info = env.reset(seed=1)
        done = False
        while not done:
            obs, reward, done, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        return
    raise AssertionError("no dealer put the policy's seat first")


def test_agents_play_the_other_seats_from_their_own_views_and_are_reset_each_episode():
    """Any agent of the project (``act(view)``) may be the partner or an opponent: it is asked for the
    acting seat only, with that seat's own view, and reset with a seed before each episode."""
    from agents.registry import make_agent

    class Spy:
        def __init__(self):
            self.heuristic, self.seats, self.resets = make_agent("heuristic"), [], 0

        def reset(self, seed=None):
            self.resets += 1
            self.heuristic.reset(seed)

        def act(self, view):
            self.seats.append(view.seat)
            return self.heuristic.act(view)

    spy = Spy()
    env = gymnasium.make("Cuatrola-v0", seat=0, partner=spy, opponents=make_agent("heuristic"))
    play_random_episodes(env, range(20), np.random.default_rng(1))
    assert spy.resets == 20 and spy.seats and set(spy.seats) == {2}
