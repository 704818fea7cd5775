"""Pool evaluations of one pairing run on several seeds (say, one process per core) into one figure.

    for s in $(seq 100 115); do python evaluate.py bot:level=master pimc:worlds=32 --deals 0 --matches 11 \\
        --seed $s --json runs/pool/m$s.json --no-progress & done; wait
    python benchmarks/pool_results.py runs/pool/m*.json --json docs/results/pooled.json

Match wins are concatenated (each duplicate match pair is one sample) and the 95% interval is
recomputed; game points per hand too, from each run's per-deal results.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agents import evaluation as evaluate  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("files", nargs="+", type=Path, help="evaluate.py --json outputs of the same two sides")
    p.add_argument("--json", type=Path, help="write the pooled pairing here")
    a = p.parse_args(argv)
    runs = [json.loads(f.read_text()) for f in a.files]
    pairings = [r["pairings"][0] for r in runs if len(r["pairings"]) == 1]
    if len(pairings) != len(runs):
        p.error("each file must hold exactly one pairing (two sides)")
    try:
        pooled = evaluate.pool_pairings(pairings)
    except ValueError as e:
        p.error(str(e))
    pooled["seeds"] = [r["seed"] for r in runs]
    gp, mw = pooled["game_points_per_hand"], pooled["match_win_rate"]
    print(f"{pooled['a']} vs {pooled['b']}: {len(runs)} runs, {pooled['deals']} deals, {2 * pooled['matches']} matches "
          f"({pooled['matches']} duplicate pairs), illegal actions {pooled['illegal_actions']}")
    if gp:
        print(f"  game points/hand {gp['mean']:+.3f} [{gp['ci95'][0]:+.3f}, {gp['ci95'][1]:+.3f}] over {gp['n']} deals")
    if mw:
        print(f"  matches won {mw['mean']:.1%} [{mw['ci95'][0]:.1%}, {mw['ci95'][1]:.1%}]")
    if a.json:
        a.json.write_text(json.dumps(pooled, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
