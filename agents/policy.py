"""An exported policy run by onnxruntime (no torch): the ONNX graph and its card, checked at
load, and the levels a bot chooses from it with.

>>> from agents.policy import OnnxPolicy
>>> policy = OnnxPolicy.load()                       # the shipped model      # doctest: +SKIP
>>> policy.probabilities(obs, mask, "strong")          # (N, 24), legal only   # doctest: +SKIP

:meth:`OnnxPolicy.load` refuses a model that does not fit this code with :class:`ModelError`
naming the problem: the card's fields, the file's SHA-256, the graph's inputs, outputs, element
types and shapes, and a probe batch. Whatever the graph's logits, every probability this module
gives is zero off the legal mask.
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cuatrola_env.cli import brief
from cuatrola_env.files import loads_bounded
from cuatrola_env.observation import OBS_DIM, OBS_DIMS, OBS_VERSION
from cuatrola_env.rules import NUM_ACTIONS, NUM_CARDS, Rules, get_rules

from .models import EXPERT_MODELS, ONNX_MODEL, PRESET_MODELS
from .onnx_scan import MalformedModel, external_tensors


@dataclass(frozen=True)
class Level:
    """How a bot picks from the policy: ``temperature`` 0 is greedy; ``random`` is the share
    of card plays made uniformly at random among the legal cards (bids always follow the
    policy: a random bid would be a blunder no human makes); ``search`` plans each decision
    with :class:`agents.search.SearchAgent` instead (it needs the game's history, so it plays
    from a state or a game, not from a bare observation)."""

    temperature: float
    random: float = 0.0
    search: bool = False


#: The search settings of level ``master`` (:class:`agents.search.SearchAgent` options): 64 deals drawn
#: from 512 candidates per decision, the other seats' card plays weighing half as much as their bids
#: in the inference (how they were chosen, and what they cost: docs/search.md).
MASTER_SEARCH = {"worlds": 64, "candidates": 512, "infer_play": 0.5}

#: Master's settings over a model trained under each rules preset, where they differ from
#: :data:`MASTER_SEARCH`: each preset's are the ones measured strongest under it (docs/search.md).
MASTER_SEARCH_BY_PRESET = {"traditional": {**MASTER_SEARCH, "worlds": 128, "candidates": 1024}}


def master_search(rules: Rules) -> dict:
    """Level ``master``'s search settings over a model trained under ``rules``."""
    return dict(MASTER_SEARCH_BY_PRESET.get(rules.name, MASTER_SEARCH))

LEVELS = {
    "master": Level(0.0, search=True),
    "expert": Level(0.0),
    "strong": Level(0.5),
    "medium": Level(1.0, 0.2),
    "easy": Level(1.0, 0.4),
    "beginner": Level(1.0, 0.7),
}


class ModelError(ValueError):
    """A model file (or its card) the bot cannot use."""



def sample_actions(p: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One action per row of probabilities ``p`` (N, 24), by inverse transform."""
    u = rng.random((len(p), 1))
    return np.minimum((p.cumsum(1) < u).sum(1), NUM_ACTIONS - 1).astype(np.int64)



#: what a model card must hold, and the type of each field
CARD_FIELDS = {"model": str, "sha256": str, "obs_version": int, "obs_dim": int, "rules": dict, "training": dict}

def graph_inputs(obs_dim: int = OBS_DIM) -> dict:
    """The inputs every model's graph must have, for a model of ``obs_dim`` observation floats:
    name -> (ONNX element type, shape; None is the dynamic batch)."""
    return {"observation": ("tensor(float)", [None, obs_dim]), "action_mask": ("tensor(bool)", [None, NUM_ACTIONS])}


GRAPH_OUTPUTS = {"logits": ("tensor(float)", [None, NUM_ACTIONS])}


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0][:300] if text else type(e).__name__


def read_card(path: Path) -> dict:
    """The model card beside ``path``, with every field the bot and the service read checked."""
    card_path = path.with_suffix(".json")
    if not path.is_file():
        raise ModelError(f"no model file at {path}")
    if not card_path.is_file():
        raise ModelError(f"no model card at {card_path} (python -m agents.export writes both)")
    try:
        card = loads_bounded(card_path.read_bytes())
    except (ValueError, RecursionError) as e:  # malformed JSON, not UTF-8, or a number out of range
        raise ModelError(f"{card_path} is not a valid model card: {_first_line(e)}") from None
    if not isinstance(card, dict):
        raise ModelError(f"{card_path} must hold a JSON object")
    for field, kind in CARD_FIELDS.items():
        if not isinstance(card.get(field), kind) or isinstance(card.get(field), bool):
            raise ModelError(f"{card_path}: field {field!r} must be a {kind.__name__}, got {brief(card.get(field), 60)}")
    if OBS_DIMS.get(card["obs_version"]) != card["obs_dim"]:
        raise ModelError(
            f"{path} expects observation version {card['obs_version']} ({card['obs_dim']} floats); "
            f"this code builds version {OBS_VERSION} ({OBS_DIM} floats) and reads models of versions "
            + ", ".join(f"{v} ({d} floats)" for v, d in OBS_DIMS.items())
        )
    try:
        get_rules(card["rules"])
    except (ValueError, TypeError) as e:
        raise ModelError(f"{card_path}: field 'rules': {e}") from None
    decisions = card["training"].get("decisions")
    if not isinstance(decisions, int) or isinstance(decisions, bool) or decisions < 0:
        raise ModelError(f"{card_path}: field 'training.decisions' must be a count, got {brief(decisions, 60)}")
    return card


def check_self_contained(data: bytes, path: Path) -> None:
    """Raise :class:`ModelError` if a tensor of the graph keeps its values outside the file (weights
    the card's SHA-256 does not cover, read from wherever the process happens to run)."""
    try:
        external = external_tensors(data)
    except MalformedModel as e:
        raise ModelError(f"{path} is not a valid ONNX model: {e}") from None
    if external:
        raise ModelError(f"{path}: tensor(s) {external[:5]} keep their data in external files; a model must hold "
                         "all its weights (python -m agents.export writes one that does)")


def check_graph(session, path: Path, obs_dim: int = OBS_DIM) -> None:
    """Raise :class:`ModelError` unless the graph has exactly the inputs and outputs the bot feeds and reads."""
    for what, args, want in (("input", session.get_inputs(), graph_inputs(obs_dim)),
                             ("output", session.get_outputs(), GRAPH_OUTPUTS)):
        have = {a.name: a for a in args}
        if set(have) != set(want):
            raise ModelError(f"{path}: the graph's {what}s are {sorted(have)}, the bot needs {sorted(want)}")
        for name, (dtype, shape) in want.items():
            got = have[name]
            dims = [d if isinstance(d, int) else None for d in got.shape]
            fits = len(dims) == len(shape) and all(w is None or d == w for d, w in zip(dims, shape, strict=True))
            if got.type != dtype or not fits:
                raise ModelError(f"{path}: {what} {name!r} is {got.type} {got.shape}, the bot needs {dtype} "
                                 f"{['N' if d is None else d for d in shape]}")


#: the memory every ONNX session of this process may take for its weights and its inference in all
#: (the shipped models take a few MB): a graph that asks for more fails at once instead of growing
INFERENCE_MEMORY = 512 * 1024 * 1024
#: the longest a graph may take on its probe of two observations at load (the shipped ones: under 1 ms)
PROBE_SECONDS = 2.0
_capped: list[bool] = []  # whether this process's capped allocator is registered


def capped_session_options(ort, threads: int):
    """Session options whose memory comes from one arena of at most :data:`INFERENCE_MEMORY` bytes,
    shared by this process's sessions (registered once): a small graph that allocates gigabytes (a
    constant of a huge shape, an outer product) is refused when it asks, not served."""
    if not _capped:
        info = ort.OrtMemoryInfo("Cpu", ort.OrtAllocatorType.ORT_ARENA_ALLOCATOR, 0, ort.OrtMemType.DEFAULT)
        ort.create_and_register_allocator(info, ort.OrtArenaCfg(INFERENCE_MEMORY, 0, -1, -1))
        _capped.append(True)
    opts = ort.SessionOptions()
    opts.add_session_config_entry("session.use_env_allocators", "1")
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 4  # a refused graph is reported by the ModelError, not by onnxruntime's log
    return opts


def probe_graph(session, path: Path, obs_dim: int = OBS_DIM) -> None:
    """Run the graph once on a batch of two observations: it must give (2, 24) float32 logits, within
    :data:`INFERENCE_MEMORY` and :data:`PROBE_SECONDS`."""
    start = time.perf_counter()
    try:
        (out,) = session.run(["logits"], {"observation": np.zeros((2, obs_dim), np.float32),
                                          "action_mask": np.ones((2, NUM_ACTIONS), bool)})
    except Exception as e:  # noqa: BLE001 - onnxruntime's own error types
        if "Available memory" in str(e) or "allocate" in str(e).lower():
            raise ModelError(f"{path}: the graph asks for more memory than the {INFERENCE_MEMORY // 2**20} MB a model "
                             "may take to play; refused") from None
        raise ModelError(f"{path}: the graph fails on a batch of observations: {_first_line(e)}") from None
    if time.perf_counter() - start > PROBE_SECONDS:
        raise ModelError(f"{path}: the graph takes {time.perf_counter() - start:.1f} s on 2 observations (at most "
                         f"{PROBE_SECONDS:g} s); refused")
    if out.shape != (2, NUM_ACTIONS) or out.dtype != np.float32:
        raise ModelError(f"{path}: the graph gives {out.dtype} logits of shape {out.shape} for 2 observations, "
                         f"the bot needs float32 (2, {NUM_ACTIONS})")


def masked_softmax(logits: np.ndarray, mask: np.ndarray, temperature: float) -> np.ndarray:
    """(N, 24) probabilities over the legal actions only, whatever the model's logits (an illegal
    action's, NaN or infinite ones included): greedy at ``temperature`` 0; uniform over the legal
    actions of a row whose legal logits are all unusable."""
    z = np.where(mask & np.isfinite(logits), logits, -np.inf)
    usable = np.isfinite(z).any(1, keepdims=True)
    z = np.where(usable, z, np.where(mask, 0.0, -np.inf))
    if temperature <= 0:
        p = np.zeros_like(z)
        p[np.arange(len(p)), z.argmax(1)] = 1.0
        return p
    z = z / temperature
    z -= z.max(1, keepdims=True)
    p = np.exp(z)
    return p / p.sum(1, keepdims=True)


class OnnxPolicy:
    """An ONNX policy and its card; logits and level probabilities of batches of observations."""

    def __init__(self, session, card: dict):
        self.session, self.card = session, card
        self.rules = get_rules(card["rules"])
        self.obs_dim = card["obs_dim"]  #: a model of an earlier observation version reads its leading columns

    @classmethod
    def load(cls, path: str | Path = ONNX_MODEL, threads: int = 1) -> OnnxPolicy:
        """Load ``path`` and its card (the ``.json`` beside it), checking both fit this code before
        anything plays: the card's fields, the file's SHA-256, and the graph's inputs and outputs.
        A model that does not fit raises :class:`ModelError` naming the problem."""
        import onnxruntime as ort

        path = Path(path)
        card = read_card(path)
        data = path.read_bytes()
        if card["sha256"] != hashlib.sha256(data).hexdigest():
            raise ModelError(f"{path} does not match its card {path.with_suffix('.json')} (SHA-256 differs)")
        check_self_contained(data, path)
        opts = capped_session_options(ort, threads)
        try:
            session = ort.InferenceSession(data, opts, providers=["CPUExecutionProvider"])
        except Exception as e:  # noqa: BLE001 - onnxruntime raises its own types for a bad graph
            raise ModelError(f"{path} is not a valid ONNX model: {_first_line(e)}") from None
        check_graph(session, path, card["obs_dim"])
        probe_graph(session, path, card["obs_dim"])
        return cls(session, card)

    def logits(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The graph's logits of a batch: ``obs`` (N, OBS_DIM) float32, ``mask`` (N, 24) bool."""
        obs = np.asarray(obs, np.float32).reshape(-1, OBS_DIM)
        if self.obs_dim != OBS_DIM:
            obs = np.ascontiguousarray(obs[:, : self.obs_dim])
        return self.session.run(["logits"], {"observation": obs,
                                            "action_mask": np.asarray(mask, bool).reshape(-1, NUM_ACTIONS)})[0]

    def probabilities(self, obs: np.ndarray, mask: np.ndarray, level: str) -> np.ndarray:
        """(N, 24) probabilities of each action at ``level`` (see :data:`LEVELS`); zero off the mask."""
        mask = np.asarray(mask, bool).reshape(-1, NUM_ACTIONS)
        lv = LEVELS[level]
        p = masked_softmax(self.logits(obs, mask).astype(np.float64), mask, lv.temperature)
        if lv.random > 0:
            cards = ~mask[:, NUM_CARDS:].any(1, keepdims=True)  # card-play decisions
            mix = lv.random * cards
            p = (1 - mix) * p + mix * mask / mask.sum(1, keepdims=True)
        return p


#: the rule options that change how a hand is played (every option but the name and the match target),
#: by which :func:`policy_for` matches a model to a game
PLAY_OPTIONS = tuple(f.name for f in dataclasses.fields(Rules) if f.name not in ("name", "target"))


def policy_for(policies: list[OnnxPolicy], rules) -> OnnxPolicy:
    """Of ``policies`` (the first is the default), the one trained under the rules most like ``rules``:
    the most :data:`PLAY_OPTIONS` alike, the earliest on a tie (the match target does not count)."""
    return max(policies, key=lambda p: sum(getattr(p.rules, f) == getattr(rules, f) for f in PLAY_OPTIONS))


def load_policies(path: str | Path = ONNX_MODEL, threads: int = 1, expert: bool = False) -> list[OnnxPolicy]:
    """The model at ``path``; for the shipped default, every shipped preset's model, the default first
    (each checked as :meth:`OnnxPolicy.load` checks it). With ``expert``, level ``expert``'s: for the
    shipped default each preset's :data:`~agents.models.EXPERT_MODELS` file where it is shipped (that
    preset's model where not); any other model serves every level."""
    if Path(path).resolve() != ONNX_MODEL.resolve():
        return [OnnxPolicy.load(path, threads)]
    shipped = [(k, p) for k, p in PRESET_MODELS.items() if p == ONNX_MODEL or p.is_file()]
    return [OnnxPolicy.load(EXPERT_MODELS[k] if expert and EXPERT_MODELS[k].is_file() else p, threads) for k, p in shipped]


def check_level(level: str) -> None:
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r}; levels: {', '.join(LEVELS)}")


__all__ = ["LEVELS", "Level", "MASTER_SEARCH", "MASTER_SEARCH_BY_PRESET", "ModelError", "OnnxPolicy", "check_level",
           "load_policies", "masked_softmax", "master_search", "policy_for", "sample_actions"]
