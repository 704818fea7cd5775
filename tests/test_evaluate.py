"""evaluate.py: the duplicate design, its statistics, outputs and errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from agents import evaluation as evaluate
from agents import results


def test_an_agent_against_itself_is_exactly_even(tmp_path):
    """Duplicate deals with a deterministic agent on both sides: each deal's two plays are
    mirror images, so every paired difference is exactly 0 and matches split 50/50."""
    out = tmp_path / "self.json"
    args = ["heuristic", "heuristic+heuristic", "--deals", "60", "--matches", "10", "--json", str(out), "--no-progress"]
    assert evaluate.main(args) == 0
    r = json.loads(out.read_text())["pairings"][0]
    assert r["game_points_per_hand"]["mean"] == 0 and r["game_points_per_hand"]["se"] == 0
    assert r["card_points_per_hand"]["mean"] == 0
    assert r["match_win_rate"]["mean"] == 0.5
    assert r["illegal_actions"] == {"a": 0, "b": 0}


def test_heuristic_beats_random_with_a_round_robin_table(tmp_path, capsys):
    out, png = tmp_path / "rr.json", tmp_path / "rr.png"
    code = evaluate.main(["heuristic", "random", "heuristic+random", "--deals", "200", "--seed", "3",
                          "--json", str(out), "--png", str(png), "--no-progress"])
    assert code == 0
    data = json.loads(out.read_text())
    first = data["pairings"][0]
    assert (first["a"], first["b"]) == ("heuristic", "random")
    assert first["game_points_per_hand"]["ci95"][0] > 1.0
    assert first["match_win_rate"]["mean"] > 0.9
    ratings = data["ratings"]
    assert ratings["heuristic"]["rating"] > ratings["heuristic+random"]["rating"] > ratings["random"]["rating"]
    assert png.stat().st_size > 10_000
    text = capsys.readouterr().out
    assert "| heuristic | random |" in text and "rating" in text


def test_paired_statistics():
    x = np.array([1.0, -1.0, 3.0, 1.0])
    s = evaluate.mean_ci(x)
    assert s["mean"] == 1.0 and np.isclose(s["se"], np.std(x, ddof=1) / 2)
    assert np.isclose(s["ci95"][1] - s["mean"], 1.959964 * s["se"])


@pytest.mark.parametrize(
    "args,message",
    [
        (["heuristic", "herustic"], "unknown agent 'herustic'"),
        (["heuristic", "pimc:worlds=0"], "worlds must be at least 1"),
        (["heuristic", "model:/no/such/model.onnx"], "no checkpoint or model file at"),
        (["heuristic", "random", "--rules", "house"], "unknown rules preset 'house'"),
        (["heuristic", "a+b+c"], "SPEC or SPEC\\+SPEC"),
    ],
)
def test_bad_input_gets_a_clear_error(args, message, capsys):
    assert evaluate.main([*args, "--deals", "4", "--no-progress"]) == 2
    assert message.replace("\\", "") in capsys.readouterr().err


def test_impossible_options():
    with pytest.raises(SystemExit):
        evaluate.main(["heuristic", "random", "--deals", "1"])
    with pytest.raises(SystemExit):  # matches only, but no matches
        evaluate.main(["heuristic", "random", "--deals", "0"])
    with pytest.raises(SystemExit):
        evaluate.main(["heuristic"])


def test_runs_on_several_seeds_pool_into_one_figure(tmp_path):
    """Split one evaluation over seeds (processes or machines), then pool: the pooled figures are
    those of the concatenated samples (per deal and per duplicate match), not an average of averages."""
    files = []
    for seed, deals, matches in ((1, 30, 3), (2, 50, 5)):
        out = tmp_path / f"s{seed}.json"
        args = ["heuristic", "random", "--deals", str(deals), "--matches", str(matches), "--seed", str(seed)]
        assert evaluate.main([*args, "--json", str(out), "--no-progress"]) == 0
        files.append(out)
    runs = [json.loads(f.read_text())["pairings"][0] for f in files]
    assert [len(r["deal_game_points"]) for r in runs] == [30, 50]
    assert np.isclose(np.mean(runs[0]["deal_game_points"]), runs[0]["game_points_per_hand"]["mean"])
    pooled = results.pool_pairings(runs)
    everything = np.concatenate([r["deal_game_points"] for r in runs])
    assert pooled["deals"] == 80 and pooled["matches"] == 8 and pooled["sources"] == 2
    assert np.isclose(pooled["game_points_per_hand"]["mean"], everything.mean())
    assert np.isclose(pooled["game_points_per_hand"]["se"], everything.std(ddof=1) / np.sqrt(80))
    wins = np.concatenate([np.mean(r["match_wins"], axis=1) for r in runs])
    assert np.isclose(pooled["match_win_rate"]["mean"], wins.mean())
    with pytest.raises(ValueError, match="every result must be heuristic vs random"):
        results.pool_pairings([runs[0], {**runs[1], "b": "heuristic"}])
    # the command-line tool writes the same pooled figure
    assert evaluate.main(["pool", *map(str, files), "--json", str(tmp_path / "pooled.json")]) == 0
    assert json.loads((tmp_path / "pooled.json").read_text())["game_points_per_hand"] == pooled["game_points_per_hand"]


def test_paired_comparison_of_two_runs_on_the_same_deals(tmp_path):
    runs = {}
    for name, side, seed in (("h", "heuristic", 4), ("r", "heuristic+random", 4), ("other", "heuristic", 5)):
        out = tmp_path / f"{name}.json"
        assert evaluate.main([side, "random", "--deals", "40", "--matches", "0", "--seed", str(seed), "--json", str(out),
                              "--no-progress"]) == 0
        runs[name] = json.loads(out.read_text())
    d = results.paired_difference((runs["h"], runs["r"]))["game_points_difference"]
    per_deal = np.subtract(runs["h"]["pairings"][0]["deal_game_points"], runs["r"]["pairings"][0]["deal_game_points"])
    # two heuristics beat a heuristic with a random partner
    assert d["n"] == 40 and np.isclose(d["mean"], per_deal.mean()) and d["ci95"][0] > 0
    assert results.paired_difference((runs["h"], runs["h"]))["game_points_difference"]["mean"] == 0
    with pytest.raises(ValueError, match="not the same deals"):
        results.paired_difference((runs["h"], runs["other"]))
    # pairs on several seeds pool their per-deal differences
    two = results.paired_difference((runs["h"], runs["r"]), (runs["h"], runs["r"]))["game_points_difference"]
    assert two["n"] == 80 and np.isclose(two["mean"], per_deal.mean()) and two["se"] < d["se"]
    with pytest.raises(ValueError, match="every pair must compare"):
        results.paired_difference((runs["h"], runs["r"]), (runs["r"], runs["h"]))
    assert evaluate.main(["compare", str(tmp_path / "h.json"), str(tmp_path / "r.json")]) == 0
    with pytest.raises(SystemExit):
        evaluate.main(["compare", str(tmp_path / "h.json")])


def test_a_matches_only_run_pairs_with_the_matches_of_a_longer_run(tmp_path):
    """--deals 0 plays matches only (no game-point figure); a match's deals depend only on the
    seed, so it pairs match by match with a run that also played deals."""
    runs = {}
    for name, side, deals in (("h", "heuristic", "0"), ("r", "heuristic+random", "10")):
        out = tmp_path / f"{name}.json"
        assert evaluate.main([side, "random", "--deals", deals, "--matches", "6", "--seed", "3", "--json", str(out),
                              "--no-progress"]) == 0
        runs[name] = json.loads(out.read_text())
    assert runs["h"]["pairings"][0]["game_points_per_hand"] is None and len(runs["h"]["pairings"][0]["match_wins"]) == 6
    r = results.paired_difference((runs["h"], runs["r"]))
    assert r["game_points_difference"] is None
    share = [np.mean(runs[k]["pairings"][0]["match_wins"], axis=1) for k in ("h", "r")]
    assert r["match_share_difference"]["n"] == 6
    assert r["match_share_difference"]["mean"] == pytest.approx(float(np.mean(share[0] - share[1])))
    assert results.pool_pairings([runs["h"]["pairings"][0]])["game_points_per_hand"] is None
    with pytest.raises(ValueError, match="not the same deals: seed 3"):
        results.paired_difference((runs["h"], {**runs["r"], "seed": 4}))


@pytest.mark.parametrize("command", ["compare", "pool"])
def test_compare_and_pool_refuse_a_missing_or_foreign_file_in_one_line(tmp_path, capsys, command):
    good = tmp_path / "a.json"
    assert evaluate.main(["heuristic", "random", "--deals", "2", "--matches", "0", "--seed", "0", "--no-progress",
                          "--json", str(good)]) == 0
    capsys.readouterr()
    foreign = tmp_path / "f.json"
    foreign.write_text("[1, 2]")
    for bad, says in ((tmp_path / "missing.json", "cannot read"), (foreign, "not an evaluate.py --json file")):
        assert evaluate.main([command, str(good), str(bad)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("error: ") and says in err[0] and str(bad) in err[0]


def test_a_spec_whose_extra_is_missing_is_one_line_naming_the_extra(monkeypatch, capsys):
    """``model:`` without torch, ``pimc:`` without numba, progress bars without tqdm: one line that
    names what to install, exit 2, no traceback."""
    import sys

    for module, loaded, spec, extra in (("torch", "agents.torch_agent", "model:agents/models/cuatrola.pt", "[train]"),
                                        ("numba", "agents.pimc", "pimc:worlds=2", "[eval]")):
        with monkeypatch.context() as m:
            m.setitem(sys.modules, module, None)
            for name in [n for n in sys.modules if n == loaded or n == "agents.solver"]:
                m.delitem(sys.modules, name)
            assert evaluate.main([spec, "random", "--deals", "2", "--no-progress"]) == 2
            err = capsys.readouterr().err.strip().splitlines()
            assert len(err) == 1 and err[0].startswith("error: ") and module in err[0] and extra in err[0], err
    with monkeypatch.context() as m:
        m.setitem(sys.modules, "tqdm", None)
        assert evaluate.main(["random", "random", "--deals", "2"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "[eval]" in err[0] and "--no-progress" in err[0]


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """Two small runs of one pairing on seeds 1 and 2, and one under the traditional rules."""
    folder = tmp_path_factory.mktemp("runs")
    files = {}
    for name, seed, rules in (("s1", 1, "online"), ("s2", 2, "online"), ("trad", 3, "traditional")):
        files[name] = folder / f"{name}.json"
        assert evaluate.main(["heuristic", "random", "--deals", "40", "--matches", "4", "--seed", str(seed), "--rules", rules,
                              "--json", str(files[name]), "--no-progress"]) == 0
    return files


def _edited(two_runs, tmp_path, edit, name="s2") -> str:
    run = json.loads(two_runs[name].read_text())
    edit(run)
    out = tmp_path / f"edited_{name}.json"
    out.write_text(json.dumps(run))
    return str(out)


BAD_RESULTS = {
    "a deal list shorter than its deals": (lambda r: r["pairings"][0].update(deal_game_points=[7.2]),
                                           "deal_game_points has 1 entries, and the run says 40"),
    "a match share past 1": (lambda r: r["pairings"][0]["match_wins"][0].__setitem__(0, 1e9), "match_wins[0]"),
    "a missing key": (lambda r: r["pairings"][0].pop("match_wins"), "pairings[0].match_wins is missing"),
    "a negative count": (lambda r: r.update(deals=-3), "field deals must be int"),
    "a game-points figure no deal can score": (lambda r: r["pairings"][0]["deal_game_points"].__setitem__(3, 50.0),
                                               "deal_game_points[3]"),
    "a count of another type": (lambda r: r["pairings"][0].update(decisions="many"), "decisions must be int"),
    "a model digest that is not one": (lambda r: r["pairings"][0].update(models={"a": ["abc", ""], "b": ["", ""]}),
                                       "models.a[0] must be a SHA-256"),
}


@pytest.mark.parametrize("command", ["pool", "compare"])
@pytest.mark.parametrize("case", list(BAD_RESULTS))
def test_pool_and_compare_refuse_a_malformed_result_naming_file_and_field(two_runs, tmp_path, capsys, command, case):
    edit, says = BAD_RESULTS[case]
    bad = _edited(two_runs, tmp_path, edit)
    other = str(two_runs["s1" if command == "pool" else "s2"])
    assert evaluate.main([command, other, bad]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and bad in err[0] and says in err[0], err


def test_pool_refuses_a_run_counted_twice_and_runs_of_another_game(two_runs, tmp_path, capsys):
    s1, s2, trad = (str(two_runs[k]) for k in ("s1", "s2", "trad"))
    assert evaluate.main(["pool", s1, s2, s1]) == 2
    assert "same run as" in capsys.readouterr().err
    copy = tmp_path / "copy.json"
    copy.write_text(two_runs["s1"].read_text())
    assert evaluate.main(["pool", s1, str(copy)]) == 2, "a copy of a run is the same run"
    assert "same run as" in capsys.readouterr().err
    assert evaluate.main(["pool", s1, trad]) == 2
    assert "runs of different games" in capsys.readouterr().err
    assert evaluate.main(["compare", s1, trad]) == 2
    assert "runs of different games" in capsys.readouterr().err
    target = _edited(two_runs, tmp_path, lambda r: r["rules"].update(target=5), "s2")
    assert evaluate.main(["pool", s1, target]) == 2
    assert "to 5" in capsys.readouterr().err
    assert evaluate.main(["pool", s1, s2]) == 0, "two seeds of one game pool"


@pytest.mark.parametrize("text, says", [("[" * 100_000 + "]" * 100_000, "nested too deeply"),
                                         ('{"seed": NaN}', "not an evaluate.py --json file"),
                                         ('{"seed": 1e999}', "not an evaluate.py --json file")])
def test_pool_refuses_deep_or_non_finite_json_in_one_line(two_runs, tmp_path, capsys, text, says):
    bad = tmp_path / "bad.json"
    bad.write_text(text)
    assert evaluate.main(["pool", str(two_runs["s1"]), str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and says in err[0], err


def test_two_versions_of_one_spec_on_the_same_deals_compare(two_runs, tmp_path, capsys):
    """The same spec string (a model shipped anew under its name) with other results is another run:
    compare takes it; only the very same games and results are refused as one run twice."""
    def other_version(r):
        r["pairings"][0]["deal_game_points"][0] = -r["pairings"][0]["deal_game_points"][0] + 1.0

    newer = _edited(two_runs, tmp_path, other_version, "s1")
    assert evaluate.main(["compare", newer, str(two_runs["s1"])]) == 0
    assert "heuristic minus heuristic against random" in capsys.readouterr().out


def test_one_model_read_from_two_paths_pools_as_one_player_and_another_model_does_not(tmp_path, capsys):
    """A result records the SHA-256 of the model each side plays: the shipped expert named by its
    level and a copy of it at another path pool as one player; another model under a like spec does not."""
    import shutil

    from agents.models import EXPERT_MODELS, ONNX_MODEL

    shipped = EXPERT_MODELS["online"]
    for suffix in (".onnx", ".json"):
        shutil.copy(shipped.with_suffix(suffix), tmp_path / f"copy{suffix}")
    base = tmp_path / "base"
    base.mkdir()
    for suffix in (".onnx", ".json"):
        shutil.copy(ONNX_MODEL.with_suffix(suffix), base / f"copy{suffix}")
    files = {}
    for name, spec, seed in (("level", "bot:level=expert", 1), ("copy", f"bot:path={tmp_path / 'copy.onnx'},level=expert", 2),
                             ("other", f"bot:path={base / 'copy.onnx'},level=expert", 3)):
        files[name] = str(tmp_path / f"{name}.json")
        assert evaluate.main([spec, "random", "--deals", "6", "--matches", "0", "--seed", str(seed), "--json", files[name],
                              "--no-progress"]) == 0
    models = [json.loads(Path(files[k]).read_text())["pairings"][0]["models"] for k in ("level", "copy", "other")]
    assert models[0] == models[1] != models[2] and models[0]["b"] == ["", ""] and len(models[0]["a"][0]) == 64
    assert evaluate.main(["pool", files["level"], files["copy"]]) == 0
    assert evaluate.main(["pool", files["level"], files["other"]]) == 2
    assert "every result must be" in capsys.readouterr().err


@pytest.mark.parametrize(("spec", "bare"), [
    ("bot:path=m.onnx,level=expert", "bot:level=expert"),
    ("bot:level=expert,path=m.onnx", "bot:level=expert"),
    ("bot:path=m.onnx", "bot"),
    ("search:worlds=8,path=a.onnx+bot:path=b.onnx,level=strong", "search:worlds=8+bot:level=strong"),
    ("pimc:worlds=32", "pimc:worlds=32"),
])
def test_a_spec_without_its_paths_keeps_every_other_option_of_each_partner(spec, bare):
    assert results.without_paths(spec) == bare
