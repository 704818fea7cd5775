"""Labelled decisions per second of each teacher (:mod:`agents.training.teachers`) on the same
positions, one process and one thread each.

    python benchmarks/bench_labels.py                       # actual, pimc:worlds=32; 400 positions, 3 runs each
    python benchmarks/bench_labels.py --teachers actual pimc:worlds=8 bot:level=master --rules traditional
    python benchmarks/bench_labels.py --teachers search:play=policy,bid=rollout,worlds=16,path=student --phase bids

The positions are the decisions with more than one legal action of hands played by an untrained
network (bids and card play mixed as such play mixes them). Each figure is the median of ``--runs``
passes over the positions, after one untimed pass that compiles the solver. One line a teacher:
``TEACHER N/s``. A search over the student (``path=student``) searches with the network of
``--student`` (a checkpoint; level expert's by default), run as the trainer runs it: its exported
graph in onnxruntime, or PyTorch's pass with ``--student-torch``.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time

import torch

from agents.models import EXPERT_MODELS
from agents.torch_agent import load_network
from agents.training import distill
from agents.training.teachers import StudentPolicy, teacher_for
from cuatrola_env.bitboards import cards_of
from cuatrola_env.game import Game
from cuatrola_env.rules import get_rules

PLAY = dataclasses.asdict(distill.PlaySpec())  #: the network in every seat, sampled at temperature 1
LABELS = dataclasses.asdict(distill.LabelSpec(bids="teacher"))  #: every decision with a choice
PHASES = {"all": (0, 1), "bids": (0,), "cards": (1,)}  #: --phase: the phases (0 bids, 1 card play) timed


def positions(n: int, rules: str, seed: int) -> list[tuple]:
    """(seat view with its history, the actual deal's unplayed hands) of ``n`` decisions."""
    torch.manual_seed(seed)
    net = distill.student(distill.DistillConfig(hidden=64))
    weights = {k: v.numpy() for k, v in net.state_dict().items()}
    data = distill.play_and_label(weights, None, net.spec.to_dict(), rules, PLAY, LABELS, seed, max(8, n // 2))
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
    p.add_argument("--teachers", nargs="+", default=["actual", "pimc:worlds=32"], help="teacher specs to time")
    p.add_argument("--positions", type=int, default=400, help="decisions labelled per pass")
    p.add_argument("--runs", type=int, default=3, help="timed passes (the median is reported)")
    p.add_argument("--rules", default="online", help="rules preset")
    p.add_argument("--seed", type=int, default=0, help="seed of the positions and of the teachers' draws")
    p.add_argument("--phase", choices=PHASES, default="all", help="time the bids, the card plays, or both as play mixes them")
    p.add_argument("--student", default=str(EXPERT_MODELS["online"].with_suffix(".pt")),
                   help="checkpoint of the network a path=student teacher searches with")
    p.add_argument("--student-torch", action="store_true",
                   help="run the student by PyTorch's pass, not its exported graph in onnxruntime")
    a = p.parse_args(argv)
    torch.set_num_threads(1)
    items = [(v, w) for v, w in positions(a.positions * (4 if a.phase == "bids" else 1), a.rules, a.seed)
             if v.phase in PHASES[a.phase]][: a.positions]
    student = StudentPolicy(load_network(a.student).eval(), get_rules(a.rules), use_onnx=not a.student_torch)
    bids = sum(v.phase == 0 for v, _ in items)
    print(f"{len(items)} positions ({bids} bids, {len(items) - bids} card plays), rules {a.rules}, {a.runs} runs each")
    for spec in a.teachers:
        teacher = teacher_for(spec, seed=a.seed, student=student)
        print(f"{spec} {rate(lambda view, world, t=teacher: t.values(view, world), items, a.runs):.0f}/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
