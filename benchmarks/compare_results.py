"""Is A better than B? Paired difference of two evaluations on the same deals.

    python evaluate.py model:runs/sweep/nocp.pt heuristic --deals 4000 --matches 0 --seed 21 --json a.json
    python evaluate.py model:agents/models/cuatrola.pt heuristic --deals 4000 --matches 0 --seed 21 --json b.json
    python benchmarks/compare_results.py a.json b.json
    python benchmarks/compare_results.py a1.json b1.json a2.json b2.json   # pairs on several seeds, pooled

Both runs must have met the same opponent on the same seeded deals; each deal's difference
of game points (A's minus B's) is one sample, so the luck of the deal cancels twice: once
by the duplicate design inside each run, once between the runs. Far tighter than comparing
the two runs' intervals. Several pairs (each on its own seed) pool their per-deal differences.

Matches are compared the same way when both runs played them on the same seed (a match's
deals depend only on the seed and its number, not on ``--deals``): each duplicate match's
difference of A's and B's share of its two plays is one sample. So a matches-only run
(``--deals 0 --matches N``) pairs with the matches of a longer run on the same seed.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agents import evaluation as evaluate  # noqa: E402


def deal_differences(a: dict, b: dict) -> np.ndarray | None:
    """A's minus B's game points per deal (two ``evaluate.py --json`` outputs on one seed);
    None when either run played no deals, or they played different deal counts (other deals:
    only their matches pair)."""
    if not a["deals"] or not b["deals"] or a["deals"] != b["deals"]:
        return None
    pa, pb = a["pairings"][0], b["pairings"][0]
    if "deal_game_points" not in pa or "deal_game_points" not in pb:
        raise ValueError("a run without per-deal results (written by evaluate.py since pooling was added)")
    return np.asarray(pa["deal_game_points"]) - np.asarray(pb["deal_game_points"])


def match_differences(a: dict, b: dict) -> np.ndarray | None:
    """A's minus B's share of each duplicate match's two plays (runs on one seed); None when
    either run played no matches. Runs with different match counts pair on the matches both played."""
    if not a["matches"] or not b["matches"]:
        return None
    m = min(a["matches"], b["matches"])
    wa, wb = (np.asarray(r["pairings"][0]["match_wins"])[:m].mean(axis=1) for r in (a, b))
    return wa - wb


def paired_difference(*pairs: tuple[dict, dict]) -> dict:
    """Mean and 95% interval of A's minus B's game points per deal, and of A's minus B's match
    share per duplicate match, over one or more (A, B) pairs of runs (each pair on its own seed;
    the same two players and opponent throughout). A figure is None when no pair played it."""
    first_a, first_b = pairs[0][0]["pairings"][0], pairs[0][1]["pairings"][0]
    for a, b in pairs:
        names = (a["pairings"][0]["a"], b["pairings"][0]["a"], a["pairings"][0]["b"])
        if names != (first_a["a"], first_b["a"], first_a["b"]) or b["pairings"][0]["b"] != first_a["b"]:
            raise ValueError(f"every pair must compare {first_a['a']} with {first_b['a']} against {first_a['b']}, got "
                             f"{names[:2]} against {a['pairings'][0]['b']} and {b['pairings'][0]['b']}")
        if a["seed"] != b["seed"]:  # neither deals nor matches pair across seeds
            raise ValueError(f"not the same deals: seed {a['seed']} / {a['deals']} deals against seed {b['seed']} / "
                             f"{b['deals']}")
    deals = [d for a, b in pairs if (d := deal_differences(a, b)) is not None]
    matches = [d for a, b in pairs if (d := match_differences(a, b)) is not None]
    if not deals and not matches:
        raise ValueError("nothing to compare: no pair of runs played the same deals or the same matches")
    return {"a": first_a["a"], "b": first_b["a"], "opponent": first_a["b"], "pairs": len(pairs),
            "game_points_difference": evaluate.mean_ci(np.concatenate(deals)) if deals else None,
            "match_share_difference": evaluate.mean_ci(np.concatenate(matches)) if matches else None}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("files", nargs="+", type=Path, help="A.json B.json, or several such pairs")
    args = p.parse_args(argv)
    if len(args.files) % 2:
        p.error("give the files in pairs: A.json B.json [A2.json B2.json ...]")
    runs = [json.loads(f.read_text()) for f in args.files]
    try:
        r = paired_difference(*zip(runs[::2], runs[1::2], strict=True))
    except ValueError as e:
        p.error(str(e))
    d, m = r["game_points_difference"], r["match_share_difference"]
    print(f"{r['a']} minus {r['b']} against {r['opponent']}:")
    if d:
        print(f"  {d['mean']:+.3f} [{d['ci95'][0]:+.3f}, {d['ci95'][1]:+.3f}] game points/hand over {d['n']} deals")
    if m:
        print(f"  {100 * m['mean']:+.1f} [{100 * m['ci95'][0]:+.1f}, {100 * m['ci95'][1]:+.1f}] points of match share "
              f"over {m['n']} duplicate matches")
    return 0


if __name__ == "__main__":
    sys.exit(main())
