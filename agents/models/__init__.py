"""The shipped model, installed with the package: the ONNX policy with its card, and the slim
PyTorch checkpoint it was exported from (``README.md`` beside them is the model card).

>>> from agents.models import ONNX_MODEL, TORCH_MODEL
>>> ONNX_MODEL.name
'cuatrola.onnx'

They are the default of every ``--model`` and ``path`` option, so an installed package serves
and plays with no checkout. A model trained under each rules preset is shipped (``cuatrola``
under ``online``, ``cuatrola_traditional`` under ``traditional``); with the default model the bot
plays each game with the one trained under its rules (:func:`agents.policy.policy_for`). Level
``expert`` (the network alone, greedy) plays each preset's ``*_expert`` model where one is
shipped (:data:`EXPERT_MODELS`).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

_HERE = Path(str(resources.files(__name__)))

#: the exported policy (onnxruntime; its card ``cuatrola.json`` beside it)
ONNX_MODEL = _HERE / "cuatrola.onnx"
#: the slim training checkpoint (weights, config, rules) it was exported from, for ``model:`` and ``--init``
TORCH_MODEL = _HERE / "cuatrola.pt"

#: the model trained under the ``traditional`` preset, and its slim checkpoint
TRADITIONAL_ONNX_MODEL = _HERE / "cuatrola_traditional.onnx"
TRADITIONAL_TORCH_MODEL = _HERE / "cuatrola_traditional.pt"
#: the shipped models by the rules preset each was trained under (the online one is the default)
PRESET_MODELS = {"online": ONNX_MODEL, "traditional": TRADITIONAL_ONNX_MODEL}

#: level ``expert``'s models by preset: each preset's model with a late card-play head taught by PIMC
#: (online, also an early head for the first trick taught by level master; the bids are that model's
#: own, and under ``traditional`` the first trick too); every other level plays or searches over
#: :data:`PRESET_MODELS`
EXPERT_MODELS = {"online": _HERE / "cuatrola_expert.onnx", "traditional": _HERE / "cuatrola_traditional_expert.onnx"}

__all__ = ["EXPERT_MODELS", "ONNX_MODEL", "PRESET_MODELS", "TORCH_MODEL", "TRADITIONAL_ONNX_MODEL",
           "TRADITIONAL_TORCH_MODEL"]
