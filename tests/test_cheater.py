"""``cheater``: sees every card, for measurement only; the evaluator alone seats it."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest
from helpers import double_dummy_points

from agents import evaluation
from agents.base import seat_view
from agents.heuristic import HeuristicAgent
from agents.registry import make_agent
from cuatrola_env.game import Game
from cuatrola_env.positions import random_deals


@pytest.mark.parametrize("preset", ["online", "traditional"])
def test_the_cheater_takes_the_best_double_dummy_outcome_of_the_actual_deal(preset):
    """Rule (hand result): each of the cheater's cards, and each of its bids with the later seats
    passing, reaches the best game points its team can have when the rest of the hand is played
    out double-dummy on the actual deal (drawn here), as the engine scores it."""
    cheater, other = make_agent("cheater", seed=1), HeuristicAgent(seed=2)
    hands, dealers, muestras = random_deals(12, seed=5)
    checked = 0
    for i in range(12):
        g = Game(rules=preset)
        g.reset(hands=hands[i].tolist(), dealer=int(dealers[i]), muestra=int(muestras[i]))
        while not g.over:
            view = seat_view(g)
            if view.seat % 2 == 1:
                g.step(other.act(view))
                continue
            choice = cheater.act_seeing(view, g.hands)
            outcome = {}
            for a in view.legal_actions:
                trial = copy.deepcopy(g)
                trial.step(a)
                outcome[a] = double_dummy_points(trial, view.seat & 1)[0]
            assert outcome[choice] == max(outcome.values()), (i, view.phase, choice, outcome)
            checked += 1
            g.step(choice)
    assert checked >= 40


def test_the_cheater_refuses_to_play_from_a_seats_view_alone():
    g = Game()
    g.reset(seed=0)
    with pytest.raises(ValueError, match="only the duplicate evaluator"):
        make_agent("cheater").act(seat_view(g))


def test_the_evaluator_seats_the_cheater_and_it_beats_the_heuristic_by_far(tmp_path):
    out = tmp_path / "c.json"
    assert evaluation.main(["cheater", "heuristic", "--deals", "40", "--matches", "0", "--seed", "9", "--json", str(out),
                            "--no-progress"]) == 0
    pairing = json.loads(out.read_text())["pairings"][0]
    assert pairing["illegal_actions"] == {"a": 0, "b": 0}
    assert pairing["game_points_per_hand"]["ci95"][0] > 0.3  # every card seen: far above what the heuristic gets


def test_the_bot_has_no_cheating_level():
    from cuatrola_serve.bot import Bot

    with pytest.raises(ValueError, match="unknown level 'cheater'"):
        Bot.load(level="cheater")


def test_the_share_of_the_gap_is_the_ratio_of_the_two_margins_with_a_bootstrap_interval():
    from agents.results import gap_share

    rng = np.random.default_rng(0)
    ceiling = rng.normal(1.0, 1.0, 400)
    player = 0.25 * ceiling + rng.normal(0.0, 0.2, 400)
    gap = gap_share(player, ceiling, seed=1)
    assert gap["share"] == pytest.approx(player.mean() / ceiling.mean())
    assert gap["ci95"][0] < gap["share"] < gap["ci95"][1] and gap["ci95"][1] - gap["ci95"][0] < 0.2
    assert gap_share(player, -np.abs(ceiling)) is None  # a ceiling that does not beat the baseline: no scale
    with pytest.raises(ValueError, match="the same deals"):
        gap_share(player, ceiling[:-1])


def test_evaluate_gap_plays_the_cheater_on_the_same_deals_and_reports_the_share(tmp_path, capsys):
    out = tmp_path / "g.json"
    assert evaluation.main(["heuristic", "random", "--deals", "30", "--matches", "0", "--seed", "4", "--gap",
                            "--json", str(out), "--no-progress"]) == 0
    run = json.loads(out.read_text())
    gap, ceiling = run["gap"], run["ceiling_pairing"]
    assert gap["baseline"] == "random" and gap["deals"] == 30 and 0.5 < gap["share"] < 1.2
    assert ceiling["a"] == "cheater" and ceiling["b"] == "random" and len(ceiling["deal_game_points"]) == 30
    assert "heuristic closes" in capsys.readouterr().out
    with pytest.raises(SystemExit) as stop:
        evaluation.main(["heuristic", "random", "pimc", "--gap", "--deals", "10"])
    assert stop.value.code == 2
