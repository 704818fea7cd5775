"""Does an action-value network fitted to the actual deal's values add to a trained policy?

The shipped policy was fitted to such values and then trained on real returns by PPO; its own
action-value head was left behind. This example labels positions of the policy's play (or of its
games against PIMC) with the actual deal's double-dummy value of every legal action, fits a fresh
action-value network to them, and plays the sum of the two: the policy's log-probability plus
``beta`` times the action value, card plays only (bids stay the policy's). ``--features`` adds
counts the observation implies but a network must otherwise work out: for each card, how many
higher cards of its suit are still out; whether a card in hand is the highest one out; cards out
and in hand per suit, trumps out::

    # 150,000 hands of the shipped network's play (about 4,000 labels a second on 2 workers)
    python experiments/q_blend.py label --out LABELS/self --hands 150000 --workers 2
    # its games against PIMC(32), PIMC playing one team of every game (about 150 labels a second)
    python experiments/q_blend.py label --out LABELS/pimc --hands 20000 --pimc-frac 1 --workers 2
    # an action-value network (six passes); --weights counts each file group's decisions that many times
    python experiments/q_blend.py fit "LABELS/self/*.npz" --out q.pt --features --hidden 512 --layers 3 --epochs 6
    # each player's regret on held-out decisions: the policy, blends, the action values alone
    python experiments/q_blend.py regret "LABELS/pimc/*.npz" q.pt --beta 0 2 4 8 1000
    # at the table, paired with the shipped network on the same deals
    python evaluate.py experiments.q_blend:QBlend,q=q.pt,beta=8 pimc:worlds=32 --deals 1000 --matches 0 --seed 13 --workers 2

Label files are expert iteration's format (:mod:`agents.training.labels`), their held-out decisions
those of the oracle trainer (a twentieth of the deals, never fitted). Results: docs/experiments.md
"an action-value network beside the policy".
"""

from __future__ import annotations

import argparse
import dataclasses
import glob
import sys
from pathlib import Path

import numpy as np
import torch

from agents.base import Agent, SeatView
from agents.checkpoint import network_spec, read_checkpoint
from agents.network import PolicyValueNet, widen_inputs
from agents.parallel import Runner
from agents.torch_agent import load_network
from agents.training.labels import hand_tasks, label_in_tasks, load_data, merge, save_data
from agents.training.oracle import Window, play_and_label
from cuatrola_env.bitboards import ABOVE
from cuatrola_env.engine import BIDDING
from cuatrola_env.observation import OBS_DIM, OBS_DIMS, OFFSETS
from cuatrola_env.rules import CARD_SUIT, NUM_CARDS, NUM_SUITS, get_rules

SHIPPED = "agents/models/cuatrola.pt"
SUIT_OF = (CARD_SUIT[:, None] == np.arange(NUM_SUITS)[None, :]).astype(np.float32)  #: [card, suit]
#: [card, other]: the other card is of the card's suit and beats it
ABOVE_MATRIX = ((ABOVE[:NUM_CARDS, None].astype(np.int64) >> np.arange(NUM_CARDS)) & 1).astype(bool)
NUM_FEATURES = 2 * NUM_CARDS + 2 * NUM_SUITS + 1


def features(obs: np.ndarray) -> np.ndarray:
    """(n, NUM_FEATURES) counts read off observations alone: per card the higher cards of its suit
    still out (/4), per card in hand whether none is; cards out and in hand per suit (/5); trumps
    out (/5). "Out" is neither in the seat's hand, nor played, nor in the trick in play."""
    n = len(obs)
    hand = obs[:, OFFSETS["hand"]] > 0
    seen = hand | (obs[:, OFFSETS["played_by"]].reshape(n, -1, NUM_CARDS).max(1) > 0)
    seen |= obs[:, OFFSETS["current_trick"]].reshape(n, -1, NUM_CARDS).max(1) > 0
    out = ~seen
    higher_out = (out[:, None, :] & ABOVE_MATRIX[None]).sum(-1)
    trump_cards = (obs[:, OFFSETS["trump"]] @ SUIT_OF.T) > 0
    return np.concatenate([higher_out / 4.0, hand & (higher_out == 0), out @ SUIT_OF / 5.0, hand @ SUIT_OF / 5.0,
                           (out & trump_cards).sum(1, keepdims=True) / 5.0], 1).astype(np.float32)


def q_inputs(obs: np.ndarray, with_features: bool) -> np.ndarray:
    return np.concatenate([obs, features(obs)], 1) if with_features else obs


def q_network(hidden: int, layers: int, with_features: bool) -> PolicyValueNet:
    """A network whose dueling action-value head is the one used (its policy head is not)."""
    return PolicyValueNet(hidden, layers, dueling=True, obs_dim=OBS_DIM + (NUM_FEATURES if with_features else 0))


def load_q(path: str) -> tuple[PolicyValueNet, bool]:
    saved = torch.load(path, weights_only=True)
    net = q_network(int(saved["hidden"]), int(saved["layers"]), bool(saved["features"]))
    net.load_state_dict(saved["q"], strict=False)
    return net.eval(), bool(saved["features"])


class QBlend(Agent):
    """Plays the card maximising the policy's log-probability plus ``beta`` times the action-value
    network's value (the file ``q`` of ``fit``); bids as the policy at ``path``."""

    def __init__(self, seed: int | None = None, path: str = SHIPPED, q: str = "", beta: float = 4.0):
        super().__init__(seed)
        if not q:
            raise ValueError("QBlend needs q=FILE, an action-value network written by experiments/q_blend.py fit")
        self.net, (self.q, self.with_features), self.beta = load_network(path), load_q(q), float(beta)

    def act(self, view: SeatView) -> int:
        obs, mask = torch.from_numpy(view.observation[None]), torch.from_numpy(view.legal_mask[None])
        with torch.no_grad():
            score = torch.log_softmax(self.net.policy(obs, mask), -1)
            if view.phase != BIDDING:
                score = score + self.beta * self.q.q(torch.from_numpy(q_inputs(view.observation[None], self.with_features)), mask)
        return int(torch.where(mask, score, torch.full_like(score, -torch.inf)).argmax())


# ----------------------------------------------------------------------------- label, fit, regret
def label(args) -> None:
    """Label files of the network's play, one per 2,000 hands (an interrupted run resumes)."""
    ck = read_checkpoint(args.path, older=True)
    weights = {k: v.numpy() for k, v in widen_inputs(ck["model"], OBS_DIMS[ck["obs_version"]]).items()}
    spec = dataclasses.replace(network_spec(ck, args.path), obs_dim=OBS_DIM).to_dict()
    options = {"temperature": args.temperature, "heuristic_frac": 0.0, "pimc_frac": args.pimc_frac,
               "pimc_worlds": args.pimc_worlds, "past_frac": 0.0, "margin": 0.5, "bids": "rollout"}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with Runner(args.workers) as runner:
        for chunk in range(-(-args.hands // 2000)):
            path = out / f"labels_{chunk:04d}.npz"
            if path.exists():
                continue
            tasks = hand_tasks(min(2000, args.hands - 2000 * chunk), args.per_task, args.seed, chunk)
            jobs = [(weights, None, spec, ck["rules"]["name"], options, s, n) for s, n in tasks]
            data = label_in_tasks(runner, play_and_label, jobs, [n for _, n in tasks], f"labels {chunk}", lambda: False)
            save_data(path, data)
            print(f"{path}: {len(data['hand'])} labelled decisions", file=sys.stderr)


def windows(patterns: list[str], rules: str) -> list[Window]:
    out = []
    for pattern in patterns:
        files = sorted(glob.glob(pattern))
        if not files:
            raise SystemExit(f"no label file matches {pattern!r}")
        out.append(Window.of(merge([load_data(f) for f in files]), get_rules(rules)))
    return out


def fit(args) -> None:
    """A fresh action-value network fitted (Huber, one-cycle learning rate) to the files' fitted decisions."""
    torch.set_num_threads(args.threads)
    groups = windows(args.labels, args.rules)
    shares = args.weights or [1.0] * len(groups)
    weight = np.concatenate([np.full(len(w), x, np.float32) for w, x in zip(groups, shares, strict=True)])
    obs = q_inputs(np.concatenate([w.obs for w in groups]), args.features)
    mask, values = np.concatenate([w.mask for w in groups]), np.concatenate([w.values for w in groups])
    held = np.concatenate([w.held for w in groups])
    train = np.flatnonzero(~held)
    net = q_network(args.hidden, args.layers, args.features)
    params = list(net.q_net.parameters())
    opt = torch.optim.Adam(params, lr=args.lr)
    batches = max(1, len(train) // 1024)
    schedule = torch.optim.lr_scheduler.OneCycleLR(opt, args.lr, total_steps=args.epochs * batches + 1, pct_start=0.05)
    rng = np.random.default_rng(args.seed)
    for epoch in range(args.epochs):
        for idx in np.array_split(rng.permutation(train), batches):
            o, m, v, w = (torch.from_numpy(x[idx]) for x in (obs, mask, values, weight))
            loss = (torch.nn.functional.huber_loss(net.q(o, m), v, reduction="none") * m).sum(-1)
            loss = (loss * w).sum() / (m.sum(-1) * w).sum()
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            schedule.step()
        held_regret = card_regret(net, obs[held], mask[held], values[held])
        print(f"pass {epoch + 1}: held-out card regret {held_regret:.4f}", file=sys.stderr)
        torch.save({"q": {k: v for k, v in net.state_dict().items() if k.startswith("q_net.")}, "hidden": args.hidden,
                    "layers": args.layers, "features": args.features}, args.out)


def card_regret(net: PolicyValueNet, obs: np.ndarray, mask: np.ndarray, values: np.ndarray) -> float:
    cards = mask[:, :NUM_CARDS].any(1)
    with torch.no_grad():
        q = net.q(torch.from_numpy(obs[cards]), torch.from_numpy(mask[cards])).numpy()
    return float(regrets(np.where(mask[cards], q, -np.inf), values[cards], mask[cards]).mean())


def regrets(scores: np.ndarray, values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Each decision's best label minus the label of the action the scores pick."""
    best = np.where(mask, values, -np.inf).max(1)
    return best - values[np.arange(len(values)), np.where(mask, scores, -np.inf).argmax(1)]


def regret(args) -> None:
    """The held-out card plays' mean regret of the policy plus beta times the action values (beta
    1000: the action values alone), each paired with the policy's."""
    (w,) = windows([args.labels], args.rules)
    rows = np.flatnonzero(w.held & w.mask[:, :NUM_CARDS].any(1))
    o, m, v = w.obs[rows], w.mask[rows], w.values[rows]
    qnet, with_features = load_q(args.q)
    with torch.no_grad():
        logp = torch.log_softmax(load_network(args.path).policy(torch.from_numpy(o), torch.from_numpy(m)), -1).numpy()
        q = qnet.q(torch.from_numpy(q_inputs(o, with_features)), torch.from_numpy(m)).numpy()
    base = regrets(logp, v, m)
    for beta in args.beta:
        r = regrets(q if beta >= 1000 else logp + beta * q, v, m)
        d = r - base
        print(f"beta {beta:g}: regret {r.mean():.4f}, minus the policy's {d.mean():+.4f} "
              f"± {1.96 * d.std() / np.sqrt(len(d)):.4f} ({len(d)} card plays)")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    a = sub.add_parser("label", help="label the network's play on the actual deal")
    a.add_argument("--out", required=True, help="folder of label files")
    a.add_argument("--path", default=SHIPPED, help="the network playing")
    a.add_argument("--hands", type=int, default=20_000)
    a.add_argument("--per-task", type=int, default=500, help="hands a task (stepped at once)")
    a.add_argument("--temperature", type=float, default=0.3, help="of the network's sampled play")
    a.add_argument("--pimc-frac", type=float, default=0.0, help="share of games in which PIMC plays one team")
    a.add_argument("--pimc-worlds", type=int, default=32)
    a.add_argument("--workers", type=int, default=1)
    a.add_argument("--seed", type=int, default=7)
    f = sub.add_parser("fit", help="fit an action-value network to label files")
    f.add_argument("labels", nargs="+", help="label file patterns, one group each")
    f.add_argument("--out", required=True)
    f.add_argument("--weights", nargs="*", type=float, help="each group's weight in the loss")
    f.add_argument("--features", action="store_true", help="add the derived counts to the inputs")
    f.add_argument("--hidden", type=int, default=256)
    f.add_argument("--layers", type=int, default=2)
    f.add_argument("--epochs", type=int, default=4)
    f.add_argument("--lr", type=float, default=1e-3)
    f.add_argument("--threads", type=int, default=2)
    f.add_argument("--seed", type=int, default=0)
    r = sub.add_parser("regret", help="held-out regret of the policy, blends and the action values")
    r.add_argument("labels", help="label file pattern")
    r.add_argument("q", help="action-value network file")
    r.add_argument("--path", default=SHIPPED, help="the policy")
    r.add_argument("--beta", nargs="+", type=float, default=[0, 2, 4, 8, 1000], help="1000 or more: the action values alone")
    for s in (f, r):
        s.add_argument("--rules", default="online")
    args = p.parse_args(argv)
    {"label": label, "fit": fit, "regret": regret}[args.command](args)


if __name__ == "__main__":
    main()
