"""Where an ONNX file's tensors keep their data, read from the bytes without onnx or onnxruntime.

An ONNX tensor may hold its values in the file or name an *external* file (``data_location =
EXTERNAL`` with a ``location``), which onnxruntime then reads from the model's folder or, for a
model given as bytes, from the current directory: weights that the model card's SHA-256 does not
cover. :func:`external_tensors` lists every such tensor of a model, so that the bot refuses them.

>>> from agents.models import ONNX_MODEL
>>> from agents.onnx_scan import external_tensors
>>> external_tensors(ONNX_MODEL.read_bytes())                  # the shipped model holds all its weights
[]

It walks the protobuf wire format along the fields that can hold a tensor (the numbers of
``onnx.proto``): initializers, sparse initializers, node attributes (a tensor, tensors, a
subgraph, subgraphs), functions and training graphs, to any depth.
"""

from __future__ import annotations

#: for each message kind, its fields that hold messages, and the kind of each
FIELDS: dict[str, dict[int, str]] = {
    "model": {7: "graph", 20: "training", 25: "function"},
    "training": {1: "graph", 2: "graph"},
    "graph": {1: "node", 5: "tensor", 15: "sparse"},
    "function": {7: "node", 11: "attribute"},
    "node": {5: "attribute"},
    "attribute": {5: "tensor", 6: "graph", 10: "tensor", 11: "graph", 22: "sparse", 23: "sparse"},
    "sparse": {1: "tensor", 2: "tensor"},
    "tensor": {},
}
TENSOR_NAME, EXTERNAL_DATA, DATA_LOCATION = 8, 13, 14  #: TensorProto's name, external_data, data_location
MAX_DEPTH = 64  #: subgraphs nested deeper than this are refused


class MalformedModel(ValueError):
    """Bytes that are not a well-formed protobuf message."""


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data) or shift > 63:
            raise MalformedModel(f"a varint runs off at byte {at}")
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at, shift = at + 1, shift + 7
        if not byte & 0x80:
            return value, at


def _fields(data: bytes, start: int, end: int):
    """``(field number, wire type, value)`` of one message; a length-delimited value is its ``(start, end)``."""
    at = start
    while at < end:
        key, at = _varint(data, at)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, at = _varint(data, at)
        elif wire == 1 or wire == 5:
            value, at = None, at + (8 if wire == 1 else 4)
        elif wire == 2:
            length, at = _varint(data, at)
            value, at = (at, at + length), at + length
        else:
            raise MalformedModel(f"wire type {wire} at byte {at}")
        if at > end:
            raise MalformedModel(f"field {number} runs past its message at byte {end}")
        yield number, wire, value


def external_tensors(data: bytes) -> list[str]:
    """Names of the tensors of the ONNX model ``data`` whose values live outside it (empty: none)."""
    found: list[str] = []
    stack = [("model", 0, len(data), 0)]
    while stack:
        kind, start, end, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise MalformedModel(f"messages nested more than {MAX_DEPTH} deep")
        name, external = "", False
        for number, wire, value in _fields(data, start, end):
            if kind == "tensor":
                if number == TENSOR_NAME and wire == 2:
                    name = data[value[0]:value[1]].decode("utf-8", "replace")
                external |= (number == DATA_LOCATION and wire == 0 and value != 0) or number == EXTERNAL_DATA
            elif number in FIELDS[kind] and wire == 2:
                stack.append((FIELDS[kind][number], *value, depth + 1))
        if external:
            found.append(name or "(unnamed)")
    return found


__all__ = ["MalformedModel", "external_tensors"]
