"""Labelled decisions per second: the oracle's labeller (the actual deal solved for every legal
action) against expert iteration's (the search over drawn deals), on the same positions, one
process and one thread each.

    python benchmarks/bench_labels.py                       # 400 positions, 3 runs each
    python benchmarks/bench_labels.py --positions 1000 --runs 5 --rules traditional

The positions are the decisions with more than one legal action of hands played by an untrained
network (bids and card play mixed as such play mixes them). The search labeller uses expert
iteration's defaults (16 deals for a card, 8 for a bid, from 64 candidates weighed by the shipped
network). Each figure is the median of ``--runs`` passes over the positions, after one untimed
pass that compiles the solver. The last line reads ``oracle N/s, search M/s, ratio R``.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time

import torch

from agents.search import SearchAgent
from agents.training import oracle
from agents.training.expert import ExpertConfig
from cuatrola_env.bitboards import cards_of
from cuatrola_env.game import Game
from cuatrola_env.rules import get_rules


def positions(n: int, rules: str, seed: int) -> list[tuple]:
    """(seat view with its history, the actual deal's unplayed hands) of ``n`` decisions."""
    torch.manual_seed(seed)
    weights = {k: v.numpy() for k, v in oracle.network(64, 2).state_dict().items()}
    options = oracle.play_options(dataclasses.replace(oracle.OracleConfig(), oracle_temperature=1.0, oracle_heuristic_frac=0.0,
                                                      oracle_past_frac=0.0, oracle_margin_coef=0.0, oracle_bids="solver"))
    data = oracle.play_and_label(weights, None, (64, 2), rules, options, seed, max(8, n // 2))
    out = []
    for hand, step in zip(data["hand"][:n], data["step"][:n], strict=True):
        g = Game(get_rules(rules))
        g.reset(hands=[cards_of(int(m)) for m in data["deal"][hand]], dealer=int(data["dealer"][hand]),
                muestra=int(data["muestra"][hand]), score=[int(x) for x in data["score"][hand]])
        for a in data["actions"][hand, :step]:
            g.step(int(a))
        out.append((g.seat_view(), list(g.hands)))
    if len(out) < n:
        raise SystemExit(f"only {len(out)} positions were reached; ask for fewer")
    return out


def rate(label, items, runs: int) -> float:
    label(*items[0])  # compiles the solver
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        for item in items:
            label(*item)
        times.append(time.perf_counter() - t)
    return len(items) / statistics.median(times)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--positions", type=int, default=400, help="decisions labelled per pass")
    p.add_argument("--runs", type=int, default=3, help="timed passes (the median is reported)")
    p.add_argument("--rules", default="online", help="rules preset")
    p.add_argument("--seed", type=int, default=0, help="seed of the positions and of the search's draws")
    a = p.parse_args(argv)
    torch.set_num_threads(1)
    items = positions(a.positions, a.rules, a.seed)
    cfg = ExpertConfig()
    search = SearchAgent(seed=a.seed, worlds=cfg.label_worlds, bid_worlds=cfg.label_bid_worlds,
                         candidates=cfg.label_candidates, infer=cfg.label_infer)
    bids = sum(v.phase == 0 for v, _ in items)
    print(f"{len(items)} positions ({bids} bids, {len(items) - bids} card plays), rules {a.rules}, {a.runs} runs each")
    fast = rate(lambda view, world: oracle.oracle_values(view, world), items, a.runs)
    slow = rate(lambda view, world: search.solved_values(view, view.legal_actions), items, a.runs)
    print(f"oracle {fast:.0f}/s, search {slow:.0f}/s, ratio {fast / slow:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
