"""Fitting speed of the teacher–student algorithm against torch threads and batch size.

    python benchmarks/bench_fit.py runs/late_1_1234567890 --rows 200000 --runs 3

One pass of :func:`agents.training.distill.fit` over the latest ``--rows`` decisions of a distill
run's stored window (``data/window.npz`` beside its ``checkpoint.pt``), the network and config of
that checkpoint (a late stage's: the 3 × 512 late head), for each number of threads and batch size;
each figure is the median over ``--runs`` fresh networks of the decisions fitted a second.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time
from pathlib import Path

import numpy as np
import torch

from agents.checkpoint import network_spec, read_checkpoint
from agents.training.distill import WINDOW_FILE, DistillConfig, Window, fit, student
from agents.training.labels import load_data
from cuatrola_env.rules import get_rules


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("run", type=Path, help="a distill run's folder (its checkpoint.pt and data/window.npz)")
    p.add_argument("--rows", type=int, default=200_000, help="decisions of the window fitted (the latest)")
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--batches", type=int, nargs="+", default=[512, 1024])
    p.add_argument("--runs", type=int, default=3)
    a = p.parse_args()
    ck = read_checkpoint(str(a.run / "checkpoint.pt"))
    fields = {f.name for f in dataclasses.fields(DistillConfig)}
    cfg = DistillConfig(**{k: v for k, v in ck["config"].items() if k in fields})
    window = Window.of(load_data(a.run / WINDOW_FILE), get_rules(cfg.rules)).latest(a.rows)
    start = {"model": ck["model"], "network": network_spec(ck, str(a.run))}
    print(f"fitting {len(window):,} decisions of {a.run}, median of {a.runs} runs\n")
    print("| torch threads | batch | decisions/s |\n|---:|---:|---:|")
    for threads in a.threads:
        torch.set_num_threads(threads)
        for batch in a.batches:
            c = dataclasses.replace(cfg, fit_batch=batch, fit_rows=0, fit_epochs=1)
            times = []
            for run in range(a.runs):
                net = student(c, start)
                opt = torch.optim.Adam(net.parameters(), lr=1e-4, eps=1e-5)
                t = time.perf_counter()
                fit(net, opt, c, window, np.random.default_rng(run))
                times.append(time.perf_counter() - t)
            print(f"| {threads} | {batch} | {len(window) / statistics.median(times):,.0f} |")


if __name__ == "__main__":
    main()
