"""Widening a network (agents.network.widen_hidden, experiments/widen_network.py): the wider copy plays
as the original did, on positions of hands drawn here."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agents.base import seat_view  # noqa: E402
from agents.checkpoint import read_checkpoint  # noqa: E402
from agents.network import PolicyValueNet, widen_hidden  # noqa: E402
from agents.registry import make_agent  # noqa: E402
from cuatrola_env.game import Game  # noqa: E402
from experiments import widen_network  # noqa: E402

SHIPPED = "agents/models/cuatrola.pt"


def drawn_positions(n_games: int = 12) -> tuple[torch.Tensor, torch.Tensor]:
    """Observations and legal masks of every decision of hands played at random here."""
    rng, obs, masks = np.random.default_rng(4), [], []
    for seed in range(n_games):
        g = Game(seed=seed)
        while not g.over:
            v = seat_view(g)
            obs.append(v.observation)
            masks.append(v.legal_mask)
            g.step(int(rng.choice(v.legal_actions)))
    return torch.from_numpy(np.stack(obs)), torch.from_numpy(np.stack(masks))


@pytest.mark.parametrize("heads", [{}, {"late_from_trick": 2, "early_head": True}], ids=["one card-play head", "early and late"])
def test_a_widened_network_computes_what_the_original_does_in_every_head(heads):
    torch.manual_seed(0)
    narrow = PolicyValueNet(32, 3, dueling=True, owners=True, **heads)
    wide = PolicyValueNet(80, 3, dueling=True, owners=True, **heads)
    wide.load_state_dict(widen_hidden(narrow.state_dict(), 80, noise=0.0))
    o, m = drawn_positions()
    hands = torch.rand(len(o), 80)
    with torch.no_grad():
        for f in (lambda n: n.policy(o, m), lambda n: n.q(o, m), lambda n: n.owners(o, m), lambda n: n.value(o, hands)):
            assert torch.allclose(f(narrow), f(wide), atol=1e-5)
    noisy = widen_hidden(narrow.state_dict(), 80, noise=1e-3)
    copies = noisy["policy_net.0.weight"][32:]
    assert not any(torch.equal(row, old) for row in copies for old in narrow.state_dict()["policy_net.0.weight"])
    with pytest.raises(ValueError, match="policy_net has 32 units a layer; widening cannot make it 16"):
        widen_hidden(narrow.state_dict(), 16)


def test_the_widened_shipped_network_chooses_the_shipped_networks_actions(tmp_path):
    """experiments/widen_network.py writes a checkpoint any loader reads, 512 units a layer, whose
    choices are the shipped network's at every decision of hands drawn here (noise 0)."""
    out = tmp_path / "wide.pt"
    widen_network.main([SHIPPED, str(out), "--hidden", "512", "--noise", "0"])
    ck = read_checkpoint(out, older=True)
    assert ck["config"]["hidden"] == 512 and ck["model"]["policy_net.2.weight"].shape == (512, 512)
    wide, shipped = make_agent(f"model:{out}"), make_agent(f"model:{SHIPPED}")
    rng, checked = np.random.default_rng(9), 0
    for seed in range(30):
        g = Game(seed=seed)
        while not g.over:
            v = seat_view(g)
            assert wide.act(v) == shipped.act(v)
            checked += 1
            g.step(int(rng.choice(v.legal_actions)))
    assert checked > 200
    with pytest.raises(SystemExit, match="widening cannot make it 100"):
        widen_network.main([SHIPPED, str(tmp_path / "narrow.pt"), "--hidden", "100"])
