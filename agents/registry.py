"""Agent names usable in specs, and the agent a spec names (``make_agent("heuristic")``)."""

from __future__ import annotations

import importlib
import inspect
import math
import typing

from cuatrola_env.cli import not_installed

from .base import Agent
from .heuristic import HeuristicAgent
from .player import PolicyPlayer
from .random_agent import RandomAgent
from .search import OPPONENT_MODELS, SearchAgent


def needs_extra(module: str, extra: str, what: str) -> ValueError:
    """The one-line error of a spec whose optional dependency is not installed, naming the extra."""
    return ValueError(f"{what} need {not_installed(module, extra)}")


def optional(module: str, name: str, extra: str, options: dict):
    """The factory of agent class ``name`` of ``module`` (this package's), imported only when an agent
    is made: its dependencies are an optional extra's (numba, torch, Stable-Baselines3, OpenSpiel),
    and a missing one is a one-line error naming ``extra``."""
    def make(*args, **kw):
        try:
            cls = getattr(importlib.import_module(f".{module}", __package__), name)
        except ModuleNotFoundError as e:
            raise needs_extra(e.name, extra, f"{module.split('_')[0]} specs") from None
        return cls(*args, **kw)

    make.OPTIONS = options
    return make


def _model(path: str, seed=None):
    try:
        from .torch_agent import TorchAgent, load_network  # torch only when a model is asked for
    except ModuleNotFoundError as e:
        raise needs_extra(e.name, "train", "model: specs") from None
    return TorchAgent(load_network(path), seed=seed)


_model.OPTIONS = {}

#: the agents named by a file, ``NAME:PATH`` (the path kept whole, commas and colons too)
PATH_AGENTS = ("model", "sb3")
#: the agents whose spec names an algorithm first, ``NAME:ALGORITHM,key=value`` (``openspiel:ismcts``)
ALGORITHM_AGENTS = ("openspiel",)


def _search(opponent: str = "", **kw):
    """The search (it loads the ONNX model); an ``opponent`` other than a rule-based model's name
    (``heuristic``) is an agent spec, made here: ``opponent=model:PATH`` (its greedy play)."""
    if opponent and opponent not in OPPONENT_MODELS:
        opponent = make_agent(opponent, seed=0)
    return SearchAgent(opponent=opponent, **kw)


_search.OPTIONS = SearchAgent.OPTIONS  # the search's own list of options, not a copy


AGENTS = {
    "random": RandomAgent,
    "heuristic": HeuristicAgent,
    "pimc": optional("pimc", "PIMCAgent", "eval", {"worlds": int, "seconds": float, "bid_worlds": int, "bid_margin": float}),
    "cheater": optional("cheater", "CheaterAgent", "eval", {}),
    "model": _model,
    "sb3": optional("sb3_agent", "SB3Agent", "sb3", {}),
    "openspiel": optional("openspiel_agent", "OpenSpielAgent", "openspiel",
                          {"algorithm": str, "simulations": int, "rollouts": int, "uct_c": float}),
    "bot": PolicyPlayer,
    "search": _search,
}


def parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    """``"pimc:worlds=32,seconds=0.1"`` -> ``("pimc", {"worlds": "32", "seconds": "0.1"})``.

    ``model:PATH`` keeps the path whole: ``("model", {"path": PATH})``. A plug-in,
    ``package.module:Class,key=value``, gives ``("package.module:Class", {"key": "value"})``.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"an agent spec must be a non-empty string, got {spec!r}")
    name, _, rest = spec.strip().partition(":")
    if name in PATH_AGENTS:
        if not rest:
            raise ValueError(f"{name} agents need a path: {name}:PATH")
        return name, {"path": rest}
    parts = rest.split(",")
    first = {}
    if name in ALGORITHM_AGENTS and parts[0].strip() and "=" not in parts[0]:  # openspiel:ismcts,...
        first, parts = {"algorithm": parts[0].strip()}, parts[1:]
    if name not in AGENTS and parts[0].strip() and "=" not in parts[0]:  # a plug-in: package.module:Class[,...]
        if not parts[0].strip().isidentifier() or not all(p.isidentifier() for p in name.split(".")):
            raise ValueError(f"a plug-in agent is package.module:Class[,key=value...], got {spec!r}")
        name, parts = f"{name}:{parts[0].strip()}", parts[1:]
    opts = dict(first)
    for part in filter(None, parts):
        key, eq, value = part.partition("=")
        if not eq or not key:
            raise ValueError(f"bad option {part!r} in agent spec {spec!r}: expected key=value")
        opts[key.strip()] = value.strip()
    return name, opts


def spec_names_outside(spec) -> bool:
    """Whether the agent spec ``spec`` (``A+B`` partnerships too) names anything outside this package:
    code to import (a plug-in), or a file (``model:PATH``, a ``path=`` option, an ``opponent=`` that
    does); an unparsable spec counts as one that does."""
    for part in str(spec).split("+"):
        try:
            name, opts = parse_spec(part)
        except ValueError:
            return True
        if name in PATH_AGENTS or ":" in name or "path" in opts or ("opponent" in opts and spec_names_outside(opts["opponent"])):
            return True
    return False


def is_plugin(spec) -> bool:
    """Whether ``spec`` names a plug-in (code to import) rather than one of :data:`AGENTS`."""
    try:
        return ":" in parse_spec(spec)[0]
    except ValueError:
        return isinstance(spec, str) and spec.partition(":")[0] not in AGENTS


def make_agent(spec: str, seed: int | None = None, **objects) -> Agent:
    """An agent from its spec; a ``ValueError`` says what is wrong with a bad one. ``objects`` are
    handed to the agent as they are, beside the spec's options (a ``policy`` for a search to search
    with: the trainer's student); None values are left out."""
    name, opts = parse_spec(spec)
    if name in PATH_AGENTS:
        agent = AGENTS[name](opts["path"], seed=seed)
        agent.spec = spec
        return agent
    factory = load_plugin(name) if ":" in name else AGENTS.get(name)
    if factory is None:
        raise ValueError(f"unknown agent {name!r} in spec {spec!r}; known agents: {', '.join(sorted(AGENTS))}, "
                         "or a plug-in package.module:Class")
    agent = factory(seed=seed, **_typed(factory, opts, spec), **{k: v for k, v in objects.items() if v is not None})
    agent.spec = spec
    return agent


def load_plugin(name: str) -> type[Agent]:
    """The class ``package.module:Class`` names: importable, and an :class:`Agent` (an ``act(view)``
    method; ``act_batch`` optional). Its options are its ``OPTIONS`` dict, or its ``__init__``'s
    annotated keyword parameters."""
    module_name, _, class_name = name.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise ValueError(f"plug-in agent {name!r}: cannot import {module_name!r} ({e})") from None
    cls = getattr(module, class_name, None)
    if not isinstance(cls, type) or not callable(getattr(cls, "act", None)):
        raise ValueError(f"plug-in agent {name!r}: {module_name} has no agent class {class_name!r} with an act(view) method")
    return cls


def _init_options(cls) -> dict:
    """Option name -> type from the annotated keyword parameters of ``cls.__init__`` (``seed`` aside)."""
    hints = typing.get_type_hints(cls.__init__)
    params = inspect.signature(cls.__init__).parameters
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return {k: next(a for a in typing.get_args(hints.get(k, str)) or (hints.get(k, str),) if a is not type(None))
            for k, p in params.items() if k not in ("self", "seed") and p.kind in kinds}


def _parse_bool(value: str) -> bool:
    if value.lower() in ("1", "true", "yes", "on"):
        return True
    if value.lower() in ("0", "false", "no", "off"):
        return False
    raise ValueError(value)


def _typed(cls, opts: dict[str, str], spec: str) -> dict:
    """Convert option strings to the types of the agent's dataclass-like ``OPTIONS``."""
    allowed = getattr(cls, "OPTIONS", None)
    if allowed is None:
        allowed = _init_options(cls) if isinstance(cls, type) else {}
    out = {}
    for key, value in opts.items():
        if key not in allowed:
            raise ValueError(
                f"unknown option {key!r} for agent {spec.split(':')[0]!r}; options: {', '.join(sorted(allowed)) or 'none'}"
            )
        try:
            out[key] = _parse_bool(value) if allowed[key] is bool else allowed[key](value)
            if isinstance(out[key], float) and not math.isfinite(out[key]):
                raise ValueError(value)
        except ValueError:
            kind = "a finite number" if allowed[key] is float else allowed[key].__name__
            raise ValueError(f"option {key}={value!r} of {spec!r} must be {kind}") from None
    return out
