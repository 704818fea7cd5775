"""Learning curve of a training run from its TensorBoard events: game points per hand
against the heuristic and against random (duplicate deals, 95% interval) over wall time.

    python benchmarks/plot_run.py runs/NAME --out docs/results/learning_curve.png
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("run", type=Path)
    p.add_argument("--out", type=Path, default=Path("learning_curve.png"))
    a = p.parse_args()
    ea = EventAccumulator(str(a.run))
    ea.Reload()
    fig, ax = plt.subplots(figsize=(7, 4))
    start = min(e.wall_time for e in ea.Scalars("charts/decisions_per_s"))
    for opp, color in (("heuristic", "#cc3311"), ("random", "#0077bb")):
        tag = f"eval/vs_{opp}_game_points"
        if tag not in ea.Tags()["scalars"]:
            continue
        mean = ea.Scalars(tag)
        lo, hi = ea.Scalars(f"eval/vs_{opp}_ci_low"), ea.Scalars(f"eval/vs_{opp}_ci_high")
        t = [(e.wall_time - start) / 60 for e in mean]
        ax.plot(t, [e.value for e in mean], color=color, label=f"vs {opp}")
        ax.fill_between(t, [e.value for e in lo], [e.value for e in hi], color=color, alpha=0.2)
    ax.axhline(0, color="k", lw=0.6)
    ax.set_xlabel("wall time (minutes, 2-core CPU)")
    ax.set_ylabel("game points per hand (duplicate, 95% CI)")
    ax.set_title(f"Self-play PPO: {a.run.name}")
    ax.legend()
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
