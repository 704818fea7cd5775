"""Agent names usable in specs, and the agent a spec names (``make_agent("heuristic")``)."""

from __future__ import annotations

import numpy as np

from .base import Agent
from .heuristic import HeuristicAgent
from .models import ONNX_MODEL
from .policy import LEVELS, MASTER_SEARCH, OnnxPolicy, check_level, sample_actions
from .random_agent import RandomAgent
from .search import SearchAgent


def _pimc(**kw):
    from .pimc import PIMCAgent  # numba compiles on first use

    return PIMCAgent(**kw)


_pimc.OPTIONS = {"worlds": int, "seconds": float, "bid_worlds": int, "bid_margin": float}

def _model(path: str, seed=None):
    from .torch_agent import TorchAgent, load_policy  # torch only when a model is asked for

    return TorchAgent(load_policy(path), seed=seed)


_model.OPTIONS = {}


class BotAgent(Agent):
    """The torch-free ONNX policy at a bot level (:data:`agents.policy.LEVELS`) as an agent:
    ``bot:level=strong``, ``bot:path=FILE,level=easy``; level ``master`` searches."""

    OPTIONS = {"path": str, "level": str}

    def __init__(self, seed=None, path: str = str(ONNX_MODEL), level: str = "expert"):
        super().__init__(seed)
        check_level(level)
        self.policy, self.level = OnnxPolicy.load(path), level
        self.search = None
        if LEVELS[level].search:  # seeded as the bot's: its search draws from a generator of the seed
            search_seed = int(np.random.default_rng(seed).integers(2**31))
            self.search = SearchAgent(seed=search_seed, policy=self.policy, play="pimc", **MASTER_SEARCH)

    def act(self, view):
        if self.search is not None:  # search needs the view's history, not only its observation
            return self.search.act(view)
        return self.act_batch([view])[0]

    def act_batch(self, views):
        if self.search is not None:
            return [self.act(v) for v in views]
        obs = np.stack([v.observation for v in views])
        mask = np.stack([v.legal_mask for v in views])
        return sample_actions(self.policy.probabilities(obs, mask, self.level), self.rng).tolist()


def _search(**kw):
    return SearchAgent(**kw)  # loads the ONNX model


_search.OPTIONS = SearchAgent.OPTIONS  # one list of options (a copy here once missed two)


AGENTS = {
    "random": RandomAgent,
    "heuristic": HeuristicAgent,
    "pimc": _pimc,
    "model": _model,
    "bot": BotAgent,
    "search": _search,
}


def parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    """``"pimc:worlds=32,seconds=0.1"`` -> ``("pimc", {"worlds": "32", "seconds": "0.1"})``.

    ``model:PATH`` keeps the path whole: ``("model", {"path": PATH})``.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"an agent spec must be a non-empty string, got {spec!r}")
    name, _, rest = spec.strip().partition(":")
    if name == "model":
        if not rest:
            raise ValueError("model agents need a path: model:PATH")
        return name, {"path": rest}
    opts = {}
    for part in filter(None, rest.split(",")):
        key, eq, value = part.partition("=")
        if not eq or not key:
            raise ValueError(f"bad option {part!r} in agent spec {spec!r}: expected key=value")
        opts[key.strip()] = value.strip()
    return name, opts


def make_agent(spec: str, seed: int | None = None) -> Agent:
    """An agent from its spec; a ``ValueError`` says what is wrong with a bad one."""
    name, opts = parse_spec(spec)
    if name == "model":
        agent = AGENTS["model"](opts["path"], seed=seed)
        agent.spec = spec
        return agent
    if name not in AGENTS:
        raise ValueError(f"unknown agent {name!r} in spec {spec!r}; known agents: {', '.join(sorted(AGENTS))}")
    agent = AGENTS[name](seed=seed, **_typed(AGENTS[name], opts, spec))
    agent.spec = spec
    return agent


def _typed(cls, opts: dict[str, str], spec: str) -> dict:
    """Convert option strings to the types of the agent's dataclass-like ``OPTIONS``."""
    allowed = getattr(cls, "OPTIONS", {})
    out = {}
    for key, value in opts.items():
        if key not in allowed:
            raise ValueError(
                f"unknown option {key!r} for agent {spec.split(':')[0]!r}; options: {', '.join(sorted(allowed)) or 'none'}"
            )
        try:
            out[key] = allowed[key](value)
        except ValueError:
            raise ValueError(f"option {key}={value!r} of {spec!r} must be {allowed[key].__name__}") from None
    return out
