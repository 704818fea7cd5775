"""The double-dummy solver against the engine: move generation and exact values."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from agents.solver import Position
from cuatrola_env.game import Game

pytest.importorskip("numba")


def random_position(seed: int, bids: list[int], tricks_before: int, rules="online") -> Game:
    """A game after the given bids and a few random tricks (deal drawn here, from the seed)."""
    rng = np.random.default_rng(seed)
    g = Game(rules=rules, seed=seed)
    for b in bids:
        if b not in g.legal_actions():
            b = 20
        g.step(b)
    while not g.over and g.single.trick_num < tricks_before:
        g.step(int(rng.choice(g.legal_actions())))
    return g


def exhaustive(g: Game, by_tricks: bool, maximiser) -> int:
    """Plain minimax through the engine (Game.step): the rest of the hand's value."""
    s = g.single
    if g.over or s.trick_num == 5:
        return 0
    best = None
    for a in g.legal_actions():
        h = copy.deepcopy(g)
        before_pts, before_tricks = list(h.single.points), list(h.single.tricks_won)
        h.step(a)
        if h.over:
            after_pts, after_tricks = h.last_result["points"], h.last_result["tricks_won"]
        else:
            after_pts, after_tricks = h.single.points, h.single.tricks_won
        if by_tricks:
            d = h.single.declarer if not h.over else g.single.declarer
            gain = after_tricks[d] - before_tricks[d]
        else:
            gain = (after_pts[0] - before_pts[0]) - (after_pts[1] - before_pts[1])
        v = gain + (0 if h.over else exhaustive(h, by_tricks, maximiser))
        if best is None or (v > best if maximiser(s.current) else v < best):
            best = v
    return best


@pytest.mark.parametrize("rules", ["online", "traditional"])
def test_move_generation_matches_the_engine(rules):
    for seed in range(150):
        g = random_position(seed, [20, 21, 20, 20] if seed % 2 else [20] * 4, 0, rules)
        rng = np.random.default_rng(seed)
        while not g.over:
            pos = Position.from_game(g)
            assert pos.legal() == g.single.legal_mask() & ((1 << 20) - 1), f"seed {seed}"
            g.step(int(rng.choice(g.legal_actions())))


@pytest.mark.parametrize("bids,tricks", [([20] * 4, 3), ([20, 21, 20, 20], 2), ([20, 20, 21, 20], 3), ([20] * 4, 2)])
def test_point_values_match_exhaustive_minimax(bids, tricks):
    """Pass and solo: the solver's exact points difference equals plain minimax through the engine."""
    checked = 0
    for seed in range(12 if tricks == 2 else 30):
        g = random_position(seed, bids, tricks)
        if g.over or g.single.trick_num != tricks:
            continue
        assert Position.from_game(g).solve() == exhaustive(g, False, lambda p: (p & 1) == 0), f"seed {seed}"
        checked += 1
    assert checked >= 8


@pytest.mark.parametrize("bids,tricks", [([22, 20, 20, 20], 2), ([20, 20, 23, 20], 1), ([20, 22, 20, 20], 3)])
def test_trick_contract_outcomes_match_exhaustive_minimax(bids, tricks):
    """Cuatrola and quintola: made or not under best play agrees with minimax through the engine
    (the engine stops the hand once the result is certain; the solver counts all tricks)."""
    checked = 0
    for seed in range(60):
        g = random_position(seed, bids, tricks)
        s = g.single
        if g.over or s.trick_num != tricks or s.contract < 2:
            continue
        dec = s.declarer
        need = 4 if s.contract == 2 else 5
        so_far = s.tricks_won[dec]
        full = Position.from_game(g).solve()
        engine = exhaustive(g, True, lambda p, d=dec: (p & 1) == (d & 1))
        assert (so_far + full >= need) == (so_far + engine >= need), f"seed {seed}"
        assert full >= engine, "playing on after a certain result can only add tricks"
        checked += 1
    assert checked >= 5


def test_move_values_count_the_trick_they_complete():
    """The value of each card equals the exhaustive value of the position after it, plus
    what that card's trick scores (a bug once dropped the completed trick)."""
    checked = 0
    for seed in range(40):
        g = random_position(seed, [20] * 4, 3)
        if g.over or g.single.trick_num != 3:
            continue
        rng = np.random.default_rng(seed)
        while g.single.trick_len < 3:  # the last seat of the trick is to play
            g.step(int(rng.choice(g.legal_actions())))
        values = Position.from_game(g).move_values()
        for card, v in values.items():
            h = copy.deepcopy(g)
            before = list(h.single.points)
            h.step(card)
            after = h.last_result["points"] if h.over else h.single.points
            gain = (after[0] - before[0]) - (after[1] - before[1])
            rest = 0 if h.over else exhaustive(h, False, lambda p: (p & 1) == 0)
            assert v == gain + rest, f"seed {seed}, card {card}"
        checked += 1
    assert checked >= 10


OPTIONS = [("overtake_when_trumped", False), ("overtake_when_trumped", True), ("must_trump", True), ("must_trump", False)]


@pytest.mark.parametrize("preset", ["online", "traditional"])
@pytest.mark.parametrize("option, value", OPTIONS)
def test_the_solver_follows_each_flipped_option(preset, option, value):
    """Each preset with one card-play option flipped (or kept): the solver's moves are the
    engine's legal moves at every decision, and its values equal minimax through the engine."""
    from cuatrola_env.rules import get_rules

    rules = get_rules(preset, **{option: value})
    for seed in range(40):
        g = random_position(seed, [20, 21, 20, 20] if seed % 2 else [20] * 4, 0, rules)
        rng = np.random.default_rng(seed)
        while not g.over:
            assert Position.from_game(g).legal() == g.single.legal_mask() & ((1 << 20) - 1), f"seed {seed}"
            if g.single.trick_num == 3 and g.single.trick_len == 0:
                assert Position.from_game(g).solve() == exhaustive(g, False, lambda p: (p & 1) == 0), f"seed {seed}"
            g.step(int(rng.choice(g.legal_actions())))


@pytest.mark.parametrize("tie_rule", ["last_trick", "mano"])
def test_pimc_bid_values_follow_the_engines_kernels(tie_rule, monkeypatch):
    """PIMC's bid valuation takes who leads, who sits out and who wins a points tie from the
    engine's kernels: with every solve a tie, the mano rule gives la mano's team the hand."""
    import agents.pimc as pimc
    from agents.base import seat_view
    from cuatrola_env.rules import get_rules

    seen = []

    class Tie:  # a solver that says every hand is a points tie, and records who was to lead
        def __init__(self, hands, seat, *rest):
            seen.append((seat, rest[4]))  # (leader, sitter)

        def solve(self, *window):
            return 0

    monkeypatch.setattr(pimc, "Position", Tie)
    g = Game(rules=get_rules("online", tie_rule=tie_rule), seed=5)
    g.reset(seed=5, dealer=0)  # la mano is seat 1, team 1
    view = seat_view(g)
    points = pimc.PIMCAgent.bid_points(view, [20, 21], [list(g.single.hands)])
    mine = view.seat & 1
    tie_team = 0 if tie_rule == "last_trick" else 1
    assert points[0, 0] == (1 if tie_team == mine else -1) * 1, "pass, a tie"
    assert points[1, 0] == (1 if tie_team == mine else -1) * 2, "solo (worth 2) by la mano, a tie"
    assert seen[0] == (1, -1), "all pass: la mano leads, nobody sits out"
    assert seen[1] == (1, 3), "la mano declares solo: it leads, its partner sits out"


@pytest.mark.parametrize("tie_rule", ["last_trick", "mano"])
def test_pimc_card_values_give_a_points_tie_to_whom_the_rules_give_it(tie_rule, monkeypatch):
    """Tie rule (pass and solo: equal card points): PIMC's card valuation asks the engine's kernel
    who wins a tie. Under the mano rule la mano's team wins it (1 for it, 0 for the other team);
    under the last-trick rule the solver does not report the last trick, and a tie counts 0.5."""
    import agents.pimc as pimc
    from agents.base import seat_view
    from cuatrola_env.rules import get_rules

    class Tie:  # a solver for which every card ends the hand level on points
        def __init__(self, *args):
            pass

        def move_values(self, *window):
            return {c: 0 for c in g.legal_actions()}

    monkeypatch.setattr(pimc, "Position", Tie)
    g = Game(rules=get_rules("online", tie_rule=tie_rule), seed=9)
    g.reset(seed=9, dealer=0)  # la mano is seat 1, team 1
    for _ in range(4):
        g.step(20)  # all pass: la mano leads
    for seat, team_of_mano in ((1, True), (2, False)):
        view = seat_view(g)
        assert view.seat == seat and tuple(view.points) == (0, 0)
        values = pimc.PIMCAgent().play_values(view, view.legal_actions, [list(g.single.hands)])
        expected = 0.5 if tie_rule == "last_trick" else float(team_of_mano)
        assert set(values.values()) == {expected}, (seat, values)
        g.step(view.legal_actions[0])
