"""Agent names usable in specs (``make_agent("heuristic")``)."""

from __future__ import annotations

from .heuristic import HeuristicAgent
from .random_agent import RandomAgent

AGENTS = {
    "random": RandomAgent,
    "heuristic": HeuristicAgent,
}
