"""The late card-play head (``PolicyValueNet(late_from_trick=k)``) and the oracle run's options that
teach it PIMC's values (``late_from_trick``, ``oracle_from_trick``, ``oracle_search_worlds``,
``oracle_policy_target``, ``fit_suits``): the late head plays exactly the tricks from k on, starts as
the policy head plays, is the only policy head such labels move, and exports to ONNX with its gate."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import random_decisions, tiny_oracle_checkpoint

torch = pytest.importorskip("torch")
pytest.importorskip("numba")
pytest.importorskip("tensorboard")

from agents import policy  # noqa: E402
from agents import training as train  # noqa: E402
from agents.belief import sample_worlds  # noqa: E402
from agents.checkpoint import read_checkpoint  # noqa: E402
from agents.network import NetworkSpec, PolicyValueNet  # noqa: E402
from agents.player import PolicyPlayer  # noqa: E402
from agents.torch_agent import load_network  # noqa: E402
from agents.training import oracle  # noqa: E402
from agents.training.fitting import renamed_suits  # noqa: E402
from agents.training.labels import hand_game, replay_decisions  # noqa: E402
from cuatrola_env.game import Game  # noqa: E402
from cuatrola_env.observation import trick_number  # noqa: E402
from cuatrola_env.rules import get_rules  # noqa: E402

#: the spec of the small networks these tests play (a plain oracle network of 16 x 2)
SPEC16 = NetworkSpec(16, 2, dueling=True, q_head=True, owners=True).to_dict()

OPTIONS = {"temperature": 1.0, "heuristic_frac": 0.0, "pimc_frac": 0.0, "pimc_worlds": 4, "past_frac": 0.0, "margin": 0.0,
           "bids": "solver"}


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
    torch.manual_seed(0)
    plain = oracle.network(16, 2)
    with_late = oracle.network(16, 2, {"model": plain.state_dict(), "network": plain.spec}, late_from_trick=2)
    obs, mask = decisions("online", seed=1)
    with torch.no_grad():
        assert torch.equal(plain.policy(obs, mask), with_late.policy(obs, mask))
    again = oracle.network(16, 2, {"model": with_late.state_dict(), "network": with_late.spec})  # its spec holds the head
    assert again.late_trick == 2
    with pytest.raises(train.CheckpointError, match="plays from trick 2, not late_from_trick 3"):
        oracle.network(16, 2, {"model": with_late.state_dict(), "network": with_late.spec}, late_from_trick=3)
    with pytest.raises(ValueError, match="late_from_trick must be a trick from 1 to 4, got 0"):
        PolicyValueNet(16, 2, late_from_trick=0)


def test_searched_values_are_the_mean_of_each_deals_values():
    """Over several deals a label is the average of the one-deal labels (PIMC's own valuation)."""
    g = Game("online", seed=2)
    for _ in range(4):
        g.step(20)  # every seat passes: card play
    g.step(g.legal_actions()[0])
    view = g.seat_view()
    worlds = sample_worlds(view, 5, np.random.default_rng(0))
    each = np.stack([oracle.oracle_values(view, w) for w in worlds])
    got = oracle.searched_values(view, worlds)
    assert np.allclose(got[view.legal_actions], each[:, view.legal_actions].mean(0))
    assert np.isnan(np.delete(got, view.legal_actions)).all()


def test_a_blended_label_is_the_actual_deals_values_at_their_weight_and_the_drawn_deals_mean_for_the_rest():
    """``oracle_actual_weight``: each label mixes the actual deal's solved values into PIMC's mean."""
    g = Game("traditional", seed=5)
    for _ in range(4):
        g.step(20)  # every seat passes: card play
    g.step(g.legal_actions()[0])
    view, actual = g.seat_view(), list(g.hands)
    drawn = sample_worlds(view, 4, np.random.default_rng(1))
    mean, truth = oracle.searched_values(view, drawn), oracle.oracle_values(view, actual)
    got = oracle.blended_values(view, drawn, np.array(actual), 0.25)
    assert np.allclose(got[view.legal_actions], 0.25 * truth[view.legal_actions] + 0.75 * mean[view.legal_actions])
    assert np.isnan(np.delete(got, view.legal_actions)).all()
    assert np.array_equal(oracle.blended_values(view, drawn, np.array(actual), 0.0), mean, equal_nan=True)


@pytest.mark.parametrize("preset", ["online", "traditional"])
def test_from_a_trick_on_exactly_the_card_plays_of_that_trick_and_later_are_labelled(preset):
    """With ``from_trick`` 2, no bid and no card play of the first two tricks carries a label, and
    every later decision with a choice does; the labels are exactly on the legal actions."""
    torch.manual_seed(0)
    weights = {k: v.numpy() for k, v in oracle.network(16, 2).state_dict().items()}
    data = oracle.play_and_label(weights, None, SPEC16, preset, {**OPTIONS, "search_worlds": 3, "from_trick": 2},
                                 seed=4, hands=8)
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

    base = tiny_oracle_checkpoint(train.main, tmp_path / "base", "--oracle-iterations", "1")
    run = tiny_oracle_checkpoint(train.main, tmp_path / "late", "--init", str(base), "--late-from-trick", "1",
                                 "--oracle-from-trick", "1", "--oracle-search-worlds", "2", "--oracle-policy-target",
                                 "labels", "--fit-suits", "true", "--oracle-iterations", "2")
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


@pytest.mark.parametrize(("flag", "value", "message"), [
    ("--late-from-trick", "5", "late_from_trick must be 0 (off) or a trick from 1 to 4, got 5"),
    ("--oracle-from-trick", "-1", "oracle_from_trick must be 0 (off) or a trick from 1 to 4, got -1"),
    ("--oracle-search-worlds", "-2", "oracle_search_worlds must be 0 (one deal) or a number of deals, got -2"),
    ("--oracle-actual-weight", "0.5", "oracle_actual_weight blends the actual deal into labels over drawn deals"),
    ("--oracle-policy-target", "votes", "oracle_policy_target must be one of q, labels, got 'votes'"),
])
def test_the_late_options_refuse_what_no_run_can_start_with(flag, value, message, capsys):
    assert train.main(["--algorithm", "oracle", flag, value]) == 2
    assert message in capsys.readouterr().err
