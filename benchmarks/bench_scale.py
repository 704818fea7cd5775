"""Speed against the number of workers: evaluation (duplicate deals/s) and training (decisions/s).

    python benchmarks/bench_scale.py --workers 1 2 --deals 200 --runs 3
    python benchmarks/bench_scale.py --agent pimc:worlds=16 --opponent heuristic --workers 1 2 4
    python benchmarks/bench_scale.py --train --decisions 2000000 --workers 1 2
    python benchmarks/bench_scale.py --train late --hands 4000 --workers 1 2

Evaluation: each run is a fresh ``evaluate.py`` process (``--matches 0``, the same seed), timed
end to end (start-up, Ray's included), so the figures are what a user waits for; the medians
over runs are printed as a table, and the runs are checked to give identical results for every
worker count. Training (``--train``): each run is a fresh ``train.py`` of the PPO preset in
its PPO phase (``--imitation-decisions 0 --eval-every 0``), and the figure is the median of its
TensorBoard ``charts/decisions_per_s``. ``--train late``: each run is one iteration of the expert
recipe's late stage (``configs/late.yaml``: PIMC(32) labels the late tricks) from the shipped base
network, and the figure is its ``charts/labels_per_s``; the runs are checked to label the same
number of decisions for every worker count.
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


def train_run(args: list[str], *charts: str) -> dict[str, list[float]]:
    """The TensorBoard scalars ``charts`` of one fresh ``train.py ARGS`` run, every point of each."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, str(ROOT / "train.py"), *args, "--eval-every", "0", "--run-dir", tmp],
                       check=True, capture_output=True)
        (run,) = Path(tmp).iterdir()
        events = EventAccumulator(str(run))
        events.Reload()
        return {chart: [e.value for e in events.Scalars(chart)] for chart in charts}


def ppo_rate(a, workers: int) -> tuple[float, None]:
    """Median decisions/s of a PPO run's updates (nothing to check across worker counts)."""
    args = ["--algorithm", "ppo", "--imitation-decisions", "0", "--total-decisions", str(a.decisions),
            "--workers", str(workers)]
    return statistics.median(train_run(args, "charts/decisions_per_s")["charts/decisions_per_s"]), None


def late_rate(a, workers: int) -> tuple[float, float]:
    """Labels/s of one iteration of the late stage from the shipped base network, and how many
    decisions it labelled (the same for every worker count: each task has its own seed)."""
    args = ["--config", "late", "--init", str(ROOT / "agents" / "models" / "cuatrola.pt"), "--iterations", "1",
            "--final-epochs", "0", "--hands", str(a.hands), "--workers", str(workers), "--then", ""]
    charts = train_run(args, "charts/labels_per_s", "charts/labels")
    return charts["charts/labels_per_s"][0], charts["charts/labels"][0]


def bench_training(a) -> int:
    measure, unit = (late_rate, "labels/s") if a.train == "late" else (ppo_rate, "decisions/s")
    rows, checked = [], set()
    for w in a.workers:
        runs = [measure(a, w) for _ in range(a.runs)]
        rows.append((w, [rate for rate, _ in runs]))
        checked |= {check for _, check in runs}
    if len(checked) > 1:
        raise SystemExit(f"the worker counts labelled different numbers of decisions: {sorted(checked)}")
    base = statistics.median(rows[0][1])
    what = f"late stage, {a.hands:,} hands" if a.train == "late" else f"PPO preset (PPO phase), {a.decisions:,} decisions"
    print(f"training, {what}, median of {a.runs} runs\n")
    print(f"| workers | {unit} | speed-up | runs |\n|---:|---:|---:|---|")
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
    p.add_argument("--train", nargs="?", const="ppo", choices=("ppo", "late"),
                   help="time training instead of evaluation: PPO (the default) or the late stage's labelling")
    p.add_argument("--decisions", type=int, default=2_000_000, help="with --train ppo: decisions per run")
    p.add_argument("--hands", type=int, default=4_000, help="with --train late: hands played and labelled per run")
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
