"""Strength against labels: game points a hand (duplicate deals, 95% interval) of networks taken
at points of training runs, against each opponent, one line per run.

    python -m experiments.plot_curve docs/results/oracle/curve.json --out docs/results/oracle/curve.png

The input lists the measured points: ``{"points": [{"run": NAME, "labels": N, "opponent": NAME,
"result": PATH}, ...]}``, each ``result`` an ``evaluate.py --json`` file of that network (side A)
against that opponent.
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


def read_points(spec: Path) -> dict:
    """{(opponent, run): [(labels, mean, low, high), ...]} sorted by labels."""
    lines = defaultdict(list)
    for p in json.loads(spec.read_text())["points"]:
        gp = json.loads(Path(p["result"]).read_text())["pairings"][0]["game_points_per_hand"]
        lines[(p["opponent"], p["run"])].append((p["labels"], gp["mean"], *gp["ci95"]))
    return {k: sorted(v) for k, v in lines.items()}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("spec", type=Path, help="the JSON list of measured points")
    p.add_argument("--out", type=Path, default=Path("curve.png"))
    a = p.parse_args(argv)
    lines = read_points(a.spec)
    opponents = sorted({o for o, _ in lines})
    fig, axes = plt.subplots(1, len(opponents), figsize=(5.5 * len(opponents), 4), squeeze=False)
    for ax, opponent in zip(axes[0], opponents, strict=True):
        for (o, run), pts in sorted(lines.items()):
            if o != opponent:
                continue
            x = [q[0] / 1e6 for q in pts]
            ax.errorbar(x, [q[1] for q in pts], yerr=[[q[1] - q[2] for q in pts], [q[3] - q[1] for q in pts]],
                        marker="o", capsize=3, label=run)
        ax.axhline(0, color="grey", lw=0.8)
        ax.set_xscale("log")
        ax.set_xticks(TICKS, [f"{t:g}" for t in TICKS])
        ax.minorticks_off()
        ax.set_xlabel("labelled decisions (millions, log scale)")
        ax.set_ylabel("game points a hand (95% interval)")
        ax.set_title(f"against {opponent}")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
