"""Teacher–student self-play (train.py --algorithm distill) with the actual deal as the teacher: the labels are the legal actions'
double-dummy values on the actual deal, the card-location targets are the actual owners of exactly
the cards the seat cannot place, the policy's inputs reveal nothing hidden, the replay window keeps
the latest hands, and a tiny run goes end to end and resumes exactly."""

from __future__ import annotations

import dataclasses
import os
import signal

import numpy as np
import pytest
from helpers import double_dummy_points, scramble_hidden, sigterm_on_call

torch = pytest.importorskip("torch")
pytest.importorskip("numba")
pytest.importorskip("tensorboard")

from agents import training as train  # noqa: E402
from agents.base import seat_view  # noqa: E402
from agents.checkpoint import read_checkpoint  # noqa: E402
from agents.network import NetworkSpec  # noqa: E402
from agents.parallel import Runner  # noqa: E402
from agents.pimc import PIMCAgent  # noqa: E402
from agents.registry import make_agent  # noqa: E402
from agents.training import distill  # noqa: E402
from agents.training.config import preset  # noqa: E402
from agents.training.labels import card_owners, hand_game, hand_tasks, replay_decisions  # noqa: E402
from agents.training.report import duration  # noqa: E402
from agents.training.stopping import stop_signals  # noqa: E402
from cuatrola_env.game import Game  # noqa: E402
from cuatrola_env.observation import OBS_DIM  # noqa: E402
from cuatrola_env.positions import Positions  # noqa: E402
from cuatrola_env.rules import NUM_CARDS, get_rules  # noqa: E402
from experiments import label_regret  # noqa: E402

#: the spec of the small networks these tests play (a plain oracle network of 16 x 2)
SPEC16 = NetworkSpec(16, 2, dueling=True, q_head=True, owners=True).to_dict()

PLAY = dataclasses.asdict(distill.PlaySpec())  #: the network in every seat, sampled at temperature 1
LABELS = dataclasses.asdict(distill.LabelSpec(bids="teacher"))  #: the actual deal labels bids and cards
TINY = ["--algorithm", "distill", "--hands", "40", "--per-task", "20", "--hidden", "16",
        "--eval-every", "0", "--fit-batch", "64", "--past-frac", "0.5", "--window", "300", "--lr-final", "0.0001",
        "--workers", "1", "--then", ""]


def fresh_weights(seed: int = 0) -> dict:
    torch.manual_seed(seed)
    return {k: v.numpy() for k, v in distill.student(CFG16).state_dict().items()}


#: a run's config with the network of SPEC16
CFG16 = distill.DistillConfig(hidden=16)


def label_hands(weights: dict, preset: str, seed: int, hands: int, play: dict | None = None,
                labels: dict | None = None) -> dict:
    """:func:`distill.play_and_label` of ``hands`` hands, as PLAY and LABELS with the fields given changed."""
    return distill.play_and_label(weights, None, SPEC16, preset, {**PLAY, **(play or {})}, {**LABELS, **(labels or {})},
                                  seed=seed, hands=hands)


@pytest.mark.parametrize(("preset", "rivals"), [("online", {}), ("traditional", {}),
                                                ("online", {"rival_frac": 1.0, "rival": "pimc:worlds=2"})])
def test_labels_are_each_legal_actions_double_dummy_result_on_the_actual_deal(preset, rivals):
    """Rule (hand result, bidding): a label is the game points, for the acting seat's team, of the
    hand played out double-dummy on the actual deal after that action (a bid: the later seats
    passing), through the engine; NaN exactly off the legal actions. A points tie under the
    last-trick rule, whose winner the solver does not report, is valued 0. The same when one team
    of every game is PIMC (its decisions are labelled too)."""
    rules = get_rules(preset)
    data = label_hands(fresh_weights(), preset, 5, 10, play=rivals)
    values = data["values"].astype(np.float32)
    checked = {"bid": 0, "card": 0}
    for k in range(len(data["hand"])):
        hand, step = int(data["hand"][k]), int(data["step"][k])
        g = hand_game(data, hand, step, rules)
        legal = g.legal_actions()
        assert sorted(np.flatnonzero(~np.isnan(values[k]))) == legal and len(legal) > 1
        team = g.current_player & 1
        for a in legal:
            h = hand_game(data, hand, step, rules)
            h.step(a)
            points, tied = double_dummy_points(h, team)
            label = values[k, a]
            assert label == points or (label == 0 and tied and rules.tie_rule == "last_trick"), \
                f"hand {hand} step {step} action {a}: label {label}, double-dummy {points}"
        checked["bid" if g.seat_view().phase == 0 else "card"] += 1
    assert checked["bid"] >= 3 and checked["card"] >= 10, checked


def test_each_kind_of_opposing_team_plays_its_share_of_the_games():
    """``heuristic_frac``, ``rival_frac`` and ``past_frac`` of the games give one team to that kind of
    player; the rest are the network against itself; a past network only where the task has one."""
    shares = distill.PlaySpec(**{**PLAY, "heuristic_frac": 0.1, "rival_frac": 0.3, "past_frac": 0.2})
    kinds = distill._opponents(100_000, shares, True, np.random.default_rng(0))
    got = {k: float(np.mean(kinds == k)) for k in (distill.HEURISTIC, distill.RIVAL, distill.PAST, distill.SELF)}
    assert got == pytest.approx({distill.HEURISTIC: 0.1, distill.RIVAL: 0.3, distill.PAST: 0.2, distill.SELF: 0.4}, abs=0.01)
    alone = distill._opponents(100_000, shares, False, np.random.default_rng(0))
    assert not np.any(alone == distill.PAST) and np.mean(alone == distill.SELF) == pytest.approx(0.6, abs=0.01)


def test_a_rival_team_plays_as_the_agent_its_spec_names():
    """With ``rival_frac`` 1 one team of every game is the rival (``pimc:worlds=2``): each of its
    decisions is the one a PIMC agent of the same size and seed makes in that position, the games'
    decisions taken in turn."""
    rules, opts = get_rules("online"), {**PLAY, "rival_frac": 1.0, "rival": "pimc:worlds=2"}
    data = label_hands(fresh_weights(4), "online", 3, 4, play=opts)
    rng = np.random.default_rng(3)  # the task's draws: each game's opposing kind, then its team
    assert np.all(distill._opponents(4, distill.PlaySpec(**opts), False, rng) == distill.RIVAL)
    pimc_team, pimc, checked = rng.integers(0, 2, 4), PIMCAgent(3, 2), 0
    for step in range(int(data["length"].max())):
        for hand in np.flatnonzero(data["length"] > step):
            g = hand_game(data, int(hand), step, rules)
            if (g.current_player & 1) == pimc_team[hand]:
                assert pimc.act(seat_view(g)) == data["actions"][hand, step], (hand, step)
                checked += 1
    assert checked >= 30


def _greedy_play_out(net, g: Game) -> None:
    """Finish ``g`` with the network's most likely action in every seat, each from its own seat view."""
    while not g.over:
        v = seat_view(g)
        with torch.no_grad():
            g.step(int(net.policy(torch.from_numpy(v.observation[None]), torch.from_numpy(v.legal_mask[None])).argmax()))


@pytest.mark.parametrize(("labels", "phases"), [({"bids": "rollout"}, {0}),
                                                ({"teacher": "rollout", "margin": 0.0}, {0, 1})])
def test_rollout_labels_are_the_networks_own_play_of_the_actual_deal(labels, phases):
    """Bidding and card play, hand result: a decision valued by rollouts (bids with ``bids=rollout``;
    every decision with the ``rollout`` teacher) is labelled, for each legal action, with the game
    points for the acting seat's team of the actual deal played out through the engine by the
    network's most likely action in every seat, each from its own seat view, after that action."""
    rules = get_rules("online")
    weights = fresh_weights(3)
    net = distill.student(CFG16, {"model": weights, "network": NetworkSpec.from_dict(SPEC16)})
    data = label_hands(weights, "online", 2, 6, labels=labels)
    values, checked = data["values"].astype(np.float32), {0: 0, 1: 0}
    for k in range(len(data["hand"])):
        g = hand_game(data, int(data["hand"][k]), int(data["step"][k]), rules)
        phase = g.seat_view().phase
        if phase not in phases:
            continue
        team = g.current_player & 1
        for a in g.legal_actions():
            h = hand_game(data, int(data["hand"][k]), int(data["step"][k]), rules)
            h.step(a)
            _greedy_play_out(net, h)
            r = h.last_result
            assert values[k, a] == (r["game_points"] if r["winner_team"] == team else -r["game_points"])
        checked[phase] += 1
    assert all(checked[p] >= 5 for p in phases)


def test_the_rollout_teacher_refuses_a_card_point_margin():
    """The rollout teacher values game points only: a share of the solver's card-point margin is refused."""
    with pytest.raises(ValueError, match="margin_coef"):
        distill.check(dataclasses.replace(CFG16, teacher="rollout", margin_coef=0.5))
    distill.check(dataclasses.replace(CFG16, teacher="rollout", margin_coef=0.0))


def test_card_location_targets_are_the_owners_of_exactly_the_unseen_cards():
    """Dealing and play: for each decision, a card has an owner target exactly when the seat cannot
    place it (not its own, not played, not the muestra still in the dealer's hand), and the target
    names the seat that holds it, counted from the seat (0 next, 1 partner, 2 before)."""
    rules = get_rules("online")
    data = label_hands(fresh_weights(1), "online", 9, 6)
    owners = card_owners(replay_decisions(data, rules))
    for k in range(len(data["hand"])):
        g = hand_game(data, int(data["hand"][k]), int(data["step"][k]), rules)
        seat, hands, view = g.current_player, g.hands, g.seat_view()
        for c in range(NUM_CARDS):
            holder = next((q for q in range(4) if hands[q] >> c & 1), None)
            unseen = holder is not None and holder != seat and not (c == view.muestra and view.muestra_held)
            assert owners[k, c] == ((holder - seat) % 4 - 1 if unseen else -1), (k, c)


def test_the_policys_inputs_do_not_change_when_the_hidden_cards_move():
    """Observation (no leak): at every labelled decision the network's inputs (observation and legal
    mask, as the fit rebuilds them) are the same whatever the cards the seat cannot see are."""
    rules = get_rules("traditional")
    data = label_hands(fresh_weights(2), "traditional", 4, 6)
    replayed = replay_decisions(data, rules)
    rng = np.random.default_rng(0)
    for k in range(len(data["hand"])):
        g = hand_game(data, int(data["hand"][k]), int(data["step"][k]), rules)
        v = g.seat_view()
        pos = Positions.replay([[int(m) for m in data["deal"][data["hand"][k]]]], v.dealer, v.muestra, rules,
                               data["actions"][data["hand"][k] : data["hand"][k] + 1, : data["step"][k]], [v.score])
        pos.state.hands[0] = scramble_hidden(pos.hands[0], v.dealer, v.muestra, v.played, v.seat, rng)
        assert np.array_equal(pos.observe()[0], replayed.obs[k]) and np.array_equal(pos.legal_mask()[0], replayed.mask[k])
        assert np.array_equal(replayed.obs[k], g.observe())


def test_a_stage_on_another_stream_of_its_seed_plays_other_deals_than_the_stage_before_it():
    """The refit stage labels after the late stage with the same seed: its tasks (so its deals and the
    teacher's draws) are none of late's, iteration for iteration; stream 0 keeps the seed's own tasks."""
    late, refit = (distill.DistillConfig(**{k: v for k, v in preset(name).items() if k != "join"})
                   for name in ("late", "refit"))
    assert late.seed == refit.seed and refit.stream != late.stream == 0
    late_seeds = {s for i in range(late.iterations) for s, _ in hand_tasks(late.hands, late.per_task, late.seed, i)}
    for iteration in range(refit.iterations):
        tasks = hand_tasks(refit.hands, refit.per_task, refit.seed, iteration, refit.stream)
        assert len(tasks) == refit.hands // refit.per_task and not late_seeds & {s for s, _ in tasks}
    assert hand_tasks(40, 20, 1, 0) == hand_tasks(40, 20, 1, 0, 0) == [(100_003_000, 20), (100_003_001, 20)]


def test_the_window_keeps_the_latest_whole_hands():
    rules = get_rules("online")
    a = distill.Window.of(label_hands(fresh_weights(), "online", 1, 10), rules)
    b = distill.Window.of(label_hands(fresh_weights(), "online", 2, 10), rules)
    both = a.add(b, len(a) + len(b))
    assert len(both) == len(a) + len(b)
    cut = a.add(b, len(b) + 1)
    assert len(b) < len(cut) <= len(b) + 1 + 23  # whole hands: the oldest hand kept brings its other labels
    assert np.array_equal(cut.obs[-len(b):], b.obs) and np.array_equal(cut.values[-len(b):], b.values)
    again = distill.Window.of(cut.data, rules)  # the compact data alone rebuilds the same arrays
    assert all(np.array_equal(getattr(again, f), getattr(cut, f)) for f in ("obs", "mask", "values", "owners", "held"))


def test_the_dueling_head_centres_the_advantage_over_the_legal_actions():
    net = distill.student(CFG16)
    obs, mask = torch.randn(5, OBS_DIM), torch.zeros(5, 24, dtype=torch.bool)
    mask[:, [0, 3, 7]] = True
    q = net.q(obs, mask)
    value = net.q_net(torch.cat([obs, mask.float()], -1))[:, 24]
    assert torch.allclose(q[:, [0, 3, 7]].mean(-1), value, atol=1e-5)


def test_tiny_distill_run_end_to_end_and_exact_resume(tmp_path, monkeypatch):
    """No heuristic anywhere by default; the checkpoint plays as ``model:PATH``; a run stopped after
    one iteration and resumed ends on the uninterrupted run's weights."""
    import agents.heuristic

    def no_heuristic(*a, **k):
        raise AssertionError("a run that asks for no heuristic must not use it")

    monkeypatch.setattr(agents.heuristic.HeuristicAgent, "act", no_heuristic)
    whole, parts = tmp_path / "whole", tmp_path / "parts"
    assert train.main([*TINY, "--iterations", "2", "--run-dir", str(whole)]) == 0
    assert train.main([*TINY, "--iterations", "1", "--run-dir", str(parts)]) == 0
    (run,) = list(parts.iterdir())
    assert train.main(["--resume", str(run / "checkpoint.pt"), "--iterations", "2"]) == 0
    a, b = (read_checkpoint(str(next(d.iterdir()) / "checkpoint.pt")) for d in (whole, parts))
    assert a["iteration"] == b["iteration"] == 2 and a["labels"] == b["labels"] > 0
    assert all(torch.equal(a["model"][k], b["model"][k]) for k in a["model"])
    assert len(a["pool"]) == 2
    agent = make_agent(f"model:{run / 'checkpoint.pt'}")
    g = Game("online", seed=0)
    while not g.over:
        g.step(agent.act(seat_view(g)))


def test_the_learning_rate_decays_linearly_to_its_final_value_at_the_last_iteration():
    cfg = distill.DistillConfig(learning_rate=1e-3, lr_final=1e-4, iterations=10, final_epochs=4)
    rates = [distill.learning_rate(cfg, i) for i in range(14)]
    assert rates[0] == pytest.approx(1e-3) and rates[9] == pytest.approx(1e-4)
    assert np.allclose(np.diff(rates[:10]), -1e-4)
    assert rates[10:] == pytest.approx([1e-3, 1e-3 * (1 + 0.5**0.5) / 2, 5e-4, 1e-3 * (1 - 0.5**0.5) / 2])  # final: a cosine
    assert distill.learning_rate(distill.DistillConfig(learning_rate=1e-3, lr_final=-1.0), 7) == 1e-3  # below 0: constant


def test_the_config_refuses_impossible_shares_and_teachers_that_value_nothing(capsys):
    assert train.main(["--algorithm", "distill", "--heuristic-frac", "0.7", "--past-frac", "0.5"]) == 2
    assert "heuristic_frac, rival_frac and past_frac must be shares" in capsys.readouterr().err
    assert train.main(["--algorithm", "distill", "--teacher", "heuristic"]) == 2
    assert "teacher 'heuristic' gives no values of the legal actions" in capsys.readouterr().err
    assert train.main(["--algorithm", "distill", "--teacher", "bot:level=strong"]) == 2
    assert "teacher 'bot:level=strong' gives no values" in capsys.readouterr().err
    assert train.main(["--algorithm", "distill", "--teacher", "pimc:worlds=0"]) == 2
    assert "worlds must be at least 1" in capsys.readouterr().err


def test_a_distilled_network_exports_its_policy_and_the_bot_plays_it(tmp_path):
    """The exported ONNX policy is the policy head alone (the card's layout unchanged), checked
    against PyTorch relative to the size of the logits; a policy of other weights fails the check."""
    pytest.importorskip("onnxruntime")
    from agents.export import check_parity, export
    from agents.torch_agent import load_network
    from cuatrola_serve.bot import Bot

    assert train.main([*TINY, "--iterations", "1", "--run-dir", str(tmp_path / "r")]) == 0
    (run,) = list((tmp_path / "r").iterdir())
    card = export(str(run / "checkpoint.pt"), str(tmp_path / "m.onnx"), check=2000)
    assert card["outputs"] == {"logits": ["N", 24, "float32"]} and card["parity"]["same_actions"]
    bot = Bot.load(tmp_path / "m.onnx", level="expert")
    assert bot.act({"seat": 1, "dealer": 0, "muestra": 13, "hand": [0, 4, 9, 17, 19]}) in range(20, 24)
    other = load_network(str(run / "checkpoint.pt"))
    with torch.no_grad():
        other.policy_net[-1].bias.add_(1.0)
        other.policy_net[-1].weight.mul_(3.0)
    with pytest.raises(RuntimeError, match="disagree"):
        check_parity(other, tmp_path / "m.onnx", 500)


def test_a_run_shows_each_phase_as_it_goes(tmp_path, capsys):
    """A bar per phase (labelling, fitting); once evaluated, the labelling bar shows the latest result."""
    assert train.main([*TINY, "--iterations", "2", "--eval-every", "1", "--eval-deals", "4",
                       "--run-dir", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert "iteration 1 of 2: playing and labelling" in err and "fitting" in err and "iteration 1:" in err
    (shown,) = [line for line in err.splitlines() if line.startswith("iteration 1: against the heuristic")]
    latest = shown.split("against the heuristic ")[1].split(" game points")[0]
    assert f"vs_heuristic={latest}" in err.split("iteration 2 of 2: playing and labelling")[1]


def test_a_recipe_in_stages_goes_on_from_the_first_stages_final_network(tmp_path):
    """``then``: once the run finishes, the preset named goes on from its checkpoint (as
    --init), with its rules, seed and network size; a next stage that names no preset is refused
    before anything runs."""
    stage = tmp_path / "finetune.yaml"
    stage.write_text("algorithm: ppo\nexp_name: stage2\nnum_envs: 32\nnum_steps: 8\ntotal_decisions: 512\n"
                     "imitation_decisions: 0\nheuristic_frac: 0.0\neval_every: 0\n")
    runs = tmp_path / "runs"
    assert train.main([*TINY, "--iterations", "1", "--then", str(stage), "--run-dir", str(runs)]) == 0
    first, second = sorted(runs.iterdir(), key=lambda d: d.name.startswith("stage2"))
    assert second.name.startswith("stage2_1_")
    ck = read_checkpoint(str(second / "checkpoint.pt"))
    assert ck["config"]["init"] == str(first / "checkpoint.pt") and ck["config"]["algorithm"] == "ppo"
    assert ck["config"]["hidden"] == 16 and ck["step"] >= 512
    assert train.main([*TINY, "--then", "no_such_preset", "--run-dir", str(tmp_path / "refused")]) == 2
    assert not (tmp_path / "refused").exists()


def test_label_regret_replays_each_held_out_decision_and_scores_a_players_choice(tmp_path):
    """experiments/label_regret.py: each drawn decision is replayed to the position that was labelled
    (its legal actions are exactly the labelled ones), and a player's regret there is the best label
    minus the label of the action it chooses (replayed here with the same seed)."""
    rules = get_rules("online")
    data = label_hands(fresh_weights(5), "online", 8, 60)
    values = data["values"].astype(np.float32)
    picks = np.arange(len(data["hand"]))
    for k in picks[:40]:
        legal = label_regret.position(data, int(k), rules).legal_actions()
        assert legal == sorted(np.flatnonzero(~np.isnan(values[k])))
    r, phase = label_regret.regrets(data, picks[:40], ["random", "heuristic"], rules, seed=1)
    assert np.all(r >= 0) and np.all(np.isfinite(r)) and r.shape == (2, 40) and set(phase) <= {0, 1}
    rnd = make_agent("random", seed=1)
    for j, k in enumerate(picks[:40]):
        view = seat_view(label_regret.position(data, int(k), rules))
        assert r[0, j] == np.nanmax(values[k]) - values[k, rnd.act(view)]


def test_a_run_stopped_while_fitting_resumes_to_the_uninterrupted_run(tmp_path, monkeypatch):
    """SIGTERM during the second iteration's fit: the run stops at the next minibatch, its checkpoint
    is the run as it was before that iteration, and resumed it ends on the uninterrupted run's weights."""
    whole, parts = tmp_path / "whole", tmp_path / "parts"
    assert train.main([*TINY, "--iterations", "2", "--run-dir", str(whole)]) == 0
    real_fit = distill.fit
    monkeypatch.setattr(distill, "fit", sigterm_on_call(real_fit))
    assert train.main([*TINY, "--iterations", "2", "--run-dir", str(parts)]) == 0
    (run,) = list(parts.iterdir())
    assert read_checkpoint(str(run / "checkpoint.pt"))["iteration"] == 1, "the half-fitted iteration is not kept"
    monkeypatch.setattr(distill, "fit", real_fit)
    assert train.main(["--resume", str(run / "checkpoint.pt")]) == 0
    a, b = (read_checkpoint(str(next(d.iterdir()) / "checkpoint.pt")) for d in (whole, parts))
    assert a["iteration"] == b["iteration"] == 2 and a["labels"] == b["labels"]
    assert all(torch.equal(a["model"][k], b["model"][k]) for k in a["model"])


def test_the_time_left_is_said_after_each_iteration(tmp_path, capsys):
    from agents.training.report import time_left

    assert train.main([*TINY, "--iterations", "2", "--run-dir", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert "iteration 1 of 2; about" in err and "left (done about" in err and "iteration 2 of 2:" in err
    assert time_left(2, 10, [60.0, 120.0, 180.0, 240.0], now=0.0).startswith("iteration 2 of 10; about 24 min left")
    assert time_left(10, 10, [5.0]) == "iteration 10 of 10"


def test_the_recipes_time_left_adds_the_later_stages_at_this_runs_pace():
    """A stage of 10 steps of a minute each, where its preset says 5 minutes on 2 cores, runs at half
    that pace: 20 minutes of later stages there are 40 here, after this stage's 8 minutes left."""
    from agents.training.report import time_left

    assert "; the recipe about 48 min left (done about " in time_left(2, 10, [60.0] * 3, now=0.0, minutes=5.0, later=20.0)
    assert "; the recipe about 28 min left" in time_left(2, 10, [60.0] * 3, now=0.0, later=20.0)  # pace unknown: as measured
    assert time_left(2, 10, [60.0] * 3, now=0.0, later=None).endswith("; the later stages' time unknown")
    assert "recipe" not in time_left(2, 10, [60.0] * 3, now=0.0, minutes=5.0, later=0.0)  # the last stage


def test_the_ppo_bar_shows_the_recipes_time_left_at_its_own_rate():
    from types import SimpleNamespace

    from agents.training.ppo import PhaseBars, PPOConfig

    bars = PhaseBars("run", PPOConfig(total_decisions=600_000, minutes=5.0, then="late"), step=0)
    bars.bar, bars.step = SimpleNamespace(format_dict={"rate": 1000.0}), 120_000  # 8 min left of a 10-min stage
    late = preset("late")["minutes"]
    assert bars.recipe_left() == {"recipe left": f"about {duration(8 * 60 + 2 * 60 * late)}"}
    assert PhaseBars("run", PPOConfig(then=""), step=0).recipe_left() == {}


def test_the_ppo_bar_says_the_recipes_time_is_unknown_when_a_later_stage_states_no_minutes(tmp_path):
    from agents.training.ppo import PhaseBars, PPOConfig

    stage = tmp_path / "mine.yaml"
    stage.write_text("algorithm: ppo\ntotal_decisions: 4096\n")
    bars = PhaseBars("run", PPOConfig(minutes=5.0, then=str(stage)), step=0)
    assert bars.recipe_left() == {"recipe left": "unknown"}


def test_a_first_strength_figure_comes_after_the_first_iteration(tmp_path, capsys):
    """With evaluations every 5 iterations, the first one still comes after iteration 1 (a newcomer
    sees a figure within minutes), then at 5, 10... and at the run's last step."""
    assert train.main([*TINY, "--iterations", "3", "--eval-every", "5", "--eval-deals", "4",
                       "--run-dir", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert "iteration 1: against the heuristic" in err and "iteration 2: against the heuristic" not in err
    assert "iteration 3: against the heuristic" in err


def test_a_recipe_stopped_in_its_first_stage_and_resumed_goes_on_into_the_next_bit_for_bit(tmp_path, monkeypatch):
    """A two-stage recipe (a tiny teacher–student stage, then the ``tiny`` PPO preset): stopped by
    SIGTERM while fitting its second iteration and resumed with one ``--resume``, it finishes the first
    stage, starts the second from its network, and ends on the uninterrupted recipe's weights; every
    stage records the recipe it belongs to."""
    recipe = [*TINY, "--iterations", "2", "--then", "tiny", "--recipe", "tiny_recipe"]
    whole, parts = tmp_path / "whole", tmp_path / "parts"
    assert train.main([*recipe, "--run-dir", str(whole)]) == 0
    real_fit = distill.fit
    monkeypatch.setattr(distill, "fit", sigterm_on_call(real_fit))
    assert train.main([*recipe, "--run-dir", str(parts)]) == 0
    (first,) = list(parts.iterdir())
    assert read_checkpoint(str(first / "checkpoint.pt"))["iteration"] == 1, "stopped in the first stage"
    monkeypatch.setattr(distill, "fit", real_fit)
    assert train.main(["--resume", str(first / "checkpoint.pt")]) == 0
    ends = []
    for runs in (whole, parts):
        stage2 = [d for d in runs.iterdir() if d.name.startswith("tiny_")]
        assert len(stage2) == 1, list(runs.iterdir())
        ends.append(read_checkpoint(str(stage2[0] / "checkpoint.pt")))
    a, b = ends
    assert a["config"]["algorithm"] == "ppo" and a["config"]["recipe"] == b["config"]["recipe"] == "tiny_recipe"
    assert a["step"] == b["step"] > 0 and all(torch.equal(a["model"][k], b["model"][k]) for k in a["model"])


def test_sigterm_stays_a_stop_request_once_ray_has_started():
    """Ray's core sets its own SIGTERM handler as it starts (it ends the process at once, without the
    checkpoint a stopped run writes): the run's handler, set before Ray starts, must still be the one."""
    ray = pytest.importorskip("ray")
    ray.shutdown()  # a fresh start, as a run's first labelling starts it
    try:
        with stop_signals() as stop, Runner(workers=2) as runner:
            runner._ray()
            assert ray.is_initialized()
            os.kill(os.getpid(), signal.SIGTERM)
            assert stop["now"]
    finally:
        ray.shutdown()
