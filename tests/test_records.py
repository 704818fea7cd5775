"""Game records: written by the environments, replayed exactly, tampering detected, printed."""

from __future__ import annotations

import copy
import json
import re
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


# --------------------------------------------------------------------------- the whole record is checked
def _check_cli(path, *extra) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cuatrola_env.replay", str(path), "--check", *extra],
                          capture_output=True, text=True)


def _cut_after_first_hand(r):
    del r["hands"][1:]


def _extra_action_after_first_hand(r):
    r["hands"][0]["actions"].append(r["hands"][1]["actions"][0])
    r["hands"][0]["seats"].append(r["hands"][1]["seats"][0])


def _hand_after_the_match(r):
    r["hands"].append(copy.deepcopy(r["hands"][-1]))


@pytest.mark.parametrize("tamper, message", [
    (lambda r: r["match"].update(final_score=[0, 0]), "match: 'final_score'"),
    (lambda r: r["match"].update(winner_team=1 - r["match"]["winner_team"]), "match: 'winner_team'"),
    (_cut_after_first_hand, "before the match is over"),
    (_extra_action_after_first_hand, r"hands\[0\]: the hand ended before action"),
    (_hand_after_the_match, "the match was over after"),
    (lambda r: r.pop("match"), "'match' must be an object"),
])
def test_tampered_match_records_exit_2(tmp_path, tamper, message):
    rec = random_record(21, mode="match")
    assert len(rec["hands"]) >= 2
    bad = copy.deepcopy(rec)
    tamper(bad)
    path = save_record(bad, tmp_path / "bad.json")
    out = _check_cli(path)
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert re.search(message, out.stderr), out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.parametrize("change, message", [
    (lambda r: r["hands"][0].update(dealer="x"), r"hands\[0\]\.dealer must be an integer"),
    (lambda r: r["hands"][0].update(dealer=True), r"hands\[0\]\.dealer must be an integer"),
    (lambda r: r["hands"][0].update(muestra=99), r"hands\[0\]\.muestra must be an integer in 0..19"),
    (lambda r: r["hands"][0].update(hands=[1]), r"hands\[0\]\.hands must be 4 lists"),
    (lambda r: r["hands"][0].update(result="won"), r"hands\[0\]\.result must be an object"),
    (lambda r: r["hands"][0]["result"].pop("points"), r"missing \['points'\]"),
    (lambda r: r["hands"][0].update(seats=[0]), r"hands\[0\]\.seats must have"),
    (lambda r: r["hands"][0].update(score_before=[0]), r"hands\[0\]\.score_before must have 2"),
    (lambda r: r["hands"][0]["actions"].extend([20] * 30), r"at most 24 are possible"),
    (lambda r: r.update(hands=r["hands"] * 2), "a hand record holds one hand"),
    (lambda r: r.update(match={"final_score": [5, 0], "winner_team": 0}), "a hand record has no match summary"),
    (lambda r: r.update(extra=1), r"unknown key\(s\) \['extra'\]"),
])
def test_malformed_fields_exit_2_naming_the_field(tmp_path, change, message):
    bad = random_record(5)
    change(bad)
    path = save_record(bad, tmp_path / "bad.json")
    out = _check_cli(path)
    assert out.returncode == 2 and re.search(message, out.stderr), out.stderr
    assert "Traceback" not in out.stderr


def test_files_that_are_not_records_exit_2(tmp_path):
    cases = {
        "deep.json": ("[" * 100_000 + "]" * 100_000).encode(),
        "latin1.json": b'{"format": "cuatrola-record", "name": "\xe9"}',
        "nan.json": json.dumps({**random_record(5), "version": float("nan")}).encode(),
    }
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
    (tmp_path / "dir.json").mkdir()
    for name, message in [("deep.json", "nests JSON too deeply"), ("latin1.json", "not UTF-8"),
                          ("nan.json", "NaN is not a JSON number"), ("dir.json", "is a directory")]:
        out = _check_cli(tmp_path / name)
        assert out.returncode == 2 and message in out.stderr, (name, out.stderr)
        assert "Traceback" not in out.stderr
    path = save_record(random_record(5), tmp_path / "ok.json")
    out = _check_cli(path, "--max-bytes", "1000")
    assert out.returncode == 2 and "larger than 1000 bytes" in out.stderr
    assert _check_cli(path).returncode == 0


def test_every_untampered_record_checks(tmp_path):
    for i, (rules, mode) in enumerate([(r, m) for r in ("online", "traditional") for m in ("hand", "match")] * 3):
        path = save_record(random_record(300 + i, rules, mode), tmp_path / f"r{i}.json")
        out = _check_cli(path)
        assert out.returncode == 0, out.stderr


@pytest.mark.parametrize("check", [[], ["--check"]])
def test_absurd_values_are_refused_in_print_mode_as_in_check_mode(tmp_path, check):
    """Each a one-line refusal (exit 2, no traceback), whether or not the record is replayed."""
    rec = random_record(7)
    text = json.dumps(rec)
    cases = {
        "digits": text.replace('"dealer": ', '"dealer": ' + "9" * 5000 + ", \"x\": ", 1),
        "cantes": _with_result(rec, cantes=[7] * len(rec["hands"][0]["result"]["cantes"] or [0])),
        "float": _with_result(rec, game_points=float(rec["hands"][0]["result"]["game_points"])),
        "bool": _with_result(rec, winner_team=bool(rec["hands"][0]["result"]["winner_team"])),
        "declarer": _with_result(rec, declarer=9),
    }
    for name, data in cases.items():
        (tmp_path / f"{name}.json").write_text(data)
        out = subprocess.run([sys.executable, "-m", "cuatrola_env.replay", str(tmp_path / f"{name}.json"), *check],
                             capture_output=True, text=True, timeout=30)
        assert out.returncode == 2 and out.stderr.startswith("error: "), (name, out.stderr)
        assert "Traceback" not in out.stderr and out.stderr.count("\n") == 1, (name, out.stderr)


def _with_result(rec: dict, **fields) -> str:
    bad = copy.deepcopy(rec)
    bad["hands"][0]["result"].update(fields)
    return json.dumps(bad)


def test_max_bytes_must_be_positive(tmp_path):
    path = save_record(random_record(2), tmp_path / "r.json")
    for bad in ("-2", "0"):
        out = subprocess.run([sys.executable, "-m", "cuatrola_env.replay", str(path), "--max-bytes", bad],
                             capture_output=True, text=True, timeout=30)
        assert out.returncode == 2 and "--max-bytes: must be an integer of at least 1" in out.stderr
    with pytest.raises(RecordError, match="max_bytes must be a positive"):
        load_record("/dev/zero", -2)


@pytest.mark.parametrize("check", [[], ["--check"]])
def test_a_record_with_a_card_in_two_hands_is_refused_in_print_mode_too(tmp_path, check):
    """Printing describes only what replays: a deal that gives one card to two seats (or a play the
    engine refuses) is exit status 2 and nothing on standard output."""
    rec = random_record(5)
    for name, edit in (("two hands", lambda r: r["hands"][0]["hands"][1].__setitem__(0, r["hands"][0]["hands"][0][0])),
                       ("illegal play", lambda r: r["hands"][0]["actions"].__setitem__(0, 99))):
        bad = copy.deepcopy(rec)
        edit(bad)
        path = tmp_path / "bad.json"
        path.write_text(json.dumps(bad))
        out = subprocess.run([sys.executable, "-m", "cuatrola_env.replay", str(path), *check],
                             capture_output=True, text=True, timeout=30)
        assert out.returncode == 2 and out.stdout == "" and out.stderr.startswith("error: "), (name, out)
