"""``--algorithm ppo`` (the default): imitation of the heuristic as a warm start, then masked PPO
with a perfect-information critic, in self-play against the heuristic, a pool of past networks
and itself (see :mod:`agents.training`).

The run: roll out ``num_steps`` decisions of every game (:mod:`.rollout`, or :mod:`.actors` on
Ray workers), learn from the finished hands (:mod:`.update`), report (:mod:`.report`), and
checkpoint every ``checkpoint_minutes`` and at the end (:mod:`.state`).
"""

from __future__ import annotations

import copy
import dataclasses
import sys
import time
from pathlib import Path

import numpy as np
import torch
from torch.utils.tensorboard import SummaryWriter
from tqdm import tqdm

from cuatrola_env.rules import Rules

from ..checkpoint import CheckpointError, network_spec, save_checkpoint, to_arrays
from ..network import NetworkSpec, build
from ..registry import make_agent
from .actors import ShardedPlay
from .config import LATER_FIELDS, RESUMABLE, Algorithm, RunConfig, check_counts, later_minutes, learner_device, option, run_rules
from .report import duration, evaluate_policy, interval, log_update, recipe_seconds
from .rollout import Progress, SelfPlay
from .state import put_back, restore_run, run_state
from .stopping import stop_signals
from .update import imitation_update, ppo_update


@dataclasses.dataclass
class PPOConfig(RunConfig):
    """A PPO run: the fields of every run, and these."""

    num_envs: int = option(1024, "games stepped at once")
    num_steps: int = option(24, "decisions per game per rollout")
    total_decisions: int = option(70_000_000, "decisions to train for")
    update_epochs: int = option(1, "PPO epochs per rollout")
    num_minibatches: int = option(16, "minibatches per epoch")
    clip_coef: float = option(0.2, "PPO clipping")
    ent_coef: float = option(0.01, "entropy bonus")
    vf_coef: float = option(0.5, "value loss weight")
    imitation_decisions: int = option(6_000_000, "warm start: imitate the heuristic's choices for N decisions "
                                                 "(DAgger), then PPO")
    bid_ent_coef: float = option(0.05, "extra entropy bonus on bidding decisions (keeps the contracts explored)")
    card_points_coef: float = option(0.5, "shaping: add this times the team's card-point margin / 100 to each return")
    heuristic_frac: float = option(0.35, "share of games where one team is the heuristic bot (the other the learner)")
    opponent: str = option("heuristic", "agent spec of the fixed opponent team of heuristic_frac of the games after "
                                        "the warm start (a plug-in too)")
    pool_frac: float = option(0.25, "share of games where one team is a frozen past version of the network")
    pool_size: int = option(8, "frozen past versions kept in the opponent pool")
    pool_every: int = option(10, "add the current network to the pool every N updates")
    minutes: float = option(25.0, RunConfig.__dataclass_fields__["minutes"].metadata["help"])


#: fields a resumed PPO run may change
PPO_RESUMABLE = RESUMABLE + ("total_decisions",)

#: what a PPO checkpoint to resume from holds, besides the fields every model file has
RESUME_FIELDS = ("run_name", "config", "optimizer", "step", "update", "rng", "torch_rng", "env", "hand_uid", "pending", "pool")

#: fields added after PPO checkpoints were first written, with the value every older run had
PPO_LATER = {**LATER_FIELDS, "opponent": "heuristic"}


def check(cfg: PPOConfig) -> None:
    """``ValueError`` naming a PPO field no run can start with (the fields of every run: :meth:`RunConfig.check`)."""
    make_agent(cfg.opponent)  # a clear error for a bad opponent spec, before anything runs
    check_counts(cfg, "num_envs", "num_steps", "total_decisions", "update_epochs", "num_minibatches", "pool_size",
                 "pool_every")
    if not (0 <= cfg.heuristic_frac and 0 <= cfg.pool_frac and cfg.heuristic_frac + cfg.pool_frac <= 1):
        raise ValueError(f"heuristic_frac and pool_frac must be shares adding up to at most 1 "
                         f"(got {cfg.heuristic_frac} + {cfg.pool_frac})")
    if cfg.num_envs % cfg.workers:
        raise ValueError(f"workers must divide num_envs ({cfg.num_envs}), got {cfg.workers}")


def check_checkpoint(ck: dict, path: str) -> None:
    """:class:`CheckpointError` naming the first field of a PPO checkpoint a run cannot resume from
    (its config's fields already checked)."""
    n, workers = ck["config"]["num_envs"], ck["config"].get("workers", 1)
    if workers > 1:  # each rollout worker's games are in its own state
        shards = ck["env"].get("workers") if isinstance(ck["env"], dict) else None
        if not isinstance(shards, list) or len(shards) != workers:
            raise CheckpointError(f"{path}: field 'env' does not hold the states of the run's {workers} rollout workers")
        return
    state = ck["env"].get("state") if isinstance(ck["env"], dict) else None
    if not isinstance(state, dict) or not state:
        raise CheckpointError(f"{path}: field 'env' holds no game state")
    wrong = sorted(k for k, v in state.items() if not isinstance(v, torch.Tensor) or tuple(v.shape[:1]) != (n,))
    if not isinstance(ck["hand_uid"], torch.Tensor) or tuple(ck["hand_uid"].shape) != (n,):
        wrong.append("hand_uid")
    if wrong:
        raise CheckpointError(f"{path}: field(s) {wrong} of field 'env' do not hold the run's {n} games (num_envs)")


def snapshot(run_name: str, cfg, rules: Rules, net, opt, rng: np.random.Generator, play, run: Progress) -> dict:
    """The checkpoint payload of a PPO run at this point: the games (with rollout workers, each
    worker's games, unfinished decisions and random streams), the decisions of unfinished hands and
    the pool, beside what every run holds."""
    return run_state(run_name, cfg, rules, net, opt, rng, step=run.step, update=run.update, env=play.get_state(),
                     hand_uid=run.hand_uid, pending=run.pending, pool=run.pool)


def restore(ck: dict, path: str, net, opt, rng: np.random.Generator, play) -> Progress:
    """Put a checked checkpoint's state into the run; :class:`CheckpointError` names a field that does not fit."""
    restore_run(ck, path, net, opt, rng)
    put_back(path, "env", lambda: play.set_state(to_arrays(ck["env"])))
    pending = to_arrays(ck["pending"])
    if pending is not None and not isinstance(pending, dict):
        raise CheckpointError(f"{path}: field 'pending' must be a dict of arrays or None")
    pool, shapes = ck["pool"], {k: v.shape for k, v in net.state_dict().items()}
    for i, p in enumerate(pool if isinstance(pool, list) else [None]):
        if not isinstance(p, dict) or {k: getattr(v, "shape", None) for k, v in p.items()} != shapes:
            raise CheckpointError(f"{path}: field 'pool' must be a list of state dicts of this run's network (pool[{i}] is not)")
    return Progress(int(ck["step"]), int(ck["update"]), to_arrays(ck["hand_uid"]), pending, pool)


def init_weights(init: dict) -> dict:
    """A network to start from, without the heads PPO has none of (action values, card locations)."""
    model = {k: v for k, v in init["model"].items() if not k.startswith(("q_net.", "owner_net."))}
    return {"model": model, "network": dataclasses.replace(init["network"], q_head=False, dueling=False, owners=False)}


def ppo_spec(cfg: PPOConfig, resume: str | None, ck: dict | None, init: dict | None) -> NetworkSpec:
    """The network a PPO run trains: the one it resumes or starts from (its card-play heads too: an
    early and a late head learn with the policy), else a plain one of ``hidden`` × ``layers``."""
    if ck:
        return network_spec(ck, resume)
    if init is not None:
        return init["network"]
    return NetworkSpec(hidden=cfg.hidden, layers=cfg.layers)


def run(cfg: PPOConfig, resume: str | None, ck: dict | None, init: dict | None, run_name: str, run_dir: Path,
        rng: np.random.Generator) -> int:
    """Roll out, learn, report, checkpoint; until ``total_decisions``, or Ctrl-C / SIGTERM."""
    rules = run_rules(cfg)
    net = build(ppo_spec(cfg, resume, ck, init))  # acts, on the CPU
    play = SelfPlay(cfg, rules, net) if cfg.workers == 1 else ShardedPlay(cfg, rules, net)
    device = learner_device(cfg.device)
    learner = net if device.type == "cpu" else copy.deepcopy(net).to(device)  # learns, on its device
    opt = torch.optim.Adam(learner.parameters(), lr=cfg.learning_rate, eps=1e-5)
    progress = Progress.start(cfg.num_envs)
    if init is not None:
        learner.load_state_dict(init["model"])
    if ck:
        progress = restore(ck, resume, learner, opt, rng, play)
    if learner is not net:
        net.load_state_dict(learner.state_dict())
    writer = SummaryWriter(str(run_dir))
    writer.add_text("config", "\n".join(f"|{k}|{v}|" for k, v in dataclasses.asdict(cfg).items()))

    def checkpoint():
        save_checkpoint(run_dir / "checkpoint.pt", snapshot(run_name, cfg, rules, learner, opt, rng, play, progress))

    bars = PhaseBars(run_name, cfg, progress.step)
    shown: dict[str, str] = {}  #: the bar's postfix: the latest evaluation against the heuristic
    last_checkpoint = time.time()
    with stop_signals() as stop:
        while progress.step < cfg.total_decisions and not stop["now"]:
            started = time.perf_counter()
            data, returns, imitating = play.collect(progress, rng)
            progress.step += play.decisions_per_rollout
            stats = (imitation_update if imitating else ppo_update)(learner, opt, cfg, data, returns, rng)
            if learner is not net:
                net.load_state_dict(learner.state_dict())  # the actors' CPU copy, refreshed every update
            progress.update += 1
            bars.update("imitation" if imitating else "ppo", progress.step, shown)
            log_update(writer, play, stats, returns, progress.update, progress.step, time.perf_counter() - started)
            if cfg.pool_frac > 0 and progress.update % cfg.pool_every == 0:
                progress.add_to_pool(net, cfg.pool_size)
            if cfg.eval_every and progress.update % cfg.eval_every == 0:
                shown["vs_heuristic"] = interval(evaluate_policy(writer, net, rules, cfg, progress.step)["heuristic"])
            if time.time() - last_checkpoint > 60 * cfg.checkpoint_minutes:
                checkpoint()
                last_checkpoint = time.time()
        checkpoint()
    bars.close()
    writer.close()
    play.close()
    print(f"{'stopped' if stop['now'] else 'finished'}: {progress.step} decisions; checkpoint {run_dir / 'checkpoint.pt'}")
    return 0


class PhaseBars:
    """A progress bar per phase of a run, ``imitation`` (its first ``imitation_decisions``) then
    ``ppo``, each over that phase's own decisions: its rate and ETA are the phase's own (imitation
    runs at about half PPO's speed, so one bar over both would promise hours at first)."""

    def __init__(self, run_name: str, cfg: PPOConfig, step: int):
        warm = min(cfg.imitation_decisions, cfg.total_decisions)
        self.spans = {"imitation": (0, warm), "ppo": (warm, cfg.total_decisions)}  #: each phase's first and end step
        self.run_name, self.step, self.phase, self.bar = run_name, step, "", None
        self.total, self.minutes, self.later = cfg.total_decisions, cfg.minutes, later_minutes(cfg)

    def update(self, phase: str, step: int, postfix: dict) -> None:
        """The run is at ``step`` decisions, in ``phase``; ``postfix`` is shown beside the bar."""
        if phase != self.phase:
            self.close()
            first, end = self.spans[phase]
            self.bar = tqdm(total=end - first, initial=max(0, self.step - first), unit="dec", smoothing=0.1,
                            desc=f"{self.run_name} {phase}", file=sys.stderr)
            self.phase = phase
        self.bar.update(step - self.step)
        self.step = step
        self.bar.set_postfix({"phase": phase, **postfix, **self.recipe_left()}, refresh=False)

    def recipe_left(self) -> dict:
        """``{"recipe left": "about X"}`` beside the bar of a stage with later stages, at the bar's rate
        (``"unknown"`` when a later stage states no minutes)."""
        if self.later is None:
            return {"recipe left": "unknown"}
        rate = self.bar.format_dict.get("rate") if self.bar is not None else None
        if not self.later or not rate:
            return {}
        rest = recipe_seconds((self.total - self.step) / rate, self.total / rate, self.minutes, self.later)
        return {"recipe left": f"about {duration(rest)}"}

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


ALGORITHM = Algorithm("ppo", PPOConfig, resumable=PPO_RESUMABLE, resume_fields=RESUME_FIELDS, later=PPO_LATER,
                      check=check, check_checkpoint=check_checkpoint, init_weights=init_weights, run=run,
                      finished=lambda ck: ck["step"] >= ck["config"]["total_decisions"])

__all__ = ["ALGORITHM", "PPOConfig"]
