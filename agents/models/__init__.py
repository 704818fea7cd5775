"""The shipped model, installed with the package: the ONNX policy with its card, and the slim
PyTorch checkpoint it was exported from (``README.md`` beside them is the model card).

>>> from agents.models import ONNX_MODEL, TORCH_MODEL
>>> ONNX_MODEL.name
'cuatrola.onnx'

They are the default of every ``--model`` and ``path`` option, so an installed package serves
and plays with no checkout.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

_HERE = Path(str(resources.files(__name__)))

#: the exported policy (onnxruntime; its card ``cuatrola.json`` beside it)
ONNX_MODEL = _HERE / "cuatrola.onnx"
#: the slim training checkpoint (weights, config, rules) it was exported from, for ``model:`` and ``--init``
TORCH_MODEL = _HERE / "cuatrola.pt"

__all__ = ["ONNX_MODEL", "TORCH_MODEL"]
