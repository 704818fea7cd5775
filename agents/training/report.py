"""What a run writes to TensorBoard: ``charts/`` (throughput, game points against each kind of
opponent), ``losses/``, ``bids/`` (frequency and success per contract and per declarer seat
relative to the dealer) and ``eval/`` (duplicate evaluation against random and heuristic)."""

from __future__ import annotations

import time

import numpy as np

from cuatrola_env.positions import random_deals
from cuatrola_env.rules import CONTRACT_NAMES

from .. import evaluation
from ..torch_agent import TorchAgent
from .config import RunConfig
from .rollout import SelfPlay

BIDS_EVERY = 5  #: updates between two bids/ and charts/game_points_* points


def time_left(done: int, total: int, durations: list[float], now: float | None = None, minutes: float = 0.0,
              later: float | None = 0.0) -> str:
    """``iteration k of N`` and, from the latest iterations' durations (seconds), how long the rest of
    the run should take and when it should end (local time); for a stage of a recipe with stages after
    it (``later`` minutes on 2 cores, ``None`` when unknown), the same for the whole recipe
    (:func:`recipe_seconds`; ``minutes``: this stage's own time on 2 cores)."""
    if done >= total or not durations:
        return f"iteration {done} of {total}"
    recent = durations[-3:]
    per_step = sum(recent) / len(recent)
    left = (total - done) * per_step
    clock = time.time() if now is None else now
    text = f"iteration {done} of {total}; about {duration(left)} left (done about {_clock(clock + left)})"
    if later is None:
        return text + "; the later stages' time unknown"
    if not later:
        return text
    rest = recipe_seconds(left, per_step * total, minutes, later)
    return text + f"; the recipe about {duration(rest)} left (done about {_clock(clock + rest)})"


def recipe_seconds(left: float, stage: float, minutes: float, later: float) -> float:
    """Seconds until the recipe ends: ``left`` seconds of this stage, then its later stages' ``later``
    minutes on 2 cores at this run's pace (``stage`` seconds here for a stage of ``minutes`` there;
    the same pace when ``minutes`` is unknown)."""
    pace = stage / (60 * minutes) if minutes > 0 else 1.0
    return left + 60 * later * pace


def _clock(at: float) -> str:
    return time.strftime("%H:%M", time.localtime(at))


def duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def log_update(writer, play: SelfPlay, stats: dict, returns: np.ndarray, update: int, step: int, seconds: float) -> None:
    """The charts/ and losses/ of one update; every :data:`BIDS_EVERY` updates the bids/ and the
    learner's results since the last time."""
    writer.add_scalar("charts/decisions_per_s", play.decisions_per_rollout / seconds, step)
    writer.add_scalar("charts/mean_abs_game_points", float(np.abs(returns).mean()) if returns.size else 0.0, step)
    for k, v in stats.items():
        writer.add_scalar(f"losses/{k}", v, step)
    if play.contract_log and update % BIDS_EVERY == 0:
        log_bids(writer, play.contract_log, step)
        h, f, gp = (np.concatenate(col) for col in zip(*play.episode_log, strict=True))
        for name, sel in (("vs_heuristic", h), ("vs_pool", f)):
            if sel.any():
                writer.add_scalar(f"charts/game_points_{name}", float(gp[sel].mean()), step)
        play.contract_log, play.episode_log = [], []


def log_bids(writer, log, step) -> None:
    contract, declarer, dealer, winner, _ = (np.concatenate(col) for col in zip(*log, strict=True))
    for c in range(1, 4):
        sel = contract == c
        writer.add_scalar(f"bids/{CONTRACT_NAMES[c]}_frequency", float(sel.mean()), step)
        if sel.any():
            writer.add_scalar(f"bids/{CONTRACT_NAMES[c]}_success", float((winner[sel] == declarer[sel] % 2).mean()), step)
        for rel in range(4):  # declarer's seat relative to the dealer (1 = la mano)
            s2 = sel & ((declarer - dealer) % 4 == rel)
            writer.add_scalar(f"bids/{CONTRACT_NAMES[c]}_by_seat_{rel}", float(s2.mean()), step)


def interval(gp: dict) -> str:
    """A result's mean and 95% interval as the progress bars show it: ``+0.09 [+0.05, +0.13]``."""
    return f"{gp['mean']:+.2f} [{gp['ci95'][0]:+.2f}, {gp['ci95'][1]:+.2f}]"


def evaluate_policy(writer, net, rules, cfg: RunConfig, step: int) -> dict:
    """Duplicate evaluation of the current policy against random and heuristic."""
    deals = random_deals(cfg.eval_deals, 12345)
    me = evaluation.Side("model", (TorchAgent(net), TorchAgent(net)))
    out = {}
    for opp in ("random", "heuristic"):
        r = evaluation.evaluate_pair(me, evaluation.Side.from_spec(opp, 0), rules, deals, 0, 0)
        gp = r["game_points_per_hand"]
        writer.add_scalar(f"eval/vs_{opp}_game_points", gp["mean"], step)
        writer.add_scalar(f"eval/vs_{opp}_ci_low", gp["ci95"][0], step)
        writer.add_scalar(f"eval/vs_{opp}_ci_high", gp["ci95"][1], step)
        out[opp] = gp
    return out


