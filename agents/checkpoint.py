"""Checkpoint and model files that cannot run code.

A checkpoint is a ``torch.save`` file read back with ``torch.load(weights_only=True)``: its
unpickler builds only tensors, numbers, strings, ``None`` and lists, tuples and dicts of them,
and refuses any other object, so a file handed over by someone else cannot execute anything
when it is opened. Everything this project writes fits that: NumPy arrays (game state, RNG
buffers) are stored as tensors (:func:`to_tensors`) and turned back into arrays where they are
used (:func:`to_arrays`); NumPy's RNG state is a dict of ints and strings.

Files written by older versions held NumPy arrays as pickled objects, so the safe loader refuses
them. To convert one you trust (it is unpickled, which runs whatever it contains)::

    python -m agents.checkpoint OLD.pt NEW.pt --trust-pickle

:func:`read_checkpoint` checks a file fits this code (observation version, rules) and raises
:class:`CheckpointError` naming what does not.
"""

from __future__ import annotations

import copy
import os
import pickle
import re
import sys
import zipfile
from pathlib import Path

import numpy as np
import torch

from cuatrola_env.cli import ArgumentParser, brief, run_main
from cuatrola_env.files import atomic_open, remove_stale_temporaries
from cuatrola_env.observation import OBS_DIMS, OBS_VERSION

from .network import NetworkSpec

CONVERT_HINT = "python -m agents.checkpoint {path} NEW.pt --trust-pickle"


class CheckpointError(ValueError):
    """A checkpoint or model file that cannot be used with this code (or these rules)."""


def to_tensors(tree):
    """``tree`` with every NumPy array as a tensor and every NumPy scalar as a Python number."""
    if isinstance(tree, np.ndarray):  # a read-only array (one a worker sent back) is copied
        return torch.from_numpy(np.ascontiguousarray(tree) if tree.flags.writeable else tree.copy())
    if isinstance(tree, np.generic):
        return tree.item()
    if isinstance(tree, dict):
        return {k: to_tensors(v) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(to_tensors(v) for v in tree)
    return tree


def to_arrays(tree):
    """``tree`` with every tensor as a NumPy array (the inverse of :func:`to_tensors`)."""
    if isinstance(tree, torch.Tensor):
        return tree.numpy().copy()
    if isinstance(tree, dict):
        return {k: to_arrays(v) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(to_arrays(v) for v in tree)
    return tree


def kept(payload: dict) -> dict:
    """``payload`` with its network and optimiser state copied, not referenced: a snapshot that stays
    as it was while training goes on (what a run stopped mid-step writes instead of the half-done step)."""
    return {**payload, **{k: copy.deepcopy(payload[k]) for k in ("model", "optimizer") if k in payload}}


def save_checkpoint(path: str | os.PathLike, payload: dict) -> Path:
    """Write ``payload`` atomically (a temporary file in the same folder, flushed, then renamed),
    with NumPy arrays stored as tensors so that :func:`read_checkpoint` can read it safely."""
    remove_stale_temporaries(path)  # left by a write that was killed
    with atomic_open(path, "wb") as f:
        torch.save(to_tensors(payload), f)
    return Path(path)


def _refused_global(e: pickle.UnpicklingError) -> str:
    """The object torch's safe unpickler refused, from its long message."""
    found = re.search(r"GLOBAL (\S+) was not an allowed global", str(e))
    return f"it asks for {found.group(1)}" if found else "an object the safe loader does not build"


def check_archive(path: Path) -> None:
    """Refuse, before anything is inflated, an archive that could take more memory than its size on
    disk: ``torch.save`` stores every record uncompressed, so a compressed record, or one that says
    it is larger than the bytes it occupies, is a crafted file."""
    try:
        with zipfile.ZipFile(path) as z:
            entries = z.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as e:
        raise CheckpointError(f"{path} is not a readable checkpoint: {e}") from None
    size = path.stat().st_size
    for e in entries:
        if e.compress_type != zipfile.ZIP_STORED:
            raise CheckpointError(f"{path}: record {brief(e.filename, 80)} is compressed; torch.save never compresses, "
                                  "so the file is refused unread")
        if e.file_size != e.compress_size:
            raise CheckpointError(f"{path}: record {brief(e.filename, 80)} declares {e.file_size} bytes but occupies "
                                  f"{e.compress_size}; the file is refused unread")
    if sum(e.file_size for e in entries) > size:
        raise CheckpointError(f"{path}: its records declare more bytes than the file holds ({size}); refused unread")


#: bounds on what a loaded file holds besides its tensors' data: values visited (a value reached through
#: several shared references counts each time, as a walk or a message would meet it), nesting, and one
#: string's length. A checkpoint of this project has some thousands of values, a few levels deep.
MAX_VALUES = 1_000_000
MAX_DEPTH = 32
MAX_STRING = 1024 * 1024


def check_structure(tree, path) -> None:
    """:class:`CheckpointError` unless ``tree`` (a loaded file) keeps within :data:`MAX_VALUES`,
    :data:`MAX_DEPTH` and :data:`MAX_STRING`: checked before anything walks or prints it, so that a
    small file of shared references (a list of itself twice, forty times over) cannot take the
    memory or the time of its expansion."""
    stack, visited = [(tree, 0)], 0
    while stack:
        value, depth = stack.pop()
        visited += 1
        if depth > MAX_DEPTH:
            raise CheckpointError(f"{path}: its data nests deeper than {MAX_DEPTH} levels; refused")
        if isinstance(value, dict):
            children = [*value.keys(), *value.values()]
        elif isinstance(value, (list, tuple)):
            children = value
        else:
            if isinstance(value, (str, bytes)) and len(value) > MAX_STRING:
                raise CheckpointError(f"{path}: it holds a string of {len(value)} characters (at most {MAX_STRING}); refused")
            continue
        if visited + len(stack) + len(children) > MAX_VALUES:
            raise CheckpointError(f"{path}: its data holds more than {MAX_VALUES} values (counting shared ones each time "
                                  "they are reached); refused")
        stack.extend((child, depth + 1) for child in children)


def load_safely(path: str | os.PathLike):
    """``torch.load`` with ``weights_only=True``: nothing in the file is run, whatever it holds."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"no checkpoint or model file at {path}")
    if not zipfile.is_zipfile(path):
        raise CheckpointError(f"{path} is not a readable checkpoint (torch.save writes a zip archive; this is not one)")
    check_archive(path)
    try:
        loaded = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as e:
        raise CheckpointError(
            f"{path} holds objects other than tensors, numbers and strings, so it is not loaded: loading it could "
            f"run code ({_refused_global(e)}). If it is a checkpoint of an older version that you trust, convert "
            f"it: {CONVERT_HINT.format(path=path)}"
        ) from None
    except Exception as e:  # noqa: BLE001 - any unreadable file
        raise CheckpointError(f"{path} is not a readable checkpoint: {str(e).splitlines()[0] if str(e) else e!r}") from None
    check_structure(loaded, path)
    return loaded


def read_checkpoint(path: str | os.PathLike, rules_name: str | None = None, older: bool = False) -> dict:
    """A checkpoint or model file written by train.py (or the export), checked to fit this code
    (and ``rules_name``); :class:`CheckpointError` names what does not. ``older=True`` (to play,
    not to train) also accepts a network of an earlier observation version, which reads the
    leading columns of today's observation."""
    ck = load_safely(path)
    if not isinstance(ck, dict) or "model" not in ck or "obs_version" not in ck:
        raise CheckpointError(f"{path} is not a Cuatrola checkpoint (one written by train.py)")
    version = ck["obs_version"]
    if version != OBS_VERSION and not (older and version in OBS_DIMS):
        hint = " (it can play, be evaluated and start a run with --init, not be resumed)" if version in OBS_DIMS else ""
        raise CheckpointError(
            f"{path} was trained on observation version {version!r}, this code builds version {OBS_VERSION}{hint}"
        )
    rules = ck.get("rules")
    if not isinstance(rules, dict) or not isinstance(rules.get("name"), str):
        raise CheckpointError(f"{path}: field 'rules' must be the rules' dict (with a 'name'), got {brief(rules, 80)}")
    if not isinstance(ck.get("config", {}), dict):
        raise CheckpointError(f"{path}: field 'config' must be a dict, got {type(ck['config']).__name__}")
    if rules_name is not None and rules["name"] != rules_name:
        raise CheckpointError(f"{path} was trained with rules {rules['name']!r}, not {rules_name!r}")
    return ck


def network_spec(ck: dict, path) -> NetworkSpec:
    """The network a checkpoint or model file holds: its saved spec (``"network"``), or, for a file
    written before specs, the one its weights and config describe (:meth:`NetworkSpec.of_state`)."""
    try:
        if "network" in ck:
            return NetworkSpec.from_dict(ck["network"])
        config = ck.get("config") if isinstance(ck.get("config"), dict) else {}
        hidden, layers = config.get("hidden", 256), config.get("layers", 2)
        if not all(type(x) is int and 1 <= x <= 65536 for x in (hidden, layers)):
            raise ValueError(f"config fields 'hidden' and 'layers' must be positive integers, got {brief(hidden, 20)} "
                             f"and {brief(layers, 20)}")
        if not isinstance(ck["model"], dict):
            raise ValueError(f"field 'model' must be a state dict of tensors, got {type(ck['model']).__name__}")
        return NetworkSpec.of_state(ck["model"], hidden, layers, OBS_DIMS[ck["obs_version"]])
    except (ValueError, TypeError) as e:
        raise CheckpointError(f"{path}: {e}") from None


def convert(old: str | os.PathLike, new: str | os.PathLike) -> Path:
    """Rewrite a trusted checkpoint of an older version (NumPy arrays pickled) in the safe form.
    This unpickles ``old``: only for files you trust."""
    ck = torch.load(old, map_location="cpu", weights_only=False)
    env = ck.get("env") if isinstance(ck, dict) else None
    if isinstance(env, dict) and "rngs" in env:  # the older layout of the games' deal streams
        ck["env"] = {"state": env["state"], "deals": [{"rng": rng, "masks": masks, "last": last, "pos": pos}
                                                      for rng, (masks, last, pos) in zip(env["rngs"], env["deals"],
                                                                                          strict=True)]}
    out = save_checkpoint(new, ck)
    read_checkpoint(out, older=True)
    return out


def main(argv=None) -> int:
    p = ArgumentParser(prog="python -m agents.checkpoint",
                                description="Convert a trusted checkpoint of an older version to the safe format.")
    p.add_argument("old", help="the checkpoint to convert (it is unpickled: only a file you trust)")
    p.add_argument("new", help="where to write the converted checkpoint")
    p.add_argument("--trust-pickle", action="store_true",
                   help="required: confirms that OLD comes from a source you trust (unpickling can run code)")
    a = p.parse_args(argv)
    if not a.trust_pickle:
        print("error: converting unpickles OLD, which can run code it contains; pass --trust-pickle if you trust it",
              file=sys.stderr)
        return 2
    try:
        print(f"wrote {convert(a.old, a.new)}")
    except (OSError, CheckpointError, pickle.UnpicklingError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))


__all__ = ["CheckpointError", "check_archive", "check_structure", "convert", "load_safely", "read_checkpoint",
           "kept", "network_spec", "save_checkpoint", "to_arrays", "to_tensors"]
