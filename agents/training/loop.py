"""The training loop: one rollout, one learning step, the reports, the checkpoints; repeat."""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import signal
import sys
import time
from pathlib import Path

import numpy as np
import torch
import yaml
from torch.utils.tensorboard import SummaryWriter
from tqdm import tqdm

from cuatrola_env import get_rules

from ..checkpoint import CheckpointError, save_checkpoint
from ..network import PolicyValueNet
from . import expert
from .actors import ShardedPlay
from .config import initial_weights, learner_device, parse_config
from .report import evaluate_policy, log_update
from .rollout import Progress, SelfPlay
from .state import restore, snapshot
from .update import imitation_update, ppo_update


@contextlib.contextmanager
def stop_signals():
    """Ctrl-C or SIGTERM ask the loop to stop after this update (a checkpoint is then written)."""
    stop = {"now": False}

    def ask(signum, frame):
        stop["now"] = True

    old = {sig: signal.signal(sig, ask) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stop
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)


#: what refuses a run before it starts: the config, the checkpoint or the files it names
REFUSALS = (CheckpointError, ValueError, OSError, yaml.YAMLError)


def main(argv=None) -> int:
    """``train.py``: a refused config, checkpoint or data file is one line on stderr and exit status 2."""
    try:
        cfg, resume, ck = parse_config(argv)
        init = initial_weights(cfg) if cfg.init and not ck else None  # checked before anything is written
    except REFUSALS as e:
        return _refuse(e)
    try:
        return train(cfg, resume, ck, init)
    except CheckpointError as e:  # a file the run reads as it goes (a resumed run's label data)
        return _refuse(e)


def _refuse(e: BaseException) -> int:
    text = str(e).strip()
    print(f"error: {text.splitlines()[0] if text else type(e).__name__}", file=sys.stderr)
    return 2


def train(cfg, resume: str | None, ck: dict | None, init: dict | None) -> int:
    """The run of ``cfg`` (resumed from ``ck`` at ``resume``, or started from the weights ``init``)."""
    run_name = ck["run_name"] if ck else f"{cfg.exp_name}_{cfg.seed}_{int(time.time())}"
    run_dir = Path(resume).parent if resume else Path(cfg.run_dir) / run_name  # a resumed run goes on beside its checkpoint
    run_dir.mkdir(parents=True, exist_ok=True)
    np.random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)
    torch.set_num_threads(cfg.torch_threads)
    rng = np.random.default_rng(cfg.seed)
    if cfg.algorithm == "expert":
        return expert_iteration(cfg, resume, ck, init, run_name, run_dir, rng)
    rules = get_rules(cfg.rules)
    net = PolicyValueNet(cfg.hidden, cfg.layers)  # acts, on the CPU
    play = SelfPlay(cfg, rules, net) if cfg.workers == 1 else ShardedPlay(cfg, rules, net)
    device = learner_device(cfg.device)
    learner = net if device.type == "cpu" else copy.deepcopy(net).to(device)  # learns, on its device
    opt = torch.optim.Adam(learner.parameters(), lr=cfg.learning_rate, eps=1e-5)
    run = Progress.start(cfg.num_envs)
    if init is not None:
        learner.load_state_dict(init)
    if ck:
        run = restore(ck, resume, learner, opt, rng, play)
    if learner is not net:
        net.load_state_dict(learner.state_dict())
    writer = SummaryWriter(str(run_dir))
    writer.add_text("config", "\n".join(f"|{k}|{v}|" for k, v in dataclasses.asdict(cfg).items()))

    def checkpoint():
        save_checkpoint(run_dir / "checkpoint.pt", snapshot(run_name, cfg, rules, learner, opt, rng, play, run))

    bar = tqdm(total=cfg.total_decisions, initial=run.step, unit="dec", desc=run_name, file=sys.stderr, smoothing=0.1)
    last_checkpoint = time.time()
    with stop_signals() as stop:
        while run.step < cfg.total_decisions and not stop["now"]:
            started = time.perf_counter()
            data, returns, imitating = play.collect(run, rng)
            run.step += play.decisions_per_rollout
            stats = (imitation_update if imitating else ppo_update)(learner, opt, cfg, data, returns, rng)
            if learner is not net:
                net.load_state_dict(learner.state_dict())  # the actors' CPU copy, refreshed every update
            run.update += 1
            bar.update(play.decisions_per_rollout)
            log_update(writer, play, stats, returns, run.update, run.step, time.perf_counter() - started)
            if cfg.pool_frac > 0 and run.update % cfg.pool_every == 0:
                run.add_to_pool(net, cfg.pool_size)
            if cfg.eval_every and run.update % cfg.eval_every == 0:
                evaluate_policy(writer, net, rules, cfg, run.step)
            if time.time() - last_checkpoint > 60 * cfg.checkpoint_minutes:
                checkpoint()
                last_checkpoint = time.time()
        checkpoint()
    bar.close()
    writer.close()
    play.close()
    print(f"{'stopped' if stop['now'] else 'finished'}: {run.step} decisions; checkpoint {run_dir / 'checkpoint.pt'}")
    return 0


def expert_iteration(cfg, resume, ck, init, run_name: str, run_dir: Path, rng: np.random.Generator) -> int:
    """``--algorithm expert`` (:mod:`.expert`): label, fit, relabel; the learner on its device."""
    net = expert.network(cfg.hidden, cfg.layers, init).to(learner_device(cfg.device))
    opt = torch.optim.Adam(net.parameters(), lr=cfg.learning_rate, eps=1e-5)
    iteration, files = expert.restore(ck, resume, run_dir, net, opt, rng) if ck else (0, [])
    with stop_signals() as stop:
        iteration, files = expert.run(cfg, run_name, run_dir, net, opt, rng, iteration, files, stop, evaluate_policy)
    print(f"{'stopped' if stop['now'] else 'finished'}: {iteration} iterations; checkpoint {run_dir / 'checkpoint.pt'}")
    return 0
