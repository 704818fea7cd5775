"""A finished teacher–student run's late card-play head fitted afresh over the run's whole window.

A late head trained while its labels were gathered followed a moving window (each iteration's
labels from a better player's hands), then a few passes over the last window. The hand-made late
heads of the first shipped experts were instead refitted from fresh weights over fixed windows, by
a cosine over several passes. This script does the latter on a run of ``configs/late.yaml``: the
late head's weights drawn afresh, then ``--passes`` passes over the run's ``data/window.npz``
(Adam on the late head alone, the learning rate falling from ``--lr`` to 0 by a cosine), the
held-out agreement and regret after each pass; every other head is kept as it was::

    python -m experiments.refit_late runs/late_1_T/checkpoint.pt --passes 8 --out refit.pt
    python -m agents.export refit.pt --out refit.onnx
    python evaluate.py bot:path=refit.onnx,level=expert pimc:worlds=32 --deals 2000 --matches 0 --seed 61
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np
import torch

from agents.checkpoint import network_spec, read_checkpoint, save_checkpoint
from agents.training.config import run_rules
from agents.training.distill import WINDOW_FILE, DistillConfig, Window, fit, student
from agents.training.labels import load_data


def fresh_late_head(net, seed: int) -> None:
    """The late head's weights drawn afresh (PyTorch's default initialisation, seeded)."""
    torch.manual_seed(seed)
    for layer in net.late_net.modules():
        if isinstance(layer, torch.nn.Linear):
            layer.reset_parameters()


def refit(path: str, passes: int, lr: float, seed: int) -> dict:
    """The checkpoint at ``path`` with its late head refitted afresh over its run's window."""
    ck = read_checkpoint(path)
    cfg = DistillConfig(**{k: v for k, v in ck["config"].items() if k in DistillConfig.__dataclass_fields__})
    net = student(cfg, {"model": ck["model"], "network": network_spec(ck, path)})
    if net.late_net is None:
        raise SystemExit(f"error: {path} holds no late head")
    fresh_late_head(net, seed)
    for name, param in net.named_parameters():  # only the late head moves (and alone sets the clipped norm)
        param.requires_grad_(name.startswith("late_net."))
    window = Window.of(load_data(Path(path).parent / WINDOW_FILE), run_rules(cfg))
    opt = torch.optim.Adam(net.late_net.parameters(), lr=lr, eps=1e-5)
    rng = np.random.default_rng(seed)
    net.train()
    for p in range(passes):
        for group in opt.param_groups:
            group["lr"] = lr * 0.5 * (1 + math.cos(math.pi * p / passes))
        started = time.perf_counter()
        stats = fit(net, opt, cfg, window, rng, final=True)
        print(f"pass {p + 1} of {passes} ({time.perf_counter() - started:.0f} s, {len(window)} decisions): "
              f"held-out agreement {stats.get('held_out_agreement', math.nan):.4f}, "
              f"regret {stats.get('held_out_regret', math.nan):.4f}",
              flush=True)
    net.eval()
    return {**ck, "model": net.state_dict(), "network": net.spec.to_dict(), "refit": {"passes": passes, "lr": lr}}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkpoint", help="a finished run's checkpoint.pt, its window in data/window.npz beside it")
    ap.add_argument("--passes", type=int, default=8, help="passes over the window (default: 8)")
    ap.add_argument("--lr", type=float, default=5e-4, help="the cosine's starting learning rate (default: 5e-4)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the fresh weights and the minibatches")
    ap.add_argument("--threads", type=int, default=2, help="torch threads (default: 2)")
    ap.add_argument("--out", required=True, help="where to write the refitted network")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    save_checkpoint(args.out, refit(args.checkpoint, args.passes, args.lr, args.seed))
    print(f"{args.out}: late head refitted afresh over {args.passes} passes")


if __name__ == "__main__":
    main()
