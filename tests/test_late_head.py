"""The late card-play head (``PolicyValueNet(late_from_trick=k)``) and the run options that teach it
PIMC's values (``late_from_trick``, ``late_hidden``, ``late_layers``, ``from_trick``, ``teacher:
pimc:worlds=N``, ``policy_target``, ``fit_suits``, ``final_epochs``): the late head plays exactly the
tricks from k on, starts as the policy head plays (or fresh when deeper), is the only policy head such
labels move, and exports to ONNX with its gate."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from helpers import TINY_DISTILL, random_decisions, tiny_distill_checkpoint

torch = pytest.importorskip("torch")
pytest.importorskip("numba")
pytest.importorskip("tensorboard")

from agents import policy  # noqa: E402
from agents import training as train  # noqa: E402
from agents.belief import sample_worlds  # noqa: E402
from agents.checkpoint import network_spec, read_checkpoint  # noqa: E402
from agents.network import NetworkSpec, PolicyValueNet, build  # noqa: E402
from agents.pimc import PIMCAgent  # noqa: E402
from agents.player import PolicyPlayer  # noqa: E402
from agents.torch_agent import load_network  # noqa: E402
from agents.training import distill, teachers  # noqa: E402
from agents.training.fitting import renamed_suits  # noqa: E402
from agents.training.labels import hand_game, load_data, replay_decisions  # noqa: E402
from cuatrola_env.game import Game  # noqa: E402
from cuatrola_env.observation import trick_number  # noqa: E402
from cuatrola_env.rules import get_rules  # noqa: E402

#: the spec of the small networks these tests play (a plain student network of 16 x 2)
SPEC16 = NetworkSpec(16, 2, dueling=True, q_head=True, owners=True).to_dict()

PLAY = dataclasses.asdict(distill.PlaySpec())  #: the network in every seat, sampled at temperature 1


def decisions(preset: str, n: int = 64, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    obs, masks = random_decisions(preset, n, seed)
    return torch.from_numpy(obs), torch.from_numpy(masks)


@pytest.mark.parametrize("preset", ["online", "traditional"])
@pytest.mark.parametrize("k", [1, 2, 4])
def test_the_late_head_plays_the_cards_from_its_trick_on_and_the_policy_head_the_rest(preset, k):
    torch.manual_seed(k)
    net = PolicyValueNet(16, 2, late_from_trick=k)
    with torch.no_grad():
        net.late_net[-1].bias.add_(torch.randn(24))  # the two heads now differ
    obs, mask = decisions(preset)
    trick = trick_number(obs.numpy())
    late = torch.from_numpy(trick >= k)
    assert late.any() and (~late).any() and (trick == -1).any()
    with torch.no_grad():
        got, x = net.policy(obs, mask), net._inputs(obs, mask)
        early_logits, late_logits = net.policy_net(x), net.late_net(x)
    m = mask
    assert torch.equal(got[late][m[late]], late_logits[late][m[late]])
    assert torch.equal(got[~late][m[~late]], early_logits[~late][m[~late]])
    assert not torch.equal(early_logits[late][m[late]], late_logits[late][m[late]])


def test_a_late_head_the_weights_lack_starts_as_a_copy_of_the_policy_head():
    """Declared by the config and missing from the starting network: the late head plays as the
    policy head did (widened when it has more units); deeper, it starts fresh; once in the weights,
    the network's spec keeps it (its trick and size), and another trick is refused."""
    torch.manual_seed(0)
    plain = distill.student(distill.DistillConfig(hidden=16))
    start = {"model": plain.state_dict(), "network": plain.spec}
    obs, mask = decisions("online", seed=1)
    for late_hidden in (0, 32):
        with_late = distill.student(distill.DistillConfig(hidden=16, late_from_trick=2, late_hidden=late_hidden), start)
        with torch.no_grad():
            assert torch.allclose(plain.policy(obs, mask), with_late.policy(obs, mask), atol=1e-6)
    deeper = distill.student(distill.DistillConfig(hidden=16, late_from_trick=2, late_hidden=32, late_layers=3), start)
    assert (deeper.spec.late_hidden, deeper.spec.late_layers) == (32, 3)
    with torch.no_grad():
        assert not torch.allclose(plain.policy(obs, mask), deeper.policy(obs, mask))
    held = {"model": deeper.state_dict(), "network": deeper.spec}
    again = distill.student(distill.DistillConfig(hidden=16), held)  # its spec holds the head
    assert again.late_trick == 2 and (again.spec.late_hidden, again.spec.late_layers) == (32, 3)
    assert all(torch.equal(again.state_dict()[k], v) for k, v in deeper.state_dict().items())
    with pytest.raises(train.CheckpointError, match="plays from trick 2, not late_from_trick 3"):
        distill.student(distill.DistillConfig(hidden=16, late_from_trick=3), held)
    with pytest.raises(ValueError, match="late_from_trick must be a trick from 1 to 4, got 0"):
        PolicyValueNet(16, 2, late_from_trick=0)


def test_pimcs_labels_are_the_mean_of_each_deals_values():
    """Teacher ``pimc:worlds=5``: a label is the average of the actual-deal labels of the 5 deals PIMC
    draws (with the same seed) from what the seat saw (PIMC's own valuation)."""
    g = Game("online", seed=2)
    for _ in range(4):
        g.step(20)  # every seat passes: card play
    g.step(g.legal_actions()[0])
    view = g.seat_view()
    worlds = sample_worlds(view, 5, PIMCAgent(seed=7, worlds=5).rng)
    each = np.stack([teachers.Teacher("actual").values(view, np.array(w)) for w in worlds])
    got = teachers.teacher_for("pimc:worlds=5", seed=7).values(view, np.array(g.hands))
    assert np.allclose(got[view.legal_actions], each[:, view.legal_actions].mean(0))
    assert np.isnan(np.delete(got, view.legal_actions)).all()


def test_level_masters_labels_are_its_searchs_values():
    """Teacher ``bot:level=master``: a first-trick card's label is the value the search of level
    master gives it (the same seed, the same draws)."""
    g = Game("online", seed=3)
    for _ in range(4):
        g.step(20)
    view = g.seat_view()
    got = teachers.teacher_for("bot:level=master,worlds=4,candidates=8", seed=5).values(view, np.array(g.hands))
    player = PolicyPlayer(seed=5, level="master", worlds=4, candidates=8)
    want = player.search(policy.policy_for(player.policies, view.rules)).solved_values(view, view.legal_actions)
    assert np.allclose(got[view.legal_actions], want)


def _search_of(spec: str, seed: int, rules):
    agent = teachers.teacher_for(spec, seed=seed).agent
    return agent.search(policy.policy_for(agent.policies, rules)) if isinstance(agent, PolicyPlayer) else agent


@pytest.mark.parametrize(("spec", "bids"), [("bot:level=master,worlds=4,candidates=8", "rollout"),
                                           ("search:bid=solver,worlds=4,candidates=8", "solver")])
def test_a_searchs_bid_labels_are_its_own_valuation_of_the_bids(spec, bids):
    """A search teacher labels a bid as the search itself values bids: level master (``bid=rollout``)
    by the network playing each contract out over its drawn deals, ``bid=solver`` as PIMC does. The
    deals are drawn until one where the two valuations differ, so that the test tells them apart."""
    other = "solver" if bids == "rollout" else "rollout"
    for deal in range(40):
        view, hands = (g := Game("online", seed=deal)).seat_view(), np.array(g.hands)
        want = _search_of(spec, 5, view.rules).solved_values(view, view.legal_actions, bids=bids)
        if not np.allclose(_search_of(spec, 5, view.rules).solved_values(view, view.legal_actions, bids=other), want):
            break
    else:
        pytest.fail("no deal of 40 where the two bid valuations differ")
    got = teachers.teacher_for(spec, seed=5).values(view, hands)
    assert view.phase == 0 and np.allclose(got[view.legal_actions], want)


@pytest.mark.parametrize("preset", ["online", "traditional"])
def test_from_a_trick_on_exactly_the_card_plays_of_that_trick_and_later_are_labelled(preset):
    """With ``from_trick`` 2, no bid and no card play of the first two tricks carries a label, and
    every later decision with a choice does; the labels are exactly on the legal actions."""
    torch.manual_seed(0)
    weights = {k: v.numpy() for k, v in distill.student(distill.DistillConfig(hidden=16)).state_dict().items()}
    labels = {"teacher": "pimc:worlds=3", "bids": "none", "from_trick": 2, "to_trick": 5, "margin": 0.0}
    data = distill.play_and_label(weights, None, SPEC16, preset, PLAY, labels, seed=4, hands=8)
    r = replay_decisions(data, get_rules(preset))  # raises if a label is off the legal actions
    assert len(r.obs) and (trick_number(r.obs) >= 2).all()
    rules, expected = get_rules(preset), []
    for hand in range(8):  # every decision of the hands played, replayed through the engine
        g = hand_game(data, hand, 0, rules)
        for step, a in enumerate(data["actions"][hand, : data["length"][hand]]):
            v = g.seat_view()
            if v.phase == 1 and v.trick_num >= 2 and len(v.legal_actions) > 1:
                expected.append((hand, step))
            g.step(int(a))
    assert np.array_equal(np.array(expected), np.c_[data["hand"], data["step"]])


def test_renaming_the_suits_renames_per_card_rows_as_the_cards_of_per_action_rows():
    obs, mask = decisions("online", n=16)
    per_card = mask[:, :20].to(torch.int64) * 2 - 1  # -1 / 1, as the card-location targets
    o1, (m1, c1) = renamed_suits(obs, (mask, per_card), np.random.default_rng(3))
    assert torch.equal(c1, m1[:, :20].to(torch.int64) * 2 - 1)
    assert not torch.equal(m1, mask)


def test_a_late_run_moves_only_the_late_head_and_its_export_plays_with_the_gate(tmp_path, monkeypatch):
    pytest.importorskip("onnxruntime")
    from agents.export import export
    from cuatrola_serve.bot import Bot

    base = tiny_distill_checkpoint(train.main, tmp_path / "base", "--iterations", "1")
    run = tiny_distill_checkpoint(train.main, tmp_path / "late", "--init", str(base), "--late-from-trick", "1",
                                 "--from-trick", "1", "--teacher", "pimc:worlds=2", "--bids", "none", "--policy-target",
                                 "labels", "--fit-suits", "true", "--iterations", "2", "--final-epochs", "1")
    before, after = read_checkpoint(str(base))["model"], read_checkpoint(str(run))["model"]
    heads = [k for k in before if k.startswith("policy_net.")]
    assert all(torch.equal(before[k], after[k]) for k in heads)
    assert not all(torch.equal(before[k], after[k.replace("policy_net", "late_net")]) for k in heads)
    assert int(after["late_from_trick"]) == 1 and load_network(str(run)).late_trick == 1
    card = export(str(run), str(tmp_path / "m.onnx"), check=2000)  # parity with PyTorch, the gate included
    assert card["training"]["network"]["late_from_trick"] == 1 and card["parity"]["same_actions"]
    bot = Bot.load(tmp_path / "m.onnx", level="expert")
    assert bot.act({"seat": 1, "dealer": 0, "muestra": 13, "hand": [0, 4, 9, 17, 19]}) in range(20, 24)
    # level expert plays a preset's expert model where one is shipped, every other level the preset's model
    monkeypatch.setitem(policy.EXPERT_MODELS, "online", tmp_path / "m.onnx")
    monkeypatch.setitem(policy.EXPERT_MODELS, "traditional", tmp_path / "absent.onnx")
    expert = PolicyPlayer(seed=0, level="expert")
    assert expert.policy.card["sha256"] == card["sha256"]
    assert expert.expert_policies[1].card["sha256"] == expert.policies[1].card["sha256"]  # none shipped: the preset's
    for level in ("master", "strong"):
        assert expert.with_level(level).policy.card["sha256"] == expert.policies[0].card["sha256"] != card["sha256"]
    assert Bot.load(level="expert").card["sha256"] == card["sha256"]


LATE = ["--late-from-trick", "1", "--from-trick", "1", "--teacher", "pimc:worlds=2", "--bids", "none",
        "--policy-target", "labels", "--iterations", "1"]  #: a tiny late stage's options


def test_a_refit_stage_joins_an_earlier_stages_window_and_refits_the_late_head_alone_from_fresh_weights(
        tmp_path, monkeypatch, capsys):
    """``join``: a new run's window starts with the labels of the run of the stage it names (same seed,
    same runs folder) or of a window file; ``fresh_final``: before the final passes the late head is
    drawn afresh from the seed and only it moves in them; stopped at that boundary and resumed, the run
    ends on the uninterrupted run's weights. A stage with no such run is refused before anything runs."""
    runs = tmp_path / "runs"
    base = tiny_distill_checkpoint(train.main, tmp_path / "base", "--iterations", "1")
    assert train.main([*TINY_DISTILL, *LATE, "--init", str(base), "--exp-name", "late", "--run-dir", str(runs)]) == 0
    (late,) = list(runs.iterdir())
    refit = [*TINY_DISTILL, *LATE, "--init", str(late / "checkpoint.pt"), "--exp-name", "refit", "--fresh-final", "true"]
    assert train.main([*refit, "--join", "late", "--final-epochs", "0", "--run-dir", str(runs)]) == 0
    (parts,) = [d for d in runs.iterdir() if d.name.startswith("refit_1_")]
    boundary = read_checkpoint(str(parts / "checkpoint.pt"))
    late_labels = len(load_data(late / "data/window.npz")["hand"])
    assert len(load_data(parts / "data/window.npz")["hand"]) == late_labels + boundary["labels"] > late_labels
    starts = []
    real_fit = distill.fit
    def fit(net, *args, final=False, **kw):
        if final:
            starts.append({k: v.clone() for k, v in net.late_net.state_dict().items()})
        return real_fit(net, *args, final=final, **kw)
    monkeypatch.setattr(distill, "fit", fit)
    assert train.main(["--resume", str(parts / "checkpoint.pt"), "--final-epochs", "1"]) == 0
    assert train.main([*refit, "--join", str(late / "data/window.npz"), "--final-epochs", "1",
                       "--run-dir", str(tmp_path / "whole")]) == 0
    fresh = build(network_spec(boundary, "boundary"))
    fresh.redraw_late_head(1)
    assert len(starts) == 2 and all(torch.equal(s[k], v) for s in starts for k, v in fresh.late_net.state_dict().items())
    end, whole = (read_checkpoint(str(next(d.glob("refit_*")) / "checkpoint.pt")) for d in (runs, tmp_path / "whole"))
    for k, v in boundary["model"].items():
        assert torch.equal(end["model"][k], v) != k.startswith("late_net."), k
        assert torch.equal(end["model"][k], whole["model"][k]), k
    capsys.readouterr()
    assert train.main([*refit, "--join", "early", "--run-dir", str(runs)]) == 2
    assert "join 'early': no run of that stage with seed 1 in" in capsys.readouterr().err


@pytest.mark.parametrize(("flag", "value", "message"), [
    ("--late-from-trick", "5", "late_from_trick must be 0 or a trick from 1 to 4, got 5"),
    ("--from-trick", "-1", "from_trick must be 0 or a trick from 1 to 4, got -1"),
    ("--teacher", "pimc:worlds=-2", "worlds must be at least 1, got -2"),
    ("--late-layers", "-1", "late_layers (--late-layers) must be at least 0, got -1"),
    ("--policy-target", "votes", "policy_target (--policy-target) must be one of q, labels, got 'votes'"),
])
def test_the_late_options_refuse_what_no_run_can_start_with(flag, value, message, capsys):
    assert train.main(["--algorithm", "distill", flag, value]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("preset", ["online", "traditional"])
def test_each_row_runs_through_the_one_head_that_plays_it_and_no_other(preset):
    net = PolicyValueNet(16, 2, late_from_trick=2, early_head=True)
    seen = {name: [] for name in ("policy_net", "early_net", "late_net")}
    for name in seen:
        getattr(net, name).register_forward_hook(lambda _m, args, _out, name=name: seen[name].append(len(args[0])))
    obs, mask = decisions(preset)
    trick = torch.from_numpy(trick_number(obs.numpy()))
    want = {"policy_net": trick < 0, "early_net": (trick >= 0) & (trick < 2), "late_net": trick >= 2}
    with torch.no_grad():
        net.policy(obs, mask)
        assert {k: sum(v) for k, v in seen.items()} == {k: int(rows.sum()) for k, rows in want.items()}
        for name, rows in want.items():  # a batch of one head's rows (as a search steps them) runs that head alone
            for v in seen.values():
                v.clear()
            net.policy(obs[rows], mask[rows])
            assert {k: sum(v) for k, v in seen.items() if sum(v)} == {name: int(rows.sum())}
