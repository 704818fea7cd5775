"""PIMC decision time: median and 95th percentile per decision, at several world counts.

    python benchmarks/bench_pimc.py --worlds 16 32 64 --hands 30

It first times the double-dummy solver on whole deals (from the first lead) per contract.

PIMC plays seats 0 and 2 against two heuristic players over seeded random hands (one core,
one process); every PIMC decision with more than one legal action is timed (the first,
which compiles the solver, is left out).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from agents import make_agent, seat_view
from cuatrola_env.game import Game


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--worlds", type=int, nargs="+", default=[16, 32, 64])
    p.add_argument("--hands", type=int, default=30)
    p.add_argument("--rules", default="online")
    p.add_argument("--solver-deals", type=int, default=200, help="full deals solved per contract for the solver table")
    a = p.parse_args()
    warm = make_agent("pimc:worlds=2", seed=0)
    g = Game(seed=0)
    while not g.over:
        g.step(warm.act(seat_view(g)))
    from agents.solver import Position

    print("| contract | full deals solved | median (ms) | p95 (ms) | max (ms) |")
    print("|---|---:|---:|---:|---:|")
    contracts = (("pass", [20] * 4), ("solo", [21, 20, 20, 20]), ("cuatrola", [22, 20, 20, 20]), ("quintola", [23, 20, 20, 20]))
    for name, bids in contracts:
        ts = []
        for seed in range(a.solver_deals):
            g = Game(rules=a.rules, seed=seed)
            for b in bids:
                g.step(b)
            pos = Position.from_game(g)
            t = time.perf_counter()
            pos.solve()
            ts.append((time.perf_counter() - t) * 1e3)
        print(f"| {name} | {len(ts)} | {np.median(ts):.2f} | {np.percentile(ts, 95):.2f} | {max(ts):.1f} |")
    print()
    print("| worlds | decisions | median (ms) | p95 (ms) | bids: median (ms) | card play: median (ms) |")
    print("|---:|---:|---:|---:|---:|---:|")
    for w in a.worlds:
        pimc, heur = make_agent(f"pimc:worlds={w}", seed=1), make_agent("heuristic")
        times, bids, plays = [], [], []
        for seed in range(a.hands):
            g = Game(rules=a.rules, seed=1000 + seed)
            while not g.over:
                v = seat_view(g)
                if g.current_player % 2 == 0 and len(v.legal_actions) > 1:
                    t = time.perf_counter()
                    act = pimc.act(v)
                    dt = (time.perf_counter() - t) * 1e3
                    times.append(dt)
                    (bids if v.phase == 0 else plays).append(dt)
                else:
                    act = (pimc if g.current_player % 2 == 0 else heur).act(v)
                g.step(act)
        print(f"| {w} | {len(times)} | {np.median(times):.1f} | {np.percentile(times, 95):.1f} | "
              f"{np.median(bids):.1f} | {np.median(plays):.1f} |")


if __name__ == "__main__":
    main()
