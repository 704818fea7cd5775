"""Stable-Baselines3: MaskablePPO (sb3-contrib) learns one seat of Cuatrola against random players,
any agent spec of evaluate.py, or its own past selves.

    pip install -e ".[sb3]"                       # sb3-contrib; torch first, as the README says
    python examples/sb3_maskable_ppo.py           # about a minute on 2 CPU cores
    python examples/sb3_maskable_ppo.py --timesteps 200000 --save maskable_ppo.zip
    python examples/sb3_maskable_ppo.py --opponents heuristic      # any spec: bot:level=expert, pimc:worlds=8 ...
    python examples/sb3_maskable_ppo.py --opponents self           # self-play: past snapshots as partner and opponents
    python evaluate.py sb3:maskable_ppo.zip heuristic --deals 500   # the saved policy, benchmarked

``make_vec_env`` builds the vector of environments by the registered id (importing ``cuatrola_env``
registers ``Cuatrola-v0``); MaskablePPO reads each environment's legal actions through its
``action_masks()``. At the end the learned policy and a random one play the same number of hands
and their mean reward (game points a hand for the learning seat) is printed.
"""

from __future__ import annotations

import argparse

import numpy as np
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.utils import get_action_masks
from stable_baselines3.common.env_util import make_vec_env

import cuatrola_env  # noqa: F401 - registers "Cuatrola-v0"
from agents.registry import make_agent
from agents.sb3_agent import PastSelves, SnapshotCallback


def mean_reward(model: MaskablePPO | None, hands: int, seed: int) -> float:
    """The learning seat's mean game points over ``hands`` hands, by ``model`` (None: random legal play)."""
    env = make_vec_env("Cuatrola-v0", n_envs=8, seed=seed, env_kwargs={"seat": "random"})
    rng, rewards, obs = np.random.default_rng(seed), [], env.reset()
    while len(rewards) < hands:
        masks = get_action_masks(env)
        if model is None:
            actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        else:
            actions, _ = model.predict(obs, action_masks=masks, deterministic=True)
        obs, reward, done, _ = env.step(actions)
        rewards.extend(reward[done])
    env.close()
    return float(np.mean(rewards[:hands]))


def opponents(spec: str, timesteps: int):
    """The other seats' player for ``--opponents`` and the callback self-play needs (None otherwise)."""
    if spec == "random":
        return "random", None
    if spec == "self":
        selves = PastSelves(size=8, latest=0.5)
        return selves, SnapshotCallback(selves, every=max(1, timesteps // 10))
    return make_agent(spec), None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--timesteps", type=int, default=20_000, help="learning seat's decisions to train on (default 20000)")
    p.add_argument("--hands", type=int, default=2_000, help="hands played by each side at the end (default 2000)")
    p.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    p.add_argument("--save", default="", help="write the trained model to this .zip file")
    p.add_argument("--opponents", default="random",
                   help="who plays the other three seats: random (default), an agent spec of evaluate.py "
                        "(heuristic, bot:level=expert ...), or self (the learning model's past snapshots)")
    args = p.parse_args(argv)
    others, callback = opponents(args.opponents, args.timesteps)
    env = make_vec_env("Cuatrola-v0", n_envs=8, seed=args.seed,
                       env_kwargs={"seat": "random", "partner": others, "opponents": others})
    model = MaskablePPO("MlpPolicy", env, n_steps=256, batch_size=256, learning_rate=3e-4, seed=args.seed, verbose=0)
    model.learn(total_timesteps=args.timesteps, callback=callback)
    if args.save:
        model.save(args.save)
    learned, random = mean_reward(model, args.hands, args.seed + 1), mean_reward(None, args.hands, args.seed + 1)
    print(f"MaskablePPO after {args.timesteps} decisions: {learned:+.3f} game points a hand against random players; "
          f"random play: {random:+.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
