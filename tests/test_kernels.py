"""The solver's rule kernels are the engine's own, compiled by numba from their source: they
give the engine's answers on random inputs, and a change to a kernel reaches them."""

import random

import pytest

pytest.importorskip("numba")

from agents import kernels  # noqa: E402
from cuatrola_env import core  # noqa: E402
from cuatrola_env.core import PY  # noqa: E402
from cuatrola_env.rules import get_rules  # noqa: E402


def test_compiled_kernels_give_the_engines_answers():
    rng = random.Random(0)
    presets = [get_rules(p, **kw) for p in ("online", "traditional")
               for kw in ({}, {"overtake_when_trumped": True}, {"must_trump": True})]
    for _ in range(3000):
        hand, trick_len, led = rng.getrandbits(20), rng.randint(0, 3), rng.randint(-1, 3)
        best_led, best_trump, trump = rng.randint(-1, 19), rng.randint(-1, 19), rng.randint(0, 3)
        for r in presets:
            assert kernels.legal_play(r.overtake_when_trumped, r.must_trump, hand, trick_len, led, best_led, best_trump,
                                      trump) == core.legal_play(PY, r, hand, trick_len, led, best_led, best_trump, trump)
        card, seat, win = rng.randint(0, 19), rng.randint(0, 3), rng.randint(-1, 3)
        assert kernels.play(card, seat, True, trick_len, led, best_led, best_trump, win, trump) == \
            core.play(PY, card, seat, True, trick_len, led, best_led, best_trump, win, trump)
        sitter = rng.randint(-1, 3)
        assert kernels.next_seat(seat, sitter) == core.next_seat(PY, seat, sitter)
        cards, t = rng.getrandbits(20), rng.randint(0, 4)
        assert kernels.trick_points(cards, t) == core.trick_points(PY, cards, t)
        a, b, sung, contract = rng.getrandbits(20), rng.getrandbits(20), rng.getrandbits(20) & 0x210842, rng.randint(0, 3)
        assert kernels.cante(a, b, sung, trump, contract) == core.cante(PY, a, b, sung, trump, contract)


def test_a_change_to_a_kernel_reaches_the_compiled_one():
    """Compiled from the source: a kernel of another body compiles to that body."""

    def next_seat(K, seat, sitter):
        return (seat + 3) & 3  # counter-clockwise: not the rule, only a change to compile

    assert kernels.compile_kernel(next_seat)(1, -1) == 0
    assert kernels.next_seat(1, -1) == 2

    def legal_play(K, rules, hand, trick_len):
        return K.where(rules.must_trump, hand, trick_len)

    assert kernels.compile_kernel(legal_play)(True, 7, 1) == 7, "rules.X becomes a parameter"
    with pytest.raises(ValueError, match="not a kernel"):
        kernels.compile_kernel(lambda seat: seat)
