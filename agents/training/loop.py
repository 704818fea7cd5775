"""``train.py``: read the run's config (preset, flags, or the checkpoint it resumes), set up its
folder and seeds, and hand it to its algorithm (:data:`.algorithms.ALGORITHMS`)."""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

import numpy as np
import torch
import yaml

from cuatrola_env.cli import ArgumentParser, brief
from cuatrola_env.files import check_writable

from ..checkpoint import CheckpointError, read_checkpoint
from ..parallel import ClusterError
from .algorithms import ALGORITHMS, DEFAULT
from .config import (
    Algorithm,
    RunConfig,
    check_fields,
    check_resume_fields,
    flags,
    later_minutes,
    preset,
    read_init,
    shipped_presets,
    stages,
)
from .report import duration

#: the recipe of ``python train.py`` with no --config: configs/default.yaml
DEFAULT_RECIPE = "default"

#: what refuses a run before it starts: the config, the checkpoint or the files it names
REFUSALS = (CheckpointError, ValueError, OSError, yaml.YAMLError)


def main(argv=None) -> int:
    """``train.py``: a refused config, checkpoint or data file is one line on stderr and exit status 2."""
    try:
        cfg, resume, ck = parse_config(argv)
        algorithm = ALGORITHMS[cfg.algorithm]
        init = algorithm.init_weights(read_init(cfg)) if cfg.init and not ck else None  # checked before anything is written
        if ck is None:
            check_writable(Path(cfg.run_dir) / cfg.exp_name, "--run-dir")
    except REFUSALS as e:
        return _refuse(e)
    try:
        return train(algorithm, cfg, resume, ck, init)
    except (CheckpointError, ClusterError) as e:  # a file the run reads as it goes; a cluster it cannot join
        return _refuse(e)


def _refuse(e: BaseException) -> int:
    text = str(e).strip()
    print(f"error: {text.splitlines()[0] if text else type(e).__name__}", file=sys.stderr)
    return 2


def train(algorithm: Algorithm, cfg: RunConfig, resume: str | None, ck: dict | None, init: dict | None) -> int:
    """The run of ``cfg`` (resumed from ``ck`` at ``resume``, or started from the weights ``init``)."""
    run_name = ck["run_name"] if ck else f"{cfg.exp_name}_{cfg.seed}_{int(time.time())}"
    run_dir = Path(resume).parent if resume else Path(cfg.run_dir) / run_name  # a resumed run goes on beside its checkpoint
    run_dir.mkdir(parents=True, exist_ok=True)
    print(f"{'resuming' if ck else 'starting'} {cfg.algorithm} run {run_name}{stage_of(cfg)}: checkpoint and logs in "
          f"{run_dir} (watch: tensorboard --logdir {run_dir.parent})", file=sys.stderr, flush=True)
    np.random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)
    torch.set_num_threads(cfg.torch_threads)
    status = algorithm.run(cfg, resume, ck, init, run_name, run_dir, np.random.default_rng(cfg.seed))
    if status or not algorithm.finished(read_checkpoint(str(run_dir / "checkpoint.pt"))):
        return status
    if not cfg.then:
        print(what_next(run_dir / "checkpoint.pt", cfg), file=sys.stderr, flush=True)
        return status
    print(f"{run_name} finished; its next stage: --config {stages(cfg.then)[0]}", file=sys.stderr, flush=True)
    return main(next_stage(cfg, run_dir))


def stage_of(cfg: RunConfig) -> str:
    """`` (stage k of N of recipe NAME)`` for a stage of a shipped recipe of several; empty otherwise."""
    if cfg.recipe not in shipped_presets():
        return ""
    total = 1 + len(stages(str(preset(cfg.recipe).get("then", ""))))
    left = len(stages(cfg.then))
    if total <= max(left, 1):
        return ""
    return f" (stage {total - left} of {total} of recipe {cfg.recipe}{_later_stages(cfg)})"


def _later_stages(cfg: RunConfig) -> str:
    """How long the stages after this one take on 2 cores, as their presets say."""
    if not cfg.then:
        return ""
    later = later_minutes(cfg)
    return f"; the stages after it about {duration(60 * later)} on 2 cores" if later else \
        "; the time of the stages after it unknown"


def what_next(checkpoint: Path, cfg: RunConfig) -> str:
    """The commands that measure, export and serve the network a finished run trained."""
    model = checkpoint.with_name("model.onnx")
    rules = f" --rules {cfg.rules}" + (f" --target {cfg.target}" if cfg.target else "")
    return "\n".join([
        f"finished: {checkpoint}. Next:",
        f"  python evaluate.py model:{checkpoint} heuristic pimc:worlds=32 --deals 2000{rules} --workers 2   # how strong",
        f"  python -m agents.export {checkpoint} --out {model}   # the ONNX model and its card",
        f"  cuatrola-serve --model {model}   # the bot service and the browser game, at http://127.0.0.1:8000/",
    ])


def next_stage(cfg: RunConfig, run_dir: Path) -> list[str]:
    """The arguments of the stage after the run in ``run_dir`` (the first of ``cfg.then``, the rest its
    own ``then``): its preset, started from the run's final network, with the run's recipe, rules,
    target, seed, network size, runs folder and cluster."""
    first, *rest = stages(cfg.then)
    argv = ["--config", first, "--then", ",".join(rest), "--recipe", cfg.recipe,
            "--init", str(run_dir / "checkpoint.pt"), "--rules", cfg.rules, "--target", str(cfg.target),
            "--seed", str(cfg.seed), "--hidden", str(cfg.hidden), "--layers", str(cfg.layers),
            "--run-dir", str(run_dir.parent)]
    return argv + (["--ray-address", cfg.ray_address] if cfg.ray_address else [])


# ----------------------------------------------------------------------------- the config
def parse_config(argv=None) -> tuple[RunConfig, str | None, dict | None]:
    """The run's config (of its algorithm's class), and the path and contents of the checkpoint it
    resumes from (``None`` for a new run)."""
    first = ArgumentParser(add_help=False)
    for flag in ("--config", "--resume", "--algorithm"):
        first.add_argument(flag)
    known, _ = first.parse_known_args(argv)
    config = known.config or (None if known.resume or known.algorithm else DEFAULT_RECIPE)  # python train.py: the default
    fields_of_preset = preset(config) if config else {}
    ck = read_checkpoint(known.resume) if known.resume else None
    name = known.algorithm or (ck or {}).get("config", {}).get("algorithm") or fields_of_preset.get("algorithm") or DEFAULT
    if name not in ALGORITHMS and ck is not None and not known.algorithm:
        raise CheckpointError(f"{known.resume}: its algorithm {brief(name, 40)} is not one of {', '.join(ALGORITHMS)}, "
                              f"so the run cannot go on; start a new run from its network with --init {known.resume}")
    if name not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {', '.join(ALGORITHMS)}, got {brief(name, 40)}")
    algorithm = ALGORITHMS[name]
    p = _parser(algorithm)
    a = p.parse_args(argv)
    fields = {f.name for f in dataclasses.fields(algorithm.config)}
    unknown = set(fields_of_preset) - fields
    if unknown:
        p.error(f"unknown key(s) {sorted(unknown)} in {config} for --algorithm {name}")
    values = {**fields_of_preset, **{k: v for k in fields if (v := getattr(a, k)) is not None}, "algorithm": name}
    if config and ck is None and not values.get("recipe"):  # a recipe's first stage names the recipe
        values["recipe"] = Path(config).stem
    if ck is not None:
        if not isinstance(ck.get("config"), dict):
            raise CheckpointError(f"{a.resume}: field 'config' must be a dict")
        saved_name = ck["config"].get("algorithm", "ppo")
        algorithm = ALGORITHMS.get(saved_name)
        if algorithm is None:
            raise CheckpointError(f"{a.resume}: its algorithm {brief(saved_name, 40)} is not one of {', '.join(ALGORITHMS)}")
        check_resume_fields(ck, a.resume, algorithm.resume_fields)
        saved = check_fields(ck, a.resume, algorithm.config, algorithm.later, _other_fields(algorithm))
        algorithm.check_checkpoint({**ck, "config": saved}, a.resume)
        cfg = algorithm.resumed(saved, values)
        _check_then(cfg)
        return cfg, a.resume, ck
    cfg = algorithm.config(**{**_init_shape(values), **values})
    cfg.check()
    algorithm.check(cfg)
    _check_then(cfg)
    return cfg, None, None


def _init_shape(values: dict) -> dict:
    """The network shape (``hidden``, ``layers``) of the file ``--init`` names, for a new run whose flags
    and preset leave it unset: fine-tuning a network needs no flag repeating its size."""
    if not values.get("init"):
        return {}
    shape = read_checkpoint(values["init"], older=True).get("config")
    return {k: shape[k] for k in ("hidden", "layers") if k in shape} if isinstance(shape, dict) else {}


def _check_then(cfg: RunConfig) -> None:
    """Next stages that name no preset are refused before the run starts, not after it."""
    for stage in stages(cfg.then):
        preset(stage)


def _parser(algorithm: Algorithm) -> argparse.ArgumentParser:
    """The flags of ``algorithm``'s config (every field, with its help line)."""
    p = ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--config", help=f"a preset by name ({', '.join(shipped_presets())}; the repository's configs/) or a "
                                    "YAML file whose keys are config fields")
    p.add_argument("--resume", help=f"checkpoint to continue from: its own config, of which {flags(algorithm.resumable)} "
                                    "may change")
    for f in dataclasses.fields(algorithm.config):
        p.add_argument("--" + f.name.replace("_", "-"), type=type(f.default), default=None,
                       help=f"{f.metadata['help']} (default: {f.default!r})")
    return p


def _other_fields(algorithm: Algorithm) -> set[str]:
    """Fields of the other algorithms' configs (an older checkpoint's config held every algorithm's)."""
    mine = {f.name for f in dataclasses.fields(algorithm.config)}
    return {f.name for a in ALGORITHMS.values() for f in dataclasses.fields(a.config)} - mine


__all__ = ["main", "parse_config", "train"]
