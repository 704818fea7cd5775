"""Belief sampler time: milliseconds to draw ``n`` deals of the hidden cards for one decision.

    python benchmarks/bench_belief.py                          # 512 and 1,024 deals, 3 runs
    python benchmarks/bench_belief.py --deals 32 512 --rules traditional --runs 5

The views are every decision (bids and card plays) of ``--games`` seeded hands played at random;
each run draws ``n`` deals for each view once (one core, one process). Reports, per ``n``, the
median over runs of the mean time per view.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from agents.base import seat_view
from agents.belief import sample_world_array
from cuatrola_env.game import Game


def views(games: int, rules: str, seed: int = 0) -> list:
    """The seat view of every decision of ``games`` hands played at random."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(games):
        game = Game(rules=rules, seed=int(rng.integers(2**31)))
        while not game.over:
            out.append(seat_view(game))
            game.step(int(rng.choice(game.legal_actions())))
    return out


def ms_per_view(pool: list, n: int, seed: int) -> float:
    """Mean milliseconds to draw ``n`` deals for each view of ``pool``."""
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    for view in pool:
        sample_world_array(view, n, rng)
    return (time.perf_counter() - start) / len(pool) * 1000


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--deals", type=int, nargs="+", default=[512, 1024], help="deals drawn per decision")
    p.add_argument("--games", type=int, default=30, help="hands whose decisions are the views")
    p.add_argument("--rules", default="online", help="rules preset of the hands")
    p.add_argument("--runs", type=int, default=3, help="timed passes; the median is reported")
    a = p.parse_args()
    pool = views(a.games, a.rules)
    ms_per_view(pool[:20], 8, seed=0)  # warm-up
    print(f"{len(pool)} views, {a.rules} rules")
    for n in a.deals:
        times = [ms_per_view(pool, n, seed=r) for r in range(a.runs)]
        print(f"{n} deals: {statistics.median(times):.2f} ms a decision (runs: "
              f"{', '.join(f'{t:.2f}' for t in times)})")


if __name__ == "__main__":
    main()
