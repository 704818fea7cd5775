"""Agent names usable in specs (``make_agent("heuristic")``)."""

from __future__ import annotations

from .heuristic import HeuristicAgent
from .random_agent import RandomAgent


def _pimc(**kw):
    from .pimc import PIMCAgent  # numba compiles on first use

    return PIMCAgent(**kw)


_pimc.OPTIONS = {"worlds": int, "seconds": float, "bid_worlds": int, "bid_margin": float}

def _model(path: str, seed=None):
    from .torch_agent import TorchAgent, load_policy  # torch only when a model is asked for

    return TorchAgent(load_policy(path), seed=seed)


_model.OPTIONS = {}

AGENTS = {
    "random": RandomAgent,
    "heuristic": HeuristicAgent,
    "pimc": _pimc,
    "model": _model,
}
