"""Is A better than B? Paired difference of two evaluations on the same deals.

    python evaluate.py model:runs/sweep/nocp.pt heuristic --deals 4000 --matches 0 --seed 21 --json a.json
    python evaluate.py model:models/cuatrola.pt heuristic --deals 4000 --matches 0 --seed 21 --json b.json
    python benchmarks/compare_results.py a.json b.json

Both runs must have met the same opponent on the same seeded deals; each deal's difference
of game points (A's minus B's) is one sample, so the luck of the deal cancels twice: once
by the duplicate design inside each run, once between the runs. Far tighter than comparing
the two runs' intervals.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import evaluate  # noqa: E402


def paired_difference(a: dict, b: dict) -> dict:
    """Mean and 95% interval of A's minus B's game points per deal (two ``evaluate.py --json`` outputs)."""
    if (a["seed"], a["deals"]) != (b["seed"], b["deals"]):
        raise ValueError(f"not the same deals: seed {a['seed']} / {a['deals']} deals against seed {b['seed']} / {b['deals']}")
    pa, pb = a["pairings"][0], b["pairings"][0]
    if pa["b"] != pb["b"]:
        raise ValueError(f"not the same opponent: {pa['b']} and {pb['b']}")
    if "deal_game_points" not in pa or "deal_game_points" not in pb:
        raise ValueError("a run without per-deal results (written by evaluate.py since pooling was added)")
    d = np.asarray(pa["deal_game_points"]) - np.asarray(pb["deal_game_points"])
    return {"a": pa["a"], "b": pb["a"], "opponent": pa["b"], "game_points_difference": evaluate.mean_ci(d)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("a", type=Path)
    p.add_argument("b", type=Path)
    args = p.parse_args(argv)
    try:
        r = paired_difference(json.loads(args.a.read_text()), json.loads(args.b.read_text()))
    except ValueError as e:
        p.error(str(e))
    d = r["game_points_difference"]
    print(f"{r['a']} minus {r['b']} against {r['opponent']}: {d['mean']:+.3f} [{d['ci95'][0]:+.3f}, {d['ci95'][1]:+.3f}] "
          f"game points/hand over {d['n']} deals")
    return 0


if __name__ == "__main__":
    sys.exit(main())
