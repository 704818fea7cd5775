"""The training algorithms ``--algorithm`` offers, by name: one line each.

An algorithm is a module with its config (a :class:`~agents.training.config.RunConfig` with its
own fields), its checkpoint's checks and its run, described by an
:class:`~agents.training.config.Algorithm` (docs/architecture.md: how to add one).
"""

from __future__ import annotations

from . import distill, ppo
from .config import Algorithm

ALGORITHMS: dict[str, Algorithm] = {
    "ppo": ppo.ALGORITHM,
    "distill": distill.ALGORITHM,
}

#: the algorithm of a new run that names none (``python train.py``): the recipe that gives the strongest
#: network from scratch within about an hour on 2 cores (docs/training.md)
DEFAULT = "distill"

__all__ = ["ALGORITHMS", "DEFAULT"]
