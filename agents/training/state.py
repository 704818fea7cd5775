"""A run's checkpoint: everything it needs to continue bit for bit, and putting it back.

The payload holds only tensors, numbers, strings and lists or dicts of them (written by
:func:`agents.checkpoint.save_checkpoint`, read with ``weights_only=True``): the network and
optimiser, the config, rules and observation version, the counters, the RNG states, the
games (:meth:`VectorCuatrola.get_state`; with rollout workers, each worker's games, unfinished
decisions and random streams), the decisions of unfinished hands and the pool. ``play`` is the
run's :class:`~agents.training.rollout.SelfPlay` or :class:`~agents.training.actors.ShardedPlay`.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import torch

from cuatrola_env.observation import OBS_VERSION
from cuatrola_env.rules import Rules

from ..checkpoint import CheckpointError, to_arrays
from .rollout import Progress


def snapshot(run_name: str, cfg, rules: Rules, net, opt, rng: np.random.Generator, play, run: Progress) -> dict:
    """The checkpoint payload of a run at this point."""
    return {
        "run_name": run_name, "config": dataclasses.asdict(cfg), "rules": rules.to_dict(), "obs_version": OBS_VERSION,
        "model": net.state_dict(), "network": net.spec.to_dict(),
        "optimizer": opt.state_dict(), "step": run.step, "update": run.update,
        "rng": rng.bit_generator.state, "torch_rng": torch.get_rng_state(), "env": play.get_state(),
        "hand_uid": run.hand_uid, "pending": run.pending, "pool": run.pool,
    }


def restore(ck: dict, path: str, net, opt, rng: np.random.Generator, play) -> Progress:
    """Put a checked checkpoint's state into the run; :class:`CheckpointError` names a field that does not fit."""

    def fit(field, put_back):
        try:
            return put_back()
        except (RuntimeError, ValueError, TypeError, KeyError, AttributeError, IndexError) as e:
            first = str(e).splitlines()[0] if str(e) else type(e).__name__
            raise CheckpointError(f"{path}: field {field!r} does not fit this run: {first}") from None

    fit("model", lambda: net.load_state_dict(ck["model"]))
    fit("optimizer", lambda: opt.load_state_dict(ck["optimizer"]))
    fit("rng", lambda: setattr(rng.bit_generator, "state", ck["rng"]))
    fit("torch_rng", lambda: torch.set_rng_state(ck["torch_rng"]))
    fit("env", lambda: play.set_state(to_arrays(ck["env"])))
    pending = to_arrays(ck["pending"])
    if pending is not None and not isinstance(pending, dict):
        raise CheckpointError(f"{path}: field 'pending' must be a dict of arrays or None")
    pool, shapes = ck["pool"], {k: v.shape for k, v in net.state_dict().items()}
    for i, p in enumerate(pool if isinstance(pool, list) else [None]):
        if not isinstance(p, dict) or {k: getattr(v, "shape", None) for k, v in p.items()} != shapes:
            raise CheckpointError(f"{path}: field 'pool' must be a list of state dicts of this run's network (pool[{i}] is not)")
    return Progress(int(ck["step"]), int(ck["update"]), to_arrays(ck["hand_uid"]), pending, pool)
