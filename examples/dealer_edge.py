"""What the seat is worth: la mano's team against the dealer's, one network in every seat.

The dealer's team bids last and holds the muestra. This plays ``--hands`` hands of a network
against itself (sampled at temperature 1, as in self-play training, or greedily) and prints the
game points a hand of la mano's team, with a 95% interval::

    python examples/dealer_edge.py agents/models/cuatrola.pt --hands 12000
    python examples/dealer_edge.py agents/models/cuatrola_traditional.pt --rules traditional --greedy
"""

from __future__ import annotations

import argparse

import numpy as np
import torch

from agents.torch_agent import load_network
from cuatrola_env import VectorCuatrola


def manos_team_points(path: str, hands: int, rules: str, seed: int, greedy: bool, batch: int = 2048) -> np.ndarray:
    """Game points of la mano's team in each of ``hands`` finished hands."""
    net = load_network(path)
    env = VectorCuatrola(num_envs=batch, rules=rules, seed=seed)
    torch.manual_seed(seed)
    out: list[np.ndarray] = []
    while sum(map(len, out)) < hands:
        obs = torch.from_numpy(env.observe()[:, : net.obs_dim])
        with torch.no_grad():
            logits = net.policy(obs, torch.from_numpy(env.action_mask))
        action = logits.argmax(1) if greedy else torch.distributions.Categorical(logits=logits).sample()
        rewards, done = env.step(action.numpy())
        if done.any():
            res = env.last_results
            out.append(rewards[res["index"], (res["dealer"].astype(int) + 1) % 4])
    env.close()
    return np.concatenate(out)[:hands]


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model", help="a model file or training checkpoint (.pt)")
    p.add_argument("--hands", type=int, default=12000, help="hands to play")
    p.add_argument("--rules", default="online", help="rules preset")
    p.add_argument("--seed", type=int, default=0, help="seed of the deals and the sampling")
    p.add_argument("--greedy", action="store_true", help="play the most likely action instead of sampling")
    args = p.parse_args(argv)
    x = manos_team_points(args.model, args.hands, args.rules, args.seed, args.greedy)
    half = 1.96 * x.std(ddof=1) / np.sqrt(x.size)
    print(f"la mano's team: {x.mean():+.3f} [{x.mean() - half:+.3f}, {x.mean() + half:+.3f}] game points a hand "
          f"over {x.size} hands (the dealer's team: the opposite)")


if __name__ == "__main__":
    main()
