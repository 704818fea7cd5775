"""The examples in the docstrings run as written."""

from __future__ import annotations

import doctest

import pytest

import cuatrola_env.game
import cuatrola_env.vector


@pytest.mark.parametrize("module", [cuatrola_env.vector, cuatrola_env.game])
def test_docstring_examples(module):
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0
