"""Speed of the single-game interfaces: PettingZoo AEC and Gymnasium (random legal play).

    python benchmarks/bench_envs.py                 # median of 5 runs of ~2 s each

AEC: decisions/s through the standard ``agent_iter`` / ``last`` / ``step`` loop (every
``last()`` builds the agent's observation dict). Gymnasium: learner decisions/s and
all-seat decisions/s with the three other seats played by the built-in random policy.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def bench_aec(seconds: float, rules: str) -> tuple[float, float]:
    from cuatrola_env import env

    e = env(rules=rules)
    rng = np.random.default_rng(0)
    decisions = hands = 0
    t = time.perf_counter()
    while time.perf_counter() - t < seconds:
        e.reset()
        for _agent in e.agent_iter():
            obs, _, term, trunc, _ = e.last()
            if term or trunc:
                e.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            e.step(int(legal[rng.integers(legal.size)]))
            decisions += 1
        hands += 1
    dt = time.perf_counter() - t
    return decisions / dt, hands / dt


def bench_gym(seconds: float, rules: str) -> tuple[float, float, float]:
    from cuatrola_env.gym import CuatrolaGymEnv

    env = CuatrolaGymEnv(rules=rules, seat="random")
    rng = np.random.default_rng(0)
    steps = hands = 0
    total_decisions = 0
    t = time.perf_counter()
    while time.perf_counter() - t < seconds:
        obs, info = env.reset()
        done = False
        while not done:
            legal = np.flatnonzero(info["action_mask"])
            obs, r, done, _, info = env.step(int(legal[rng.integers(legal.size)]))
            steps += 1
        total_decisions += len(env.record()["hands"][0]["actions"])
        hands += 1
    dt = time.perf_counter() - t
    return steps / dt, total_decisions / dt, hands / dt


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=2.0)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--rules", default="online")
    a = p.parse_args()
    aec = [bench_aec(a.seconds, a.rules) for _ in range(a.repeats)]
    gym = [bench_gym(a.seconds, a.rules) for _ in range(a.repeats)]
    med = lambda xs, i: statistics.median(x[i] for x in xs)  # noqa: E731
    print(f"rules={a.rules}, median of {a.repeats} runs of ~{a.seconds:g} s, one process\n")
    print("| interface | decisions/s (with observations) | hands/s |")
    print("|---|---:|---:|")
    print(f"| PettingZoo AEC (`env()`, agent_iter loop) | {med(aec, 0):,.0f} | {med(aec, 1):,.0f} |")
    print(f"| Gymnasium (`Cuatrola-v0`), all four seats | {med(gym, 1):,.0f} | {med(gym, 2):,.0f} |")
    print(f"| Gymnasium, learner steps only | {med(gym, 0):,.0f} | |")


if __name__ == "__main__":
    main()
