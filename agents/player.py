"""The one way to turn exported policies into a player at a level: :class:`PolicyPlayer`.

>>> from agents.player import PolicyPlayer
>>> from agents.base import seat_view
>>> from cuatrola_env.game import Game
>>> player = PolicyPlayer(seed=0, level="strong")      # the shipped models, one per rules preset
>>> game = Game(seed=3)
>>> player.act(seat_view(game)) in game.legal_actions()
True

It is the ``bot:`` agent of evaluations (``bot:level=strong``, ``bot:path=FILE,level=easy``)
and the player inside the bot service's :class:`cuatrola_serve.bot.Bot`. Each game is played by
the policy trained under the rules most like the game's (:func:`agents.policy.policy_for`); a
level (:data:`agents.policy.LEVELS`) says how to choose from it: greedily, by sampling at a
temperature with a share of random card plays, or, at ``master``, by the search of
:class:`agents.search.SearchAgent` over that policy: ``worlds`` deals drawn from ``candidates``,
the card plays' evidence weighed by ``infer_play`` (unless given, ``bot:level=master,worlds=128,infer_play=1``,
the settings of the policy's rules preset: :func:`agents.policy.master_search`).
"""

from __future__ import annotations

import numpy as np

from cuatrola_env.rules import NUM_ACTIONS

from .base import Agent, SeatView
from .models import ONNX_MODEL
from .policy import LEVELS, MASTER_SEARCH, OnnxPolicy, check_level, load_policies, master_search, policy_for, sample_actions
from .search import SearchAgent, SearchOptions


class PolicyPlayer(Agent):
    """A player at ``level`` from the ONNX model at ``path`` (the default: the shipped model of
    each rules preset, and at level ``expert`` each preset's expert model where one is shipped:
    :data:`agents.models.EXPERT_MODELS`), or from ``policies`` already loaded (the first is the
    default; ``expert_policies`` for level ``expert``, by default the same). ``worlds``,
    ``candidates`` and ``infer_play`` set master's search; each one not given is that of the
    rules preset the searched policy was trained under (:func:`agents.policy.master_search`)."""

    OPTIONS = {"path": str, "level": str, "worlds": int, "candidates": int, "infer_play": float}

    def __init__(self, seed=None, path: str = str(ONNX_MODEL), level: str = "expert",
                 policies: list[OnnxPolicy] | None = None, worlds: int | None = None, candidates: int | None = None,
                 infer_play: float | None = None, expert_policies: list[OnnxPolicy] | None = None):
        super().__init__(seed)
        check_level(level)
        given = {"worlds": worlds, "candidates": candidates, "infer_play": infer_play}
        self.search_options = {k: v for k, v in given.items() if v is not None}  #: master's settings given here
        SearchOptions(**{**MASTER_SEARCH, **self.search_options})  # a bad value is refused now, naming it
        self.policies = list(policies) if policies is not None else load_policies(path)
        if expert_policies is None:
            expert_policies = self.policies if policies is not None else load_policies(path, expert=True)
        self.expert_policies = list(expert_policies)
        self.level = level
        self._searches: dict[int, SearchAgent] = {}

    @property
    def policy(self) -> OnnxPolicy:
        """The default policy of this level (whose card a bot reports)."""
        return self.level_policies[0]

    @property
    def level_policies(self) -> list[OnnxPolicy]:
        """The policies this level plays (``expert``: :attr:`expert_policies`) or searches over."""
        return self.expert_policies if self.level == "expert" else self.policies

    @property
    def deterministic(self) -> bool:
        """Whether the same view always gets the same action: a greedy level that neither searches
        nor plays at random (``expert``), which a search may take as its model of another seat."""
        lv = LEVELS[self.level]
        return lv.temperature <= 0 and lv.random == 0 and not lv.search

    @property
    def at_search_level(self) -> bool:
        """Whether the level plans each decision with the search (``master``) rather than sampling the policy."""
        return LEVELS[self.level].search

    def with_level(self, level: str, seed=None) -> PolicyPlayer:
        """The same policies (loaded once) at another level, with its own seed."""
        return PolicyPlayer(seed, level=level, policies=self.policies, expert_policies=self.expert_policies,
                            **self.search_options)

    def reset(self, seed=None) -> None:
        super().reset(seed)
        if seed is not None:  # the search draws its seed from the new generator when next needed
            self._searches.clear()

    def search(self, policy: OnnxPolicy) -> SearchAgent:
        """The master search over ``policy`` (made on first use, seeded from this player's generator)."""
        k = self.policies.index(policy)
        if k not in self._searches:
            options = {**master_search(policy.rules), **self.search_options}
            self._searches[k] = SearchAgent(seed=int(self.rng.integers(2**31)), policy=policy, play="pimc", **options)
        return self._searches[k]

    def label_values(self, view: SeatView, legal: list[int], margin_coef: float = 0.0) -> np.ndarray:
        """(len(legal),) at level ``master``, its search's values of the legal actions (a teacher's
        labels: :meth:`SearchAgent.label_values`); a level that samples the policy values nothing."""
        if not self.at_search_level:
            raise ValueError(f"level {self.level} samples the policy and values no action; level master searches")
        return self.search(policy_for(self.policies, view.rules)).label_values(view, legal, margin_coef)

    def probabilities(self, view: SeatView) -> np.ndarray:
        """(24,) the probabilities the player draws its action for ``view`` from (zero off the legal
        actions; at a search level, one on the action the search chose)."""
        policy = policy_for(self.level_policies, view.rules)
        if self.at_search_level:
            p = np.zeros(NUM_ACTIONS)
            p[self.search(policy).act(view)] = 1.0
            return p
        return policy.probabilities(view.observation[None], view.legal_mask[None], self.level)[0]

    def act(self, view: SeatView) -> int:
        return self.choose(view, self.probabilities(view))

    def choose(self, view: SeatView, p: np.ndarray) -> int:
        """An action drawn from ``p`` (24,), which is zero off ``view``'s legal actions."""
        a = int(sample_actions(p[None], self.rng)[0])
        if not view.legal_mask[a]:  # cannot happen: p is zero off the mask
            raise RuntimeError(f"the player chose an illegal action {a}")
        return a

    def act_batch(self, views: list[SeatView]) -> list[int]:
        if self.at_search_level:
            return [self.act(v) for v in views]
        obs = np.stack([v.observation for v in views])
        mask = np.stack([v.legal_mask for v in views])
        policy = policy_for(self.level_policies, views[0].rules)  # every view of a batch is of one game's rules
        return sample_actions(policy.probabilities(obs, mask, self.level), self.rng).tolist()


__all__ = ["PolicyPlayer"]
