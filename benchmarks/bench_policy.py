"""The ONNX policy's forward pass by phase and batch size: what a search or a rollout pays for the network.

    taskset -c 0 python benchmarks/bench_policy.py --models agents/models/cuatrola_expert.onnx --runs 5

Observations of games played at random (``agents.export.sample_observations``), split by the head that
plays them (the bids, the first trick, the later tricks) and also drawn from all of them; each figure is the
median over ``--runs`` runs of the time of one ``OnnxPolicy.logits`` call on a batch of that many rows
(one onnxruntime thread). Searches and rollouts step all their rows through one decision at a time, so a
batch of one phase is what they run; level expert's one decision is a batch of 1.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from agents.export import sample_observations
from agents.policy import OnnxPolicy
from cuatrola_env.observation import trick_number

PHASES = {"bids": lambda t: t < 0, "first trick": lambda t: t == 0, "later tricks": lambda t: t >= 1,
          "mixed": lambda t: np.ones(len(t), bool)}


def batch_of(obs: np.ndarray, mask: np.ndarray, rows: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """``size`` of the selected rows, drawn at random (the same draw for every model)."""
    pick = np.random.default_rng(size).choice(np.flatnonzero(rows), size)
    return obs[pick], mask[pick]


def median_seconds(policy: OnnxPolicy, obs: np.ndarray, mask: np.ndarray, runs: int, calls: int) -> float:
    """Median over ``runs`` of the mean time of ``calls`` calls."""
    policy.logits(obs, mask)  # warm up
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        for _ in range(calls):
            policy.logits(obs, mask)
        times.append((time.perf_counter() - start) / calls)
    return statistics.median(times)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", nargs="+", default=["agents/models/cuatrola_expert.onnx"], help="ONNX models to time")
    p.add_argument("--batches", type=int, nargs="+", default=[1, 64, 512])
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--rules", default="online")
    a = p.parse_args()
    obs, mask = sample_observations(20_000, rules=a.rules, seed=0)
    trick = trick_number(obs)
    print(f"median of {a.runs} runs, one onnxruntime thread; microseconds a call (and a row)\n")
    print("| model | phase | " + " | ".join(f"batch {b}" for b in a.batches) + " |")
    print("|---|---|" + "---:|" * len(a.batches))
    for path in a.models:
        policy = OnnxPolicy.load(path, threads=1)
        for phase, select in PHASES.items():
            cells = []
            for size in a.batches:
                o, m = batch_of(obs, mask, select(trick), size)
                s = median_seconds(policy, o, m, a.runs, max(1, 20_000 // size))
                cells.append(f"{s * 1e6:,.0f} ({s * 1e6 / size:,.1f})")
            print(f"| {path} | {phase} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
