"""Expert iteration, one step: label positions with the searching bot, fit the network to them.

    python -m experiments.distill_search collect --hands 6000 --seed 0 --out runs/distill/data_0.npz --workers 2
    python -m experiments.distill_search fit runs/distill/data_0.npz --out runs/distill/distilled.pt  # from the shipped model
    python evaluate.py model:runs/distill/distilled.pt heuristic --deals 2000 --matches 200 --seed 11

``collect`` plays matches with ``bot:level=master`` (agents/search.py) in all four seats and
stores, for every decision with more than one legal action, the acting seat's observation,
its legal mask and the action the search chose, written atomically at the end. The hands are
labelled in tasks of ``--per-task`` hands, each seeded from the seed and its number, on
``--workers`` workers (Ray; the same labels for any number of workers). ``fit`` starts from a checkpoint and trains its
policy on those labels by cross-entropy (a tenth held out to report agreement), and writes a
checkpoint of the same format that ``evaluate.py model:PATH`` and the exporter read.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from agents.base import seat_view
from agents.models import ONNX_MODEL, TORCH_MODEL
from agents.parallel import Runner
from agents.policy import MASTER_SEARCH, OnnxPolicy
from agents.search import SearchAgent
from cuatrola_env.files import atomic_open
from cuatrola_env.game import Game
from cuatrola_env.observation import OBS_DIM
from cuatrola_env.rules import NUM_ACTIONS


def _save(path: Path, obs, mask, act) -> None:
    with atomic_open(path, "wb") as f:
        np.savez_compressed(f, obs=obs, mask=mask, action=act)


def label_hands(model: str, seed: int, hands: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Master's decisions in ``hands`` hands of master self-play (matches seeded from ``seed``):
    (observations, legal masks, actions) of every decision with more than one legal action."""
    agent = SearchAgent(seed=seed, policy=OnnxPolicy.load(model), play="pimc", **MASTER_SEARCH)
    rng = np.random.default_rng(seed)
    obs, mask, act = [], [], []
    done = 0
    while done < hands:
        game = Game(mode="match", seed=int(rng.integers(2**31)))
        while not game.over and done < hands:
            dealt = game.hands_dealt
            view = seat_view(game)
            action = agent.act(view)
            if len(view.legal_actions) > 1:
                obs.append(view.observation)
                mask.append(view.legal_mask)
                act.append(action)
            game.step(action)
            done += game.hands_dealt > dealt or game.over
    return (np.array(obs, np.float16).reshape(-1, OBS_DIM), np.array(mask, bool).reshape(-1, NUM_ACTIONS),
            np.array(act, np.int8))


def collect(a) -> int:
    """Label ``a.hands`` hands in tasks of ``a.per_task`` hands, on ``a.workers`` workers."""
    from tqdm import tqdm

    sizes = [min(a.per_task, a.hands - lo) for lo in range(0, a.hands, a.per_task)]
    tasks = [(a.model, a.seed * 100_003 + k, n) for k, n in enumerate(sizes)]
    bar = tqdm(total=a.hands, unit="hand")
    with Runner(a.workers, a.ray_address) as runner:
        parts = runner.map(label_hands, tasks, bar, sizes)
    bar.close()
    obs, mask, act = (np.concatenate(x) for x in zip(*parts, strict=True))
    _save(a.out, obs, mask, act)
    print(f"{len(act)} decisions from {a.hands} hands -> {a.out}")
    return 0


def fit(a) -> int:
    import torch

    from agents.checkpoint import read_checkpoint, save_checkpoint
    from agents.torch_agent import load_network

    data = [np.load(p) for p in a.data]
    obs = torch.from_numpy(np.concatenate([d["obs"] for d in data]).astype(np.float32))
    mask = torch.from_numpy(np.concatenate([d["mask"] for d in data]))
    act = torch.from_numpy(np.concatenate([d["action"] for d in data]).astype(np.int64))
    n = len(act)
    g = torch.Generator().manual_seed(a.seed)
    perm = torch.randperm(n, generator=g)
    held, train = perm[: n // 10], perm[n // 10 :]
    torch.manual_seed(a.seed)
    net = load_network(str(a.init))
    opt = torch.optim.Adam(net.policy_net.parameters(), lr=a.lr)

    def agreement(idx) -> float:
        with torch.no_grad():
            return float((net.policy(obs[idx], mask[idx]).argmax(-1) == act[idx]).float().mean())

    print(f"{n} decisions; held-out agreement before: {agreement(held):.3f}")
    for epoch in range(a.epochs):
        net.train()
        order = train[torch.randperm(len(train), generator=g)]
        for i in range(0, len(order), a.batch):
            b = order[i : i + a.batch]
            loss = torch.nn.functional.cross_entropy(net.policy(obs[b], mask[b]), act[b])
            opt.zero_grad()
            loss.backward()
            opt.step()
        net.eval()
        print(f"epoch {epoch + 1}: loss {loss.item():.3f}, held-out agreement {agreement(held):.3f}")
    ck = read_checkpoint(str(a.init))
    ck["model"] = net.state_dict()
    ck["distilled"] = {"data": [str(p) for p in a.data], "decisions": n, "epochs": a.epochs, "lr": a.lr}
    save_checkpoint(a.out, ck)
    print(f"-> {a.out}")
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect", help="label positions of master self-play")
    c.add_argument("--hands", type=int, default=6000)
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--model", default=str(ONNX_MODEL))
    c.add_argument("--out", type=Path, required=True)
    c.add_argument("--per-task", type=int, default=50, help="hands labelled per task")
    c.add_argument("--workers", type=int, default=1, help="parallel workers (N > 1: a local Ray with N CPUs)")
    c.add_argument("--ray-address", default=None, help="join a running Ray cluster instead (e.g. auto)")
    f = sub.add_parser("fit", help="train a checkpoint's policy on the labels")
    f.add_argument("data", type=Path, nargs="+")
    f.add_argument("--init", type=Path, default=TORCH_MODEL)
    f.add_argument("--out", type=Path, required=True)
    f.add_argument("--epochs", type=int, default=4)
    f.add_argument("--lr", type=float, default=1e-4)
    f.add_argument("--batch", type=int, default=1024)
    f.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    return collect(a) if a.cmd == "collect" else fit(a)


if __name__ == "__main__":
    sys.exit(main())
