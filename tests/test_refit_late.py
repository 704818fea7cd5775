"""Refitting a run's late card-play head afresh over its window (experiments/refit_late.py): only the
late head moves, it starts from fresh weights (not the run's), and the file it writes is read by the
loaders and the export; a tiny run of the late stage made here."""

from __future__ import annotations

import pytest
from helpers import tiny_distill_checkpoint

torch = pytest.importorskip("torch")
pytest.importorskip("numba")
pytest.importorskip("tensorboard")

from agents import training as train  # noqa: E402
from agents.checkpoint import read_checkpoint  # noqa: E402
from agents.torch_agent import load_network  # noqa: E402
from experiments import refit_late  # noqa: E402


def test_the_late_head_alone_is_refitted_from_fresh_weights(tmp_path):
    base = tiny_distill_checkpoint(train.main, tmp_path / "base", "--iterations", "1")
    run = tiny_distill_checkpoint(train.main, tmp_path / "late", "--init", str(base), "--late-from-trick", "1",
                                  "--from-trick", "1", "--teacher", "pimc:worlds=2", "--bids", "none",
                                  "--policy-target", "labels", "--iterations", "2", "--late-hidden", "24",
                                  "--late-layers", "3")
    before = read_checkpoint(str(run))["model"]
    refitted = refit_late.refit(str(run), passes=0, lr=1e-3, seed=0)["model"]
    late = [k for k in before if k.startswith("late_net.") and k.endswith("weight")]
    assert late and all(not torch.equal(before[k], refitted[k]) for k in late)  # drawn afresh
    out = tmp_path / "refit.pt"
    refit_late.main([str(run), "--passes", "2", "--out", str(out), "--threads", "1"])
    after = read_checkpoint(str(out))["model"]
    others = [k for k in before if not k.startswith("late_net.")]
    assert others and all(torch.equal(before[k], after[k]) for k in others)  # every other head kept
    fitted = [k for k in late if not torch.equal(refitted[k], after[k])]
    assert fitted  # the passes moved the fresh head
    assert load_network(str(out)).late_trick == 1
