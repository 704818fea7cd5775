"""Refit: a larger late card-play head fitted afresh, and for longer, to the labels oracle runs stored.

    python train.py --config configs/refit.yaml --init agents/models/cuatrola_expert.pt \\
        --refit-windows runs/A/data/window.npz,runs/B/data/window.npz
    python train.py --resume runs/NAME/checkpoint.pt                # continue after the last pass

An oracle run keeps its latest labelled decisions (``data/window.npz``: the deals, the actions and
each decision's values of every legal action). Labels cost compute; fitting them costs little. A late
head fitted while its window filled saw each label a few times, with a learning rate set for new
labels arriving, at the size of the policy head: fitted afresh to the windows of several runs at once,
for many passes, with a larger and deeper head, it comes closer to its teacher on the last tricks,
where a small network errs most (docs/experiments.md).

Only the late head (``late_net``: the card plays from ``late_from_trick`` on) learns; the bids, the
early card play, the action values and the card locations stay the ``--init`` network's. Each pass:

1. **Fit** one pass over the windows' card plays from ``late_from_trick`` on (the suits renamed at
   random when ``fit_suits``), the policy by cross-entropy towards ``softmax(labels / tau)`` (labels
   that average many deals, such as PIMC's: ``oracle_search_worlds``), the learning rate falling from
   ``learning_rate`` to 0 by a cosine over ``refit_epochs`` passes.
2. **Measure** on the held-out deals (a twentieth, chosen by the deal itself, never fitted): how
   often the head's choice is a best label and what it gives up against the best, per trick.
3. **Checkpoint** atomically: the network, the optimiser, the pass and the random state. A resumed
   run reads the same windows (they must still be where the run found them) and goes on exactly as
   the uninterrupted one.

TensorBoard: ``losses/policy_ce``, ``losses/held_out_regret``, ``losses/held_out_agreement`` and
``losses/held_out_regret_trick_K``, by pass.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from torch.utils.tensorboard import SummaryWriter

from cuatrola_env.cli import brief
from cuatrola_env.observation import trick_number
from cuatrola_env.rules import NUM_TRICKS, Rules

from ..checkpoint import CheckpointError, kept, network_spec, save_checkpoint
from ..network import PolicyValueNet
from ..parallel import Stopped
from .config import LATER_FIELDS, RESUMABLE, Algorithm, RunConfig, check_counts, learner_device, option, run_rules
from .fitting import minibatch_passes, renamed_suits, soft_cross_entropy, soft_targets, with_weights
from .labels import load_data
from .oracle import Window
from .state import restore_run, run_state
from .stopping import stop_signals


@dataclasses.dataclass
class RefitConfig(RunConfig):
    """A refit run's fields: :class:`RunConfig`'s and these."""

    algorithm: str = option("refit", RunConfig.__dataclass_fields__["algorithm"].metadata["help"])
    exp_name: str = option("refit", "run name prefix: runs/<exp_name>_<seed>_<time>")
    hidden: int = option(256, "hidden units per layer of the --init network's other heads")
    learning_rate: float = option(1e-3, "Adam learning rate of the first pass (a cosine takes it to 0 at the last)")
    eval_every: int = option(0, "unused: a refit measures itself on the held-out deals after every pass")
    refit_windows: str = option("", "the label windows to fit, comma-separated: runs/NAME/data/window.npz of "
                                    "oracle runs of this rules preset")
    refit_epochs: int = option(16, "passes over the windows' labels")
    late_from_trick: int = option(1, "the first trick the late head plays (from 0); the --init network's own "
                                     "when it has a late head")
    late_hidden: int = option(512, "units a layer of the late head")
    late_layers: int = option(3, "hidden layers of the late head")
    tau: float = option(0.1, "policy target softmax(labels / tau), in game points")
    fit_batch: int = option(512, "minibatch size")
    fit_suits: bool = option(True, "rename the suits of each fitted decision at random (the rules treat them alike)")


#: what a resumed refit may change, and what its checkpoint holds
REFIT_RESUMABLE = RESUMABLE + ("refit_epochs",)
RESUME_FIELDS = ("run_name", "config", "optimizer", "epoch", "rng", "torch_rng")


def check(cfg: RefitConfig) -> None:
    """``ValueError`` naming a refit field no run can start with."""
    check_counts(cfg, "refit_epochs", "late_hidden", "late_layers", "fit_batch")
    if not cfg.init:
        raise ValueError("a refit starts from a trained network: give it with --init (a checkpoint or model file)")
    if not window_paths(cfg):
        raise ValueError("refit_windows names no label window: give runs/NAME/data/window.npz of oracle runs, "
                         "comma-separated")
    if not 1 <= cfg.late_from_trick <= NUM_TRICKS - 1:
        raise ValueError(f"late_from_trick must be a trick from 1 to {NUM_TRICKS - 1}, got {cfg.late_from_trick}")
    if cfg.tau <= 0:
        raise ValueError(f"tau must be positive, got {cfg.tau}")


def check_checkpoint(ck: dict, path: str) -> None:
    """:class:`CheckpointError` naming the first field of a refit checkpoint a run cannot resume from."""
    if type(ck["epoch"]) is not int or ck["epoch"] < 0:
        raise CheckpointError(f"{path}: field 'epoch' must be a count of passes, got {brief(ck['epoch'], 40)}")


def window_paths(cfg: RefitConfig) -> list[Path]:
    return [Path(p.strip()) for p in cfg.refit_windows.split(",") if p.strip()]


# ----------------------------------------------------------------------------- the network and the labels
def refit_network(cfg: RefitConfig, start: dict) -> PolicyValueNet:
    """The network of ``start`` (``{"model": weights, "network": their NetworkSpec}``) with a late head
    of ``late_hidden`` x ``late_layers``: its own late head when it has that size (a resumed run, or a
    refit of a refit), a fresh one otherwise."""
    spec, weights = start["network"], start["model"]
    late_from_trick = cfg.late_from_trick if spec.late_from_trick is None else spec.late_from_trick
    net = PolicyValueNet(cfg.hidden, cfg.layers, dueling=True, owners=True, late_from_trick=late_from_trick,
                         late_hidden=cfg.late_hidden, late_layers=cfg.late_layers, early_head=spec.early_head)
    fresh = {k: v for k, v in net.state_dict().items() if k.startswith("late_net.")}
    held = {k: v for k, v in weights.items() if k.startswith("late_net.")}
    same = (spec.late_hidden, spec.late_layers) == (cfg.late_hidden, cfg.late_layers) and held.keys() == fresh.keys()
    others = {k: v for k, v in weights.items() if not k.startswith("late_net.") and k != "late_from_trick"}
    return with_weights(net, {**others, **(held if same else fresh)}, ("late_net.", "late_from_trick"))


def read_windows(cfg: RefitConfig, rules: Rules) -> Window:
    """The windows of ``cfg.refit_windows`` as one, replayed through the engine; a window that is
    missing or does not fit its positions is a :class:`CheckpointError` naming it."""
    windows = []
    for path in window_paths(cfg):
        try:
            windows.append(Window.of(load_data(path), rules))  # each replayed alone, so that an error names it
        except ValueError as e:
            raise CheckpointError(f"{path}: {e}") from None
    total = sum(len(w) for w in windows)
    return functools.reduce(lambda joined, w: joined.add(w, total), windows)


# ----------------------------------------------------------------------------- fitting and measuring
def fit_pass(net: PolicyValueNet, opt, cfg: RefitConfig, window: Window, rows: np.ndarray,
             rng: np.random.Generator, stop: Callable[[], bool] | None = None) -> dict:
    """One pass over ``rows`` of the window: the late head towards softmax(labels / tau)
    (:class:`~agents.parallel.Stopped` between two steps once ``stop()``)."""
    def losses(idx: np.ndarray) -> dict:
        o, m, v = (torch.from_numpy(x[idx]) for x in (window.obs, window.mask, window.values))
        if cfg.fit_suits:
            o, (m, v) = renamed_suits(o, (m, v), rng)
        return {"policy_ce": soft_cross_entropy(net.policy(o, m), soft_targets(v, m, cfg.tau), m).mean()}

    return minibatch_passes(net, opt, rows, 1, cfg.fit_batch, cfg.max_grad_norm, losses, lambda x: x["policy_ce"], rng,
                            stop)


def held_out_regret(net: PolicyValueNet, window: Window, rows: np.ndarray, tricks: np.ndarray) -> dict:
    """On ``rows`` (held-out decisions): how often the policy's choice is a best label, what it gives up
    against the best label (game points), overall and per trick; nothing when there are none."""
    if not len(rows):
        return {}
    picks = []
    with torch.no_grad():
        for chunk in np.array_split(rows, max(1, len(rows) // 65536)):
            picks.append(net.policy(torch.from_numpy(window.obs[chunk]), torch.from_numpy(window.mask[chunk])).argmax(-1))
    regret = label_regret(window.values[rows], window.mask[rows], torch.cat(picks).numpy())
    out = {"held_out_regret": float(regret.mean()), "held_out_agreement": float((regret <= 1e-6).mean())}
    for t in np.unique(tricks):
        out[f"held_out_regret_trick_{t}"] = float(regret[tricks == t].mean())
    return out


def label_regret(values: np.ndarray, mask: np.ndarray, pick: np.ndarray) -> np.ndarray:
    """(N,) what each row's chosen action ``pick`` gives up against its best label (game points)."""
    best = np.where(mask, values, -np.inf).max(1)
    return best - values[np.arange(len(values)), pick]


def learning_rate(cfg: RefitConfig, epoch: int) -> float:
    """The learning rate of pass ``epoch`` (from 0): a cosine from ``learning_rate`` towards 0."""
    return cfg.learning_rate * 0.5 * (1 + math.cos(math.pi * epoch / cfg.refit_epochs))


# ----------------------------------------------------------------------------- the run
def snapshot(run_name: str, cfg: RefitConfig, rules: Rules, net, opt, rng: np.random.Generator, epoch: int,
             labels: int) -> dict:
    """A refit checkpoint: what every run holds, and its pass."""
    return run_state(run_name, cfg, rules, net, opt, rng, epoch=epoch, step=epoch * labels, update=epoch, labels=labels)


def start(cfg: RefitConfig, resume: str | None, ck: dict | None, init: dict | None, run_name: str, run_dir: Path,
          rng: np.random.Generator) -> int:
    """Fit the late head pass by pass, a checkpoint after each, until ``refit_epochs`` or Ctrl-C / SIGTERM."""
    rules = run_rules(cfg)
    start_from = {"model": ck["model"], "network": network_spec(ck, resume)} if ck else init
    net = refit_network(cfg, start_from).to(learner_device(cfg.device))
    opt = torch.optim.Adam(net.late_net.parameters(), lr=cfg.learning_rate, eps=1e-5)
    epoch = 0
    if ck:
        restore_run(ck, resume, net, opt, rng)
        epoch = ck["epoch"]
    window = read_windows(cfg, rules)
    tricks = trick_number(window.obs)
    late = (window.mask.sum(1) > 1) & (tricks >= net.late_trick)
    train, held = np.flatnonzero(late & ~window.held), np.flatnonzero(late & window.held)
    print(f"{len(train)} card plays to fit, {len(held)} held out, from {len(window_paths(cfg))} windows", file=sys.stderr)
    writer = SummaryWriter(str(run_dir))
    with stop_signals() as stop:
        while epoch < cfg.refit_epochs and not stop["now"]:
            before = kept(snapshot(run_name, cfg, rules, net, opt, rng, epoch, len(train)))
            for group in opt.param_groups:
                group["lr"] = learning_rate(cfg, epoch)
            try:
                stats = fit_pass(net, opt, cfg, window, train, rng, lambda: stop["now"])
            except Stopped:  # Ctrl-C mid-pass: the run as it was before this pass
                save_checkpoint(run_dir / "checkpoint.pt", before)
                break
            net.eval()
            stats.update(held_out_regret(net, window, held, tricks[held]))
            epoch += 1
            for k, x in stats.items():
                writer.add_scalar(f"losses/{k}", x, epoch)
            writer.add_scalar("charts/learning_rate", learning_rate(cfg, epoch - 1), epoch)
            save_checkpoint(run_dir / "checkpoint.pt", snapshot(run_name, cfg, rules, net, opt, rng, epoch, len(train)))
            print(f"pass {epoch}: " + ", ".join(f"{k} {x:.4f}" for k, x in stats.items()), file=sys.stderr, flush=True)
    writer.close()
    print(f"{'stopped' if stop['now'] else 'finished'}: {epoch} passes; checkpoint {run_dir / 'checkpoint.pt'}")
    return 0


def init_weights(init: dict) -> dict:
    """An ``--init`` network, as it is (the refit keeps every head but the late one)."""
    return init


ALGORITHM = Algorithm("refit", RefitConfig, resumable=REFIT_RESUMABLE, resume_fields=RESUME_FIELDS,
                      later=LATER_FIELDS, check=check, check_checkpoint=check_checkpoint,
                      init_weights=init_weights, run=start, finished=lambda ck: ck["epoch"] >= ck["config"]["refit_epochs"])

__all__ = ["ALGORITHM", "RefitConfig", "label_regret", "refit_network"]
