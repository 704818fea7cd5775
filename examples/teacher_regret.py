"""How far a network's card play is from its teacher's labels, per trick, beside the teacher's own.

A label over many deals drawn as PIMC draws them is noisy: PIMC itself, drawing its deals afresh,
does not always pick the label's best action. This measures, on held-out decisions of a stored label
window (``runs/NAME/data/window.npz`` of a run taught by ``pimc:worlds=N``, such as configs/late.yaml), what the
network's choice gives up against the label's best action, and what PIMC's choice over as many
freshly drawn deals gives up, per trick::

    python examples/teacher_regret.py runs/NAME/data/window.npz agents/models/cuatrola_expert.pt \\
        --decisions 8000 --worlds 32

Where the network gives up more than PIMC, it has not learnt what its teacher knows.
"""

from __future__ import annotations

import argparse

import numpy as np
import torch

from agents.base import seat_view
from agents.torch_agent import load_network
from agents.training.distill import Window
from agents.training.labels import hand_game, load_data
from agents.training.teachers import teacher_for
from cuatrola_env.observation import trick_number
from cuatrola_env.rules import get_rules


def label_regret(values: np.ndarray, mask: np.ndarray, pick: np.ndarray) -> np.ndarray:
    """(N,) what each row's chosen action ``pick`` gives up against its best label (game points)."""
    best = np.where(mask, values, -np.inf).max(1)
    return best - values[np.arange(len(values)), pick]


def regrets(window_path: str, network: str, decisions: int, worlds: int, rules: str, seed: int,
            fitted: bool = False) -> dict:
    """Per trick: decisions, the network's mean regret and PIMC's (against the stored labels), on the
    held-out decisions (or, ``fitted``, on those the run fitted)."""
    data = load_data(window_path)
    window = Window.of(data, get_rules(rules))
    rng = np.random.default_rng(seed)
    split = ~window.held if fitted else window.held
    pool = np.flatnonzero(split & (window.mask.sum(1) > 1) & (trick_number(window.obs) >= 0))
    rows = rng.choice(pool, min(decisions, len(pool)), replace=False)
    net = load_network(network)
    with torch.no_grad():
        pick = net.policy(torch.from_numpy(window.obs[rows]), torch.from_numpy(window.mask[rows])).argmax(-1).numpy()
    pimc, teacher = np.empty(len(rows), np.int64), teacher_for(f"pimc:worlds={worlds}", seed=seed)
    for i, r in enumerate(rows):
        g = hand_game(data, int(data["hand"][r]), int(data["step"][r]), get_rules(rules))
        pimc[i] = int(np.nanargmax(teacher.values(seat_view(g), np.array(g.hands))))
    values, mask = window.values[rows], window.mask[rows]
    net_regret, pimc_regret = label_regret(values, mask, pick), label_regret(values, mask, pimc)
    tricks = trick_number(window.obs[rows])
    return {int(t): (int((tricks == t).sum()), float(net_regret[tricks == t].mean()), float(pimc_regret[tricks == t].mean()))
            for t in np.unique(tricks)}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("window", help="a run's label window, runs/NAME/data/window.npz")
    ap.add_argument("network", help="a checkpoint or model file written by train.py")
    ap.add_argument("--decisions", type=int, default=4000, help="held-out decisions measured")
    ap.add_argument("--worlds", type=int, default=32, help="deals PIMC draws for its own choice")
    ap.add_argument("--rules", default="online", help="the window's rules preset")
    ap.add_argument("--seed", type=int, default=0, help="which decisions, and PIMC's deals")
    ap.add_argument("--fitted", action="store_true", help="measure on the decisions the run fitted, not the held-out ones")
    args = ap.parse_args(argv)
    print("| trick | decisions | network's regret | PIMC's regret |\n|---|---|---|---|")
    for t, (n, a, b) in regrets(args.window, args.network, args.decisions, args.worlds, args.rules, args.seed,
                                      args.fitted).items():
        print(f"| {t} | {n} | {a:.4f} | {b:.4f} |")


if __name__ == "__main__":
    main()
