"""An agent playing a PyTorch policy network (greedy or sampled), and the loader of one."""

from __future__ import annotations

import numpy as np
import torch

from cuatrola_env.observation import OBS_DIMS, OBS_VERSION
from cuatrola_env.rules import NUM_ACTIONS

from .base import Agent, SeatView
from .checkpoint import CheckpointError, read_checkpoint
from .network import PolicyValueNet, late_head_size


class TorchAgent(Agent):
    """Plays ``net.policy(observation, mask)``: the most likely legal action, or a sample
    at ``temperature`` > 0."""

    OPTIONS: dict = {}

    def __init__(self, net, seed: int | None = None, temperature: float = 0.0):
        super().__init__(seed)
        self.net = net
        self.temperature = temperature

    def act(self, view: SeatView) -> int:
        return self.act_batch([view])[0]

    def act_batch(self, views: list[SeatView]) -> list[int]:
        obs = torch.from_numpy(np.stack([v.observation for v in views]))
        mask = torch.from_numpy(np.stack([v.legal_mask for v in views]))
        with torch.no_grad():
            logits = self.net.policy(obs, mask)
        if self.temperature <= 0:
            return logits.argmax(-1).tolist()
        probs = torch.softmax(logits / self.temperature, -1).numpy().astype(np.float64)
        return [int(self.rng.choice(len(p), p=p / p.sum())) for p in probs]


def network_for(state: dict, hidden: int, layers: int, obs_version: int = OBS_VERSION) -> PolicyValueNet:
    """An empty network with the heads a state dict holds (action values, dueling or not; card
    locations; an early and a late card-play head), reading the observation of ``obs_version``."""
    q_out = state.get(f"q_net.{2 * layers}.bias")
    late = state.get("late_from_trick")
    late_hidden, late_layers = late_head_size(state)
    return PolicyValueNet(hidden, layers, q_head=q_out is not None, dueling=q_out is not None and len(q_out) == NUM_ACTIONS + 1,
                          owners=any(k.startswith("owner_net.") for k in state), obs_dim=OBS_DIMS[obs_version],
                          late_from_trick=None if late is None else int(late), late_hidden=late_hidden,
                          early_head="early_net.0.weight" in state, late_layers=late_layers)


def load_network(path: str):
    """The network of a training checkpoint, ready to play (one of an earlier observation version too)."""
    ck = read_checkpoint(path, older=True)
    cfg = ck.get("config", {})
    hidden, layers = cfg.get("hidden", 256), cfg.get("layers", 2)
    if not all(isinstance(x, int) and not isinstance(x, bool) and 1 <= x <= 65536 for x in (hidden, layers)):
        raise CheckpointError(f"{path}: config fields 'hidden' and 'layers' must be positive integers, "
                              f"got {hidden!r} and {layers!r}")
    if not isinstance(ck["model"], dict):
        raise CheckpointError(f"{path}: field 'model' must be a state dict of tensors, got {type(ck['model']).__name__}")
    net = network_for(ck["model"], hidden, layers, ck["obs_version"])
    try:
        net.load_state_dict(ck["model"])
    except (RuntimeError, TypeError, KeyError) as e:  # a network of another shape (an older layout of the network)
        raise CheckpointError(f"{path} holds a network this code cannot load: {str(e).splitlines()[0]}") from None
    net.eval()
    return net
