"""The training run's config: every field with a default and a help line, presets from YAML,
flags over both, and what a resumed run may change."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import torch
import yaml

from cuatrola_env import get_rules

from ..checkpoint import CheckpointError, read_checkpoint
from ..registry import is_plugin, make_agent
from ..search import BID_VALUATIONS

ALGORITHMS = ("ppo", "expert")


@dataclasses.dataclass
class Config:
    algorithm: str = dataclasses.field(default="ppo", metadata={
        "help": "ppo (heuristic warm start, then PPO) or expert (expert iteration: the search labels, the network learns)"})
    exp_name: str = dataclasses.field(default="cuatrola_ppo", metadata={"help": "run name prefix: runs/<exp_name>_<seed>_<time>"})
    seed: int = dataclasses.field(default=1, metadata={"help": "seed of torch, numpy and the deals"})
    rules: str = dataclasses.field(default="online", metadata={"help": "rules preset: online or traditional"})
    num_envs: int = dataclasses.field(default=1024, metadata={"help": "games stepped at once"})
    num_steps: int = dataclasses.field(default=24, metadata={"help": "decisions per game per rollout"})
    total_decisions: int = dataclasses.field(default=70_000_000, metadata={"help": "decisions to train for"})
    learning_rate: float = dataclasses.field(default=5e-4, metadata={"help": "Adam learning rate"})
    update_epochs: int = dataclasses.field(default=1, metadata={"help": "PPO epochs per rollout"})
    num_minibatches: int = dataclasses.field(default=16, metadata={"help": "minibatches per epoch"})
    clip_coef: float = dataclasses.field(default=0.2, metadata={"help": "PPO clipping"})
    ent_coef: float = dataclasses.field(default=0.01, metadata={"help": "entropy bonus"})
    vf_coef: float = dataclasses.field(default=0.5, metadata={"help": "value loss weight"})
    max_grad_norm: float = dataclasses.field(default=0.5, metadata={"help": "gradient clipping"})
    imitation_decisions: int = dataclasses.field(
        default=6_000_000, metadata={"help": "warm start: imitate the heuristic's choices for N decisions (DAgger), then PPO"})
    bid_ent_coef: float = dataclasses.field(
        default=0.05, metadata={"help": "extra entropy bonus on bidding decisions (keeps the contracts explored)"})
    card_points_coef: float = dataclasses.field(
        default=0.5, metadata={"help": "shaping: add this times the team's card-point margin / 100 to each return"})
    heuristic_frac: float = dataclasses.field(
        default=0.35, metadata={"help": "share of games where one team is the heuristic bot (the other the learner)"})
    opponent: str = dataclasses.field(default="heuristic", metadata={
        "help": "agent spec of the fixed opponent team of heuristic_frac of the games after the warm start (a plug-in too)"})
    pool_frac: float = dataclasses.field(
        default=0.25, metadata={"help": "share of games where one team is a frozen past version of the network"})
    pool_size: int = dataclasses.field(default=8, metadata={"help": "frozen past versions kept in the opponent pool"})
    pool_every: int = dataclasses.field(default=10, metadata={"help": "add the current network to the pool every N updates"})
    hidden: int = dataclasses.field(default=128, metadata={"help": "hidden units per layer"})
    layers: int = dataclasses.field(default=2, metadata={"help": "hidden layers"})
    eval_every: int = dataclasses.field(default=50, metadata={"help": "evaluate every N updates (0: never)"})
    eval_deals: int = dataclasses.field(default=200, metadata={"help": "duplicate deals per evaluation"})
    checkpoint_minutes: float = dataclasses.field(default=5.0, metadata={"help": "checkpoint every N minutes"})
    torch_threads: int = dataclasses.field(default=2, metadata={"help": "torch CPU threads"})
    workers: int = dataclasses.field(default=1, metadata={
        "help": "rollout workers: 1 plays every game here; N > 1 runs N Ray actors of num_envs / N games each"})
    ray_address: str = dataclasses.field(default="", metadata={"help": "with workers > 1: join this Ray cluster (auto)"})
    device: str = dataclasses.field(default="auto", metadata={
        "help": "where the learner runs: auto (cuda when available), cpu or cuda; games and acting stay on the CPU"})
    expert_iterations: int = dataclasses.field(default=6, metadata={
        "help": "expert: label-and-fit iterations (each labels positions the latest network reaches)"})
    expert_hands: int = dataclasses.field(default=4000, metadata={"help": "expert: hands played and labelled per iteration"})
    label_worlds: int = dataclasses.field(default=16, metadata={"help": "expert: deals drawn to value a card play"})
    label_bid_worlds: int = dataclasses.field(default=8, metadata={"help": "expert: deals drawn to value a bid"})
    label_candidates: int = dataclasses.field(default=64, metadata={
        "help": "expert: candidate deals weighed by the network's likelihood of the other seats' actions"})
    label_infer: float = dataclasses.field(default=1.0, metadata={
        "help": "expert: weight of that inference (0: uniform deals; never used on an untrained network)"})
    label_temperature: float = dataclasses.field(default=1.0, metadata={
        "help": "expert: temperature of the network's sampled play while positions are gathered"})
    label_margin_coef: float = dataclasses.field(default=0.0, metadata={
        "help": "expert: add this times the team's final card-point margin / 100 to a card's value (pass, solo)"})
    label_bids: str = dataclasses.field(default="solver", metadata={
        "help": "expert: value bids by the solver (PIMC's way) or by rollouts of the network's own play (rollout; "
                "the solver while the network is untrained)"})
    label_per_task: int = dataclasses.field(default=25, metadata={"help": "expert: hands per labelling task"})
    tau: float = dataclasses.field(default=0.1, metadata={
        "help": "expert: policy target softmax(values / tau), values in game points"})
    q_coef: float = dataclasses.field(default=1.0, metadata={"help": "expert: weight of the action-value head's Huber loss"})
    fit_epochs: int = dataclasses.field(default=3, metadata={"help": "expert: passes over the aggregated data per iteration"})
    fit_batch: int = dataclasses.field(default=512, metadata={"help": "expert: minibatch size"})
    expert_data: str = dataclasses.field(default="", metadata={
        "help": "expert: label files of earlier runs (comma-separated data/iteration_K.npz), copied in and fitted on first"})
    keep_iterations: int = dataclasses.field(default=0, metadata={
        "help": "expert: fit on the data of the last N iterations (0: all of them)"})
    run_dir: str = dataclasses.field(default="runs", metadata={"help": "where runs are written"})
    init: str = dataclasses.field(
        default="", metadata={"help": "fine-tune: start from the network in this checkpoint or model file (fresh optimiser; "
                                    "any rules preset)"})

    def __post_init__(self):
        """Each field of the type of its default (an integer where a float is asked is taken as one;
        a boolean is never a number): a YAML preset or a checkpoint with a value of another type is
        refused naming the field."""
        for f in dataclasses.fields(self):
            value, kind = getattr(self, f.name), type(f.default)
            if kind is float and type(value) is int:
                setattr(self, f.name, float(value))
            elif type(value) is not kind:
                raise ValueError(f"config field {f.name} must be {kind.__name__}, got {value!r:.60}")


#: config fields a resumed run may change: they alter how long it runs and how it reports, not what it learns
RESUMABLE = ("total_decisions", "expert_iterations", "checkpoint_minutes", "eval_every", "eval_deals", "torch_threads",
             "device", "ray_address")

#: config fields a checkpoint's data must never choose on resume: a cluster to reach (taken from the
#: command line only, else a local Ray) and code to import (a plug-in spec, taken only if given again)
FROM_COMMAND_LINE = ("ray_address",)

#: fields added after checkpoints were first written, with the value every older run had
EXPERT_FIELDS = tuple(f.name for f in dataclasses.fields(Config) if f.name in ("algorithm", "tau", "q_coef", "keep_iterations")
                      or f.name.startswith(("expert_", "label_", "fit_")))
LATER_FIELDS = {"device": "auto", "workers": 1, "ray_address": "", "opponent": "heuristic",
                **{name: getattr(Config, name) for name in EXPERT_FIELDS}}

#: what a checkpoint to resume from holds, besides the fields every model file has
RESUME_FIELDS = ("run_name", "config", "optimizer", "step", "update", "rng", "torch_rng", "env", "hand_uid", "pending", "pool")

#: what an expert-iteration checkpoint to resume from holds
EXPERT_RESUME_FIELDS = ("run_name", "config", "optimizer", "iteration", "rng", "torch_rng", "data")


def _flags(fields) -> str:
    return ", ".join("--" + f.replace("_", "-") for f in fields)


def parse_config(argv=None) -> tuple[Config, str | None, dict | None]:
    """The run's config, and the path and contents of the checkpoint it resumes from (``None`` for a new run)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--config", help="YAML preset whose keys are config fields (configs/*.yaml)")
    p.add_argument("--resume", help=f"checkpoint to continue from: its own config, of which {_flags(RESUMABLE)} may change")
    for f in dataclasses.fields(Config):
        p.add_argument("--" + f.name.replace("_", "-"), type=type(f.default), default=None, help=f.metadata["help"])
    a = p.parse_args(argv)
    values = {}
    if a.config:
        data = yaml.safe_load(Path(a.config).read_text()) or {}
        unknown = set(data) - {f.name for f in dataclasses.fields(Config)}
        if unknown:
            p.error(f"unknown key(s) {sorted(unknown)} in {a.config}")
        values.update(data)
    for f in dataclasses.fields(Config):
        v = getattr(a, f.name)
        if v is not None:
            values[f.name] = v
    if a.resume:
        ck = read_checkpoint(a.resume)
        check_resumable(ck, a.resume)
        return resumed_config(ck["config"], values), a.resume, ck
    cfg = Config(**values)
    if cfg.algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {', '.join(ALGORITHMS)}, got {cfg.algorithm!r}")
    if cfg.label_bids not in BID_VALUATIONS:
        raise ValueError(f"label_bids must be one of {', '.join(BID_VALUATIONS)}, got {cfg.label_bids!r}")
    get_rules(cfg.rules)  # a clear error for a bad preset
    make_agent(cfg.opponent)  # a clear error for a bad opponent spec, before anything runs
    if not (0 <= cfg.heuristic_frac and 0 <= cfg.pool_frac and cfg.heuristic_frac + cfg.pool_frac <= 1):
        raise ValueError(f"heuristic_frac and pool_frac must be shares adding up to at most 1 "
                         f"(got {cfg.heuristic_frac} + {cfg.pool_frac})")
    if cfg.workers < 1 or cfg.num_envs % cfg.workers:
        raise ValueError(f"workers must be at least 1 and divide num_envs ({cfg.num_envs}), got {cfg.workers}")
    learner_device(cfg.device)  # and for a device this machine lacks
    return cfg, None, None


def resumed_config(saved: dict, given: dict) -> Config:
    """The saved run's config with the ``given`` fields applied; a field that would change what the
    run learns is refused (:class:`CheckpointError` naming it), never dropped in silence."""
    saved = {**LATER_FIELDS, **saved, **{k: LATER_FIELDS[k] for k in FROM_COMMAND_LINE}}
    if is_plugin(saved["opponent"]) and given.get("opponent") != saved["opponent"]:
        raise CheckpointError(f"the checkpoint's run plays against the plug-in agent {saved['opponent']!r:.100}, and a "
                              "file never chooses code to import: resume with --opponent naming the same spec")
    refused = sorted(k for k, v in given.items() if k not in RESUMABLE and saved[k] != v)
    if refused:
        changes = ", ".join(f"--{k.replace('_', '-')} {given[k]!r} (the run has {saved[k]!r})" for k in refused)
        raise CheckpointError(f"a resumed run keeps its config, so these cannot change: {changes}; "
                              f"only {_flags(RESUMABLE)} can")
    return Config(**{**LATER_FIELDS, **saved, **given})  # an older checkpoint: the values its run had


def check_resumable(ck: dict, path: str) -> None:
    """Raise :class:`CheckpointError` naming the first field of ``ck`` that a run cannot resume from."""
    expert = isinstance(ck.get("config"), dict) and ck["config"].get("algorithm") == "expert"
    missing = [k for k in (EXPERT_RESUME_FIELDS if expert else RESUME_FIELDS) if k not in ck]
    if missing:
        raise CheckpointError(f"{path} cannot be resumed: it lacks {', '.join(map(repr, missing))} (a model file, "
                              "not a training checkpoint? --init fine-tunes from one)")
    known = {f.name for f in dataclasses.fields(Config)}
    unknown, absent = sorted(set(ck["config"]) - known), sorted(known - set(ck["config"]) - set(LATER_FIELDS))
    if unknown or absent:
        raise CheckpointError(f"{path}: its config does not fit this version's Config "
                              f"(unknown field(s) {unknown}, missing field(s) {absent})")
    if expert:
        if not isinstance(ck["data"], list) or not all(isinstance(p, str) for p in ck["data"]):
            raise CheckpointError(f"{path}: field 'data' must be the list of the run's label files")
        return
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


def learner_device(name: str) -> torch.device:
    """The learner's device: ``auto`` is cuda when this machine has it, else the CPU."""
    if name not in ("auto", "cpu", "cuda"):
        raise ValueError(f"device must be auto, cpu or cuda, got {name!r}")
    if name == "cuda" and not torch.cuda.is_available():
        raise ValueError("device cuda: this machine has no CUDA device (use --device cpu or auto)")
    return torch.device("cuda" if name == "cuda" or (name == "auto" and torch.cuda.is_available()) else "cpu")


def initial_weights(cfg: Config) -> dict:
    """The network weights of ``cfg.init``, checked against this run's network shape (a network
    trained under another rules preset may start a run: every preset has the same observation)."""
    init = read_checkpoint(cfg.init)
    shape = init.get("config", {})
    if (shape.get("hidden"), shape.get("layers")) != (cfg.hidden, cfg.layers):
        raise CheckpointError(
            f"{cfg.init} holds a network of {shape.get('layers')} layers of {shape.get('hidden')} units; "
            f"this run builds {cfg.layers} of {cfg.hidden} (set --hidden and --layers to match)")
    if cfg.algorithm == "expert":
        return init["model"]
    return {k: v for k, v in init["model"].items() if not k.startswith("q_net.")}  # PPO has no action-value head
