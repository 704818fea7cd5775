"""An agent playing a PyTorch policy network (greedy or sampled)."""

from __future__ import annotations

import numpy as np
import torch

from .base import Agent, SeatView


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


class CheckpointError(ValueError):
    """A checkpoint or model file that cannot be used with this code (or these rules)."""


def read_checkpoint(path: str, rules_name: str | None = None) -> dict:
    """Read a checkpoint written by train.py and check it fits this code (and ``rules_name``)."""
    from pathlib import Path

    from cuatrola_env.observation import OBS_VERSION

    if not Path(path).is_file():
        raise CheckpointError(f"no checkpoint or model file at {path}")
    try:
        ck = torch.load(path, map_location="cpu", weights_only=False)
    except Exception as e:  # noqa: BLE001 - any unreadable file
        raise CheckpointError(f"{path} is not a readable checkpoint: {e}") from None
    if not isinstance(ck, dict) or "model" not in ck or "obs_version" not in ck:
        raise CheckpointError(f"{path} is not a Cuatrola checkpoint (one written by train.py)")
    if ck["obs_version"] != OBS_VERSION:
        raise CheckpointError(
            f"{path} was trained on observation version {ck['obs_version']}, this code builds version {OBS_VERSION}"
        )
    if rules_name is not None and ck["rules"]["name"] != rules_name:
        raise CheckpointError(f"{path} was trained with rules {ck['rules']['name']!r}, not {rules_name!r}")
    return ck


def load_policy(path: str):
    """The network of a training checkpoint, ready to play."""
    from .network import PolicyValueNet

    ck = read_checkpoint(path)
    cfg = ck.get("config", {})
    net = PolicyValueNet(cfg.get("hidden", 256), cfg.get("layers", 2))
    try:
        net.load_state_dict(ck["model"])
    except RuntimeError as e:  # a network of another shape (an older layout of the network)
        raise CheckpointError(f"{path} holds a network this code cannot load: {str(e).splitlines()[0]}") from None
    net.eval()
    return net
