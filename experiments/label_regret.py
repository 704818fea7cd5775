"""How far is each player from the best action on the actual deal? Regret on a run's held-out decisions.

A teacher–student run (``python train.py``, first stage) keeps its latest labelled decisions in
``runs/NAME/data/window.npz``: every legal action's game points on the actual deal, played out
double-dummy. The action a perfect player *given its seat's view* would choose has the least
expected regret against the best of those labels, so a player's mean regret on the same decisions
measures its play, noise of the deal aside, and compares networks, searches and PIMC on one scale::

    python experiments/label_regret.py runs/NAME model:agents/models/cuatrola.pt pimc:worlds=32 --positions 1500

Given an expert-iteration label file instead (``runs/NAME/data/iteration_K.npz``: every legal action
valued by the search), the decisions are drawn from those whose labels prefer an action, and the
regret is against the search's best action::

    python experiments/label_regret.py runs/NAME model:agents/models/cuatrola.pt bot:level=master

``--from-trick K`` draws only card plays of trick K (counted from 0) and later: with the window of a
run that labels the late tricks alone (``configs/late.yaml``).

Only the held-out deals of the window (a twentieth, never fitted) are drawn; each position is
replayed through the engine from its deal and moves, so every player sees an ordinary seat view with
its history. Prints, per player, the mean regret of its card plays and of its bids (game points,
with a 95% interval), and for each player after the first the paired difference from the first.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from agents.base import seat_view
from agents.registry import make_agent
from agents.training.distill import WINDOW_FILE, held_out_deals
from agents.training.labels import hand_game, load_data, replay
from cuatrola_env.game import Game
from cuatrola_env.observation import trick_number
from cuatrola_env.rules import get_rules


def position(data: dict, k: int, rules) -> Game:
    """The game of the window's decision ``k``: its deal, dealt and played up to the decision."""
    return hand_game(data, int(data["hand"][k]), int(data["step"][k]), rules)


def regrets(data: dict, picks: np.ndarray, specs: list[str], rules, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(players, positions) regret of each player's action at each decision ``picks``, and each decision's phase."""
    agents = [make_agent(s, seed=seed) for s in specs]
    values = np.nan_to_num(data["values"].astype(np.float32), nan=-np.inf)
    out, phase = np.zeros((len(specs), len(picks))), np.zeros(len(picks), np.int8)
    for j, k in enumerate(picks):
        view = seat_view(position(data, int(k), rules))
        phase[j] = view.phase
        for i, agent in enumerate(agents):
            out[i, j] = values[k].max() - values[k, agent.act(view)]
    return out, phase


def decisions(path: Path) -> tuple[np.ndarray, dict]:
    """The decisions to draw and the data: the held-out ones of a run's label window (the file, or
    the run's folder)."""
    data = load_data(path if path.is_file() else path / WINDOW_FILE)
    return np.flatnonzero(held_out_deals(data["deal"])[data["hand"]]), data


def interval(x: np.ndarray) -> str:
    half = 1.96 * x.std(ddof=1) / np.sqrt(len(x)) if len(x) > 1 else float("nan")
    return f"{x.mean():.3f} [{x.mean() - half:.3f}, {x.mean() + half:.3f}]"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", help="a run's directory (it holds data/window.npz), or its window file")
    ap.add_argument("players", nargs="+", help="agent specs, as evaluate.py takes them")
    ap.add_argument("--positions", type=int, default=1000, help="held-out decisions drawn")
    ap.add_argument("--rules", default="online", help="the run's rules preset")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--from-trick", type=int, default=0, help="draw only card plays of this trick (from 0) and later")
    args = ap.parse_args(argv)
    held, data = decisions(Path(args.run))
    if args.from_trick > 0:
        obs, _ = replay(data, get_rules(args.rules))
        held = held[trick_number(obs[held]) >= args.from_trick]
    if not held.size:
        raise SystemExit(f"{args.run}: no decision to draw (no held-out decision, or none whose labels prefer an action)")
    picks = np.random.default_rng(args.seed).choice(held, size=min(args.positions, held.size), replace=False)
    r, phase = regrets(data, picks, args.players, get_rules(args.rules), args.seed)
    for name, rows in (("card plays", phase == 1), ("bids", phase == 0)):
        if not rows.any():
            continue
        print(f"{name} ({int(rows.sum())} decisions): mean regret, game points")
        for i, spec in enumerate(args.players):
            paired = f"   minus {args.players[0]}: {interval(r[i, rows] - r[0, rows])}" if i else ""
            print(f"  {spec}: {interval(r[i, rows])}{paired}")


if __name__ == "__main__":
    main()
