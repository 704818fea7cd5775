"""Statistics of evaluation results: intervals, pooling runs, and paired comparisons of two runs.

    python evaluate.py compare a.json b.json                 # is A better than B (same deals)?
    python evaluate.py compare a1.json b1.json a2.json b2.json   # pairs on several seeds, pooled
    python evaluate.py pool runs/pool/m*.json --json pooled.json  # one figure from runs on many seeds

*Comparing*: both runs (``evaluate.py --json``) must have met the same opponent on the same
seeded deals; each deal's difference of game points (A's minus B's) is one sample, so the luck
of the deal cancels twice: once by the duplicate design inside each run, once between the runs.
Far tighter than comparing the two runs' intervals. Several pairs (each on its own seed) pool
their per-deal differences. Matches are compared the same way when both runs played them on the
same seed (a match's deals depend only on the seed and its number, not on ``--deals``): each
duplicate match's difference of A's and B's share of its two plays is one sample, so a
matches-only run (``--deals 0 --matches N``) pairs with the matches of a longer run.

*Pooling*: runs of one pairing on several seeds (say, one process per core); match wins are
concatenated (each duplicate match pair is one sample) and the 95% interval recomputed; game
points per hand too, from each run's per-deal results.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np

from cuatrola_env.cli import ArgumentParser

Z95 = 1.959964


def mean_ci(x: np.ndarray) -> dict:
    n = len(x)
    se = float(np.std(x, ddof=1) / math.sqrt(n)) if n > 1 else float("nan")
    m = float(np.mean(x)) if n else float("nan")
    return {"mean": m, "ci95": [m - Z95 * se, m + Z95 * se], "se": se, "n": n}


def pool_pairings(results: list[dict]) -> dict:
    """One pairing from several evaluations of the same two sides on different seeds (runs
    split over machines or processes): deals and matches concatenated, intervals recomputed.
    Game points need ``deal_game_points`` in every result (written since the pooling was added)."""
    if not results:
        raise ValueError("nothing to pool")
    a, b = results[0]["a"], results[0]["b"]
    if any((r["a"], r["b"]) != (a, b) for r in results):
        raise ValueError(f"every result must be {a} vs {b}, got {sorted({(r['a'], r['b']) for r in results})}")
    wins = np.array([w for r in results for w in (r.get("match_wins") or [])]).reshape(-1, 2)
    per_deal = [r.get("deal_game_points") for r in results if r["deals"]]  # matches-only runs have no deals
    gp = mean_ci(np.concatenate(per_deal)) if per_deal and all(x is not None for x in per_deal) else None
    return {
        "a": a, "b": b, "sources": len(results),
        "deals": sum(r["deals"] for r in results), "matches": len(wins),
        "game_points_per_hand": gp,
        "match_win_rate": mean_ci(wins.mean(axis=1)) if len(wins) else None,
        "illegal_actions": {s: sum(r["illegal_actions"][s] for r in results) for s in ("a", "b")},
        "decisions": sum(r["decisions"] for r in results),
        "match_wins": wins.tolist(),
    }


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
            "game_points_difference": mean_ci(np.concatenate(deals)) if deals else None,
            "match_share_difference": mean_ci(np.concatenate(matches)) if matches else None}


def read_runs(files: list[Path]) -> list[dict]:
    """The evaluation files, each an ``evaluate.py --json`` object; ``ValueError`` naming the first
    that is missing, unreadable or of another kind."""
    runs = []
    for f in files:
        try:
            run = json.loads(f.read_text())
        except OSError as e:
            raise ValueError(f"cannot read {f}: {e.strerror}") from None
        except (ValueError, UnicodeDecodeError) as e:
            raise ValueError(f"{f} is not an evaluate.py --json file: {e}") from None
        if not isinstance(run, dict) or not isinstance(run.get("pairings"), list):
            raise ValueError(f"{f} is not an evaluate.py --json file (no 'pairings' list)")
        runs.append(run)
    return runs


def compare_main(argv=None) -> int:
    """``python evaluate.py compare A.json B.json [A2.json B2.json ...]``: is A better than B?"""
    p = ArgumentParser(prog="evaluate.py compare", description="Is A better than B? The paired difference of "
                                "evaluations on the same deals (and matches).")
    p.add_argument("files", nargs="+", type=Path, help="A.json B.json, or several such pairs")
    args = p.parse_args(argv)
    if len(args.files) % 2:
        p.error("give the files in pairs: A.json B.json [A2.json B2.json ...]")
    try:
        runs = read_runs(args.files)
        r = paired_difference(*zip(runs[::2], runs[1::2], strict=True))
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    d, m = r["game_points_difference"], r["match_share_difference"]
    print(f"{r['a']} minus {r['b']} against {r['opponent']}:")
    if d:
        print(f"  {d['mean']:+.3f} [{d['ci95'][0]:+.3f}, {d['ci95'][1]:+.3f}] game points/hand over {d['n']} deals")
    if m:
        print(f"  {100 * m['mean']:+.1f} [{100 * m['ci95'][0]:+.1f}, {100 * m['ci95'][1]:+.1f}] points of match share "
              f"over {m['n']} duplicate matches")
    return 0


def pool_main(argv=None) -> int:
    """``python evaluate.py pool FILES [--json OUT]``: one figure from runs on several seeds."""
    p = ArgumentParser(prog="evaluate.py pool", description="Pool evaluations of one pairing run on several "
                                "seeds into one figure.")
    p.add_argument("files", nargs="+", type=Path, help="evaluate.py --json outputs of the same two sides")
    p.add_argument("--json", type=Path, help="write the pooled pairing here")
    a = p.parse_args(argv)
    try:
        runs = read_runs(a.files)
        pairings = [r["pairings"][0] for r in runs if len(r["pairings"]) == 1]
        if len(pairings) != len(runs):
            raise ValueError("each file must hold exactly one pairing (two sides)")
        pooled = pool_pairings(pairings)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
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
