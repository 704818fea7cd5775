"""The final passes refitting the late card-play head afresh (``fresh_final``): the head is drawn anew
from the run's seed, only it moves in those passes, a run stopped at the boundary resumes into them,
and a run that could not refit the late head alone is refused; a tiny late stage made here."""

from __future__ import annotations

import pytest
from helpers import tiny_distill_checkpoint

torch = pytest.importorskip("torch")
pytest.importorskip("numba")
pytest.importorskip("tensorboard")

from agents import training as train  # noqa: E402
from agents.checkpoint import read_checkpoint, save_checkpoint  # noqa: E402
from agents.network import PolicyValueNet  # noqa: E402
from agents.torch_agent import load_network  # noqa: E402
from agents.training.distill import DistillConfig, check  # noqa: E402

LATE = ["--late-from-trick", "1", "--from-trick", "1", "--teacher", "pimc:worlds=2", "--bids", "none",
        "--policy-target", "labels", "--late-hidden", "24", "--late-layers", "3"]


def test_a_redrawn_late_head_is_new_weights_from_the_seed_and_nothing_else_moves():
    net = PolicyValueNet(16, 2, dueling=True, owners=True, late_from_trick=1, late_hidden=24, late_layers=3)
    before = {k: v.clone() for k, v in net.state_dict().items()}
    net.redraw_late_head(5)
    first = {k: v.clone() for k, v in net.state_dict().items()}
    net.redraw_late_head(5)
    late = [k for k in before if k.startswith("late_net.")]
    assert late and all(torch.equal(first[k], v) for k, v in net.state_dict().items())  # the seed decides
    assert all(not torch.equal(before[k], first[k]) for k in late if k.endswith("weight"))
    assert all(torch.equal(before[k], first[k]) for k in before if k not in late)
    with pytest.raises(ValueError, match="no late head"):
        PolicyValueNet(16, 2).redraw_late_head(0)


def test_the_final_passes_refit_the_late_head_alone_after_a_stop_at_the_boundary(tmp_path):
    base = tiny_distill_checkpoint(train.main, tmp_path / "base", "--iterations", "1")
    run = tiny_distill_checkpoint(train.main, tmp_path / "late", "--init", str(base), *LATE, "--iterations", "2")
    written = read_checkpoint(str(run))
    before = written["model"]
    del written["config"]["fresh_final"]  # a checkpoint written before the field existed resumes too
    save_checkpoint(run, written)
    assert train.main(["--resume", str(run), "--final-epochs", "2", "--fresh-final", "true"]) == 0
    ck = read_checkpoint(str(run))
    after = ck["model"]
    assert ck["iteration"] == 4 and ck["config"]["fresh_final"]
    late = [k for k in before if k.startswith("late_net.")]
    assert all(torch.equal(before[k], after[k]) for k in before if k not in late)  # bids, q, owners: kept
    assert all(not torch.equal(before[k], after[k]) for k in late if k.endswith("weight"))
    redrawn = PolicyValueNet(16, 2, dueling=True, owners=True, late_from_trick=1, late_hidden=24, late_layers=3)
    redrawn.redraw_late_head(ck["config"]["seed"])
    fresh = redrawn.state_dict()
    # the refitted head came from the fresh draw, not the run's head: two small passes leave it nearer
    gap = lambda a: sum(float((a[k] - after[k]).norm()) for k in late if k.endswith("weight"))  # noqa: E731
    assert gap(fresh) < gap(before)
    assert load_network(str(run)).late_trick == 1


@pytest.mark.parametrize("fields, wrong", [({"late_from_trick": 0}, "late head"),
                                           ({"late_from_trick": 1, "from_trick": 0, "bids": "none"}, "its tricks only"),
                                           ({"late_from_trick": 1, "from_trick": 1, "bids": "rollout"}, "bids none")])
def test_a_refit_of_the_late_head_alone_is_refused_where_other_heads_are_labelled(fields, wrong):
    with pytest.raises(ValueError, match=wrong):
        check(DistillConfig(fresh_final=True, final_epochs=2, **fields))
