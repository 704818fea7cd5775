"""The observation: its documented layout, its content, and that it never leaks a hidden card."""

from __future__ import annotations

import re

import numpy as np
import pytest
from helpers import draw_deals, pick_actions, scramble_hidden
from reference import RefHand
from scenario import Scenario, cid

import cuatrola_env.observation as obs_mod
from cuatrola_env import OBS_DIM, OFFSETS, VectorCuatrola
from cuatrola_env.game import Game
from cuatrola_env.observation import observe

DEAL_F = ["Rb Cb Ao Ae Se", "So Co Ce Sc Sb", "Rc Cc 3o 3e Re", "Ro 3c Ac 3b Ab"]


def view(o, name):
    return o[..., OFFSETS[name]]


def test_layout_is_contiguous_and_matches_the_documented_table():
    start = 0
    for name, sl in OFFSETS.items():
        assert sl.start == start, name
        start = sl.stop
    assert start == OBS_DIM == int(re.search(r"``OBS_DIM`` = (\d+)", obs_mod.__doc__).group(1)), "the documented width"
    rows = re.findall(r"^(\w+)\s+(\d+)\s+(\d+)\s", obs_mod.__doc__, flags=re.M)
    documented = {name: (int(off), int(size)) for name, off, size in rows}
    actual = {name: (sl.start, sl.stop - sl.start) for name, sl in OFFSETS.items()}
    assert documented == actual


def test_content_after_a_trick_and_a_half():
    g = Scenario(DEAL_F, dealer=3, muestra="Ab").play("pass", "pass", "pass", "solo")  # seat 3 declares
    g.play("Ao")  # seat 1, the declarer's partner, sits out: seat 0 leads, seat 2 follows
    o = g.env.observe()[0]
    seat = g.to_act
    assert seat == 2
    hand = {c for c in range(20) if view(o, "hand")[c]}
    assert hand == {cid(c) for c in "Rc Cc 3o 3e Re".split()}
    cur = view(o, "current_trick").reshape(4, 20)
    assert cur[2, cid("Ao")] == 1, "seat 0 is two seats after seat 2"
    assert cur.sum() == 1
    played_by = view(o, "played_by").reshape(4, 20)
    assert played_by[2, cid("Ao")] == 1 and played_by.sum() == 1
    assert view(o, "muestra")[cid("Ab")] == 1 and view(o, "muestra_in_hand")[0] == 1
    assert view(o, "trump").tolist() == [0, 0, 0, 1]
    assert view(o, "dealer").tolist() == [0, 1, 0, 0], "the dealer (seat 3) is next after seat 2"
    assert view(o, "mano").tolist() == [0, 0, 1, 0]
    bids = view(o, "bids").reshape(4, 5)
    assert bids[1].tolist() == [0, 0, 1, 0, 0], "seat 3 bid solo"
    assert view(o, "contract").tolist() == [0, 0, 1, 0, 0]
    assert view(o, "declarer").tolist() == [0, 1, 0, 0] and view(o, "sits_out").tolist() == [0, 0, 0, 1]
    assert view(o, "phase").tolist() == [0, 1] and view(o, "to_act")[0] == 1


def test_played_cards_in_order_and_points():
    g = Scenario(DEAL_F, dealer=3, muestra="Ab").play("pass", "pass", "pass", "pass")
    g.play("Ao", "So", "3o", "Ro")  # seat 0 wins and sings 40
    o = g.env.observe(np.array([1]))[0]  # seen from seat 1
    played_in = view(o, "played_in_trick").reshape(5, 20)
    assert {c for c in range(20) if played_in[0, c]} == {cid(c) for c in "Ao So 3o Ro".split()}
    assert played_in[1:].sum() == 0
    leaders = view(o, "trick_leaders").reshape(5, 4)
    assert leaders[0].tolist() == [0, 0, 0, 1] and leaders[1].tolist() == [0, 0, 0, 1], "seat 0 = rel 3"
    assert np.allclose(view(o, "tricks_won"), [0, 0, 0, 0.2])
    assert np.allclose(view(o, "points"), [0, (27 + 40) / 130])
    assert view(o, "cantes").reshape(4, 2)[3].tolist() == [0, 1], "bastos sung by the other team"
    assert view(o, "to_act")[0] == 0


def test_no_leak_hidden_cards_never_change_any_observation():
    """At every decision of random hands, scrambling the cards a seat cannot see (the other
    hands, the muestra aside) leaves that seat's observation identical, for all four seats."""
    for rules in ("online", "traditional"):
        env = VectorCuatrola(num_envs=200, rules=rules, seed=5)
        rng = np.random.default_rng(5)
        for _ in range(80):
            for p in range(4):
                seats = np.full(200, p, dtype=np.int8)
                before = observe(env.state, env.rules, seats)
                scrambled = env.state.copy()
                for i in range(200):
                    scrambled.hands[i] = scramble_hidden(
                        scrambled.hands[i], int(scrambled.dealer[i]), int(scrambled.muestra[i]), int(scrambled.played[i]), p, rng
                    )
                changed = (scrambled.hands != env.state.hands).any()
                after = observe(scrambled, env.rules, seats)
                assert np.array_equal(before, after), f"seat {p} sees a hidden card"
            assert changed, "the scramble must actually move cards"
            env.step(pick_actions(env.action_mask, rng))


def test_no_leak_deals_differing_in_other_hands_during_bidding():
    """Deals that differ only in the other three hands give the dealer identical observations
    through the whole bidding round (the only phase in which no hidden card can be played)."""
    rng = np.random.default_rng(9)
    n = 300
    hands, _, _ = draw_deals(rng, n)
    dealer = np.zeros(n, dtype=int)  # the observer, seat 0, deals: the muestra is its own card
    muestra = hands[:, 0, 0]
    other = hands[:, [0, 3, 1, 2]]  # seats 1, 2, 3 get each other's hands
    a = VectorCuatrola(num_envs=n, seed=0)
    b = VectorCuatrola(num_envs=n, seed=0)
    a.reset(hands=hands, dealer=dealer, muestra=muestra)
    b.reset(hands=other, dealer=dealer, muestra=muestra)
    seat0 = np.zeros(n, dtype=np.int8)
    for _ in range(4):
        assert np.array_equal(a.observe(seat0), b.observe(seat0))
        act = pick_actions(a.action_mask, rng, pass_bias=0.7)
        a.step(act)
        b.step(act)
    assert np.array_equal(a.observe(seat0), b.observe(seat0))
    assert (a.state.phase == 1).all()


def test_docs_table_matches_the_code():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "observation.md").read_text()
    rows = re.findall(r"^\| `(\w+)` \| (\d+) \| (\d+) \|", text, flags=re.M)
    assert {n: (int(o), int(s)) for n, o, s in rows} == {n: (sl.start, sl.stop - sl.start) for n, sl in OFFSETS.items()}


def _revealed_by_reference(ref, card) -> set[int]:
    """Cards the seat to act shows it does not hold by playing ``card`` (rule "What the plays
    reveal"), by brute force over the plain reference: every unplayed card that, held beside
    ``card`` instead of the rest of its hand, would have made ``card`` illegal."""
    seat, saved = ref.to_act, ref.hands[ref.to_act]
    seen = {c for _, c in ref.trick} | {c for trick, _ in ref.tricks for _, c in trick}
    shown = set()
    for x in set(range(20)) - seen - {card}:
        ref.hands[seat] = {card, x}
        if card not in ref._legal_cards():
            shown.add(x)
    ref.hands[seat] = saved
    return shown


@pytest.mark.parametrize("preset", ["online", "traditional"])
def test_absent_block_is_what_the_plays_reveal(preset):
    """Rule "What a seat may see / What the plays reveal": after every action of random hands
    drawn here, each seat's ``absent`` row (from every observer) is exactly the unplayed cards the
    reference says that seat's plays ruled out; and it never marks a card the seat holds."""
    rng = np.random.default_rng({"online": 5, "traditional": 6}[preset])
    n = 60
    hands, dealer, muestra = draw_deals(rng, n)
    env = VectorCuatrola(num_envs=n, rules=preset, seed=0)
    env.reset(hands=hands, dealer=dealer, muestra=muestra)
    refs = [RefHand(env.rules, hands[i].tolist(), int(dealer[i]), int(muestra[i])) for i in range(n)]
    expected = [[set() for _ in range(4)] for _ in range(n)]
    active = np.ones(n, dtype=bool)
    marked = 0
    while active.any():
        actions = pick_actions(env.action_mask, rng)
        for i in np.flatnonzero(active):
            a = int(actions[i])
            if refs[i].phase == "play":
                expected[i][refs[i].to_act] |= _revealed_by_reference(refs[i], a)
            refs[i].play(a)
        _, done = env.step(actions)
        active &= ~done
        for observer in range(4):
            block = view(env.observe(np.full(n, observer)), "absent").reshape(n, 4, 20)
            for i in np.flatnonzero(active):
                unplayed = set().union(*refs[i].hands)
                for rel in range(4):
                    seat = (observer + rel) % 4
                    got = set(np.flatnonzero(block[i, rel]).tolist())
                    assert got == expected[i][seat] & unplayed, f"game {i}, seat {seat} seen from seat {observer}"
                    assert not got & refs[i].hands[seat], "a card the seat holds is marked absent"
                    marked += len(got)
    assert marked > 500, "the random hands must reveal cards"


@pytest.mark.parametrize("preset", ["online", "traditional"])
def test_the_trick_read_from_an_observation_is_the_trick_in_play(preset):
    """``trick_number``: at every decision of hands drawn here (three-player tricks when a seat sits
    out included), the trick read from the acting seat's observation is the game's trick in play;
    -1 while bidding."""
    rng, seen, sitting = np.random.default_rng(5), set(), 0
    for seed in range(60):
        g = Game(preset, mode="hand", seed=seed)
        while not g.over:
            v = g.seat_view()
            want = v.trick_num if v.phase == 1 else -1
            assert obs_mod.trick_number(v.observation[None])[0] == want, (seed, v.history)
            seen.add(want)
            sitting += v.sitter >= 0 and v.phase == 1
            g.step(int(rng.choice(g.legal_actions())))
    assert seen == {-1, 0, 1, 2, 3, 4} and sitting > 0
