"""What label fitting needs (:mod:`.distill`): a network with fresh heads
from another's weights, the soft policy target, passes of minibatch steps over labelled rows, and
rows with their suits renamed at random (:mod:`cuatrola_env.suits`)."""

from __future__ import annotations

import sys
from collections.abc import Callable

import numpy as np
import torch
from tqdm import tqdm

from cuatrola_env.suits import RENAMINGS, action_columns, observation_columns

from ..checkpoint import CheckpointError
from ..network import PolicyValueNet
from ..parallel import Stopped


def with_weights(net: PolicyValueNet, weights: dict | None, fresh: tuple[str, ...] = ("q_net.",)) -> PolicyValueNet:
    """``net`` with ``weights`` (a state dict of tensors or arrays) loaded, in eval mode; the heads
    named by ``fresh`` may be missing from them (a policy network's weights: they start fresh);
    anything else that does not fit is a :class:`CheckpointError`."""
    if weights is not None:
        missing, unexpected = net.load_state_dict({k: torch.as_tensor(v) for k, v in weights.items()}, strict=False)
        if unexpected or any(not k.startswith(fresh) for k in missing):
            raise CheckpointError(f"weights do not fit this network (missing {missing}, unexpected {unexpected})")
    return net.eval()


def soft_targets(values: torch.Tensor, mask: torch.Tensor, tau: float) -> torch.Tensor:
    """softmax(values / tau) over the legal actions; 0 elsewhere."""
    z = torch.where(mask, torch.nan_to_num(values) / tau, torch.full_like(values, -torch.inf))
    return torch.softmax(z, -1)


def soft_cross_entropy(logits: torch.Tensor, target: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """(N,) each row's cross-entropy of the policy ``logits`` against the soft ``target``, over the
    legal actions of ``mask``."""
    logp = torch.log_softmax(logits, -1)
    return -(target * torch.where(mask, logp, torch.zeros_like(logp))).sum(-1)


#: (24, OBS_DIM) and (24, 24) column indices of each renaming of the suits
_OBS_RENAMED = torch.from_numpy(np.stack([observation_columns(s) for s in RENAMINGS]))
_ACT_RENAMED = torch.from_numpy(np.stack([action_columns(s) for s in RENAMINGS]))


def renamed_suits(obs: torch.Tensor, per_action: tuple[torch.Tensor, ...], rng: np.random.Generator,
                  rows: torch.Tensor | None = None) -> tuple[torch.Tensor, tuple[torch.Tensor, ...]]:
    """Each row's observation and its per-action rows (legal mask, labels, targets: (N, 24) each;
    or per-card rows, (N, 20), such as the card-location targets) with the suits renamed, one renaming
    drawn at random per row (only the ``rows`` given, a bool mask: the others keep their names): a
    position the rules make the same, renamed."""
    which = torch.from_numpy(rng.integers(len(RENAMINGS), size=len(obs))).to(obs.device)
    if rows is not None:
        which = torch.where(rows, which, torch.zeros_like(which))  # renaming 0 is the identity
    obs_cols, act_cols = _OBS_RENAMED.to(obs.device)[which], _ACT_RENAMED.to(obs.device)[which]
    return obs.gather(1, obs_cols), tuple(x.gather(1, act_cols[:, : x.shape[1]]) for x in per_action)


def minibatch_passes(net: PolicyValueNet, opt, rows: np.ndarray, epochs: int, batch: int, max_grad_norm: float,
                     losses: Callable[[np.ndarray], dict], total: Callable[[dict], torch.Tensor],
                     rng: np.random.Generator, stop: Callable[[], bool] | None = None) -> dict[str, float]:
    """``epochs`` passes over ``rows`` in shuffled minibatches of about ``batch``: each step minimises
    ``total(losses(idx))`` (gradients clipped to ``max_grad_norm``); the mean of each loss over the
    steps. A progress bar shows the fitting. :class:`~agents.parallel.Stopped` between two steps once
    ``stop()`` (Ctrl-C or SIGTERM: the caller puts back the run as it was before the fit)."""
    sums, steps = {}, 0
    net.train()
    bar = tqdm(total=epochs * len(rows), unit="decision", desc="fitting", file=sys.stderr, leave=False)
    for _ in range(epochs):
        for idx in np.array_split(rng.permutation(rows), max(1, len(rows) // batch)):
            if stop is not None and stop():
                bar.close()
                raise Stopped("stopped while fitting")
            bar.update(len(idx))
            out = losses(idx)
            opt.zero_grad()
            total(out).backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), max_grad_norm)
            opt.step()
            for k, x in out.items():
                sums[k] = sums.get(k, 0.0) + x.item()
            steps += 1
    bar.close()
    net.eval()
    return {k: x / max(steps, 1) for k, x in sums.items()}


__all__ = ["minibatch_passes", "renamed_suits", "soft_targets", "with_weights"]
