"""Agent names usable in specs (``make_agent("heuristic")``)."""

from __future__ import annotations

import numpy as np

from .base import Agent
from .heuristic import HeuristicAgent
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
    """The torch-free ONNX bot (:class:`cuatrola_env.bot.Bot`) as an agent: ``bot:level=strong``,
    ``bot:path=models/cuatrola.onnx,level=easy``."""

    OPTIONS = {"path": str, "level": str}

    def __init__(self, seed=None, path: str = "models/cuatrola.onnx", level: str = "expert"):
        from cuatrola_env.bot import LEVELS, Bot

        super().__init__(seed)
        self.bot = Bot.load(path, level=level, seed=seed)  # seeded: master's search draws from the bot's generator
        self.search = LEVELS[level].search

    def act(self, view):
        if self.search:  # search needs the view's history, not only its observation
            return self.bot.searcher.act(view)
        return self.act_batch([view])[0]

    def act_batch(self, views):
        if self.search:
            return [self.act(v) for v in views]
        obs = np.stack([v.observation for v in views])
        mask = np.stack([v.legal_mask for v in views])
        return self.bot.choose(obs, mask, self.rng).tolist()


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
