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

import hashlib
import json
import math
import sys
from pathlib import Path

import numpy as np

from cuatrola_env.cli import ArgumentParser, brief
from cuatrola_env.files import atomic_open, loads_bounded

Z95 = 1.959964


def mean_ci(x: np.ndarray) -> dict:
    n = len(x)
    se = float(np.std(x, ddof=1) / math.sqrt(n)) if n > 1 else float("nan")
    m = float(np.mean(x)) if n else float("nan")
    return {"mean": m, "ci95": [m - Z95 * se, m + Z95 * se], "se": se, "n": n}


def gap_share(player: np.ndarray, ceiling: np.ndarray, resamples: int = 2000, seed: int = 0) -> dict:
    """How much of the gap from a baseline B to a ceiling a player closes, on the same deals:
    ``mean(player) / mean(ceiling)``, each array the per-deal game points against B (of the player,
    of the ceiling). Its 95% interval is the percentile bootstrap over deals, each deal keeping its
    two figures (the deals' luck is shared). ``None`` where the ceiling does not beat B."""
    player, ceiling = np.asarray(player, float), np.asarray(ceiling, float)
    if len(player) != len(ceiling) or len(player) < 2:
        raise ValueError(f"the share of the gap needs the same deals (at least 2) for both, got {len(player)} and "
                         f"{len(ceiling)}")
    if ceiling.mean() <= 0:
        return None
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(player), size=(resamples, len(player)))
    gap = ceiling[draws].mean(1)
    shares = player[draws].mean(1) / np.where(gap > 0, gap, np.nan)
    low, high = np.nanpercentile(shares, [2.5, 97.5])
    return {"share": float(player.mean() / ceiling.mean()), "ci95": [float(low), float(high)], "deals": len(player),
            "player": mean_ci(player), "ceiling": mean_ci(ceiling)}


def without_paths(spec: str) -> str:
    """``spec`` without its ``path=`` options (``bot:path=m.onnx,level=expert`` -> ``bot:level=expert``)."""
    parts = []
    for part in spec.split("+"):
        name, _, opts = part.partition(":")
        kept = [o for o in opts.split(",") if o and not o.startswith("path=")]
        parts.append(f"{name}:{','.join(kept)}" if kept else name)
    return "+".join(parts)


def same_player(p: dict, side: str, q: dict, q_side: str) -> bool:
    """Whether side ``side`` of pairing ``p`` and side ``q_side`` of pairing ``q`` are one player:
    the same spec; or, where both files record the models played (their SHA-256, written since
    results name models by their bytes), the same models and the same spec but for the paths they
    were read from (the shipped model and a copy of it at another path are one player)."""
    if p[side] == q[q_side]:
        return True
    models_p, models_q = (x.get("models", {}).get(s) for x, s in ((p, side), (q, q_side)))
    return (bool(models_p) and all(models_p) and models_p == models_q
            and without_paths(p[side]) == without_paths(q[q_side]))


def pool_pairings(results: list[dict]) -> dict:
    """One pairing from several evaluations of the same two sides on different seeds (runs
    split over machines or processes): deals and matches concatenated, intervals recomputed.
    Game points need ``deal_game_points`` in every result (written since the pooling was added)."""
    if not results:
        raise ValueError("nothing to pool")
    a, b = results[0]["a"], results[0]["b"]
    if not all(same_player(r, "a", results[0], "a") and same_player(r, "b", results[0], "b") for r in results):
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
        pa, pb = a["pairings"][0], b["pairings"][0]
        names = (pa["a"], pb["a"])
        if not (same_player(pa, "a", first_a, "a") and same_player(pb, "a", first_b, "a")
                and same_player(pa, "b", first_a, "b") and same_player(pb, "b", first_a, "b")):
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


#: the largest result file read (a run of 100,000 deals and matches is under 10 MB)
MAX_RESULT_BYTES = 64 * 1024 * 1024
#: the largest game points one deal can move for a side (5, a quintola, in each of its two plays)
MAX_HAND_POINTS = 10.0
#: the side of ``evaluate.py --gap`` that sees every card (:mod:`agents.cheater`), the ceiling of the gap
CHEATER = "cheater"


class ResultFileError(ValueError):
    """A result file that is not a well-formed ``evaluate.py --json`` output; names the file and field."""


def _field(f: Path, where: str, value, kind, low=None, high=None):
    """``value`` checked to be of ``kind`` (a bool is never a number) and within ``[low, high]``."""
    ok = isinstance(value, kind) and not isinstance(value, bool)
    if ok and isinstance(value, float):
        ok = math.isfinite(value)
    if ok and ((low is not None and value < low) or (high is not None and value > high)):
        ok = False
    if not ok:
        bounds = f" in [{low}, {high}]" if low is not None and high is not None else f" >= {low}" if low is not None else ""
        raise ResultFileError(f"{f}: field {where} must be {getattr(kind, '__name__', 'a number')}{bounds}, "
                              f"got {brief(value, 40)}")
    return value


def _numbers(f: Path, where: str, values, length: int, width: int | None, low: float, high: float) -> None:
    """A list of ``length`` finite numbers in ``[low, high]`` (or of pairs of them, ``width=2``)."""
    _field(f, where, values, list)
    if len(values) != length:
        raise ResultFileError(f"{f}: field {where} has {len(values)} entries, and the run says {length}")
    for i, v in enumerate(values):
        items = [v] if width is None else v
        if width is not None and (not isinstance(v, list) or len(v) != width):
            raise ResultFileError(f"{f}: field {where}[{i}] must be a list of {width} numbers")
        for x in items:
            _field(f, f"{where}[{i}]", x, (int, float), low, high)


def check_run(run, f: Path) -> dict:
    """``run`` checked to be a well-formed ``evaluate.py --json`` output (:class:`ResultFileError`
    naming the file and the field): its counts possible, its per-deal and per-match lists as long
    as its counts say, every number finite and within what a game can score."""
    if not isinstance(run, dict):
        raise ResultFileError(f"{f} is not an evaluate.py --json file (it holds a {type(run).__name__}, not an object)")
    for key in ("rules", "seed", "deals", "matches", "pairings"):
        if key not in run:
            raise ResultFileError(f"{f}: field {key!r} is missing (not an evaluate.py --json file?)")
    _field(f, "rules", run["rules"], dict)
    _field(f, "rules.name", run["rules"].get("name"), str)
    _field(f, "rules.target", run["rules"].get("target"), int, 1, 1000)
    _field(f, "seed", run["seed"], int, 0)
    deals, matches = _field(f, "deals", run["deals"], int, 0, 10**8), _field(f, "matches", run["matches"], int, 0, 10**8)
    _field(f, "pairings", run["pairings"], list)
    if not run["pairings"]:
        raise ResultFileError(f"{f}: field pairings is empty")
    for i, pairing in enumerate(run["pairings"]):
        where = f"pairings[{i}]"
        _field(f, where, pairing, dict)
        for key in ("a", "b", "deals", "matches", "match_wins", "illegal_actions", "decisions"):
            if key not in pairing:
                raise ResultFileError(f"{f}: field {where}.{key} is missing")
        _field(f, f"{where}.a", pairing["a"], str)
        _field(f, f"{where}.b", pairing["b"], str)
        _field(f, f"{where}.deals", pairing["deals"], int, deals, deals)
        _field(f, f"{where}.matches", pairing["matches"], int, matches, matches)
        _field(f, f"{where}.decisions", pairing["decisions"], int, 0)
        _field(f, f"{where}.illegal_actions", pairing["illegal_actions"], dict)
        for side in ("a", "b"):
            _field(f, f"{where}.illegal_actions.{side}", pairing["illegal_actions"].get(side), int, 0)
        _numbers(f, f"{where}.match_wins", pairing["match_wins"], matches, 2, 0.0, 1.0)
        if "models" in pairing:
            _field(f, f"{where}.models", pairing["models"], dict)
            for side in ("a", "b"):
                _field(f, f"{where}.models.{side}", pairing["models"].get(side), list)
                for k, digest in enumerate(pairing["models"][side]):
                    if not isinstance(digest, str) or len(digest) not in (0, 64):
                        raise ResultFileError(f"{f}: field {where}.models.{side}[{k}] must be a SHA-256 in hex or "
                                              f"empty, got {brief(digest, 70)}")
        if "deal_game_points" in pairing:
            _numbers(f, f"{where}.deal_game_points", pairing["deal_game_points"], deals, None, -MAX_HAND_POINTS,
                     MAX_HAND_POINTS)
    return run


def read_json(f: Path, what: str):
    """The JSON value in ``f`` (at most ``MAX_RESULT_BYTES``, nested within bounds); ``ValueError``
    naming the file and ``what`` it should have been where it is missing, too large or not JSON."""
    try:
        if f.stat().st_size > MAX_RESULT_BYTES:
            raise ResultFileError(f"{f} is larger than {MAX_RESULT_BYTES // 2**20} MB: not {what}")
        return loads_bounded(f.read_bytes())
    except OSError as e:
        raise ValueError(f"cannot read {f}: {e.strerror}") from None
    except RecursionError:
        raise ResultFileError(f"{f} is nested too deeply to be {what}") from None
    except ResultFileError:
        raise
    except (ValueError, UnicodeDecodeError) as e:
        raise ValueError(f"{f} is not {what}: {str(e)[:200]}") from None


def read_runs(files: list[Path]) -> list[dict]:
    """The evaluation files, each an ``evaluate.py --json`` object checked by :func:`check_run`;
    ``ValueError`` naming the first that is missing, unreadable, malformed, or the same run as
    another, whatever its name (pooling a run twice would narrow its interval for nothing; two
    versions of one agent spec, which played differently, are two runs)."""
    runs, seen = [], {}
    for f in files:
        run = read_json(f, "an evaluate.py --json file")
        check_run(run, f)
        key = hashlib.sha256(json.dumps([run["seed"], run["rules"], run["pairings"]], sort_keys=True).encode()).digest()
        if key in seen:
            raise ResultFileError(f"{f} is the same run as {seen[key]} (the same games and results): each run counts once")
        seen[key] = f
        runs.append(run)
    return runs


def same_game(runs: list[dict], files: list[Path]) -> None:
    """``ResultFileError`` unless every run was played under the same rules and match target."""
    first = runs[0]["rules"]
    for run, f in zip(runs, files, strict=True):
        if run["rules"] != first:
            raise ResultFileError(f"{f}: field rules is {run['rules']['name']} to {run['rules']['target']}, and "
                                  f"{files[0]} is {first['name']} to {first['target']} (with the same options): "
                                  "runs of different games do not pool or compare")


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
        same_game(runs, args.files)
        seeds = [r["seed"] for r in runs[::2]]
        if len(set(seeds)) != len(seeds):
            raise ResultFileError(f"two pairs were played on the same seed ({seeds}): each pair needs its own deals")
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
        same_game(runs, a.files)
        seeds = [r["seed"] for r in runs]
        if len(set(seeds)) != len(seeds):
            raise ResultFileError(f"runs on the same seed are the same deals, not more of them (seeds {seeds})")
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
        with atomic_open(a.json) as out:
            out.write(json.dumps(pooled, indent=1) + "\n")
    return 0
