"""Strength against labels or compute: game points a hand (duplicate deals, 95% interval) of
networks taken at points of training runs, against each opponent, one line per run.

    python -m experiments.plot_curve docs/results/oracle/curve.json --out docs/results/oracle/curve.png
    python -m experiments.plot_curve docs/results/recipe/curve.json --x hours --out docs/results/recipe/curve.png

The input lists the measured points: ``{"points": [{"run": NAME, "labels": N, "opponent": NAME,
"result": PATH}, ...]}``, each ``result`` an ``evaluate.py --json`` file of that network (side A)
against that opponent; with ``--x hours`` each point gives ``"hours"`` instead of ``"labels"`` (the
CPU-hours of training that made the network, counted from scratch) and may name its ``"stage"``,
written beside it.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

TICKS = (0.25, 0.5, 1, 2, 4, 8, 16)  #: millions of labels marked on the axis


#: what each x axis reads from a point: its label, whether it is drawn on a log scale, the unit a tick counts
X_AXES = {"labels": ("labelled decisions (millions, log scale)", True, 1e6),
          "hours": ("CPU-hours of training from scratch (2-core x86-64, no GPU)", False, 1.0)}


def read_points(spec: Path, x: str = "labels") -> dict:
    """{(opponent, run): [(x, mean, low, high, stage), ...]} sorted by ``x`` (a point's "labels" or "hours")."""
    lines = defaultdict(list)
    for p in json.loads(spec.read_text())["points"]:
        if x not in p:
            raise ValueError(f"{spec}: a point of run {p.get('run')!r} gives no {x!r}")
        gp = json.loads(Path(p["result"]).read_text())["pairings"][0]["game_points_per_hand"]
        lines[(p["opponent"], p["run"])].append((p[x], gp["mean"], *gp["ci95"], p.get("stage", "")))
    return {k: sorted(v) for k, v in lines.items()}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("spec", type=Path, help="the JSON list of measured points")
    p.add_argument("--out", type=Path, default=Path("curve.png"))
    p.add_argument("--x", choices=sorted(X_AXES), default="labels", help="the x axis: labels (millions) or hours")
    a = p.parse_args(argv)
    lines = read_points(a.spec, a.x)
    xlabel, log, scale = X_AXES[a.x]
    opponents = sorted({o for o, _ in lines})
    fig, axes = plt.subplots(1, len(opponents), figsize=(5.5 * len(opponents), 4), squeeze=False)
    for ax, opponent in zip(axes[0], opponents, strict=True):
        for (o, run), pts in sorted(lines.items()):
            if o != opponent:
                continue
            x = [q[0] / scale for q in pts]
            ax.errorbar(x, [q[1] for q in pts], yerr=[[q[1] - q[2] for q in pts], [q[3] - q[1] for q in pts]],
                        marker="o", capsize=3, label=run)
            for xi, q in zip(x, pts, strict=True):
                if q[4]:
                    ax.annotate(q[4], (xi, q[1]), textcoords="offset points", xytext=(5, -12), fontsize=7)
        ax.axhline(0, color="grey", lw=0.8)
        if log:
            ax.set_xscale("log")
            ax.set_xticks(TICKS, [f"{t:g}" for t in TICKS])
            ax.minorticks_off()
        ax.set_xlabel(xlabel)
        ax.set_ylabel("game points a hand (95% interval)")
        ax.set_title(f"against {opponent}")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
