"""Agent names usable in specs (``make_agent("heuristic")``)."""

from __future__ import annotations

from .heuristic import HeuristicAgent
from .random_agent import RandomAgent


def _pimc(**kw):
    from .pimc import PIMCAgent  # numba compiles on first use

    return PIMCAgent(**kw)


_pimc.OPTIONS = {"worlds": int, "seconds": float, "bid_worlds": int}

def _model(path: str, seed=None):
    from pathlib import Path

    if not Path(path).is_file():
        raise ValueError(f"model file not found: {path}")
    raise ValueError(f"cannot load {path}: trained-model agents arrive with self-play training (not in this version)")


_model.OPTIONS = {}

AGENTS = {
    "random": RandomAgent,
    "heuristic": HeuristicAgent,
    "pimc": _pimc,
    "model": _model,
}
