"""``python_cuatrola``: Cuatrola registered in OpenSpiel, every rule the engine's (skipped without the
``[openspiel]`` extra)."""

from __future__ import annotations

import json

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from agents import evaluation  # noqa: E402
from cuatrola_env.game import Game  # noqa: E402
from cuatrola_env.observation import OBS_DIM, OFFSETS  # noqa: E402
from cuatrola_env.openspiel import NAME, state_of  # noqa: E402
from cuatrola_env.positions import random_deals  # noqa: E402


@pytest.mark.parametrize("params", [{}, {"rules": "traditional"}, {"rules": "online", "target": 5, "score_0": 2,
                                                                    "score_1": 4}])
def test_openspiels_own_conformance_test_passes(params):
    pyspiel.random_sim_test(pyspiel.load_game(NAME, params), num_sims=10, serialize=True, verbose=False)


@pytest.mark.parametrize("preset", ["online", "traditional"])
def test_the_game_is_the_engines_hand_for_a_deal_drawn_here(preset):
    """Rule (every rule): dealt the same cards (drawn here) and given the same random actions, the
    OpenSpiel state and the engine's game agree on the player to act, the legal actions, each seat's
    observation, and the returns (each seat's game points)."""
    game = pyspiel.load_game(NAME, {"rules": preset})
    hands, dealers, muestras = random_deals(8, seed=11)
    rng = np.random.default_rng(0)
    for i in range(8):
        engine = Game(rules=preset)
        engine.reset(hands=hands[i].tolist(), dealer=int(dealers[i]), muestra=int(muestras[i]))
        state = state_of(game, int(dealers[i]), hands[i].tolist(), int(muestras[i]), [])
        total = np.zeros(4)
        while not engine.over:
            seat = engine.current_player
            assert state.current_player() == seat and state.legal_actions() == engine.legal_actions()
            for p in range(4):
                assert np.array_equal(state.observation_tensor(p), engine.observe(p))
            action = int(rng.choice(engine.legal_actions()))
            total += engine.step(action)[0]
            state.apply_action(action)
        assert state.is_terminal() and state.returns() == pytest.approx(total.tolist())
        assert abs(state.returns()[0]) in (1, 2, 4, 5) and sum(state.returns()) == 0


def test_no_information_state_reveals_a_card_its_seat_cannot_see():
    """Two deals that differ only in the cards seat 0 cannot see (the hands of seats 1 and 2 swapped,
    the dealer's muestra kept) give seat 0 the same information state, string and tensor."""
    game = pyspiel.load_game(NAME)
    hands, dealers, muestras = random_deals(6, seed=2)
    for i in range(6):
        dealer = int(dealers[i])
        if dealer in (1, 2):
            continue
        swapped = hands[i].tolist()
        swapped[1], swapped[2] = swapped[2], swapped[1]
        a = state_of(game, dealer, hands[i].tolist(), int(muestras[i]), [20])
        b = state_of(game, dealer, swapped, int(muestras[i]), [20])
        assert a.information_state_string(0) == b.information_state_string(0)
        assert np.array_equal(a.information_state_tensor(0), b.information_state_tensor(0))
        assert a.information_state_string(1) != b.information_state_string(1)


def test_the_observers_named_pieces_are_the_observation_layout():
    observer = pyspiel.load_game(NAME).make_py_observer()
    assert observer.tensor.shape == (OBS_DIM,) and list(observer.dict) == list(OFFSETS)
    assert all(observer.dict[name].size == piece.stop - piece.start for name, piece in OFFSETS.items())


def test_bad_parameters_are_refused_naming_them():
    with pytest.raises(Exception, match="unknown rules preset"):
        pyspiel.load_game(NAME, {"rules": "tradtional"})


def test_openspiels_ismcts_plays_legal_moves_in_a_duplicate_evaluation(tmp_path):
    out = tmp_path / "i.json"
    assert evaluation.main(["openspiel:ismcts,simulations=20", "heuristic", "--deals", "4", "--matches", "0",
                            "--seed", "1", "--json", str(out), "--no-progress"]) == 0
    pairing = json.loads(out.read_text())["pairings"][0]
    assert pairing["deals"] == 4 and pairing["illegal_actions"] == {"a": 0, "b": 0}
