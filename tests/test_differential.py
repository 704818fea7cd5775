"""Differential tests: the vectorised engine against the plain reference (tests/reference.py).

Random hands are played through both; at every decision the legal masks and the seat to
act must agree, and at the end of every hand the trick winners, points, cantes, contract
results and rewards.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import draw_deals, pick_actions, seat_cards
from reference import RefHand

from cuatrola_env import VectorCuatrola

HANDS_PER_PRESET = 20_000


def _compare_finished(env, refs, i, pos, rewards):
    res = env.last_results
    ref = refs[i]
    assert ref.over, f"game {i}: engine ended the hand, reference did not"
    assert res["contract"][pos] == ref.contract
    assert res["declarer"][pos] == (-1 if ref.declarer is None else ref.declarer)
    assert res["winner"][pos] == ref.winner_team, f"game {i}: winner team"
    assert res["value"][pos] == ref.value
    assert res["points"][pos].tolist() == ref.points, f"game {i}: points"
    assert res["cante_points"][pos].tolist() == ref.cante_points
    assert res["tricks_won"][pos].tolist() == ref.tricks_won
    winners = [w for _, w in ref.tricks] + [-1] * (5 - len(ref.tricks))
    assert res["winners"][pos].tolist() == winners, f"game {i}: trick winners"
    cantes = [-1 if c is None else c for c in ref.cantes] + [-1] * (5 - len(ref.cantes))
    assert res["cantes"][pos].tolist() == cantes, f"game {i}: cantes"
    assert rewards[i].tolist() == ref.rewards()


def play_against_reference(preset: str, n: int, seed: int) -> tuple[np.ndarray, int]:
    """``n`` random hands through the engine and the reference, asserting at every decision
    and at every hand's end that they agree; the contracts played and the cantes sung."""
    rng = np.random.default_rng(seed)
    hands, dealer, muestra = draw_deals(rng, n)
    env = VectorCuatrola(num_envs=n, rules=preset, seed=0)
    env.reset(hands=hands, dealer=dealer, muestra=muestra)
    refs = [RefHand(env.rules, hands[i].tolist(), int(dealer[i]), int(muestra[i])) for i in range(n)]
    active = np.ones(n, dtype=bool)
    contracts = np.zeros(4, dtype=int)
    cantes_seen = 0
    while active.any():
        mask = env.action_mask
        cur = env.current_player
        for i in np.flatnonzero(active):
            ref = refs[i]
            assert cur[i] == ref.to_act, f"game {i}: seat to act"
            legal = np.flatnonzero(mask[i]).tolist()
            assert legal == ref.legal_actions(), f"game {i}: legal actions, seat {ref.to_act}"
        actions = pick_actions(mask, rng)
        for i in np.flatnonzero(active):
            refs[i].play(int(actions[i]))
        rewards, done = env.step(actions)
        for i in np.flatnonzero(active & ~done):
            assert not refs[i].over, f"game {i}: reference ended the hand, engine did not"
        if env.last_results:
            for pos, i in enumerate(env.last_results["index"]):
                if active[i]:
                    _compare_finished(env, refs, i, pos, rewards)
                    contracts[refs[i].contract] += 1
                    cantes_seen += sum(c is not None for c in refs[i].cantes)
        active &= ~done
    return contracts, cantes_seen


@pytest.mark.parametrize("preset", ["online", "traditional"])
def test_hands_match_reference(preset):
    contracts, cantes_seen = play_against_reference(preset, HANDS_PER_PRESET, {"online": 11, "traditional": 22}[preset])
    # the random play must have exercised every contract and the cantes
    assert (contracts > 100).all(), contracts
    assert cantes_seen > 100


def _broken_rule(name: str):
    """The engine's rule kernel ``name`` broken the way a mistaken reading of the rules would."""
    import dataclasses

    from cuatrola_env import core

    real = getattr(core, name)
    if name == "hand_over":  # early end forgotten: cuatrola and quintola always play 5 tricks
        return lambda K, contract, played, declarer_tricks: played == core.NUM_TRICKS
    if name == "cante":  # cante order: suits in id order, the trump not first
        def cante(K, hand_a, hand_b, sung, trump, contract):
            return real(K, hand_a, hand_b, sung, 0 * trump, contract)
        return cante
    if name == "legal_play":  # the overtake rule of the other preset
        def legal_play(K, rules, *args):
            flipped = dataclasses.replace(rules, overtake_when_trumped=not rules.overtake_when_trumped)
            return real(K, flipped, *args)
        return legal_play
    if name == "hand_winner":  # the tie rule of the other preset
        def hand_winner(K, rules, *args):
            other = "mano" if rules.tie_rule == "last_trick" else "last_trick"
            return real(K, dataclasses.replace(rules, tie_rule=other), *args)
        return hand_winner
    if name == "end_of_bidding":  # first leader: la mano leads even when it sits out
        def end_of_bidding(K, declarer, dealer):
            sitter, _, size = real(K, declarer, dealer)
            return sitter, (dealer + 1) & 3, size
        return end_of_bidding
    raise ValueError(name)


@pytest.mark.parametrize("kernel", ["hand_over", "cante", "legal_play", "hand_winner", "end_of_bidding"])
def test_the_differential_test_catches_a_broken_engine(kernel, monkeypatch):
    """Mutation test: with one rule kernel broken (early end, cante order, overtake rule, tie
    rule, first leader), the comparison with the reference fails under one preset or both."""
    from cuatrola_env import core

    monkeypatch.setattr(core, kernel, _broken_rule(kernel))
    caught = 0
    for preset, seed in (("online", 31), ("traditional", 32)):
        try:
            play_against_reference(preset, 3000, seed)
        except AssertionError:
            caught += 1
    assert caught, f"a broken {kernel} went unnoticed"


@pytest.mark.parametrize("preset", ["online", "traditional"])
def test_matches_match_reference(preset):
    """Match mode: scores, dealer rotation, exact-target bidding and ±1 rewards."""
    play_matches_against_reference(preset, 400, {"online": 5, "traditional": 6}[preset])


def _broken_match_rule(name: str):
    """The engine's match kernel ``name`` broken the way a mistaken reading of the rules would."""

    if name == "match_after_hand":  # the match won only past the target, not on reaching it
        return lambda K, rules, winner_score, value: (winner_score + value, winner_score + value > rules.target)
    if name == "next_dealer":  # the deal passing the other way round
        return lambda K, dealer: (dealer + 3) & 3
    if name == "mano":  # the dealer speaking first
        return lambda K, dealer: dealer & 3
    raise ValueError(name)


@pytest.mark.parametrize("kernel", ["match_after_hand", "next_dealer", "mano"])
def test_the_match_comparison_catches_a_broken_match_rule(kernel, monkeypatch):
    """Mutation test of the rules of the match (who wins it, who deals next, who speaks first),
    written once in core and used by both engines: broken, the comparison with the reference fails."""
    from cuatrola_env import core

    monkeypatch.setattr(core, kernel, _broken_match_rule(kernel))
    with pytest.raises(AssertionError):
        play_matches_against_reference("online", 200, 7)


def play_matches_against_reference(preset: str, n: int, seed: int) -> None:
    """``n`` matches of random legal play, each step compared with the reference (AssertionError on a difference)."""
    rng = np.random.default_rng(seed)
    env = VectorCuatrola(num_envs=n, rules=preset, mode="match", seed=3)
    s = env.state

    def new_ref(i, score):
        return RefHand(env.rules, seat_cards(s.hands[i]), int(s.dealer[i]), int(s.muestra[i]), score)

    refs = [new_ref(i, (0, 0)) for i in range(n)]
    scores = [[0, 0] for _ in range(n)]
    matches_done = np.zeros(n, dtype=int)
    while (matches_done < 1).any():
        mask = env.action_mask
        for i in range(n):
            assert np.flatnonzero(mask[i]).tolist() == refs[i].legal_actions(), f"game {i}"
        actions = pick_actions(mask, rng, pass_bias=0.5)
        for i in range(n):
            refs[i].play(int(actions[i]))
        rewards, done = env.step(actions)
        for i in range(n):
            ref = refs[i]
            if not ref.over:
                assert rewards[i].tolist() == [0, 0, 0, 0]
                continue
            scores[i][ref.winner_team] += ref.value
            if max(scores[i]) >= env.rules.target:
                assert done[i], f"game {i}: match should be over at {scores[i]}"
                win = 0 if scores[i][0] >= env.rules.target else 1
                assert rewards[i].tolist() == [1 if p % 2 == win else -1 for p in range(4)]
                scores[i] = [0, 0]
                matches_done[i] += 1
                refs[i] = new_ref(i, (0, 0))
            else:
                assert not done[i] and rewards[i].tolist() == [0, 0, 0, 0]
                assert s.dealer[i] == (ref.dealer + 1) % 4, "the deal passes to the next seat"
                assert s.score[i].tolist() == scores[i]
                refs[i] = new_ref(i, tuple(scores[i]))
