"""Game records: written by the environments, replayed exactly, tampering detected, printed."""

from __future__ import annotations

import copy
import json
import subprocess
import sys

import numpy as np
import pytest

from cuatrola_env.game import Game
from cuatrola_env.records import RecordError, format_record, load_record, replay, save_record


def random_record(seed: int, rules="online", mode="hand") -> dict:
    rng = np.random.default_rng(seed)
    g = Game(rules=rules, mode=mode, seed=seed)
    while not g.over:
        acts = g.legal_actions()
        g.step(20 if acts[0] == 20 and rng.random() < 0.6 else int(rng.choice(acts)))
    return g.record()


def test_one_thousand_random_hands_replay_exactly():
    contracts = set()
    for i in range(1000):
        rec = random_record(i, rules=("online", "traditional")[i % 2])
        json.loads(json.dumps(rec))  # plain JSON
        (res,) = replay(rec)
        assert res == rec["hands"][0]["result"]
        contracts.add(res["contract"])
    assert contracts == {"pass", "solo", "cuatrola", "quintola"}


@pytest.mark.parametrize("rules", ["online", "traditional"])
def test_match_records_replay(rules):
    for i in range(10):
        rec = random_record(100 + i, rules=rules, mode="match")
        results = replay(rec)
        assert len(results) == len(rec["hands"]) >= 2
        assert rec["match"]["final_score"] == results[-1]["score_after"]


def test_tampering_is_detected():
    rec = random_record(7)
    bad = copy.deepcopy(rec)
    bad["hands"][0]["result"]["points"][0] += 1
    with pytest.raises(RecordError, match=r"result 'points'"):
        replay(bad)
    bad = copy.deepcopy(rec)
    h = bad["hands"][0]
    legal_first = h["actions"][0]
    h["actions"][0] = 0 if legal_first != 0 else 1  # a card during the bidding: illegal
    with pytest.raises(RecordError, match=r"hands\[0\], decision 0: illegal action"):
        replay(bad)
    bad = copy.deepcopy(rec)
    bad["hands"][0]["actions"] = bad["hands"][0]["actions"][:-1]
    bad["hands"][0]["seats"] = bad["hands"][0]["seats"][:-1]
    with pytest.raises(RecordError, match="stop before the hand ends"):
        replay(bad)
    bad = copy.deepcopy(rec)
    bad["hands"][0]["hands"][0][0], bad["hands"][0]["hands"][1][0] = 19, 19
    with pytest.raises(RecordError, match="bad deal"):
        replay(bad)
    bad = copy.deepcopy(rec)
    bad["hands"][0]["seats"][0] = (bad["hands"][0]["seats"][0] + 1) % 4
    with pytest.raises(RecordError, match="recorded seat"):
        replay(bad)


def test_malformed_records(tmp_path):
    with pytest.raises(RecordError, match="no record file"):
        load_record(tmp_path / "missing.json")
    (tmp_path / "x.json").write_text("{not json")
    with pytest.raises(RecordError, match="is not JSON"):
        load_record(tmp_path / "x.json")
    rec = random_record(1)
    for mutate, msg in [
        (lambda r: r.update(format="other"), "not a Cuatrola record"),
        (lambda r: r.update(version=99), "unsupported record version"),
        (lambda r: r.update(rules="house"), "bad 'rules'"),
        (lambda r: r.update(mode="tournament"), "'mode'"),
        (lambda r: r["hands"][0].pop("muestra"), "lacks 'muestra'"),
        (lambda r: r["hands"][0].update(actions=["pass"]), "list of integer action ids"),
    ]:
        bad = copy.deepcopy(rec)
        mutate(bad)
        save_record(bad, tmp_path / "bad.json")
        with pytest.raises(RecordError, match=msg):
            load_record(tmp_path / "bad.json")


def test_save_is_atomic_and_environments_write_records(tmp_path):
    from cuatrola_env import env

    e = env()
    e.reset(seed=5)
    rng = np.random.default_rng(0)
    for _agent in e.agent_iter():
        obs, _, term, trunc, _ = e.last()
        e.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    path = tmp_path / "sub" / "hand.json"
    e.unwrapped.save_record(path)
    assert [p.name for p in path.parent.iterdir()] == ["hand.json"], "no temporary file left behind"
    replay(load_record(path))


def test_pretty_printer_and_cli(tmp_path):
    rec = random_record(3, mode="match")
    text = format_record(rec)
    assert "Hand 1: dealer player_" in text and "muestra" in text and "Match: team" in text
    path = save_record(rec, tmp_path / "m.json")
    out = subprocess.run([sys.executable, "-m", "cuatrola_env.replay", str(path), "--check"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "reproduced exactly" in out.stdout and "trick 1:" in out.stdout
    bad = copy.deepcopy(rec)
    bad["hands"][0]["result"]["winner_team"] ^= 1
    save_record(bad, tmp_path / "bad.json")
    out = subprocess.run([sys.executable, "-m", "cuatrola_env.replay", str(tmp_path / "bad.json"), "--check"],
                         capture_output=True, text=True)
    assert out.returncode == 2 and "winner_team" in out.stderr
