"""The ladder: every agent's strength against one baseline, the share of the gap to the cheater it
closes, and how exploitable it is, in one table (and a plot), from result files already written.

    python evaluate.py heuristic pimc:worlds=32 --deals 2000 --matches 0 --seed 61 --gap --json ceiling.json
    python evaluate.py random pimc:worlds=32 --deals 2000 --matches 0 --seed 61 --json random.json
    python evaluate.py exploit heuristic --json exploit_heuristic.json
    python evaluate.py ladder ceiling.json random.json --exploit exploit_heuristic.json --png ladder.png

The first file is an ``evaluate.py --gap`` output: its baseline B (the second side) and the
cheater's own games against B on its deals (``ceiling_pairing``). Every other file holds agents
played against B on the same seed and number of deals, so each agent's share of the gap,
(X − B) / (cheater − B), is read on the deals the cheater played. ``--exploit`` adds
``evaluate.py exploit`` outputs, matched to the agents by their spec: the exploiter's margin is a
lower bound on how much a player who knows the agent takes from it. The baseline's own row reads
0 and 0% by definition.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np

from cuatrola_env.cli import ArgumentParser
from cuatrola_env.files import atomic_open, check_writable

from .results import CHEATER, ResultFileError, check_run, gap_share, read_json, read_runs, same_game

FAR = 1.0  #: the plot's axis stops this far below the baseline (game points a hand)
EXPLOIT_FIELDS = ("spec", "rules", "budget", "deals", "margin", "low", "high")  #: what an exploit file must hold


def ceiling_of(run: dict, f: Path) -> dict:
    """The cheater's pairing against the baseline in an ``evaluate.py --gap`` output, checked."""
    top = run.get("ceiling_pairing")
    if not isinstance(top, dict):
        raise ResultFileError(f"{f}: field ceiling_pairing is missing (write it with evaluate.py A B --gap --json)")
    check_run({**run, "matches": top.get("matches"), "pairings": [top]}, f)
    if top["a"] != CHEATER or "deal_game_points" not in top:
        raise ResultFileError(f"{f}: field ceiling_pairing must be the cheater's games with their per-deal points")
    return top


def rungs(runs: list[dict], files: list[Path], top: dict) -> list[dict]:
    """One rung an agent: its pairing against the baseline on the ceiling's deals (the first file's seed)."""
    first, baseline = runs[0], top["b"]
    found: dict[str, dict] = {}
    for run, f in zip(runs, files, strict=True):
        if (run["seed"], run["deals"]) != (first["seed"], first["deals"]):
            raise ResultFileError(f"{f}: seed {run['seed']} and {run['deals']} deals, and {files[0]} seed "
                                  f"{first['seed']} and {first['deals']} deals: the shares need the same deals")
        for pairing in run["pairings"]:
            if pairing["b"] != baseline or pairing["a"] == CHEATER:
                continue
            if "deal_game_points" not in pairing:
                raise ResultFileError(f"{f}: {pairing['a']} vs {baseline} has no per-deal points (deal_game_points)")
            if pairing["a"] in found:
                raise ResultFileError(f"{f}: {pairing['a']} vs {baseline} is given twice")
            found[pairing["a"]] = pairing
    if not found:
        raise ResultFileError(f"no file holds an agent played against {baseline}, the baseline of {files[0]}")
    ladder = [{"agent": baseline, "baseline": True, "strength": {"mean": 0.0, "ci95": [0.0, 0.0]},
               "share": {"share": 0.0, "ci95": [0.0, 0.0]}}]
    for agent, pairing in found.items():
        share = gap_share(pairing["deal_game_points"], top["deal_game_points"], seed=first["seed"])
        ladder.append({"agent": agent, "strength": pairing["game_points_per_hand"], "share": share})
    return ladder


def read_exploit(f: Path, rules: str) -> dict:
    """An ``evaluate.py exploit --json`` output of this rules preset, checked."""
    found = read_json(f, "an evaluate.py exploit --json file")
    if not isinstance(found, dict) or any(k not in found for k in EXPLOIT_FIELDS):
        raise ResultFileError(f"{f} is not an evaluate.py exploit --json file (it needs {', '.join(EXPLOIT_FIELDS)})")
    figures = [found[k] for k in ("margin", "low", "high")]
    if not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in figures):
        raise ResultFileError(f"{f}: fields margin, low and high must be finite numbers")
    if found["rules"] != rules:
        raise ResultFileError(f"{f}: exploits an agent under {found['rules']}, and the ladder is {rules}")
    return found


def with_exploits(ladder: list[dict], exploits: list[dict], files: list[Path]) -> list[dict]:
    """Each rung with the exploit of its agent (by spec), where one was given."""
    agents = {rung["agent"]: rung for rung in ladder}
    for found, f in zip(exploits, files, strict=True):
        if found["spec"] not in agents:
            raise ResultFileError(f"{f}: exploits {found['spec']}, which is not on the ladder ({', '.join(agents)})")
        if "exploit" in agents[found["spec"]]:
            raise ResultFileError(f"{f}: {found['spec']} is exploited twice")
        agents[found["spec"]]["exploit"] = {**{k: found[k] for k in ("margin", "low", "high", "budget", "deals")},
                                            "method": found.get("method", "train")}
    return ladder


def interval(mean: float, ci: list[float], scale: float = 1.0, fmt: str = "{:+.3f}") -> str:
    return f"{fmt.format(scale * mean)} [{fmt.format(scale * ci[0])}, {fmt.format(scale * ci[1])}]"


def how(exploit: dict) -> str:
    """How an exploiter was found: searched, or trained for its budget."""
    return "searched" if exploit["method"] == "search" else f"trained, {exploit['budget']:,} decisions"


def found_nothing(exploit: dict) -> bool:
    """Whether an exploit's interval reaches 0: a best response takes at least 0 from any agent under
    duplicate deals (by playing as the agent does), so such a margin bounds nothing."""
    return exploit["low"] <= 0


def bound(exploit: dict) -> str:
    """An exploit's cell: its margin and how it was found, marked "none found" where it bounds nothing."""
    prefix = "none found: " if found_nothing(exploit) else ""
    return f"{prefix}{interval(exploit['margin'], [exploit['low'], exploit['high']])} ({how(exploit)})"


def table(ladder: list[dict], baseline: str, top: dict) -> str:
    """The ladder as a Markdown table, strongest first."""
    ceiling = top["game_points_per_hand"]
    lines = [f"| agent | vs {baseline} (game points a hand) | share of the gap to the cheater | exploitability, "
             "a lower bound (game points a hand) |", "|---|---|---|---|"]
    for rung in sorted(ladder, key=lambda r: -r["strength"]["mean"]):
        s, share, e = rung["strength"], rung["share"], rung.get("exploit")
        shared = interval(share["share"], share["ci95"], 100, "{:.0f}%") if share else "none"
        if rung.get("baseline"):
            s, shared = None, "0% (the baseline)"
        exploit = bound(e) if e else "not measured"
        strength = interval(s["mean"], s["ci95"]) if s else "0 (the baseline)"
        lines.append(f"| {rung['agent']} | {strength} | {shared} | {exploit} |")
    lines.append(f"| {CHEATER} (sees every card) | {interval(ceiling['mean'], ceiling['ci95'])} | 100% | |")
    return "\n".join(lines)


def draw(path: Path, ladder: list[dict], baseline: str, top: dict) -> None:
    """Strength against the baseline (the cheater's as a line) beside the exploitability lower bounds."""
    import matplotlib  # the eval extra, as evaluate.py's tables

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    order = sorted(ladder, key=lambda r: r["strength"]["mean"])
    names = [r["agent"] for r in order]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 1.2 + 0.45 * len(order)), sharey=True)
    means = np.array([r["strength"]["mean"] for r in order])
    errs = np.array([[m - r["strength"]["ci95"][0], r["strength"]["ci95"][1] - m] for m, r in zip(means, order, strict=True)]).T
    ax1.barh(names, means, xerr=errs, color="#4477aa")
    ax1.axvline(top["game_points_per_hand"]["mean"], color="#cc3311", ls="--", label=f"{CHEATER} (sees every card)")
    ax1.axvline(0, color="k", lw=0.5)
    if float((means - errs[0]).min()) < -FAR:  # an agent far below (random): the axis kept readable for the rest
        ax1.set_xlim(left=-FAR)
        for i, m in enumerate(means):
            if m < -FAR:
                ax1.text(-FAR, i, f" {m:+.2f} (off the axis)", va="center", fontsize=8, color="white")
    ax1.set_xlabel(f"game points a hand against {baseline} (95%)")
    ax1.legend(loc="center right", fontsize=8)
    margins = np.array([r["exploit"]["margin"] if "exploit" in r else np.nan for r in order])
    lows = np.array([r["exploit"]["low"] if "exploit" in r else np.nan for r in order])
    highs = np.array([r["exploit"]["high"] if "exploit" in r else np.nan for r in order])
    nothing = ["exploit" in r and found_nothing(r["exploit"]) for r in order]
    colours = ["#bbbbbb" if n else "#ee7733" for n in nothing]  # grey: none found
    ax2.barh(names, np.nan_to_num(margins), xerr=np.nan_to_num([margins - lows, highs - margins]), color=colours)
    for i, m in enumerate(margins):
        if np.isnan(m) or nothing[i]:
            ax2.text(max(0.0, np.nan_to_num(highs[i])), i, " not measured" if np.isnan(m) else " none found",
                     va="center", fontsize=8, color="grey")
    ax2.axvline(0, color="k", lw=0.5)
    ax2.set_xlabel("exploitability, a lower bound: game points a hand (95%)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def ladder_main(argv=None) -> int:
    """``python evaluate.py ladder CEILING.json RUNS.json ... [--exploit E.json ...] [--json J] [--png P]``."""
    p = ArgumentParser(prog="evaluate.py ladder", description=__doc__.split("\n\n")[0].strip())
    p.add_argument("files", nargs="+", type=Path, help="an evaluate.py --gap output, then evaluate.py --json outputs "
                                                       "against its baseline on the same seed and deals")
    p.add_argument("--exploit", nargs="*", type=Path, default=[], help="evaluate.py exploit --json outputs")
    p.add_argument("--json", type=Path, help="write the ladder here")
    p.add_argument("--png", type=Path, help="draw the ladder here")
    a = p.parse_args(argv)
    try:
        for out, flag in ((a.json, "--json"), (a.png, "--png")):
            if out:
                check_writable(out, flag)
        runs = read_runs(a.files)
        same_game(runs, a.files)
        top = ceiling_of(runs[0], a.files[0])
        exploits = [read_exploit(f, runs[0]["rules"]["name"]) for f in a.exploit]
        ladder = with_exploits(rungs(runs, a.files, top), exploits, a.exploit)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(table(ladder, top["b"], top))
    print(f"\n{runs[0]['deals']} deals of seed {runs[0]['seed']}, rules {runs[0]['rules']['name']}; an exploitability "
          "is what one exploiter found: the best response takes at least that much")
    if a.json:
        out = {"rules": runs[0]["rules"], "seed": runs[0]["seed"], "deals": runs[0]["deals"], "baseline": top["b"],
               "ceiling": top["game_points_per_hand"], "ladder": ladder}
        with atomic_open(a.json) as f:
            f.write(json.dumps(out, indent=1) + "\n")
    if a.png:
        draw(a.png, ladder, top["b"], top)
    return 0
