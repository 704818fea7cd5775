"""The early card-play head (``PolicyValueNet(early_head=True)``, a run's ``early_head``) and
``bids: none``: the early head plays exactly the card plays before the late head's trick, the
policy head then only bids, a run that labels no bid leaves the bids exactly as they were, and the
export plays with both gates."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from helpers import random_decisions, tiny_distill_checkpoint

torch = pytest.importorskip("torch")
pytest.importorskip("numba")
pytest.importorskip("tensorboard")

from agents import training as train  # noqa: E402
from agents.checkpoint import read_checkpoint  # noqa: E402
from agents.network import NetworkSpec, PolicyValueNet  # noqa: E402
from agents.torch_agent import load_network  # noqa: E402
from agents.training import distill, teachers  # noqa: E402
from agents.training.labels import hand_game  # noqa: E402
from cuatrola_env.observation import trick_number  # noqa: E402
from cuatrola_env.rules import get_rules  # noqa: E402

#: the spec of the small networks these tests play (a plain student network of 16 x 2)
SPEC16 = NetworkSpec(16, 2, dueling=True, q_head=True, owners=True).to_dict()

PLAY = dataclasses.asdict(distill.PlaySpec())  #: the network in every seat, sampled at temperature 1
LABELS = dataclasses.asdict(distill.LabelSpec(bids="none"))  #: the actual deal labels the cards alone


def decisions(preset: str, n: int = 64, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    obs, masks = random_decisions(preset, n, seed)
    return torch.from_numpy(obs), torch.from_numpy(masks)


@pytest.mark.parametrize("preset", ["online", "traditional"])
@pytest.mark.parametrize("late", [None, 1, 3])
def test_the_early_head_plays_the_card_plays_before_the_late_heads_trick_and_the_policy_head_only_bids(preset, late):
    torch.manual_seed(0)
    net = PolicyValueNet(16, 2, late_from_trick=late, early_head=True)
    with torch.no_grad():  # the three heads now differ
        net.early_net[-1].bias.add_(torch.randn(24))
        if late is not None:
            net.late_net[-1].bias.sub_(torch.randn(24))
    obs, mask = decisions(preset)
    trick = torch.from_numpy(trick_number(obs.numpy()))
    last = 5 if late is None else late
    parts = {"policy_net": trick == -1, "early_net": (trick >= 0) & (trick < last), "late_net": trick >= last}
    assert parts["policy_net"].any() and parts["early_net"].any() and (late is None or parts["late_net"].any())
    with torch.no_grad():
        got, x = net.policy(obs, mask), net._inputs(obs, mask)
        for name, rows in parts.items():
            if rows.any():
                head = getattr(net, name)(x)
                assert torch.equal(got[rows][mask[rows]], head[rows][mask[rows]]), name


def test_an_early_head_the_weights_lack_starts_as_a_copy_of_the_policy_head_and_then_travels_in_them():
    torch.manual_seed(1)
    plain = distill.student(distill.DistillConfig(hidden=16, late_from_trick=2))
    with_early = distill.student(distill.DistillConfig(hidden=16, early_head=True),
                                 {"model": plain.state_dict(), "network": plain.spec})
    assert with_early.early_net is not None and with_early.late_trick == 2
    obs, mask = decisions("online", seed=1)
    with torch.no_grad():
        assert torch.equal(plain.policy(obs, mask), with_early.policy(obs, mask))
        with_early.early_net[-1].bias.add_(1.0)
    again = distill.student(distill.DistillConfig(hidden=16), {"model": with_early.state_dict(), "network": with_early.spec})
    assert torch.equal(again.early_net[-1].bias, with_early.early_net[-1].bias)  # its spec holds the head
    plain_again = distill.student(distill.DistillConfig(hidden=16), {"model": plain.state_dict(), "network": plain.spec})
    assert plain_again.early_net is None


@pytest.mark.parametrize("preset", ["online", "traditional"])
@pytest.mark.parametrize("to_trick", [5, 1])
def test_with_bids_none_every_card_play_with_a_choice_before_to_trick_is_labelled_and_no_bid(preset, to_trick):
    """``bids: none``: the labels skip the bidding; ``to_trick``: and the tricks from it on."""
    torch.manual_seed(0)
    weights = {k: v.numpy() for k, v in distill.student(distill.DistillConfig(hidden=16)).state_dict().items()}
    data = distill.play_and_label(weights, None, SPEC16, preset, PLAY, {**LABELS, "to_trick": to_trick}, seed=3, hands=8)
    rules, expected = get_rules(preset), []
    for hand in range(8):  # every decision of the hands played, replayed through the engine
        g = hand_game(data, hand, 0, rules)
        for step, a in enumerate(data["actions"][hand, : data["length"][hand]]):
            v = g.seat_view()
            if v.phase == 1 and v.trick_num < to_trick and len(v.legal_actions) > 1:
                expected.append((hand, step))
            g.step(int(a))
    assert expected and np.array_equal(np.array(expected), np.c_[data["hand"], data["step"]])


def test_an_early_run_without_bid_labels_leaves_the_bids_exactly_as_they_were_and_exports(tmp_path):
    """The policy head (the bids) stays exactly as it was; the early head learns the first trick; the
    exported graph plays as the PyTorch network."""
    pytest.importorskip("onnxruntime")
    from agents.export import export

    base = tiny_distill_checkpoint(train.main, tmp_path / "base", "--iterations", "1", "--late-from-trick", "1",
                                  "--from-trick", "1")
    run = tiny_distill_checkpoint(train.main, tmp_path / "early", "--init", str(base), "--late-from-trick", "1",
                                 "--early-head", "true", "--bids", "none", "--teacher", "pimc:worlds=2",
                                 "--policy-target", "labels", "--iterations", "1")
    before, after = read_checkpoint(str(base))["model"], read_checkpoint(str(run))["model"]
    policy = [k for k in before if k.startswith("policy_net.")]
    assert all(torch.equal(before[k], after[k]) for k in policy)
    assert not all(torch.equal(before[k], after[k.replace("policy_net", "early_net")]) for k in policy)
    net = load_network(str(run))
    assert net.early_net is not None and net.late_trick == 1
    card = export(str(run), str(tmp_path / "m.onnx"), check=2000)
    assert card["training"]["network"]["early_head"] and card["parity"]["same_actions"]


@pytest.mark.parametrize(("flags", "message"), [
    (["--bids", "guess"], "bids (--bids) must be one of teacher, rollout, none, got 'guess'"),
    (["--to-trick", "6"], "to_trick must be 0 (no card play) or a trick after from_trick, up to 5 (all), got 6"),
    (["--from-trick", "2", "--to-trick", "2"], "to_trick must be 0 (no card play) or a trick after from_trick"),
])
def test_the_early_options_refuse_what_no_run_can_start_with(flags, message, capsys):
    assert train.main(["--algorithm", "distill", *flags]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("preset", ["online", "traditional"])
def test_the_first_tricks_labels_are_level_masters_values(preset):
    """Teacher ``bot:level=master`` and ``to_trick`` 1: each card play of the first trick is labelled
    with exactly what level master's search (seeded as the task's teacher is) values each legal card."""
    torch.manual_seed(0)
    weights = {k: v.numpy() for k, v in distill.student(distill.DistillConfig(hidden=16)).state_dict().items()}
    spec = "bot:level=master,worlds=2,candidates=4"
    data = distill.play_and_label(weights, None, SPEC16, preset, PLAY, {**LABELS, "teacher": spec, "to_trick": 1},
                                  seed=5, hands=8)
    rules, teacher = get_rules(preset), teachers.teacher_for(spec, seed=6)
    order = np.lexsort((data["hand"], data["step"]))  # the order they were labelled in: step by step, game by game
    for i in order:
        g = hand_game(data, int(data["hand"][i]), int(data["step"][i]), rules)
        assert g.seat_view().trick_num == 0
        got, want = data["values"][i].astype(np.float32), teacher.values(g.seat_view(), np.array(g.hands))
        assert np.allclose(got, want, rtol=1e-3, atol=1e-2, equal_nan=True)
    assert len(order) >= 4


@pytest.mark.parametrize("workers", [1, 2])
def test_ppo_fine_tunes_a_network_with_card_play_heads_and_keeps_them(tmp_path, workers):
    """PPO started from a network with an early and a late head (as level expert's) trains that
    network: the checkpoint keeps both heads in its spec, and the late head's weights move."""
    base = tiny_distill_checkpoint(train.main, tmp_path / "base", "--iterations", "1", "--late-from-trick", "1",
                                  "--early-head", "true")
    args = ["--config", "tiny", "--init", str(base), "--hidden", "16", "--imitation-decisions", "0", "--total-decisions", "4096",
            "--heuristic-frac", "1.0", "--pool-frac", "0", "--eval-every", "0", "--workers", str(workers),
            "--run-dir", str(tmp_path / "ppo")]
    assert train.main(args) == 0
    after = read_checkpoint(str(next((tmp_path / "ppo").iterdir()) / "checkpoint.pt"))
    spec = NetworkSpec.from_dict(after["network"])
    assert spec.early_head and spec.late_from_trick == 1
    before = read_checkpoint(str(base))["model"]
    late = [k for k in before if k.startswith("late_net.")]
    assert late and not all(torch.equal(before[k], after["model"][k]) for k in late)
