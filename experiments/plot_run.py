"""Learning curve of a training run from its TensorBoard events, over wall time: game points
per hand against the heuristic (duplicate deals, 95% interval), and the end-to-end
throughput (decisions/s, rolling median), with the switch from imitation to PPO marked.

    python -m experiments.plot_run runs/NAME --out docs/results/learning_curve.png
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("run", type=Path)
    p.add_argument("--out", type=Path, default=Path("learning_curve.png"))
    a = p.parse_args()
    ea = EventAccumulator(str(a.run), size_guidance={"scalars": 0})
    ea.Reload()
    tags = set(ea.Tags()["scalars"])
    sps = ea.Scalars("charts/decisions_per_s")
    start = min(e.wall_time for e in sps)
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4))
    switch = None
    if "losses/imitation_accuracy" in tags:
        switch = (max(e.wall_time for e in ea.Scalars("losses/imitation_accuracy")) - start) / 60
    for opp, color in (("heuristic", "#cc3311"),):
        tag = f"eval/vs_{opp}_game_points"
        if tag not in tags:
            continue
        mean = ea.Scalars(tag)
        lo, hi = ea.Scalars(f"eval/vs_{opp}_ci_low"), ea.Scalars(f"eval/vs_{opp}_ci_high")
        t = [(e.wall_time - start) / 60 for e in mean]
        ax.plot(t, [e.value for e in mean], color=color, marker=".", label=f"vs {opp} (greedy policy)")
        ax.fill_between(t, [e.value for e in lo], [e.value for e in hi], color=color, alpha=0.2)
    ax.axhline(0, color="k", lw=0.6)
    ax.set_xlabel("wall time (minutes, 2-core CPU)")
    ax.set_ylabel("game points per hand (duplicate deals, 95% CI)")
    ax.set_title("Strength against the heuristic bot")
    t = np.array([(e.wall_time - start) / 60 for e in sps])
    v = np.array([e.value for e in sps])
    k = 25
    roll = np.array([np.median(v[max(0, i - k):i + 1]) for i in range(len(v))])
    bx.plot(t, v, color="#999999", lw=0.5, label="per update")
    bx.plot(t, roll, color="#0077bb", label=f"rolling median of {k}")
    bx.axhline(50_000, color="k", lw=0.6, ls=":", label="50,000 decisions/s")
    bx.set_xlabel("wall time (minutes, 2-core CPU)")
    bx.set_ylabel("decisions/s, acting and learning")
    bx.set_title("Throughput (charts/decisions_per_s)")
    for axis in (ax, bx):
        if switch is not None:
            axis.axvline(switch, color="#117733", ls="--", lw=1, label="imitation -> PPO")
        axis.legend(fontsize=8)
    fig.suptitle(a.run.name)
    fig.tight_layout()
    fig.savefig(a.out, dpi=100)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
