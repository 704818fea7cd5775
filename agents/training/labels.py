"""Labelled decisions, compactly: the hands played (deal, dealer, muestra, score, actions) and, for
each labelled decision, its hand, its step and its 24 values (NaN off the legal actions), about 60
bytes a decision; the observations are rebuilt by replaying the hands through the engine. The
format of a teacher–student run's replay window (:mod:`.distill`).
"""

from __future__ import annotations

import sys
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tqdm import tqdm

from cuatrola_env.bitboards import cards_of
from cuatrola_env.cli import brief
from cuatrola_env.files import atomic_open
from cuatrola_env.game import Game
from cuatrola_env.observation import OBS_DIM
from cuatrola_env.positions import Positions
from cuatrola_env.rules import MAX_DECISIONS_PER_HAND, NUM_ACTIONS, NUM_CARDS, Rules

from ..checkpoint import CheckpointError
from ..parallel import Runner

MAX_DECISIONS = MAX_DECISIONS_PER_HAND  #: actions in a hand at most: four bids and twenty cards

FIELDS = ("deal", "dealer", "muestra", "score", "actions", "length", "hand", "step", "values")

#: the largest label value a file may hold (game points a hand, with a card-point margin share)
MAX_LABEL_VALUE = 64.0

#: the most bytes a label file's arrays may take once inflated (some 20 M labelled decisions)
MAX_LABEL_BYTES = 2**31


def merge(parts: list[dict]) -> dict:
    """Several tasks' (or iterations') data as one, hand numbers offset."""
    offsets = np.cumsum([0] + [len(p["dealer"]) for p in parts[:-1]])
    return {k: np.concatenate([p[k] + off if k == "hand" else p[k] for p, off in zip(parts, offsets, strict=True)])
            for k in FIELDS}


@dataclass
class Replayed:
    """The labelled decisions of some data, rebuilt through the engine: what the acting seat saw
    (``obs``, ``mask``) and, for training targets only, where every unplayed card was."""

    obs: np.ndarray  #: (k, OBS_DIM) float32 observations of the seats to act
    mask: np.ndarray  #: (k, 24) bool legal actions
    hands: np.ndarray  #: (k, 4) uint32 every seat's unplayed cards (hidden from the seat: targets only)
    seat: np.ndarray  #: (k,) int8 the seat to act
    muestra: np.ndarray  #: (k,) int8 the hand's muestra


def replay_decisions(data: dict, rules: Rules) -> Replayed:
    """The labelled decisions rebuilt by replaying the hands through the engine; ``ValueError`` if
    a label's legal actions are not the position's."""
    pos = Positions.deal(data["deal"], data["dealer"], data["muestra"], rules, data["score"])
    hand, step = data["hand"], data["step"]
    out = Replayed(np.zeros((len(hand), OBS_DIM), np.float32), np.zeros((len(hand), NUM_ACTIONS), bool),
                   np.zeros((len(hand), 4), np.uint32), np.zeros(len(hand), np.int8), data["muestra"][hand])
    for t in range(MAX_DECISIONS):
        rows = np.flatnonzero(step == t)
        if rows.size:
            at = pos.take(hand[rows])
            out.obs[rows], out.mask[rows] = at.observe(), at.legal_mask()
            out.hands[rows], out.seat[rows] = at.hands, at.current
        pos.step(data["actions"][:, t])  # a hand's actions end with it (-1 after): a finished hand stays as it is
    if (out.mask != ~np.isnan(data["values"].astype(np.float32))).any():
        raise ValueError("labels do not fit their positions: values are not exactly the legal actions'")
    return out


def hand_game(data: dict, hand: int, step: int, rules: Rules) -> Game:
    """The game of ``hand`` of some data after its first ``step`` actions, one game through the
    engine: a seat view of it has its history, which :func:`replay_decisions` (many at once) has not."""
    g = Game(rules)
    g.reset(hands=[cards_of(int(m)) for m in data["deal"][hand]], dealer=int(data["dealer"][hand]),
            muestra=int(data["muestra"][hand]), score=[int(x) for x in data["score"][hand]])
    for a in data["actions"][hand, :step]:
        g.step(int(a))
    return g


def replay(data: dict, rules: Rules) -> tuple[np.ndarray, np.ndarray]:
    """(observations, legal masks) of the labelled decisions (:func:`replay_decisions`)."""
    r = replay_decisions(data, rules)
    return r.obs, r.mask


def card_owners(r: Replayed) -> np.ndarray:
    """(k, 20) int64: for each card the acting seat cannot place, which other seat holds it
    (0, 1, 2: the next seat, the partner, the seat before), -1 for a card it can place (its own, one
    played, the muestra while the dealer holds it). The card-location head's targets."""
    k = len(r.seat)
    rel = (np.arange(4)[None, :] - r.seat[:, None].astype(np.int64)) % 4  # (k, 4) each seat relative to the actor
    bits = (r.hands[:, :, None].astype(np.int64) >> np.arange(NUM_CARDS)) & 1  # (k, 4, 20)
    others = bits * (rel[:, :, None] > 0)
    owner = np.where(others.any(1), (others * rel[:, :, None]).sum(1) - 1, -1)
    owner[np.arange(k), r.muestra.astype(np.int64)] = -1  # the muestra's place is public while unplayed
    return owner


def save_data(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(path, "wb") as f:
        np.savez_compressed(f, **data)


def load_data(path: Path) -> dict:
    """One iteration's data (plain arrays: ``allow_pickle`` stays off)."""
    if not Path(path).is_file():
        raise CheckpointError(f"label file {path} does not exist")
    check_inflated_size(Path(path))
    try:
        with np.load(path, allow_pickle=False) as d:
            data = {k: d[k] for k in FIELDS if k in d}
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as e:
        raise CheckpointError(f"{path} is not a readable label file: {e}") from None
    missing = [k for k in FIELDS if k not in data]
    if missing:
        raise CheckpointError(f"{path} is not a label file: it lacks {missing}")
    check_data(data, path)
    return data


def check_inflated_size(path: Path) -> None:
    """Refuse, before anything is inflated, a label file whose arrays would take more than
    :data:`MAX_LABEL_BYTES` (a crafted archive of deflated zeros); what it declares bounds what it gives.
    Each array's header (its shape and type) must also describe exactly the bytes its record holds,
    so that no header makes the reader allocate more than the file gives."""
    try:
        with zipfile.ZipFile(path) as z:
            entries = z.infolist()
            declared = sum(e.file_size for e in entries)
            if declared > MAX_LABEL_BYTES:
                raise CheckpointError(f"{path} would inflate to {declared} bytes, more than a label file's "
                                      f"{MAX_LABEL_BYTES}; refused unread")
            for entry in entries:
                with z.open(entry) as f:
                    _check_array_header(f, entry, path)
    except CheckpointError:
        raise
    except (zipfile.BadZipFile, OSError, ValueError) as e:
        raise CheckpointError(f"{path} is not a readable label file: {str(e)[:200]}") from None


def _check_array_header(f, entry: zipfile.ZipInfo, path: Path) -> None:
    """The ``.npy`` header of one record: its shape times its item size must be the bytes after it."""
    version = np.lib.format.read_magic(f)
    read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
    shape, _, dtype = read(f, max_header_size=10_000)
    if dtype.hasobject:
        raise CheckpointError(f"{path}: array {brief(entry.filename, 80)} holds objects; refused unread")
    size = int(np.prod(shape, dtype=object)) * dtype.itemsize
    if size != entry.file_size - f.tell():
        raise CheckpointError(f"{path}: array {brief(entry.filename, 80)} claims {size} bytes of data and its record holds "
                              f"{entry.file_size - f.tell()}; refused unread")


#: per field of a label file: its dtype (integer fields may be any integer type), its shape after the row
#: count (of hands, or of labels), and its range
DATA_SCHEMA = {
    "deal": (np.uint32, ("hands", 4), 0, (1 << NUM_CARDS) - 1),
    "dealer": (np.int8, ("hands",), 0, 3),
    "muestra": (np.int8, ("hands",), 0, NUM_CARDS - 1),
    "score": (np.int16, ("hands", 2), 0, 10_000),
    "actions": (np.int8, ("hands", MAX_DECISIONS), -1, NUM_ACTIONS - 1),
    "length": (np.int8, ("hands",), 0, MAX_DECISIONS),
    "hand": (np.int32, ("labels",), 0, None),
    "step": (np.int8, ("labels",), 0, MAX_DECISIONS - 1),
    "values": (np.float16, ("labels", NUM_ACTIONS), -MAX_LABEL_VALUE, MAX_LABEL_VALUE),
}


#: the fields with a row per hand, and those with a row per labelled decision
HAND_FIELDS = tuple(k for k, (_, shape, _, _) in DATA_SCHEMA.items() if shape[0] == "hands")
LABEL_FIELDS = tuple(k for k, (_, shape, _, _) in DATA_SCHEMA.items() if shape[0] == "labels")


def empty_data() -> dict:
    """Data of no hand, each field of its dtype and shape (:data:`DATA_SCHEMA`)."""
    return {k: np.zeros((0, *shape[1:]), dtype) for k, (dtype, shape, _, _) in DATA_SCHEMA.items()}


def check_data(data: dict, path) -> None:
    """Raise :class:`CheckpointError` naming the first field of a label file with the wrong dtype or
    shape, or a value out of its range (a value may be NaN, an action that was not legal; never infinite)."""
    rows = {"hands": len(data["dealer"]), "labels": len(data["hand"])}
    for k, (dtype, shape, lo, hi) in DATA_SCHEMA.items():
        x, want = data[k], tuple(rows.get(d, d) for d in shape)
        kinds = "f" if np.dtype(dtype).kind == "f" else "iu"
        if x.dtype.kind not in kinds or x.shape != want:
            raise CheckpointError(f"{path}: field {k!r} is {x.dtype} {x.shape}, a label file holds {np.dtype(dtype)} {want}")
        finite = x[~np.isnan(x)] if x.dtype.kind == "f" else x
        hi = rows["hands"] - 1 if hi is None else hi
        if finite.size and (not np.isfinite(finite).all() or finite.min() < lo or finite.max() > hi):
            raise CheckpointError(f"{path}: field {k!r} holds values outside {lo}..{hi}")


# ----------------------------------------------------------------------------- labelling in tasks
def hand_tasks(total: int, per_task: int, seed: int, iteration: int, stream: int = 0) -> list[tuple[int, int]]:
    """(seed, hands) of each task of an iteration's ``total`` hands, ``per_task`` at most each: every
    task has its own seed, so the data depend on no number of workers; another ``stream`` of the same
    seed draws other deals."""
    base = (seed * 1_000 + iteration) * 100_003 + stream * 1_000_000_007
    return [(base + k, min(per_task, total - lo)) for k, lo in enumerate(range(0, total, per_task))]


def label_in_tasks(runner: Runner, fn: Callable[..., dict], tasks: list[tuple], hands: list[int], desc: str,
                   stop: Callable[[], bool], postfix: dict | None = None) -> dict:
    """``fn(*task)`` for each task (``hands[k]`` hands each) on the runner, with a progress bar in
    hands (``postfix`` beside it: the run's latest evaluation), merged into one iteration's data
    (:class:`~agents.parallel.Stopped` once ``stop()``)."""
    bar = tqdm(total=sum(hands), unit="hand", desc=desc, file=sys.stderr, leave=False, postfix=postfix or None)
    try:
        parts = runner.map(fn, tasks, bar, hands, stop)
    finally:
        bar.close()
    return merge(parts)
