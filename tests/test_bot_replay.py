"""The bot's replay of a seat state refuses every contradiction with :class:`BotStateError` naming a
field, and never raises anything else: states taken from real games (both presets, every phase)
are mutated one field at a time, so that they stay close to valid, and replayed in-process at
every level and through HTTP."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from cuatrola_env.game import Game
from cuatrola_serve.bot import STATE_KEYS, UNNAMED, BotStateError, replay_state, seat_state

MUTATIONS = 2500


def real_states(n: int, seed: int) -> list[dict]:
    """``n`` seat states of the seat to act, from random legal games of both presets."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        game = Game(str(rng.choice(["online", "traditional"])), seed=int(rng.integers(2**31)))
        while not game.over and len(out) < n:
            out.append(seat_state(game))
            game.step(int(rng.choice(game.legal_actions())))
    return out


def _plays(s: dict) -> list[tuple[int, int]]:
    return [(t, j) for t, trick in enumerate(s["tricks"]) for j in range(len(trick))]


def _card(rng) -> int:
    return int(rng.integers(20))


def _seat(rng) -> int:
    return int(rng.integers(4))


def _change_play(s, rng):
    if plays := _plays(s):
        t, j = plays[rng.integers(len(plays))]
        k = int(rng.integers(2))
        s["tricks"][t][j][k] = _card(rng) if k else _seat(rng)


def _drop_play(s, rng):
    if plays := _plays(s):
        t, j = plays[rng.integers(len(plays))]
        del s["tricks"][t][j]


def _add_play(s, rng):
    if s["tricks"] and rng.random() < 0.5:
        s["tricks"][-1].append([_seat(rng), _card(rng)])
    else:
        s["tricks"].append([[_seat(rng), _card(rng)]])


def _swap_plays(s, rng):
    plays = _plays(s)
    if len(plays) >= 2:
        (a, b), (c, d) = (plays[i] for i in rng.choice(len(plays), 2, replace=False))
        s["tricks"][a][b], s["tricks"][c][d] = s["tricks"][c][d], s["tricks"][a][b]


def _move_play(s, rng):
    """A play moved into another trick (trick sizes broken, order kept)."""
    if len(s["tricks"]) >= 2:
        t = int(rng.integers(len(s["tricks"]) - 1))
        if s["tricks"][t]:
            s["tricks"][t + 1].insert(0, s["tricks"][t].pop())


def _change_hand(s, rng):
    if s["hand"]:
        s["hand"][rng.integers(len(s["hand"]))] = _card(rng)


def _bids(s, rng):
    choice = rng.integers(4)
    if choice == 0:
        s["bids"] = [int(x) for x in rng.integers(20, 24, size=rng.integers(0, 5))]
    elif choice == 1 and s["bids"]:
        s["bids"].pop(int(rng.integers(len(s["bids"]))))
    elif choice == 2:
        s["bids"].append(str(rng.choice(["pass", "solo", "cuatrola", "quintola"])))
    elif s["bids"]:
        s["bids"][rng.integers(len(s["bids"]))] = int(rng.integers(20, 24))


MUTATORS = [
    lambda s, r: s.__setitem__("seat", _seat(r)),
    lambda s, r: s.__setitem__("dealer", _seat(r)),
    lambda s, r: s.__setitem__("muestra", _card(r)),
    lambda s, r: s.__setitem__("score", [int(x) for x in r.integers(0, 25, 2)]),
    lambda s, r: s.__setitem__("contract", str(r.choice(["pass", "solo", "cuatrola", "quintola"]))),
    lambda s, r: s.__setitem__("rules", str(r.choice(["online", "traditional"]))),
    _change_hand,
    lambda s, r: s["hand"].pop(r.integers(len(s["hand"]))) if s["hand"] else None,
    lambda s, r: s["hand"].append(_card(r)),
    _change_play, _drop_play, _add_play, _swap_plays, _move_play, _bids,
]


def mutated(states: list[dict], n: int, seed: int) -> list[dict]:
    """``n`` states, each a real one with one field mutated."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        s = copy.deepcopy(states[rng.integers(len(states))])
        MUTATORS[rng.integers(len(MUTATORS))](s, rng)
        out.append(s)
    return out


def _refusal_or_play(s: dict) -> str:
    """'played' or 'refused'; any other exception fails the test (with the state, to reproduce it)."""
    try:
        replay_state(s)
    except BotStateError as e:
        assert not str(e).startswith(UNNAMED), f"a contradiction no check names: {e}; state {json.dumps(s)}"
        field = str(e).split(":")[0].split(" ")[0].split("[")[0].split(".")[0]
        assert field in STATE_KEYS or field in ("the", "unknown"), f"the refusal names no field: {e}"
        return "refused"
    return "played"


def test_a_near_valid_state_is_played_or_refused_naming_a_field():
    """Rule checked: every contradiction (who holds the muestra, a card seen twice or in the
    wrong seat, turns out of order, trick sizes, bids after play) is a refusal, nothing else."""
    outcomes = [_refusal_or_play(s) for s in mutated(real_states(400, seed=11), MUTATIONS, seed=12)]
    assert outcomes.count("refused") > MUTATIONS // 4, "the mutations reach the checks"
    assert outcomes.count("played") > MUTATIONS // 20, "and some stay valid"


def test_the_muestra_played_by_a_seat_that_is_not_the_dealer_is_refused():
    """Rule checked: the muestra is dealt to the dealer, so only the dealer can play it."""
    game = Game(seed=5)
    while game.single.phase == 0:
        game.step(game.legal_actions()[0])
    s = seat_state(game)
    s["dealer"] = (s["dealer"] + 1) % 4
    s["tricks"] = [[[s["seat"] ^ 1, s["muestra"]]]]
    with pytest.raises(BotStateError, match="muestra"):
        replay_state(s)


@pytest.fixture(scope="module")
def bot(onnx_model):
    pytest.importorskip("onnxruntime")
    from cuatrola_serve.bot import Bot

    return Bot.load(onnx_model)


@pytest.mark.parametrize("level", ["master", "expert", "strong", "medium", "easy", "beginner"])
def test_every_level_answers_a_near_valid_state_or_refuses_it(bot, level):
    pytest.importorskip("numba") if level == "master" else None
    player = bot.with_level(level, seed=0)
    for s in mutated(real_states(60, seed=21), 40 if level == "master" else 150, seed=22):
        try:
            out = player.decide(s)
        except BotStateError:
            continue
        assert out["action"] in out["legal"]


def test_through_http_a_near_valid_state_gets_200_or_400(onnx_model):
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from cuatrola_serve.serve import create_app

    client = TestClient(create_app(onnx_model))
    codes = []
    for s in mutated(real_states(60, seed=31), 300, seed=32):
        r = client.post("/v1/act", json={"state": s, "level": "expert"})
        assert r.status_code in (200, 400, 422), (r.status_code, r.text, json.dumps(s))
        codes.append(r.status_code)
    assert 200 in codes and 400 in codes
    r = client.post("/v1/act", json={"state": {"seat": 0, "dealer": 0, "muestra": 0, "hand": [1, 2, 3, 4, 5],
                                               "tricks": [[[1, 0]]]}})
    assert r.status_code == 400 and "muestra" in r.json()["detail"]
