"""What every training algorithm's config shares: :class:`RunConfig`, every field with a default
and a help line, the exact type check, and what a resumed run may change.

An algorithm (:mod:`.ppo`, :mod:`.expert`) extends :class:`RunConfig` with its own fields;
:mod:`.algorithms` names them for ``--algorithm`` and :func:`agents.training.loop.parse_config`
reads presets (YAML), flags and checkpoints into the chosen one.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from importlib import resources
from pathlib import Path

import torch
import yaml

from cuatrola_env.cli import brief
from cuatrola_env.observation import OBS_DIM
from cuatrola_env.rules import Rules, get_rules

from ..checkpoint import CheckpointError, network_spec, read_checkpoint
from ..network import widen_inputs
from ..registry import spec_names_outside
from .teachers import over_student


def option(default, help: str):
    """A config field: its default and its help line."""
    return dataclasses.field(default=default, metadata={"help": help})


@dataclasses.dataclass
class RunConfig:
    """The fields of every run, whatever its algorithm."""

    algorithm: str = option("ppo", "the training algorithm, by name (agents.training.algorithms; ppo: heuristic warm "
                                   "start, then PPO)")
    exp_name: str = option("cuatrola_ppo", "run name prefix: runs/<exp_name>_<seed>_<time>")
    seed: int = option(1, "seed of torch, numpy and the deals")
    rules: str = option("online", "rules preset: online or traditional")
    target: int = option(0, "match target: game points that win a match, 1..1000 (0: the preset's own, 11 online); "
                            "the scores before each trained hand are drawn below it")
    learning_rate: float = option(5e-4, "Adam learning rate")
    max_grad_norm: float = option(0.5, "gradient clipping")
    hidden: int = option(128, "hidden units per layer")
    layers: int = option(2, "hidden layers")
    eval_every: int = option(50, "evaluate every N updates (0: never)")
    eval_deals: int = option(200, "duplicate deals per evaluation")
    checkpoint_minutes: float = option(5.0, "checkpoint every N minutes")
    torch_threads: int = option(2, "torch CPU threads")
    workers: int = option(1, "parallel workers: 1 plays every game here; N > 1 runs N Ray workers")
    ray_address: str = option("", "with workers > 1: join this Ray cluster (auto)")
    device: str = option("auto", "where the learner runs: auto (cuda when available), cpu or cuda; games and acting "
                                 "stay on the CPU")
    run_dir: str = option("runs", "where runs are written")
    init: str = option("", "fine-tune: start from the network in this checkpoint or model file (fresh optimiser; any "
                           "rules preset)")
    then: str = option("", "once this run finishes, go on with these presets (names or YAML files, comma-separated, "
                           "in order), each from the final network of the one before (its --init; the same rules, "
                           "target, seed and network size): a recipe in stages")
    minutes: float = option(0.0, "how long this stage takes on a 2-core x86-64 CPU (its preset's measured time): the "
                                 "recipe's time left counts it for a stage not yet begun, at this run's pace (0: unknown)")
    recipe: str = option("", "the recipe this run is a stage of: the preset its first stage was started with "
                             "(set by --config; recorded in the checkpoint and the exported model's card)")

    def __post_init__(self):
        """Each field of the type of its default (an integer where a float is asked is taken as one;
        a boolean is never a number): a YAML preset or a checkpoint with a value of another type is
        refused naming the field."""
        for f in dataclasses.fields(self):
            value, kind = getattr(self, f.name), type(f.default)
            if kind is float and type(value) is int:
                setattr(self, f.name, float(value))
            elif type(value) is not kind:
                raise ValueError(f"config field {f.name} must be {kind.__name__}, got {brief(value, 60)}")
            if kind is float and not math.isfinite(getattr(self, f.name)):
                raise ValueError(f"config field {f.name} ({flag(f.name)}) must be a finite number, got {value}")

    def check(self) -> None:
        """``ValueError`` naming a field of every run that no run can start with (each algorithm
        then checks its own: :attr:`Algorithm.check`)."""
        run_rules(self)  # a clear error for a bad preset or target
        check_counts(self, "workers", "hidden", "layers", "torch_threads")
        check_at_least(self, 0, "seed", "eval_every", "eval_deals", "learning_rate")  # a zero rate: a run that moves nothing
        for name in ("max_grad_norm", "checkpoint_minutes"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} ({flag(name)}) must be above 0, got {getattr(self, name)}")
        learner_device(self.device)  # and for a device this machine lacks


def run_rules(cfg: RunConfig) -> Rules:
    """The rules a run trains under: its preset, with its match target when it sets one."""
    if not 0 <= cfg.target <= 1000:
        raise ValueError(f"target (--target) must be a match target in 1..1000, or 0 for the preset's, got {cfg.target}")
    return get_rules(cfg.rules, **({"target": cfg.target} if cfg.target else {}))


def flag(name: str) -> str:
    """A config field's command-line flag."""
    return "--" + name.replace("_", "-")


def check_at_least(cfg: RunConfig, low: int, *names: str) -> None:
    """``ValueError`` naming the first of the fields ``names`` below ``low``, and its flag."""
    for name in names:
        if getattr(cfg, name) < low:
            raise ValueError(f"{name} ({flag(name)}) must be at least {low}, got {getattr(cfg, name)}")


def check_choice(cfg: RunConfig, name: str, choices: tuple[str, ...]) -> None:
    """``ValueError`` naming the field ``name`` when its value is none of ``choices``."""
    if getattr(cfg, name) not in choices:
        raise ValueError(f"{name} ({flag(name)}) must be one of {', '.join(choices)}, got {getattr(cfg, name)!r}")


def check_counts(cfg: RunConfig, *names: str) -> None:
    """``ValueError`` naming the first of the fields ``names`` (counts: games, steps, epochs...) below 1."""
    check_at_least(cfg, 1, *names)


#: fields of every run that a resumed run may change: how long it runs, how it reports, where it runs
RESUMABLE = ("checkpoint_minutes", "eval_every", "eval_deals", "torch_threads", "device", "ray_address", "then")

#: config fields a checkpoint's data must never choose on resume: a cluster to reach (taken from the
#: command line only, else a local Ray)
FROM_COMMAND_LINE = ("ray_address",)

#: config fields that may name a file to read, a config to run next, code to import or a host: on
#: resume, a checkpoint's value that names one (:func:`names_something`) is taken only when the
#: command line names it again (a file handed over never chooses them)
NAMED_AGAIN = ("then", "opponent", "teacher", "rival")

#: the NAMED_AGAIN fields that hold agent specs (a spec names something outside when it names a file or code)
SPEC_FIELDS = ("opponent", "teacher", "rival")


def names_something(field: str, value, default) -> bool:
    """Whether a saved ``value`` of the :data:`NAMED_AGAIN` field ``field`` names something outside the
    code: not empty, not the field's default, and, for an agent spec, one that names a file or a
    module (a plug-in, ``model:PATH``, a ``path=`` option other than a teacher's ``path=student``;
    ``pimc:worlds=2`` names nothing); for the next stages, one that is not a shipped preset's name (a
    YAML file)."""
    if value in ("", default):
        return False
    if field in SPEC_FIELDS:
        return spec_names_outside((over_student(value) if field == "teacher" else None) or value)
    if field == "then":
        return not set(stages(value)) <= set(shipped_presets())
    return True


def stages(then: str) -> list[str]:
    """The presets of a ``then`` chain, in order."""
    return [s.strip() for s in then.split(",") if s.strip()]


def later_minutes(cfg: RunConfig) -> float | None:
    """How long the stages after this one take on 2 cores, from their presets' ``minutes``; ``None``
    when one of them does not say."""
    later = [float(preset(stage).get("minutes", 0.0)) for stage in stages(cfg.then)]
    return None if not all(later) else sum(later)


#: the presets shipped with the package (the repository's configs/)
PRESETS = resources.files("agents.training").joinpath("presets")


def shipped_presets() -> list[str]:
    """The names of the shipped presets (``--config NAME``)."""
    return sorted(f.name[: -len(".yaml")] for f in PRESETS.iterdir() if f.name.endswith(".yaml"))


def preset(name: str, seen: tuple[str, ...] = ()) -> dict:
    """The config fields of a preset: a YAML file, or a shipped preset by name (``--config tiny``); a
    preset may start from another (``extends: NAME``) and change some of its fields."""
    path = Path(name)
    if not path.is_file():
        if name not in shipped_presets():
            raise ValueError(f"--config {name}: no such file, and no preset of that name (the presets: "
                             f"{', '.join(shipped_presets())})")
        path = Path(str(PRESETS.joinpath(f"{name}.yaml")))
    data = yaml.safe_load(path.read_text()) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{name} must hold config fields (key: value), got {type(data).__name__}")
    base = data.pop("extends", None)
    if base is None:
        return data
    if not isinstance(base, str) or base in seen + (name,):
        raise ValueError(f"{name}: extends must name another preset, not itself or one extending it, got {brief(base, 60)}")
    return {**preset(base, seen + (name,)), **data}


#: fields added after checkpoints were first written, with the value every older run had
LATER_FIELDS = {"algorithm": "ppo", "device": "auto", "workers": 1, "ray_address": "", "then": "", "target": 0,
                "recipe": "", "minutes": 0.0}


@dataclasses.dataclass(frozen=True)
class Algorithm:
    """A training algorithm as ``--algorithm`` knows it (each module defines one; :mod:`.algorithms`
    lists them). ``run(cfg, resume, checkpoint, init, run_name, run_dir, rng) -> exit status``."""

    name: str
    config: type  #: its config, a :class:`RunConfig` with the algorithm's own fields
    resumable: tuple[str, ...]  #: the fields a resumed run may change
    resume_fields: tuple[str, ...]  #: what a checkpoint it resumes from holds
    later: dict  #: fields added after its checkpoints were first written, with the value older runs had
    check: Callable  #: ``check(cfg)``: ``ValueError`` naming a field no run of it can start with
    check_checkpoint: Callable  #: ``check_checkpoint(checkpoint, path)``: ``CheckpointError`` naming a field
    #: ``init_weights(init) -> init``: the ``--init`` network (``{"model": weights, "network": spec}``, from
    #: :func:`read_init`) as this algorithm starts from it
    init_weights: Callable
    run: Callable
    #: ``check_resume(saved, given)``: ``CheckpointError`` for what a checkpoint's data may not choose
    #: unless the command line names it again (beyond :data:`FROM_COMMAND_LINE`, which is never taken)
    check_resume: Callable = lambda saved, given: None
    #: ``finished(checkpoint)``: whether the run of that checkpoint went to its end (not stopped early)
    finished: Callable = lambda ck: True

    def resumed(self, saved: dict, given: dict) -> RunConfig:
        """A checkpoint's config with the flags ``given`` (see :func:`resumed_config`)."""
        self.check_resume(saved, given)
        return resumed_config(self.config, saved, given, self.resumable, self.later)


def flags(fields) -> str:
    return ", ".join(flag(f) for f in fields)


def resumed_config(kind: type, saved: dict, given: dict, resumable: tuple[str, ...], later: dict) -> RunConfig:
    """The saved run's config (of class ``kind``) with the ``given`` fields applied; a field outside
    ``resumable`` that would change is refused (:class:`CheckpointError` naming it), never dropped
    in silence. ``later``: fields added after a checkpoint was written, with the value its run had."""
    saved = {**later, **saved, **{k: later[k] for k in FROM_COMMAND_LINE}}
    defaults = {f.name: f.default for f in dataclasses.fields(kind)}
    unconfirmed = sorted(k for k in NAMED_AGAIN if k in defaults and k not in given
                         and names_something(k, saved.get(k, defaults[k]), defaults[k]))
    if unconfirmed:
        names = ", ".join(f"{flag(k)} {brief(saved[k], 200)}" for k in unconfirmed)
        raise CheckpointError(f"the checkpoint's run names a file, code or host to use ({names}), and a file never "
                              "chooses those: resume with the flag(s) on the command line")
    refused = sorted(k for k, v in given.items() if k not in resumable and saved.get(k, "(none)") != v)
    if refused:
        changes = ", ".join(f"--{k.replace('_', '-')} {given[k]!r} (the run has {saved.get(k, '(none)')!r})" for k in refused)
        raise CheckpointError(f"a resumed run keeps its config, so these cannot change: {changes}; "
                              f"only {flags(resumable)} can")
    return kind(**{**saved, **given})


def check_fields(ck: dict, path: str, kind: type, later: dict, other_fields: set[str]) -> dict:
    """The checkpoint's config, as ``kind``'s fields: every one present (or added later) and of no
    other algorithm's fields (an older checkpoint held those of every algorithm); else
    :class:`CheckpointError`."""
    known = {f.name for f in dataclasses.fields(kind)}
    config = {k: v for k, v in ck["config"].items() if k in known or k not in other_fields}
    unknown, absent = sorted(set(config) - known), sorted(known - set(config) - set(later))
    if unknown or absent:
        raise CheckpointError(f"{path}: its config does not fit this version's config "
                              f"(unknown field(s) {unknown}, missing field(s) {absent})")
    return config


def check_resume_fields(ck: dict, path: str, fields: tuple[str, ...]) -> None:
    missing = [k for k in fields if k not in ck]
    if missing:
        raise CheckpointError(f"{path} cannot be resumed: it lacks {', '.join(map(repr, missing))} (a model file, "
                              "not a training checkpoint? --init fine-tunes from one)")


def learner_device(name: str) -> torch.device:
    """The learner's device: ``auto`` is cuda when this machine has it, else the CPU."""
    if name not in ("auto", "cpu", "cuda"):
        raise ValueError(f"device must be auto, cpu or cuda, got {name!r}")
    if name == "cuda" and not torch.cuda.is_available():
        raise ValueError("device cuda: this machine has no CUDA device (use --device cpu or auto)")
    return torch.device("cuda" if name == "cuda" or (name == "auto" and torch.cuda.is_available()) else "cpu")


def read_init(cfg: RunConfig) -> dict:
    """The network of ``cfg.init`` (a checkpoint or model file) as ``{"model": weights, "network":
    its NetworkSpec}``, checked against this run's network shape (a network trained under another
    rules preset may start a run: the observation is the same; one of an earlier observation version
    too, widened by :func:`agents.network.widen_inputs` to play exactly as before)."""
    init = read_checkpoint(cfg.init, older=True)
    spec = network_spec(init, cfg.init)
    if (spec.hidden, spec.layers) != (cfg.hidden, cfg.layers):
        raise CheckpointError(
            f"{cfg.init} holds a network of {spec.layers} layers of {spec.hidden} units; "
            f"this run builds {cfg.layers} of {cfg.hidden} (set --hidden and --layers to match, "
            "or leave both unset to take the file's)")
    return {"model": widen_inputs(init["model"], spec.obs_dim), "network": dataclasses.replace(spec, obs_dim=OBS_DIM)}


__all__ = ["Algorithm", "FROM_COMMAND_LINE", "LATER_FIELDS", "NAMED_AGAIN", "PRESETS", "RESUMABLE", "RunConfig",
           "check_at_least", "check_choice", "check_counts", "check_fields", "check_resume_fields", "flag", "flags",
           "later_minutes", "learner_device", "names_something", "option", "preset", "read_init", "resumed_config",
           "run_rules", "shipped_presets", "stages"]
