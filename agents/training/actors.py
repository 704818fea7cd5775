"""Rollouts on several workers: Ray actors, each playing its share of the games.

With ``workers`` N > 1, each of N :class:`RolloutWorker` actors holds a :class:`SelfPlay` of
``num_envs / N`` games (its own seeds, its own opponents) and a CPU copy of the policy that
the learner refreshes before every rollout; :class:`ShardedPlay` gives the learner the same
interface as one :class:`SelfPlay` (``collect``, the logs, the state for checkpoints), so the
training loop does not change. Every worker's games, unfinished decisions and random streams
are in the checkpoint, so a resumed run continues exactly.
"""

from __future__ import annotations

import copy
import dataclasses

import numpy as np
import torch

from cuatrola_env import get_rules

from ..checkpoint import to_arrays
from ..network import NetworkSpec, PolicyValueNet, build
from ..parallel import start_ray
from .rollout import Progress, SelfPlay


class RolloutWorker:
    """Shard ``shard`` of the games of a run (``cfg``, its config; ``rules`` as a plain dict)."""

    def __init__(self, cfg, rules: dict, shard: int, spec: dict):
        self.cfg = dataclasses.replace(cfg, num_envs=cfg.num_envs // cfg.workers, seed=cfg.seed + 7919 * (shard + 1))
        torch.set_num_threads(1)
        torch.manual_seed(self.cfg.seed)
        self.net = build(NetworkSpec.from_dict(spec)).eval()
        self.play = SelfPlay(self.cfg, get_rules(rules), self.net)
        self.run = Progress.start(self.cfg.num_envs)
        self.rng = np.random.default_rng(self.cfg.seed)

    def collect(self, weights: dict, step: int, frozen: dict | None):
        """One rollout with the learner's ``weights`` (and ``frozen``, the pool's network of this
        rollout): the data, returns, phase and the finished hands' logs."""
        self.net.load_state_dict(weights)
        self.run.step, self.run.pool = step, [frozen] if frozen is not None else []
        data, returns, imitating = self.play.collect(self.run, self.rng)
        logs = self.play.contract_log, self.play.episode_log
        self.play.contract_log, self.play.episode_log = [], []
        return data, returns, imitating, logs

    def get_state(self) -> dict:
        return {"env": self.play.get_state(), "hand_uid": self.run.hand_uid.copy(), "pending": self.run.pending,
                "rng": self.rng.bit_generator.state, "torch_rng": torch.get_rng_state()}

    def set_state(self, state: dict) -> None:
        state = copy.deepcopy(to_arrays(state))  # writable copies of what arrived read-only
        self.play.set_state(state["env"])
        self.run.hand_uid, self.run.pending = state["hand_uid"], state["pending"]
        self.rng.bit_generator.state = state["rng"]
        torch.set_rng_state(torch.from_numpy(state["torch_rng"]))


class ShardedPlay:
    """The :class:`SelfPlay` interface over ``cfg.workers`` rollout actors on Ray."""

    def __init__(self, cfg, rules, net: PolicyValueNet):
        start_ray(cfg.workers, cfg.ray_address or None)  # before Ray is imported here: it sets Ray's mode up
        import ray  # the scale extra: only a run with workers > 1 needs it

        self.ray, self.cfg, self.net = ray, cfg, net
        actor = ray.remote(num_cpus=1, max_restarts=0)(RolloutWorker)
        self.actors = [actor.remote(cfg, rules.to_dict(), k, net.spec.to_dict()) for k in range(cfg.workers)]
        self.contract_log: list[tuple] = []
        self.episode_log: list[tuple] = []

    @property
    def decisions_per_rollout(self) -> int:
        return self.cfg.num_envs * self.cfg.num_steps

    def collect(self, run: Progress, rng: np.random.Generator) -> tuple[dict, np.ndarray, bool]:
        frozen = run.pool[int(rng.integers(len(run.pool)))] if run.pool else None  # one pool network for all
        weights = self.ray.put({k: v.detach().cpu() for k, v in self.net.state_dict().items()})
        outs = self.ray.get([a.collect.remote(weights, run.step, frozen) for a in self.actors])
        for _, _, _, (contracts, episodes) in outs:
            self.contract_log += contracts
            self.episode_log += episodes
        data = {k: np.concatenate([o[0][k] for o in outs]) for k in outs[0][0]}
        return data, np.concatenate([o[1] for o in outs]), outs[0][2]

    def get_state(self) -> dict:
        return {"workers": self.ray.get([a.get_state.remote() for a in self.actors])}

    def set_state(self, state: dict) -> None:
        self.ray.get([a.set_state.remote(s) for a, s in zip(self.actors, state["workers"], strict=True)])

    def close(self) -> None:
        for a in self.actors:
            self.ray.kill(a)
