"""A run that labels the bids alone (``to_trick: 0``, ``bids: rollout``; ``experiments/bids.yaml``): each
bid with a choice is labelled, and no card play; each label is the game points of the actual deal
played out by the network after that bid; the card-play heads stay exactly as they were."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from helpers import tiny_distill_checkpoint

torch = pytest.importorskip("torch")
pytest.importorskip("numba")
pytest.importorskip("tensorboard")

from agents import training as train  # noqa: E402
from agents.checkpoint import read_checkpoint  # noqa: E402
from agents.export import sample_observations  # noqa: E402
from agents.network import NetworkSpec  # noqa: E402
from agents.search import SearchAgent  # noqa: E402
from agents.training import distill  # noqa: E402
from agents.training.config import names_something, preset  # noqa: E402
from agents.training.labels import hand_game  # noqa: E402
from agents.training.teachers import StudentPolicy  # noqa: E402
from cuatrola_env.rules import get_rules  # noqa: E402

SPEC16 = NetworkSpec(16, 2, dueling=True, q_head=True, owners=True).to_dict()
PLAY = dataclasses.asdict(distill.PlaySpec())
BIDS_ONLY = dataclasses.asdict(distill.LabelSpec(bids="rollout", from_trick=0, to_trick=0))


@pytest.mark.parametrize("preset_name", ["online", "traditional"])
def test_to_trick_0_labels_every_bid_with_a_choice_and_no_card_play(preset_name):
    torch.manual_seed(0)
    weights = {k: v.numpy() for k, v in distill.student(distill.DistillConfig(hidden=16)).state_dict().items()}
    data = distill.play_and_label(weights, None, SPEC16, preset_name, PLAY, BIDS_ONLY, seed=3, hands=8)
    rules, expected = get_rules(preset_name), []
    for hand in range(8):  # every decision of the hands played, replayed through the engine
        g = hand_game(data, hand, 0, rules)
        for step, a in enumerate(data["actions"][hand, : data["length"][hand]]):
            v = g.seat_view()
            if v.phase == 0 and len(v.legal_actions) > 1:
                expected.append((hand, step))
            g.step(int(a))
    assert expected and np.array_equal(np.array(expected), np.c_[data["hand"], data["step"]])
    legal_valued = np.isfinite(data["values"].astype(np.float32)).sum(1)
    assert (legal_valued >= 2).all()  # every legal bid of a labelled decision has its value


def test_a_bids_stage_leaves_every_card_play_head_exactly_as_it_was(tmp_path):
    base = tiny_distill_checkpoint(train.main, tmp_path / "base", "--iterations", "1", "--late-from-trick", "1",
                                  "--early-head", "true")
    run = tiny_distill_checkpoint(train.main, tmp_path / "bids", "--init", str(base), "--late-from-trick", "1",
                                 "--early-head", "true", "--bids", "rollout", "--to-trick", "0", "--iterations", "1")
    before, after = read_checkpoint(str(base))["model"], read_checkpoint(str(run))["model"]
    cards = [k for k in before if k.startswith(("early_net.", "late_net."))]
    assert cards and all(torch.equal(before[k], after[k]) for k in cards)
    bids = [k for k in before if k.startswith("policy_net.")]
    assert not all(torch.equal(before[k], after[k]) for k in bids)


def test_the_bids_experiment_labels_bids_alone_and_keeps_the_expert_heads():
    cfg = preset(str(Path(__file__).parents[1] / "experiments" / "bids.yaml"))
    assert cfg["to_trick"] == 0 and cfg["bids"] == "rollout"
    assert cfg["early_head"] and cfg["late_from_trick"] == 1 and cfg["late_hidden"] == 512


def test_the_match_labels_experiment_is_the_recipes_bid_stage_but_for_its_labels():
    cfg = preset(str(Path(__file__).parents[1] / "experiments" / "search_bids_match.yaml"))
    stage = preset("search_bids")
    assert cfg["teacher"] == stage["teacher"].replace(",path=student", ",label=match,path=student")
    assert {k: v for k, v in cfg.items() if k not in ("teacher", "exp_name")} == \
        {k: v for k, v in stage.items() if k not in ("teacher", "exp_name")}
    distill.check(distill.DistillConfig(**cfg))


def test_the_expert_recipe_teaches_the_bids_by_the_search_over_the_student_before_its_refit():
    """The expert recipe's stage before its last labels the bids alone, by the rollout-bidding search over
    the student's own network: it names no model file, so the recipe needs nothing outside the repository."""
    assert preset("expert")["then"].split(",")[-2:] == ["search_bids", "refit"]
    cfg = preset("search_bids")
    assert cfg["to_trick"] == 0 and cfg["bids"] == "teacher" and cfg["teacher"].startswith("search:")
    assert "bid=rollout" in cfg["teacher"] and "path=student" in cfg["teacher"] and cfg["policy_target"] == "labels"
    distill.check(distill.DistillConfig(**{k: v for k, v in cfg.items() if k not in ("extends",)}))


@pytest.mark.parametrize(("flags", "message"), [
    (["--to-trick", "0", "--bids", "none"], "to_trick 0 labels no card play, and bids 'none' no bid"),
    (["--from-trick", "2", "--to-trick", "1"], "to_trick must be 0 (no card play) or a trick after from_trick"),
])
def test_a_run_that_would_label_nothing_is_refused(flags, message, capsys):
    assert train.main(["--algorithm", "distill", *flags]) == 2
    assert message in capsys.readouterr().err


STUDENT_SEARCH = "search:play=policy,bid=rollout,worlds=4,candidates=8,infer_play=0.5,path=student"


def test_a_search_teacher_over_the_student_values_bids_by_the_students_own_rollouts():
    """Expert iteration: ``path=student`` makes the search search with the labeller's own network. The
    first bid of the first hand (no bid before it, so no inference) is valued exactly as that search
    over the student values it, and a different student gives it different values."""
    rules, labels = get_rules("online"), dataclasses.asdict(distill.LabelSpec(teacher=STUDENT_SEARCH, bids="teacher",
                                                                               from_trick=0, to_trick=0))
    firsts = []
    for net_seed in (0, 1):
        torch.manual_seed(net_seed)
        net = distill.student(distill.DistillConfig(hidden=16))
        weights = {k: v.numpy() for k, v in net.state_dict().items()}
        data = distill.play_and_label(weights, None, SPEC16, "online", PLAY, labels, seed=3, hands=2)
        assert data["hand"][0] == 0 and data["step"][0] == 0
        view = hand_game(data, 0, 0, rules).seat_view()
        search = SearchAgent(seed=4, policy=StudentPolicy(net.eval(), rules), play="policy", bid="rollout", worlds=4,
                             candidates=8, infer_play=0.5)
        expected = search.label_values(view, view.legal_actions)
        got = data["values"][0].astype(np.float32)[view.legal_actions]
        np.testing.assert_allclose(got, expected, atol=1e-3)
        firsts.append(got)
    assert not np.allclose(firsts[0], firsts[1])


def test_a_search_over_the_student_names_no_file_a_resumed_run_must_be_told_again():
    assert not names_something("teacher", STUDENT_SEARCH, "actual")
    assert names_something("teacher", STUDENT_SEARCH.replace("path=student", "path=model.onnx"), "actual")
    assert names_something("rival", "search:worlds=4,path=student", "pimc:worlds=4")  # only a teacher has a student


def test_the_student_runs_as_its_exported_graph_and_gives_pytorchs_logits():
    """A search over the student runs the network's exported graph in onnxruntime (faster on a
    search's small batches); its logits are PyTorch's, and the network keeps its mode."""
    pytest.importorskip("onnxruntime")
    torch.manual_seed(0)
    net = distill.student(distill.DistillConfig(hidden=16)).train()
    obs, mask = sample_observations(64, seed=2)
    graph, plain = StudentPolicy(net, get_rules("online")), StudentPolicy(net, get_rules("online"), use_onnx=False)
    got = graph.logits(obs, mask)
    assert graph.session is not None and plain.session is None and net.training
    np.testing.assert_allclose(got[mask], plain.logits(obs, mask)[mask], atol=1e-4)
    assert np.isneginf(got[~mask]).all() or (got[~mask] < -1e8).all()


def _first_bid(score: list[int]):
    """The first bid with a choice of a hand dealt at random, at ``score`` from the bidder's team's side."""
    from cuatrola_env.game import Game

    for seed in range(50):
        game = Game("online", mode="match", seed=seed)
        seat = game.seat_view().seat
        game.reset(seed=seed, score=score if seat % 2 == 0 else score[::-1])
        view = game.seat_view()
        if view.seat == seat and len(view.legal_actions) > 1:
            return view
    raise AssertionError("no first bid with a choice in 50 deals")


def test_match_labels_are_the_searchs_match_chances_at_the_scores_rate():
    """``label=match`` (rule: a match is won by the first team to reach the target, 11 online): a
    bid's label is its chance of winning the match, as the search values its rollouts, in game points
    at the score's rate. At 0-0 the labels rank the bids as that chance does; at 10-0, one point from
    the target, any won hand wins the match, so no bid is worth more than the smallest win."""
    torch.manual_seed(0)
    net = distill.student(distill.DistillConfig(hidden=16)).eval()
    rules = get_rules("online")
    options = dict(play="policy", bid="rollout", worlds=8, candidates=8, infer=0.0)
    for score in ([0, 0], [10, 0]):
        view = _first_bid(score)
        legal = view.legal_actions
        labels = SearchAgent(seed=4, policy=StudentPolicy(net, rules), label="match", **options).label_values(view, legal)
        search = SearchAgent(seed=4, policy=StudentPolicy(net, rules), **options)
        chance = search._values(view, legal, search.action_values(view, legal, search._worlds(view))).mean(1)
        assert np.array_equal(np.argsort(labels, kind="stable"), np.argsort(chance, kind="stable"))
        now, up, down = search._utility(view, np.array([0, 1, -1]))
        np.testing.assert_allclose(labels, (chance - now) / ((up - down) / 2), rtol=1e-6)
        if score == [10, 0]:
            assert labels.max() <= (up - now) / ((up - down) / 2) + 1e-9
