"""The examples in the docstrings run as written: every module of the three packages."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import agents
import cuatrola_env
import cuatrola_serve


def _modules() -> list[str]:
    return sorted(m.name for pkg in (cuatrola_env, agents, cuatrola_serve)
                  for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + ".") if not m.name.endswith("__main__"))


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples(name):
    try:
        module = importlib.import_module(name)
    except ImportError as e:  # an optional extra (torch, onnxruntime, FastAPI) not installed
        pytest.skip(f"{name} needs {e.name}")
    result = doctest.testmod(module)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {name} fail"


def test_the_examples_are_found():
    ran = sum(doctest.testmod(importlib.import_module(n)).attempted for n in ("cuatrola_env.vector", "cuatrola_env.game",
                                                                              "agents.solver"))
    assert ran >= 10
