"""Speed against the number of workers: evaluation (duplicate deals/s) and training (decisions/s).

    python benchmarks/bench_scale.py --workers 1 2 --deals 200 --runs 3
    python benchmarks/bench_scale.py --agent pimc:worlds=16 --opponent heuristic --workers 1 2 4
    python benchmarks/bench_scale.py --train --decisions 2000000 --workers 1 2

Evaluation: each run is a fresh ``evaluate.py`` process (``--matches 0``, the same seed), timed
end to end (start-up, Ray's included), so the figures are what a user waits for; the medians
over runs are printed as a table, and the runs are checked to give identical results for every
worker count. Training (``--train``): each run is a fresh ``train.py`` of the PPO preset in
its PPO phase (``--imitation-decisions 0 --eval-every 0``), and the figure is the median of its
TensorBoard ``charts/decisions_per_s``.
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


def train_run(decisions: int, workers: int) -> float:
    """Median decisions/s of one fresh training run (TensorBoard charts/decisions_per_s)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, str(ROOT / "train.py"), "--algorithm", "ppo", "--imitation-decisions", "0",
                        "--eval-every", "0", "--total-decisions", str(decisions), "--workers", str(workers), "--run-dir", tmp],
                       check=True, capture_output=True)
        (run,) = Path(tmp).iterdir()
        events = EventAccumulator(str(run))
        events.Reload()
        return statistics.median(e.value for e in events.Scalars("charts/decisions_per_s"))


def bench_training(a) -> int:
    rows = [(w, [train_run(a.decisions, w) for _ in range(a.runs)]) for w in a.workers]
    base = statistics.median(rows[0][1])
    print(f"training, PPO preset (PPO phase), {a.decisions:,} decisions, median of {a.runs} runs\n")
    print("| workers | decisions/s | speed-up | runs |\n|---:|---:|---:|---|")
    for w, rates in rows:
        med = statistics.median(rates)
        print(f"| {w} | {med:,.0f} | {med / base:.2f}x | {', '.join(f'{r:,.0f}' for r in rates)} |")
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--agent", default="pimc:worlds=16")
    p.add_argument("--opponent", default="heuristic")
    p.add_argument("--deals", type=int, default=200)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--train", action="store_true", help="time training instead of evaluation")
    p.add_argument("--decisions", type=int, default=2_000_000, help="with --train: decisions per run")
    a = p.parse_args(argv)
    if a.train:
        return bench_training(a)
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
