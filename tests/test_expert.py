"""Expert iteration (train.py --algorithm expert): the search's labels, the compact data and its
replay, the soft-target fit, and a tiny loop end to end (label, fit, relabel, resume)."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest
from helpers import refused, sigterm_on_call

torch = pytest.importorskip("torch")
pytest.importorskip("numba")
pytest.importorskip("tensorboard")

from agents import training as train  # noqa: E402
from agents.base import seat_view  # noqa: E402
from agents.checkpoint import read_checkpoint  # noqa: E402
from agents.pimc import PIMCAgent  # noqa: E402
from agents.registry import make_agent  # noqa: E402
from agents.training import expert, fitting, labels  # noqa: E402
from agents.training.expert import ExpertConfig  # noqa: E402
from cuatrola_env.game import Game  # noqa: E402
from cuatrola_env.rules import NUM_ACTIONS, get_rules  # noqa: E402
from cuatrola_env.suits import RENAMINGS, action_columns, observation_columns  # noqa: E402

OPTIONS = {"worlds": 2, "bid_worlds": 2, "candidates": 4, "infer": 1.0, "temperature": 1.0}
TINY = ["--algorithm", "expert", "--expert-iterations", "2", "--expert-hands", "6", "--label-per-task", "3",
        "--label-worlds", "2", "--label-bid-worlds", "2", "--label-candidates", "4", "--hidden", "16",
        "--eval-every", "0", "--fit-epochs", "2", "--fit-batch", "16"]


def fresh_weights(seed: int = 0) -> dict:
    torch.manual_seed(seed)
    return {k: v.numpy() for k, v in expert.network(16, 2).state_dict().items()}


def labelled_position(data: dict, i: int) -> Game:
    """The game at labelled decision ``i`` of ``data``, stepped through a plain ``Game``."""
    h = data["hand"][i]
    g = Game("online")
    g.reset(hands=[[c for c in range(20) if m >> c & 1] for m in data["deal"][h]], dealer=int(data["dealer"][h]),
            muestra=int(data["muestra"][h]), score=data["score"][h].tolist())
    for a in data["actions"][h, : data["step"][i]]:
        g.step(int(a))
    return g


def game_points_minimax(g: Game, team: int) -> int:
    """Plain minimax through the engine (Game.step) of the hand's game points for ``team``."""
    values = []
    for a in g.legal_actions():
        h = copy.deepcopy(g)
        h.step(a)
        if h.over:
            r = h.last_result
            values.append(r["game_points"] if r["winner_team"] == team else -r["game_points"])
        else:
            values.append(game_points_minimax(h, team))
    return max(values) if (g.current_player & 1) == team else min(values)


@pytest.mark.parametrize("bids,margin", [("solver", 0.0), ("rollout", 0.5)])
def test_labels_are_the_legal_actions_values_only(bids, margin):
    """Every labelled decision has a value for each legal action and none for any other; the
    replayed positions are the ones the game reached (legal masks and observations)."""
    options = {**OPTIONS, "bids": bids, "margin": margin}
    data = expert.label_hands(fresh_weights(), (16, 2), "online", options, seed=3, hands=4)
    assert len(data["dealer"]) == 4 and len(data["hand"]) > 10
    obs, mask = labels.replay(data, get_rules("online"))
    values = data["values"].astype(np.float32)
    assert (np.isnan(values) == ~mask).all(), "values exactly on the legal actions"
    assert (mask.sum(1) > 1).all(), "only decisions with a choice are labelled"
    assert np.abs(values[mask]).max() <= 5 + margin * 1.3, "game points of one hand (and a share of its margin)"
    for i in range(0, len(data["hand"]), 7):  # the same position, stepped through a Game
        g = labelled_position(data, i)
        assert (g.legal_mask().astype(bool)[:NUM_ACTIONS] == mask[i]).all()
        assert np.array_equal(g.observe(), obs[i])


def test_replay_refuses_labels_off_the_legal_actions():
    data = expert.label_hands(fresh_weights(), (16, 2), "online", OPTIONS, seed=4, hands=2)
    legal = ~np.isnan(data["values"][0].astype(np.float32))
    data["values"][0, np.flatnonzero(~legal)[0]] = 0.5  # a value for an illegal action
    with pytest.raises(ValueError, match="legal actions"):
        labels.replay(data, get_rules("online"))


@pytest.mark.parametrize("preset", ["online", "traditional"])
def test_card_values_are_game_points_of_the_solved_play(preset):
    """Rule (hand result): a card's label, in the true deal, is the hand's game points for the
    acting team under best play by both teams, minimax through the engine; a points tie under the
    last-trick rule (its winner unknown to the solver) is valued 0."""
    rules = get_rules(preset)
    checked = 0
    for seed in range(120):
        rng = np.random.default_rng(seed)
        g = Game(rules, seed=seed)
        while g.single.phase == 0:  # mostly passes, some contracts
            g.step(int(rng.choice(g.legal_actions())) if seed % 3 == 0 else 20)
        while not g.over and g.single.trick_num < 3:
            g.step(int(rng.choice(g.legal_actions())))
        if g.over or g.single.phase != 1 or len(g.legal_actions()) < 2:
            continue
        view = seat_view(g)
        legal = view.legal_actions
        solved = PIMCAgent.card_points(view, legal, [list(g.single.hands)])[:, 0]
        team = view.seat & 1
        for c, v in zip(legal, solved, strict=True):
            h = copy.deepcopy(g)
            h.step(c)
            exact = (h.last_result["game_points"] if h.last_result["winner_team"] == team else -h.last_result["game_points"]) \
                if h.over else game_points_minimax(h, team)
            tie = rules.tie_rule == "last_trick" and v == 0
            assert tie or v == exact, f"seed {seed}, card {c}: label {v}, minimax {exact}"
            checked += 1
    assert checked >= 20


def test_fit_moves_the_policy_to_the_searchs_best_action():
    data = expert.label_hands(fresh_weights(), (16, 2), "online", OPTIONS, seed=5, hands=6)
    obs, mask = labels.replay(data, get_rules("online"))
    torch.manual_seed(0)
    net = expert.network(16, 2)
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    cfg = ExpertConfig(tau=0.05, fit_epochs=60, fit_batch=32)
    values = data["values"].astype(np.float32)
    best = np.where(mask, np.nan_to_num(values), -np.inf).argmax(1)
    clear = np.sort(np.where(mask, np.nan_to_num(values), -np.inf), 1)[:, -2] < values.max(1, initial=-9, where=mask) - 0.2

    def agreement():
        with torch.no_grad():
            chosen = net.policy(torch.from_numpy(obs), torch.from_numpy(mask)).argmax(-1).numpy()
        return (chosen == best)[clear].mean()

    before = agreement()
    stats = expert.fit(net, opt, cfg, obs, mask, data["values"], np.random.default_rng(0))
    assert agreement() > max(0.9, before), (before, agreement())
    assert stats["policy_ce"] >= stats["target_entropy"] - 1e-6, "cross-entropy is bounded below by the targets' entropy"


def test_fitting_with_renamed_suits_sees_each_row_under_one_renaming_of_all_its_columns():
    """``fit_suits``: every row's observation, legal mask and per-action labels are renamed by the same
    one of the 24 renamings of the suits (a position the rules make the same), drawn per row; and a
    fit on renamed rows moves the policy towards the search's best action."""
    data = expert.label_hands(fresh_weights(), (16, 2), "online", OPTIONS, seed=5, hands=6)
    obs, mask = labels.replay(data, get_rules("online"))
    values = np.nan_to_num(data["values"].astype(np.float32))
    o, (m, v) = fitting.renamed_suits(torch.from_numpy(obs), (torch.from_numpy(mask), torch.from_numpy(values)),
                                      np.random.default_rng(1))
    used = set()
    for k in range(len(obs)):
        fits = [r for r in RENAMINGS if np.array_equal(obs[k, observation_columns(r)], o[k].numpy())
                and np.array_equal(mask[k, action_columns(r)], m[k].numpy())
                and np.array_equal(values[k, action_columns(r)], v[k].numpy())]
        assert fits, f"row {k} is no renaming of its position"
        used.add(fits[0])
    assert len(used) > 8, "renamings drawn per row"
    rows = torch.from_numpy(np.arange(len(obs)) % 2 == 0)
    o, (m,) = fitting.renamed_suits(torch.from_numpy(obs), (torch.from_numpy(mask),), np.random.default_rng(1), rows)
    assert np.array_equal(o[1::2].numpy(), obs[1::2]) and np.array_equal(m[1::2].numpy(), mask[1::2]), \
        "rows not given keep their names"
    assert not np.array_equal(o[::2].numpy(), obs[::2])
    torch.manual_seed(0)
    net, cfg = expert.network(16, 2), ExpertConfig(tau=0.05, fit_epochs=60, fit_batch=32, fit_suits=True)
    best = np.where(mask, values, -np.inf).argmax(1)

    def agreement():
        with torch.no_grad():
            return np.mean(net.policy(torch.from_numpy(obs), torch.from_numpy(mask)).argmax(-1).numpy() == best)

    before = agreement()
    expert.fit(net, torch.optim.Adam(net.parameters(), lr=3e-3), cfg, obs, mask, data["values"], np.random.default_rng(0))
    assert agreement() > before + 0.15, (before, agreement())


def test_with_bids_none_only_card_plays_are_labelled():
    """``label_bids: none``: no bid is labelled (the network keeps its own bidding), every card play
    with a choice is."""
    data = expert.label_hands(fresh_weights(), (16, 2), "online", {**OPTIONS, "bids": "none"}, seed=7, hands=4)
    assert len(data["hand"]) > 10
    for i in range(len(data["hand"])):
        assert seat_view(labelled_position(data, i)).phase == 1, f"decision {i} is a bid"
    with_bids = expert.label_hands(fresh_weights(), (16, 2), "online", OPTIONS, seed=7, hands=4)
    assert len(with_bids["hand"]) > len(data["hand"]), "the same hands labelled with bids have more decisions"


def assert_targets_are_the_networks_policy(weights: dict, obs: np.ndarray, mask: np.ndarray, values: np.ndarray):
    """The fit's targets softmax(values / 0.1) on these rows are the policy of the network of ``weights``."""
    net = expert.network(16, 2, weights)
    o, m = torch.from_numpy(obs), torch.from_numpy(mask)
    target = fitting.soft_targets(torch.from_numpy(values.astype(np.float32)), m, 0.1)
    with torch.no_grad():
        own = torch.softmax(net.policy(o, m), -1)
    assert torch.allclose(target, own, atol=2e-3), (target - own).abs().max()


def test_with_bids_policy_a_bids_target_is_the_labelling_networks_own_bidding():
    """``label_bids: policy``: the fit's target softmax(values / tau) at every labelled bid is the
    labelling network's policy there (so fitting card labels leaves its bidding where it was)."""
    weights = fresh_weights(2)
    data = expert.label_hands(weights, (16, 2), "online", {**OPTIONS, "bids": "policy", "tau": 0.1}, seed=7, hands=6)
    obs, mask = labels.replay(data, get_rules("online"))
    bids = np.array([seat_view(labelled_position(data, i)).phase == 0 for i in range(len(data["hand"]))])
    assert bids.sum() >= 3 and (~bids).sum() >= 6
    assert_targets_are_the_networks_policy(weights, obs[bids], mask[bids], data["values"][bids])


def test_with_from_trick_the_earlier_tricks_targets_are_the_networks_own_play_and_the_later_the_search():
    """``from_trick: 2``: the target softmax(values / tau) of every card play of tricks 0 and 1 is
    the labelling network's policy there; a card play of a later trick keeps the search's values
    (the mean game points over the drawn deals, integers on one drawn deal apart from ties)."""
    weights = fresh_weights(3)
    opts = {**OPTIONS, "worlds": 1, "infer": 0.0, "bids": "policy", "tau": 0.1, "from_trick": 2}
    data = expert.label_hands(weights, (16, 2), "online", opts, seed=9, hands=24)
    obs, mask = labels.replay(data, get_rules("online"))
    views = [seat_view(labelled_position(data, i)) for i in range(len(data["hand"]))]
    trick = np.array([v.trick_num if v.phase else -1 for v in views])
    early, late = trick >= 0, trick >= 2
    early &= ~late
    assert early.sum() >= 6 and late.sum() >= 6, (early.sum(), late.sum())
    assert_targets_are_the_networks_policy(weights, obs[early], mask[early], data["values"][early])
    searched = expert.searched_rows(obs, ExpertConfig(label_from_trick=2, label_bids="policy"))
    assert np.array_equal(searched, late), "the rows fit_suits renames are exactly those the search labelled"
    values = data["values"][late].astype(np.float32)
    legal = values[~np.isnan(values)]
    assert np.all(np.abs(legal - np.round(legal * 2) / 2) < 1e-6), "one deal's game points (a tie: half)"
    assert np.all(np.abs(legal) <= 6)


def test_pimc_plays_one_team_of_the_labelled_matches(monkeypatch):
    """``pimc_frac: 1``: in every match PIMC plays one team (the first match's team 0), the network
    the other; with no share PIMC plays nothing."""
    seats = []
    real_act = PIMCAgent.act

    def spy(self, view):
        seats.append(view.seat)
        return real_act(self, view)

    monkeypatch.setattr(PIMCAgent, "act", spy)
    options = {**OPTIONS, "bids": "none", "pimc_frac": 1.0, "pimc_worlds": 2}
    expert.label_hands(fresh_weights(), (16, 2), "online", options, seed=8, hands=3)
    assert len(seats) > 10 and {s % 2 for s in seats} == {0}, "the first match's PIMC team is team 0, all of it"
    assert set(seats) == {0, 2}
    played = len(seats)
    expert.label_hands(fresh_weights(), (16, 2), "online", {**options, "pimc_frac": 0.0}, seed=8, hands=2)
    assert len(seats) == played, "no PIMC without a share"


def test_search_labels_take_the_card_plays_evidence_weight(monkeypatch):
    made = []

    class Spy(expert.SearchAgent):
        def __init__(self, *a, **k):
            super().__init__(*a, **k)
            made.append(self)

    monkeypatch.setattr(expert, "SearchAgent", Spy)
    expert.label_hands(fresh_weights(), (16, 2), "online", {**OPTIONS, "infer_play": 0.5}, seed=9, hands=1)
    expert.label_hands(fresh_weights(), (16, 2), "online", OPTIONS, seed=9, hands=1)
    assert (made[0].infer, made[0].infer_play) == (1.0, 0.5)
    assert made[1].infer_play == 1.0, "by default the card plays weigh as the bids"


def test_decisions_the_labels_value_alike_leave_the_policy_alone():
    """``fit_ties: false``: rows whose legal actions all have one value teach the policy nothing
    (the action-value head still learns them); with ``fit_ties: true`` they pull it to uniform."""
    data = expert.label_hands(fresh_weights(), (16, 2), "online", OPTIONS, seed=5, hands=4)
    obs, mask = labels.replay(data, get_rules("online"))
    values = np.where(mask, 1.0, np.nan).astype(np.float32)  # every legal action worth one game point
    assert expert.alike(values, mask).all()
    for ties, moved in ((False, False), (True, True)):
        torch.manual_seed(0)
        net = expert.network(16, 2, fresh_weights(1))
        before = {k: v.clone() for k, v in net.state_dict().items()}
        opt = torch.optim.Adam(net.parameters(), lr=3e-3)
        expert.fit(net, opt, ExpertConfig(fit_ties=ties, fit_epochs=3, fit_batch=32), obs, mask, values,
                   np.random.default_rng(0))
        after = net.state_dict()
        assert any(not torch.equal(before[k], after[k]) for k in after if k.startswith("q_net."))
        policy_moved = any(not torch.equal(before[k], after[k]) for k in after if k.startswith("policy_net."))
        assert policy_moved == moved, f"fit_ties={ties}"
    mixed = values.copy()
    mixed[0, np.flatnonzero(mask[0])[0]] = 0.0
    assert not expert.alike(mixed, mask)[0]


@pytest.mark.parametrize("field,value,message", [
    ("label_bids", "vote", "label_bids must be one of solver, rollout, policy, none"),
    ("label_pimc_frac", 1.5, "label_pimc_frac must be a share"),
    ("label_pimc_worlds", 0, r"label_pimc_worlds \(--label-pimc-worlds\) must be at least 1"),
    ("label_from_trick", 5, "label_from_trick must be a trick from 0 to 4")])
def test_expert_config_names_a_bad_labelling_field(field, value, message):
    with pytest.raises(ValueError, match=message):
        expert.check(ExpertConfig(**{field: value}))


def test_soft_targets_put_no_weight_off_the_legal_actions():
    v = torch.tensor([[1.0, float("nan"), 0.0, 0.9]])
    m = torch.tensor([[True, False, True, True]])
    t = fitting.soft_targets(v, m, 0.1)
    assert t[0, 1] == 0 and torch.isclose(t.sum(), torch.tensor(1.0))
    assert t[0, 0] > t[0, 3] > t[0, 2]


def test_tiny_expert_iteration_end_to_end(tmp_path, monkeypatch):
    """Label, fit, relabel with the new network; data aggregated; no heuristic anywhere; the
    checkpoint plays as ``model:PATH``; a resumed run adds the next iteration."""
    import agents.heuristic

    def no_heuristic(*a, **k):
        raise AssertionError("expert iteration from scratch must not use the heuristic")

    monkeypatch.setattr(agents.heuristic.HeuristicAgent, "act", no_heuristic)
    monkeypatch.setattr(agents.heuristic.HeuristicAgent, "act_batch", no_heuristic)
    infer_seen = []
    real_label_hands = expert.label_hands

    def spy(weights, shape, rules, options, seed, hands):
        infer_seen.append(options["infer"])
        return real_label_hands(weights, shape, rules, options, seed, hands)

    monkeypatch.setattr(expert, "label_hands", spy)
    assert train.main([*TINY, "--run-dir", str(tmp_path)]) == 0
    (run,) = list(tmp_path.iterdir())
    ck = read_checkpoint(str(run / "checkpoint.pt"))
    assert ck["iteration"] == 2 and ck["data"] == ["data/iteration_0.npz", "data/iteration_1.npz"]
    assert infer_seen == [0.0, 0.0, 1.0, 1.0], "uniform deals for the untrained network, inference after"
    sizes = [len(labels.load_data(run / f)["hand"]) for f in ck["data"]]
    assert ck["step"] == sum(sizes) and all(sizes)
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    ea = EventAccumulator(str(run))
    ea.Reload()
    fitted = [e.value for e in ea.Scalars("charts/fitted_decisions")]
    assert fitted == [sizes[0], sum(sizes)], "the second fit uses both iterations' data"
    agent = make_agent(f"model:{run / 'checkpoint.pt'}")
    g = Game("online", seed=0)
    while not g.over:
        g.step(agent.act(seat_view(g)))
    assert train.main(["--resume", str(run / "checkpoint.pt"), "--expert-iterations", "3"]) == 0
    ck = read_checkpoint(str(run / "checkpoint.pt"))
    assert ck["iteration"] == 3 and len(ck["data"]) == 3 and (run / "data/iteration_2.npz").is_file()


def test_expert_resume_refuses_a_missing_label_file(tmp_path, capsys):
    assert train.main([*TINY, "--expert-iterations", "1", "--run-dir", str(tmp_path)]) == 0
    (run,) = list(tmp_path.iterdir())
    (run / "data/iteration_0.npz").unlink()
    assert train.main(["--resume", str(run / "checkpoint.pt"), "--expert-iterations", "2"]) == 2
    assert refused(capsys, "iteration_0.npz")


def test_expert_config_refuses_an_unknown_algorithm():
    with pytest.raises(ValueError, match="algorithm must be"):
        train.parse_config(["--algorithm", "alphazero"])


def test_label_data_is_compact(tmp_path):
    data = expert.label_hands(fresh_weights(), (16, 2), "online", OPTIONS, seed=6, hands=4)
    path = Path(tmp_path) / "d.npz"
    labels.save_data(path, data)
    assert path.stat().st_size < 80 * len(data["hand"]) + 2000, "tens of bytes a decision, not an observation"
    back = labels.load_data(path)
    assert all(np.array_equal(back[k], data[k], equal_nan=True) for k in labels.FIELDS)


def test_a_run_can_start_from_earlier_label_files(tmp_path, capsys):
    """--expert-data: the files are copied in and fitted on, and labelling then uses inference."""
    assert train.main([*TINY, "--expert-iterations", "1", "--run-dir", str(tmp_path / "a")]) == 0
    (first,) = list((tmp_path / "a").iterdir())
    given = str(first / "data/iteration_0.npz")
    assert train.main([*TINY, "--expert-iterations", "1", "--expert-data", given, "--run-dir", str(tmp_path / "b")]) == 0
    (second,) = list((tmp_path / "b").iterdir())
    ck = read_checkpoint(str(second / "checkpoint.pt"))
    assert ck["data"] == ["data/given_0.npz", "data/iteration_0.npz"]
    a, b = labels.load_data(Path(given)), labels.load_data(second / "data/given_0.npz")
    assert all(np.array_equal(a[k], b[k], equal_nan=True) for k in labels.FIELDS)
    assert train.main([*TINY, "--expert-iterations", "0", "--expert-data", given, "--run-dir", str(tmp_path / "d")]) == 0
    (fitted,) = list((tmp_path / "d").iterdir())
    ck = read_checkpoint(str(fitted / "checkpoint.pt"))
    assert ck["data"] == ["data/given_0.npz"] and ck["iteration"] == 0 and ck["step"] == len(a["hand"]), "a fit alone"
    assert train.main([*TINY, "--expert-data", str(tmp_path / "nope.npz"), "--run-dir", str(tmp_path / "c")]) == 2
    assert refused(capsys, "does not exist")


@pytest.mark.parametrize("preset,margin", [("online", 0.0), ("traditional", 0.0), ("online", 0.5)])
def test_windowed_card_values_equal_the_exact_solve(preset, margin):
    """The narrow-window solve of a card's label gives what the exact value gives (the winner of
    the hand from the exact final points or tricks), from the first trick on; with a margin
    share, the exact margin is added under pass and solo."""
    from agents.solver import Position
    from cuatrola_env.rules import CUATROLA

    rules = get_rules(preset)
    checked = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        g = Game(rules, seed=seed)
        while not g.over and (g.single.phase == 0 or g.single.trick_num < seed % 3):
            g.step(int(rng.choice(g.legal_actions())))
        if g.over or len(g.legal_actions()) < 2:
            continue
        view = seat_view(g)
        legal = view.legal_actions
        fast = PIMCAgent.card_points(view, legal, [list(g.single.hands)], margin)[:, 0]
        exact = Position.from_game(g).move_values()
        team = view.seat & 1
        for c, v in zip(legal, fast, strict=True):
            if view.contract >= CUATROLA:
                need = 4 if view.contract == CUATROLA else 5
                won = (view.tricks_won[view.declarer] + exact[c] >= need) == ((view.declarer & 1) == team)
            else:
                diff = (view.points[0] - view.points[1] + exact[c]) * (1 if team == 0 else -1)
                v -= margin * diff / 100
                if diff == 0:
                    won = None if rules.tie_rule == "last_trick" else ((view.dealer + 1) & 1) == team
                else:
                    won = diff > 0
            v = round(float(v), 9)
            worth = abs(v)
            assert (abs(v) < 1e-9) if won is None else (v == (worth if won else -worth) and worth in (1, 2, 4, 5)), seed
            checked += 1
    assert checked >= 40


@pytest.mark.parametrize("field,value", [("values", np.inf), ("values", -np.inf), ("score", -3), ("dealer", 7),
                                         ("muestra", 20)])
def test_a_label_file_with_a_value_out_of_range_is_refused(tmp_path, field, value):
    data = expert.label_hands(fresh_weights(), (16, 2), "online", OPTIONS, seed=6, hands=2)
    data[field] = data[field].copy()
    if field == "values":
        row, col = np.argwhere(~np.isnan(data["values"]))[0]
        data["values"][row, col] = value
    else:
        data[field].flat[0] = value
    labels.save_data(tmp_path / "bad.npz", data)
    with pytest.raises(train.CheckpointError, match=f"field '{field}' holds values outside"):
        labels.load_data(tmp_path / "bad.npz")


def test_a_label_file_that_would_inflate_past_the_bound_is_refused_unread(tmp_path, monkeypatch):
    import zipfile

    bomb = tmp_path / "bomb.npz"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("values.npy", bytes(4 << 20))
    monkeypatch.setattr(labels, "MAX_LABEL_BYTES", 1 << 20)
    with pytest.raises(train.CheckpointError, match="would inflate to 4194304 bytes"):
        labels.load_data(bomb)


def test_a_label_file_whose_hands_do_not_replay_is_a_one_line_refusal(tmp_path):
    data = expert.label_hands(fresh_weights(), (16, 2), "online", OPTIONS, seed=6, hands=2)
    data["actions"] = data["actions"].copy()
    data["actions"][0, 5] = -1  # a hand cut off in the middle
    (tmp_path / "data").mkdir()
    labels.save_data(tmp_path / "data/cut.npz", data)
    with pytest.raises(train.CheckpointError, match="cut.npz: game 0: its hand is in play"):
        labels.LabelStore(tmp_path, get_rules("online")).get("data/cut.npz")


def test_ctrl_c_while_labelling_is_acknowledged_and_honoured_within_seconds(tmp_path):
    """A SIGINT in the middle of a long labelling phase: said at once, the tasks not done cancelled,
    the checkpoint (the run as it was before the iteration) written, and the process gone within 30 s."""
    import signal
    import subprocess
    import sys
    import time

    root = Path(__file__).resolve().parents[1]
    argv = [sys.executable, str(root / "train.py"), *TINY, "--expert-hands", "2000", "--label-per-task", "2",
            "--run-dir", str(tmp_path)]
    proc = subprocess.Popen(argv, cwd=root, stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while not any(tmp_path.rglob("events.out.tfevents.*")) and time.time() < deadline:
        time.sleep(0.2)  # the run has started (its TensorBoard file), then labels for a while
    time.sleep(3)
    assert proc.poll() is None, "the run ended before it could be interrupted"
    asked = time.time()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert time.time() - asked < 30 and proc.returncode == 0, err[-2000:]
    assert "SIGINT: stopping at the next safe point" in err and "stopped: 0 iterations" in out
    (run,) = list(tmp_path.iterdir())
    ck = read_checkpoint(str(run / "checkpoint.pt"))
    assert ck["iteration"] == 0 and ck["data"] == []


@pytest.mark.parametrize("shape, extra", [((2**40,), 16), ((3, 4), 47), ((3, 4), 49)],
                         ids=["a header of 2**40 items", "a byte short", "a byte over"])
def test_a_label_array_whose_header_does_not_match_its_bytes_is_refused_unread(tmp_path, shape, extra):
    """A record's header names its shape: one that claims more (or other) bytes than the record holds is
    refused before the reader allocates what the header says."""
    import io
    import zipfile

    head = io.BytesIO()
    np.lib.format.write_array_header_1_0(head, {"descr": "<u4", "fortran_order": False, "shape": shape})
    bad = tmp_path / "claims.npz"
    with zipfile.ZipFile(bad, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("deal.npy", head.getvalue() + bytes(extra))
    with pytest.raises(train.CheckpointError, match="claims .* bytes of data and its record holds"):
        labels.load_data(bad)


def test_an_expert_run_stopped_while_fitting_keeps_the_run_as_it_was_before(tmp_path, monkeypatch):
    """SIGTERM as the second iteration's fit begins: stopped at the next minibatch, its checkpoint is
    the run after iteration 1 (weights untouched by the half fit), and resumed it ends on the
    uninterrupted run's weights."""
    whole, parts = tmp_path / "whole", tmp_path / "parts"
    assert train.main([*TINY, "--run-dir", str(whole)]) == 0
    real_fit = expert.fit
    monkeypatch.setattr(expert, "fit", sigterm_on_call(real_fit))
    assert train.main([*TINY, "--run-dir", str(parts)]) == 0
    (run,) = list(parts.iterdir())
    assert read_checkpoint(str(run / "checkpoint.pt"))["iteration"] == 1
    monkeypatch.setattr(expert, "fit", real_fit)
    assert train.main(["--resume", str(run / "checkpoint.pt")]) == 0
    a, b = (read_checkpoint(str(next(d.iterdir()) / "checkpoint.pt")) for d in (whole, parts))
    assert a["iteration"] == b["iteration"] == 2
    assert all(torch.equal(a["model"][k], b["model"][k]) for k in a["model"])
