"""``evaluate.py ladder``: agents against one baseline, their share of the gap to the cheater and
their exploitability lower bounds, in one table, from result files."""

from __future__ import annotations

import json

import pytest

from agents import evaluation
from agents.results import gap_share

BASE = ["--deals", "6", "--matches", "0", "--seed", "4", "--no-progress"]


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """Two evaluations against the baseline random on the same deals, the first with the cheater's games."""
    d = tmp_path_factory.mktemp("ladder")
    assert evaluation.main(["heuristic", "random", *BASE, "--gap", "--json", str(d / "ceiling.json")]) == 0
    assert evaluation.main(["pimc:worlds=2", "random", *BASE, "--json", str(d / "pimc.json")]) == 0
    assert evaluation.main(["pimc:worlds=2", "random", *BASE[:-2], "5", "--no-progress", "--json", str(d / "other.json")]) == 0
    exploit = {"spec": "heuristic", "rules": "online", "budget": 1000, "deals": 6, "margin": 0.5, "low": 0.1, "high": 0.9}
    (d / "exploit.json").write_text(json.dumps(exploit))
    (d / "nothing.json").write_text(json.dumps({**exploit, "spec": "pimc:worlds=2", "margin": -0.1, "low": -0.3, "high": 0.1}))
    return d


def test_the_ladder_reads_each_share_on_the_cheaters_deals(played, capsys):
    out, png = played / "ladder.json", played / "ladder.png"
    args = ["ladder", str(played / "ceiling.json"), str(played / "pimc.json"), "--exploit", str(played / "exploit.json"),
            "--json", str(out), "--png", str(png)]
    assert evaluation.main(args) == 0
    ladder = json.loads(out.read_text())
    ceiling = json.loads((played / "ceiling.json").read_text())["ceiling_pairing"]
    pimc = json.loads((played / "pimc.json").read_text())["pairings"][0]
    rungs = {r["agent"]: r for r in ladder["ladder"]}
    assert set(rungs) == {"random", "heuristic", "pimc:worlds=2"} and ladder["baseline"] == "random"
    assert rungs["random"]["strength"]["mean"] == 0 and "exploit" not in rungs["random"]
    share = gap_share(pimc["deal_game_points"], ceiling["deal_game_points"], seed=4)
    assert rungs["pimc:worlds=2"]["share"]["share"] == pytest.approx(share["share"])
    assert rungs["pimc:worlds=2"]["strength"] == pimc["game_points_per_hand"]
    assert rungs["heuristic"]["exploit"]["margin"] == 0.5 and rungs["heuristic"]["exploit"]["budget"] == 1000
    text = capsys.readouterr().out
    assert "| heuristic |" in text and "+0.500 [+0.100, +0.900] (trained, 1,000 decisions)" in text and "not measured" in text
    assert png.stat().st_size > 1000


def test_an_exploiter_whose_interval_reaches_zero_found_nothing(played, capsys):
    args = ["ladder", str(played / "ceiling.json"), str(played / "pimc.json"), "--exploit", str(played / "exploit.json"),
            str(played / "nothing.json")]
    assert evaluation.main(args) == 0
    rows = {line.split(" | ")[0]: line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")}
    assert "none found: -0.100 [-0.300, +0.100]" in rows["| pimc:worlds=2"]
    assert "none found" not in rows["| heuristic"]


@pytest.mark.parametrize(("files", "message"), [
    (["pimc.json", "ceiling.json"], "ceiling_pairing is missing"),
    (["ceiling.json", "other.json"], "the shares need the same deals"),
    (["ceiling.json", "pimc.json", "--exploit", "pimc.json"], "not an evaluate.py exploit --json file"),
    (["ceiling.json", "missing.json"], "cannot read"),
])
def test_the_ladder_refuses_files_that_do_not_fit_in_one_line(played, files, message, capsys):
    args = ["ladder", *[f if f.startswith("--") else str(played / f) for f in files]]
    assert evaluation.main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


def test_an_exploit_of_an_agent_not_on_the_ladder_is_refused(played, tmp_path, capsys):
    stray = tmp_path / "stray.json"
    stray.write_text(json.dumps({"spec": "bot:level=easy", "rules": "online", "budget": 1, "deals": 2, "margin": 0,
                                 "low": 0, "high": 0}))
    assert evaluation.main(["ladder", str(played / "ceiling.json"), "--exploit", str(stray)]) == 2
    assert "exploits bot:level=easy, which is not on the ladder" in capsys.readouterr().err
