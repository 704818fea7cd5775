"""A network's late card-play head fitted afresh over the label windows of several runs.

The hand-made late heads of the first shipped experts were refitted from fresh weights over three
label windows, each played by a different network; a late head fitted while its own run labelled
(or refitted over that run's window alone) sees the play of one lineage only. This script draws the
network's late head afresh and fits it by ``--passes`` passes over the union of the ``--window``
files (each a teacher–student run's ``data/window.npz`` of late-stage labels), Adam on the late head
alone, the learning rate falling from ``--lr`` to 0 by a cosine; the fitting settings are those of
``configs/late.yaml``; every other head is kept as it was::

    python -m experiments.refit_windows models/expert_recipe/online.pt \\
        --window runs/A/data/window.npz --window runs/B/data/window.npz --passes 8 --out refit.pt
    python -m agents.export refit.pt --out refit.onnx
    python evaluate.py bot:path=refit.onnx,level=expert pimc:worlds=32 --deals 2000 --matches 0 --seed 61

What it showed: the recipe's network with its late head so refitted over a window of a 12-iteration
late stage (1.78 M labels) and one of the recipe network's own play (0.59 M) played +0.012 [+0.002,
+0.021] a hand over that network against PIMC(32) (6,000 duplicate deals), where a head refitted over
one run's window had gained +0.004: hence the recipe's `refit` stage (configs/refit.yaml).
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
import torch

from agents.checkpoint import network_spec, read_checkpoint, save_checkpoint
from agents.training.config import preset, run_rules
from agents.training.distill import DistillConfig, Window, fit, late_head_alone, learning_rate, student
from agents.training.labels import load_data


def union(paths: list[str], cfg: DistillConfig) -> Window:
    """The windows at ``paths``, one after another, all kept."""
    rules = run_rules(cfg)
    joined = Window.of(load_data(paths[0]), rules)
    for path in paths[1:]:
        joined = joined.add(Window.of(load_data(path), rules), limit=2**62)
    return joined


def refit(path: str, windows: list[str], passes: int, lr: float, seed: int) -> dict:
    """The network at ``path`` with its late head refitted afresh over ``windows``."""
    ck = read_checkpoint(path)
    fields = {k: v for k, v in preset("late").items() if k in DistillConfig.__dataclass_fields__}
    spec = network_spec(ck, path)
    cfg = DistillConfig(**fields | {"rules": ck["config"].get("rules", "online"), "hidden": spec.hidden,
                                    "layers": spec.layers, "learning_rate": lr,
                                    "iterations": 0, "final_epochs": passes})  # the passes as a run's final ones
    net = student(cfg, {"model": ck["model"], "network": spec})
    if net.late_net is None:
        raise SystemExit(f"error: {path} holds no late head")
    opt = torch.optim.Adam(net.late_net.parameters(), lr=lr, eps=1e-5)
    late_head_alone(net, opt, seed, redraw=True)  # only the late head moves (and alone sets the clipped norm)
    window = union(windows, cfg)
    print(f"{len(window)} decisions from {len(windows)} windows", flush=True)
    rng = np.random.default_rng(seed)
    net.train()
    for p in range(passes):
        for group in opt.param_groups:
            group["lr"] = learning_rate(cfg, p)
        started = time.perf_counter()
        stats = fit(net, opt, cfg, window, rng, final=True)
        print(f"pass {p + 1} of {passes} ({time.perf_counter() - started:.0f} s): held-out agreement "
              f"{stats.get('held_out_agreement', math.nan):.4f}, regret {stats.get('held_out_regret', math.nan):.4f}",
              flush=True)
    net.eval()
    return {**ck, "model": net.state_dict(), "network": net.spec.to_dict(),
            "refit": {"windows": windows, "passes": passes, "lr": lr, "seed": seed}}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("network", help="a checkpoint or network file with a late head")
    ap.add_argument("--window", action="append", required=True, help="a run's data/window.npz (repeat for more)")
    ap.add_argument("--passes", type=int, default=8, help="passes over the windows (default: 8)")
    ap.add_argument("--lr", type=float, default=5e-4, help="the cosine's starting learning rate (default: 5e-4)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the fresh weights and the minibatches")
    ap.add_argument("--threads", type=int, default=2, help="torch threads (default: 2)")
    ap.add_argument("--out", required=True, help="where to write the refitted network")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    save_checkpoint(args.out, refit(args.network, args.window, args.passes, args.lr, args.seed))
    print(f"{args.out}: late head refitted afresh over {args.passes} passes")


if __name__ == "__main__":
    main()
