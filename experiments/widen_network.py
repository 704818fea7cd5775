"""A wider copy of a trained network that plays exactly as it does, to go on training with more room.

The network's card play of the last tricks is short of labels more than of room, yet a wider network
fitted to the same labels came closer to the search's choices (docs/experiments.md). Training a wider
network from nothing would lose everything the narrow one learnt; widening it keeps its play
(Net2Net: each new unit copies one of its layer, the next layer splits the copied unit's outgoing
weights among the copies) and gives the fit more units::

    python experiments/widen_network.py agents/models/cuatrola.pt WIDE.pt --hidden 512
    python train.py --config late --init WIDE.pt --hidden 512 --seed 7

``--noise`` (a share of each layer's weight spread, 0.001 by default) lets the copies learn apart;
the widened network's logits then differ from the original's by about that share (0: exactly equal).
"""

from __future__ import annotations

import argparse

from agents.checkpoint import read_checkpoint, save_checkpoint
from agents.network import widen_hidden


def widened(path: str, hidden: int, noise: float, seed: int) -> dict:
    """The checkpoint at ``path`` with its network widened to ``hidden`` units a layer."""
    ck = read_checkpoint(path, older=True)
    return {**ck, "model": widen_hidden(ck["model"], hidden, noise, seed), "config": {**ck.get("config", {}), "hidden": hidden}}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("network", help="a checkpoint or model file written by train.py")
    ap.add_argument("out", help="where to write the widened one")
    ap.add_argument("--hidden", type=int, required=True, help="units a layer of the widened network")
    ap.add_argument("--noise", type=float, default=1e-3, help="noise, as a share of each layer's weight spread")
    ap.add_argument("--seed", type=int, default=0, help="which units the new ones copy, and the noise")
    args = ap.parse_args(argv)
    try:
        ck = widened(args.network, args.hidden, args.noise, args.seed)
    except ValueError as e:
        raise SystemExit(f"error: {e}") from None
    save_checkpoint(args.out, ck)
    print(f"{args.out}: {args.hidden} units a layer, from {args.network}")


if __name__ == "__main__":
    main()
