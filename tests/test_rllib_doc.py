"""The RLlib example of docs/scaling.md runs as written (where RLlib and its dependencies are installed;
RLlib pins its own Gymnasium version, so the suite's usual environment skips it)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("tree")  # dm-tree: RLlib imports it first
pytest.importorskip("ray.rllib.algorithms.ppo")


def test_the_rllib_example_of_the_scaling_guide_trains_three_iterations(capsys):
    text = (Path(__file__).resolve().parents[1] / "docs" / "scaling.md").read_text()
    block = re.search(r"## RLlib.*?```python\n(.*?)```", text, re.S).group(1)
    exec(compile(block, "docs/scaling.md (RLlib)", "exec"), {"__name__": "rllib_example"})
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("iteration ")]
    assert [line.split(":")[0] for line in lines] == ["iteration 1", "iteration 2", "iteration 3"]
    assert lines[-1].endswith("6000.0 decisions") or "6000 decisions" in lines[-1]
