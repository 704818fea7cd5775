"""Train several variants of a recipe side by side under one wall-clock budget, then rank them.

    python -m experiments.sweep --minutes 8 --out runs/sweep \\
        --base "--algorithm ppo --init agents/models/cuatrola.pt --imitation-decisions 0" \\
        --variant h80="--heuristic-frac 0.8 --pool-frac 0.1" \\
        --variant epochs3="--update-epochs 3"

Each variant is one ``train.py`` process (``--base`` flags, then the variant's own) with
``--torch-threads`` threads; at the deadline it gets SIGINT, which makes train.py finish its
update and write its checkpoint (the same path as Ctrl-C). Every checkpoint is then slimmed to
``OUT/NAME.pt`` and evaluated with ``evaluate.py model:OUT/NAME.pt OPPONENT`` (duplicate deals,
all variants on the same deals and seed), in parallel; the table is printed and written to
``OUT/summary.json``. Meant for a machine with many cores: give every variant its threads.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def parse_variant(text: str) -> tuple[str, list[str]]:
    name, sep, flags = text.partition("=")
    if not sep or not name.replace("_", "").replace("-", "").isalnum():
        raise SystemExit(f"--variant takes NAME=\"FLAGS\" with a plain NAME, got {text!r}")
    return name, shlex.split(flags)


def run_all(commands: dict[str, list[str]], env: dict, deadline: float | None, logs: Path) -> dict[str, int]:
    """Start every command at once; SIGINT the ones still running at ``deadline``; wait for all."""
    procs = {}
    for name, cmd in commands.items():
        log = open(logs / f"{name}.log", "w")  # noqa: SIM115 - closed with the process below
        procs[name] = (subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT), log)
    interrupted = False
    while any(p.poll() is None for p, _ in procs.values()):
        if deadline and not interrupted and time.time() > deadline:
            for p, _ in procs.values():
                if p.poll() is None:
                    p.send_signal(signal.SIGINT)
            interrupted = True
        time.sleep(1.0)
    for _, log in procs.values():
        log.close()
    return {name: p.returncode for name, (p, _) in procs.items()}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--variant", action="append", required=True, help='NAME="train.py flags" (repeat)')
    p.add_argument("--base", default="", help="train.py flags shared by every variant")
    p.add_argument("--minutes", type=float, default=8.0, help="training wall-clock budget per variant")
    p.add_argument("--torch-threads", type=int, default=2, help="torch threads per variant")
    p.add_argument("--out", default="runs/sweep", help="folder for the runs, logs, slim models and summary")
    p.add_argument("--opponent", default="heuristic", help="evaluation opponent (an evaluate.py spec)")
    p.add_argument("--eval-deals", type=int, default=2000, help="duplicate deals per evaluation")
    p.add_argument("--eval-matches", type=int, default=400, help="matches per evaluation")
    p.add_argument("--seed", type=int, default=11, help="evaluation seed (the same for every variant)")
    p.add_argument("--baseline", default="", help="also evaluate this model file on the same deals")
    a = p.parse_args(argv)
    variants = dict(parse_variant(v) for v in a.variant)
    out = (ROOT / a.out) if not Path(a.out).is_absolute() else Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"}

    train = {
        name: [sys.executable, "train.py", *shlex.split(a.base), *flags, "--exp-name", name, "--run-dir", str(out / "runs"),
               "--total-decisions", str(10**12), "--torch-threads", str(a.torch_threads)]
        for name, flags in variants.items()
    }
    t0 = time.time()
    codes = run_all(train, env, t0 + 60 * a.minutes, out)
    print(f"trained {len(train)} variants in {time.time() - t0:.0f} s; exit codes {codes}", flush=True)

    from agents.export import slim_checkpoint

    models = {}
    for name in variants:
        found = sorted((out / "runs").glob(f"{name}_*/checkpoint.pt"))
        if found:
            models[name] = str(slim_checkpoint(str(found[-1]), str(out / f"{name}.pt")))
        else:
            print(f"{name}: no checkpoint (see {out / (name + '.log')})", flush=True)
    if a.baseline:
        models["baseline"] = a.baseline
    evals = {
        name: [sys.executable, "evaluate.py", f"model:{path}", a.opponent, "--deals", str(a.eval_deals), "--matches",
               str(a.eval_matches), "--seed", str(a.seed), "--json", str(out / f"{name}.json")]
        for name, path in models.items()
    }
    run_all(evals, env, None, out)

    from agents.checkpoint import read_checkpoint

    rows = []
    for name, path in models.items():
        res = out / f"{name}.json"
        if not res.is_file():
            print(f"{name}: evaluation failed (see {out / (name + '.log')})", flush=True)
            continue
        r = json.loads(res.read_text())["pairings"][0]
        ck = read_checkpoint(path)
        gp, mw = r["game_points_per_hand"], r["match_win_rate"] or {"mean": float("nan")}
        rows.append({"name": name, "decisions": ck.get("step"), "game_points": gp["mean"], "ci95": gp["ci95"],
                     "card_points": r["card_points_per_hand"]["mean"], "match_win_rate": mw["mean"],
                     "illegal": r["illegal_actions"]["a"], "flags": " ".join(variants.get(name, [path]))})
    rows.sort(key=lambda row: -row["game_points"])
    (out / "summary.json").write_text(json.dumps({"base": a.base, "minutes": a.minutes, "opponent": a.opponent,
                                                  "deals": a.eval_deals, "matches": a.eval_matches, "seed": a.seed,
                                                  "rows": rows}, indent=2) + "\n")
    print(f"{'variant':<12} {'decisions':>11} {'game pts (95% CI)':>24} {'card pts':>9} {'matches':>8}  flags")
    for row in rows:
        ci = f"{row['game_points']:+.3f} [{row['ci95'][0]:+.3f}, {row['ci95'][1]:+.3f}]"
        print(f"{row['name']:<12} {row['decisions'] or 0:>11,} {ci:>24} {row['card_points']:>+9.2f} "
              f"{row['match_win_rate']:>8.1%}  {row['flags']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
