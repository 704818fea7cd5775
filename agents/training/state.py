"""A run's checkpoint, the same for every algorithm: one payload, one way back.

:func:`run_state` is what every checkpoint holds (its run's name, config, rules and observation
version; the network's weights and spec, the optimiser, the random streams) plus the algorithm's
own progress fields (PPO: the games, unfinished decisions and pool; teacher–student: the iteration,
labels and pool); :func:`restore_run` puts back the
common part, :func:`put_back` any other field, each a :class:`~agents.checkpoint.CheckpointError`
naming the field that does not fit. The payload holds only tensors, numbers, strings and lists or
dicts of them (written by :func:`agents.checkpoint.save_checkpoint`, read with ``weights_only=True``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np
import torch

from cuatrola_env.observation import OBS_VERSION
from cuatrola_env.rules import Rules

from ..checkpoint import CheckpointError


def run_state(run_name: str, cfg, rules: Rules, net, opt, rng: np.random.Generator, **progress) -> dict:
    """The checkpoint payload of a run at this point: what every run holds, and ``progress``."""
    return {"run_name": run_name, "config": dataclasses.asdict(cfg), "rules": rules.to_dict(), "obs_version": OBS_VERSION,
            "model": net.state_dict(), "network": net.spec.to_dict(), "optimizer": opt.state_dict(),
            "rng": rng.bit_generator.state, "torch_rng": torch.get_rng_state(), **progress}


def put_back(path, field: str, action: Callable):
    """``action()`` (which puts the checkpoint's ``field`` into the run); what it raises becomes a
    :class:`CheckpointError` naming the file and the field."""
    try:
        return action()
    except CheckpointError:
        raise
    except (RuntimeError, ValueError, TypeError, KeyError, AttributeError, IndexError) as e:
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise CheckpointError(f"{path}: field {field!r} does not fit this run: {first}") from None


def restore_run(ck: dict, path, net, opt, rng: np.random.Generator) -> None:
    """Put back what every checkpoint holds: the weights, the optimiser and the random streams."""
    put_back(path, "model", lambda: net.load_state_dict(ck["model"]))
    put_back(path, "optimizer", lambda: opt.load_state_dict(ck["optimizer"]))
    put_back(path, "rng", lambda: setattr(rng.bit_generator, "state", ck["rng"]))
    put_back(path, "torch_rng", lambda: torch.set_rng_state(ck["torch_rng"]))


__all__ = ["put_back", "restore_run", "run_state"]
