"""An agent playing a PyTorch policy network (greedy or sampled), and the loader of one."""

from __future__ import annotations

import numpy as np
import torch

from .base import Agent, SeatView
from .checkpoint import CheckpointError, network_spec, read_checkpoint
from .network import build


class TorchAgent(Agent):
    """Plays ``net.policy(observation, mask)``: the most likely legal action, or a sample
    at ``temperature`` > 0."""

    OPTIONS: dict = {}

    def __init__(self, net, seed: int | None = None, temperature: float = 0.0):
        super().__init__(seed)
        self.net = net
        self.temperature = temperature

    @property
    def deterministic(self) -> bool:
        """Greedy (temperature 0): the same view always gets the same action."""
        return self.temperature <= 0

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


def load_network(path: str):
    """The network of a training checkpoint, ready to play (one of an earlier observation version too),
    built from the spec it saved (:func:`agents.checkpoint.network_spec`)."""
    ck = read_checkpoint(path, older=True)
    net = build(network_spec(ck, path))
    try:
        net.load_state_dict(ck["model"])
    except (RuntimeError, TypeError, KeyError, AttributeError) as e:  # weights of another shape than the spec says
        raise CheckpointError(f"{path} holds a network this code cannot load: {str(e).splitlines()[0]}") from None
    net.eval()
    return net
