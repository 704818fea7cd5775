"""The refit (``--algorithm refit``): a larger late head fitted afresh to stored label windows moves
nothing else, learns its labels, resumes exactly, exports, and refuses what no run can start with."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import sigterm_on_call, tiny_oracle_checkpoint

torch = pytest.importorskip("torch")
pytest.importorskip("numba")
pytest.importorskip("tensorboard")

from agents import training as train  # noqa: E402
from agents.checkpoint import network_spec, read_checkpoint  # noqa: E402
from agents.torch_agent import load_network  # noqa: E402
from agents.training import refit as module  # noqa: E402
from agents.training.labels import load_data  # noqa: E402
from agents.training.oracle import Window  # noqa: E402
from agents.training.oracle import network as oracle_network  # noqa: E402
from cuatrola_env.observation import trick_number  # noqa: E402
from cuatrola_env.rules import get_rules  # noqa: E402

REFIT = ["--algorithm", "refit", "--late-hidden", "24", "--late-layers", "3", "--fit-batch", "16", "--then", ""]


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    """A tiny oracle run with a late head from trick 1 and its window of labels (PIMC over 2 deals)."""
    out = tmp_path_factory.mktemp("base")
    ck = tiny_oracle_checkpoint(train.main, out, "--oracle-iterations", "1", "--late-from-trick", "1",
                                "--oracle-from-trick", "1", "--oracle-search-worlds", "2", "--oracle-policy-target", "labels")
    return ck, ck.parent / "data" / "window.npz"


def refit(base, run_dir, *args: str):
    ck, window = base
    assert train.main([*REFIT, "--init", str(ck), "--refit-windows", f"{window},{window}", "--run-dir", str(run_dir),
                       *args]) == 0
    return next(run_dir.iterdir()) / "checkpoint.pt"


def test_a_refit_gives_the_late_head_its_new_size_and_moves_no_other_head(base, tmp_path):
    run = refit(base, tmp_path, "--refit-epochs", "2")
    before, after = read_checkpoint(str(base[0]))["model"], read_checkpoint(str(run))["model"]
    assert [after[f"late_net.{i}.weight"].shape[0] for i in (0, 2, 4)] == [24, 24, 24]
    kept = [k for k in before if not k.startswith("late_net.")]
    assert kept and all(torch.equal(before[k], after[k]) for k in kept)
    net = load_network(str(run))
    assert net.late_trick == 1 and len(net.late_net) == 7


def test_an_oracle_run_goes_on_from_a_refitted_network_with_its_late_head_as_it_is(base, tmp_path):
    """More labels for a refitted expert (the oracle algorithm with --init): the network it builds
    takes the refitted late head at its own size, unchanged, with every other head."""
    run = refit(base, tmp_path, "--refit-epochs", "1")
    ck = read_checkpoint(str(run))
    weights = ck["model"]
    assert ck["network"]["late_hidden"] == 24 and ck["network"]["late_layers"] == 3, "the checkpoint says its network"
    net = oracle_network(16, 2, {"model": weights, "network": network_spec(ck, run)}, late_from_trick=1)
    assert [net.late_net[i].weight.shape[0] for i in (0, 2, 4)] == [24, 24, 24]
    assert all(torch.equal(v, weights[k]) for k, v in net.state_dict().items())


def test_the_refitted_head_comes_closer_to_its_labels(base, tmp_path):
    """Held-out regret is noisy on a tiny window: the fit is judged on what it fits."""
    run = refit(base, tmp_path, "--refit-epochs", "30", "--learning-rate", "0.003")
    window = Window.of(load_data(base[1]), get_rules("online"))
    rows = np.flatnonzero((trick_number(window.obs) >= 1) & (window.mask.sum(1) > 1))
    tricks = trick_number(window.obs[rows])
    cfg = module.RefitConfig(init="x", refit_windows="x", hidden=16, late_hidden=24, late_layers=3)
    ck = read_checkpoint(str(base[0]))
    fresh = module.refit_network(cfg, {"model": ck["model"], "network": network_spec(ck, base[0])})
    fitted = load_network(str(run))
    start, end = (module.held_out_regret(n, window, rows, tricks)["held_out_regret"] for n in (fresh, fitted))
    assert end < 0.5 * start


def test_a_refit_stopped_and_resumed_ends_as_the_uninterrupted_one(base, tmp_path):
    whole = refit(base, tmp_path / "whole", "--refit-epochs", "3")
    part = refit(base, tmp_path / "part", "--refit-epochs", "1")
    windows = f"{base[1]},{base[1]}"
    assert train.main(["--resume", str(part), "--refit-epochs", "3"]) == 2, "label files are named again on resume"
    assert train.main(["--resume", str(part), "--refit-epochs", "3", "--refit-windows", windows]) == 0
    a, b = read_checkpoint(str(whole)), read_checkpoint(str(part))
    assert b["epoch"] == 3
    assert all(torch.equal(a["model"][k], b["model"][k]) for k in a["model"])


def test_a_refitted_network_exports_and_its_card_says_the_late_heads_size(base, tmp_path):
    pytest.importorskip("onnxruntime")
    from agents.export import export

    run = refit(base, tmp_path, "--refit-epochs", "1")
    card = export(str(run), str(tmp_path / "m.onnx"), check=2000)
    assert card["training"]["network"]["late_head"] == [24, 24, 24] and card["parity"]["same_actions"]


@pytest.mark.parametrize(("flags", "message"), [
    (["--refit-windows", "w.npz"], "a refit starts from a trained network: give it with --init"),
    (["--init", "agents/models/cuatrola_expert.pt"], "refit_windows names no label window"),
    (["--init", "agents/models/cuatrola_expert.pt", "--refit-windows", "nowhere/window.npz"],
     "label file nowhere/window.npz does not exist"),
    (["--init", "agents/models/cuatrola_expert.pt", "--refit-windows", "w.npz", "--late-layers", "0"],
     "late_layers (--late-layers) must be at least 1, got 0"),
])
def test_the_refit_refuses_what_no_run_can_start_with(flags, message, capsys, tmp_path):
    assert train.main(["--algorithm", "refit", "--run-dir", str(tmp_path), *flags]) == 2
    assert message in capsys.readouterr().err


def test_the_teacher_regret_example_measures_the_network_and_pimc_on_the_same_decisions(base):
    from examples import teacher_regret

    ck, window = base
    out = teacher_regret.regrets(str(window), str(ck), decisions=20, worlds=2, rules="online", seed=0, fitted=True)
    assert out and sum(n for n, _, _ in out.values()) == 20
    assert all(t >= 1 and a >= 0 and b >= 0 for t, (_, a, b) in out.items())  # the window labels tricks 1 on only


def test_a_refit_stopped_mid_pass_keeps_the_pass_before_and_resumes_exactly(base, tmp_path, monkeypatch):
    """SIGTERM as the second pass begins: the checkpoint is the run after pass 1, and resumed it ends
    on the uninterrupted run's weights."""
    from agents.training import refit as module

    whole = refit(base, tmp_path / "whole", "--refit-epochs", "2")
    real_pass = module.fit_pass
    monkeypatch.setattr(module, "fit_pass", sigterm_on_call(real_pass))
    part = refit(base, tmp_path / "part", "--refit-epochs", "2")
    assert read_checkpoint(str(part))["epoch"] == 1
    monkeypatch.setattr(module, "fit_pass", real_pass)
    windows = f"{base[1]},{base[1]}"
    assert train.main(["--resume", str(part), "--refit-windows", windows]) == 0
    a, b = read_checkpoint(str(whole)), read_checkpoint(str(part))
    assert a["epoch"] == b["epoch"] == 2 and all(torch.equal(a["model"][k], b["model"][k]) for k in a["model"])
