"""Evaluation speed against the number of workers (duplicate deals per second).

    python benchmarks/bench_scale.py --workers 1 2 --deals 200 --runs 3
    python benchmarks/bench_scale.py --agent pimc:worlds=16 --opponent heuristic --workers 1 2 4

Each run is a fresh ``evaluate.py`` process (``--matches 0``, the same seed), timed end to end
(start-up, Ray's included), so the figures are what a user waits for; the medians over runs are
printed as a table, and the runs are checked to give identical results for every worker count.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def one_run(agent: str, opponent: str, deals: int, seed: int, workers: int) -> tuple[float, list]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "r.json"
        t0 = time.perf_counter()
        subprocess.run([sys.executable, str(ROOT / "evaluate.py"), agent, opponent, "--deals", str(deals), "--matches", "0",
                        "--seed", str(seed), "--workers", str(workers), "--no-progress", "--json", str(out)],
                       check=True, capture_output=True)
        seconds = time.perf_counter() - t0
        return seconds, json.loads(out.read_text())["pairings"][0]["deal_game_points"]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--agent", default="pimc:worlds=16")
    p.add_argument("--opponent", default="heuristic")
    p.add_argument("--deals", type=int, default=200)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    p.add_argument("--runs", type=int, default=3)
    a = p.parse_args(argv)
    rows, reference = [], None
    for w in a.workers:
        times = []
        for _ in range(a.runs):
            seconds, per_deal = one_run(a.agent, a.opponent, a.deals, a.seed, w)
            if reference is None:
                reference = per_deal
            if per_deal != reference:
                raise SystemExit(f"--workers {w} gave other results than --workers {a.workers[0]}")
            times.append(seconds)
        rows.append((w, statistics.median(times), times))
    base = rows[0][1]
    print(f"{a.agent} vs {a.opponent}, {a.deals} duplicate deals, seed {a.seed}, median of {a.runs} runs\n")
    print("| workers | seconds | deals/s | speed-up | runs (s) |\n|---:|---:|---:|---:|---|")
    for w, med, times in rows:
        print(f"| {w} | {med:.1f} | {a.deals / med:.2f} | {base / med:.2f}x | {', '.join(f'{t:.1f}' for t in times)} |")
    print("\nidentical results for every worker count")
    return 0


if __name__ == "__main__":
    sys.exit(main())
