"""Merging late card-play heads (agents.network.merged_late_heads, experiments/merge_late_heads.py): the
merged network's late head gives the mean of the members' logits, its bids and early play are the
members', and networks that differ elsewhere are refused, on positions of hands drawn here."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from agents.checkpoint import save_checkpoint  # noqa: E402
from agents.network import PolicyValueNet, merged_late_heads  # noqa: E402
from agents.torch_agent import load_network  # noqa: E402
from experiments import merge_late_heads  # noqa: E402
from tests.test_widen_network import drawn_positions  # noqa: E402


def students(n: int, hidden: int = 24) -> list[PolicyValueNet]:
    """``n`` networks equal but for their late heads (each moved away from the shared start)."""
    torch.manual_seed(3)
    first = PolicyValueNet(hidden, 2, dueling=True, owners=True, late_from_trick=1)
    nets = [first]
    for _ in range(n - 1):
        net = PolicyValueNet(hidden, 2, dueling=True, owners=True, late_from_trick=1)
        net.load_state_dict(first.state_dict())
        nets.append(net)
    with torch.no_grad():
        for net in nets:
            for p in net.late_net.parameters():
                p.add_(0.2 * torch.randn_like(p))
    return nets


def test_the_merged_late_head_is_the_mean_of_the_members_logits_and_the_early_play_is_theirs():
    nets = students(3)
    merged = PolicyValueNet(24, 2, dueling=True, owners=True, late_from_trick=1, late_hidden=72)
    merged.load_state_dict(merged_late_heads([n.state_dict() for n in nets]))
    o, m = drawn_positions()
    with torch.no_grad():
        each = torch.stack([n.policy(o, m) for n in nets])
        got = merged.policy(o, m)
    same = (each[0] == each[1]).all(-1)  # rows the shared policy head plays
    assert same.any() and (~same).any()  # both kinds of position are there
    assert torch.allclose(got[same], each[0][same])  # bids and the first trick: unchanged
    mean = each.mean(0)
    assert torch.allclose(got[m], mean[m], atol=1e-5)  # every legal action's logit is the members' mean


def test_the_merge_script_writes_a_network_every_loader_reads(tmp_path):
    nets = students(2)
    paths = []
    for i, net in enumerate(nets):
        paths.append(str(tmp_path / f"s{i}.pt"))
        save_checkpoint(paths[-1], {"model": net.state_dict(), "config": {"hidden": 24, "layers": 2}, "obs_version": 2,
                                     "rules": {"name": "online"}})
    out = tmp_path / "merged.pt"
    merge_late_heads.main([*paths, "--out", str(out)])
    loaded = load_network(str(out))
    assert loaded.late_net[0].weight.shape[0] == 48 and loaded.late_trick == 1
    o, m = drawn_positions(4)
    with torch.no_grad():
        mean = (nets[0].policy(o, m) + nets[1].policy(o, m)) / 2
        assert torch.allclose(loaded.policy(o, m)[m], mean[m], atol=1e-5)


def test_networks_that_differ_outside_the_late_head_are_refused(tmp_path):
    nets = students(2)
    with torch.no_grad():
        nets[1].q_net[0].bias.add_(0.01)  # a head the policy does not use: no obstacle
    merged_late_heads([n.state_dict() for n in nets])
    with torch.no_grad():
        nets[1].policy_net[0].bias.add_(0.01)
    with pytest.raises(ValueError, match=r"bids or early tricks otherwise than the first \(policy_net.0.bias\)"):
        merged_late_heads([n.state_dict() for n in nets])
    with pytest.raises(ValueError, match="at least two networks"):
        merged_late_heads([nets[0].state_dict()])
    plain = PolicyValueNet(24, 2)
    with pytest.raises(ValueError, match="no late card-play head"):
        merged_late_heads([plain.state_dict(), plain.state_dict()])
    with pytest.raises(ValueError, match="late_hidden must be at least hidden"):
        PolicyValueNet(24, 2, late_from_trick=1, late_hidden=12)
    path = tmp_path / "s.pt"
    save_checkpoint(path, {"model": nets[0].state_dict(), "config": {"hidden": 24, "layers": 2}, "obs_version": 2,
                                     "rules": {"name": "online"}})
    with pytest.raises(SystemExit, match="at least two networks"):
        merge_late_heads.main([str(path), "--out", str(tmp_path / "m.pt")])
