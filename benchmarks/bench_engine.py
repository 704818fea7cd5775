"""Engine benchmark: random legal play under the full rules, batched and scalar.

For each batch size it measures decisions/s and hands/s, without and with ``observe()``
at every step, as the median of several timed runs, each configuration in a fresh
process so that its peak resident memory (``ru_maxrss``) can be reported too. The
plain reference implementation of the test suite is timed in the same run.

    python benchmarks/bench_engine.py                       # the README table
    python benchmarks/bench_engine.py --batch-sizes 4096 16384 --repeats 3 --json out.json

A decision is one call's worth of work for one game: legal mask, a random legal action
(sampled from the mask's bits), the step (with its automatic re-deal) and, in the
"obs" rows, the observation of the next seat to act.
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def worker(batch: int, obs: bool, rules: str, repeats: int, seconds: float, threads: int) -> dict:
    """Time random play in this process; returns medians and the peak RSS."""
    import numpy as np

    from cuatrola_env import VectorCuatrola
    from cuatrola_env.bitboards import random_bit

    env = VectorCuatrola(num_envs=batch, rules=rules, seed=0, num_threads=threads)
    rng = np.random.default_rng(0)

    def play(steps: int) -> int:
        hands = 0
        for _ in range(steps):
            actions = random_bit(env.legal_bits, rng)
            _, done = env.step(actions)
            hands += int(done.sum())
            if obs:
                env.observe()
        return hands

    # calibrate: how many steps fill ``seconds``
    play(5)
    t = time.perf_counter()
    play(10)
    per_step = (time.perf_counter() - t) / 10
    steps = max(20, int(seconds / per_step))
    dps, hps = [], []
    for _ in range(repeats):
        t = time.perf_counter()
        hands = play(steps)
        dt = time.perf_counter() - t
        dps.append(batch * steps / dt)
        hps.append(hands / dt)
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "batch": batch, "obs": obs, "threads": threads, "rules": rules, "steps_per_run": steps,
        "decisions_per_s": statistics.median(dps), "hands_per_s": statistics.median(hps),
        "runs_decisions_per_s": dps, "peak_rss_mib": peak_mib,
    }


def reference_worker(rules: str, seconds: float, repeats: int) -> dict:
    """The scalar reference (tests/reference.py) playing random hands."""
    import random

    sys.path.insert(0, str(ROOT / "tests"))
    from reference import RefHand  # noqa: E402

    from cuatrola_env import get_rules

    r = get_rules(rules)
    rnd = random.Random(0)
    dps, hps = [], []
    for _ in range(repeats):
        decisions = hands = 0
        t = time.perf_counter()
        while time.perf_counter() - t < seconds:
            deck = list(range(20))
            rnd.shuffle(deck)
            dealer = rnd.randrange(4)
            h = [deck[5 * p : 5 * p + 5] for p in range(4)]
            g = RefHand(r, h, dealer, h[dealer][-1])
            while not g.over:
                g.play(rnd.choice(g.legal_actions()))
                decisions += 1
            hands += 1
        dt = time.perf_counter() - t
        dps.append(decisions / dt)
        hps.append(hands / dt)
    return {"decisions_per_s": statistics.median(dps), "hands_per_s": statistics.median(hps)}


def run_child(args: list[str]) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--worker", *args], capture_output=True, text=True, check=False, cwd=ROOT
    )
    if out.returncode != 0:
        raise SystemExit(f"benchmark worker {args} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def fmt(x: float) -> str:
    return f"{x / 1e6:.2f} M" if x >= 1e6 else f"{x / 1e3:.1f} k"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 256, 4096, 16384, 65536])
    p.add_argument("--rules", default="online", help="rules preset")
    p.add_argument("--repeats", type=int, default=5, help="timed runs per configuration (median reported)")
    p.add_argument("--seconds", type=float, default=1.0, help="length of each timed run")
    p.add_argument("--threads", type=int, default=1, help="VectorCuatrola num_threads")
    p.add_argument("--json", type=Path, help="also write the results as JSON here")
    p.add_argument("--worker", nargs=6, help=argparse.SUPPRESS)
    p.add_argument("--reference-worker", nargs=3, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.worker:
        b, o, rules, reps, secs, thr = a.worker
        print(json.dumps(worker(int(b), o == "1", rules, int(reps), float(secs), int(thr))))
        return
    if a.reference_worker:
        rules, secs, reps = a.reference_worker
        print(json.dumps(reference_worker(rules, float(secs), int(reps))))
        return

    import numpy as np

    rows = []
    configs = [(b, o) for b in a.batch_sizes for o in (False, True) if not (a.threads > b)]
    for i, (b, o) in enumerate(configs, 1):
        print(f"[{i}/{len(configs)}] batch {b:>6} {'with' if o else 'without'} observe() ...", file=sys.stderr, flush=True)
        rows.append(run_child([str(b), "1" if o else "0", a.rules, str(a.repeats), str(a.seconds), str(a.threads)]))
    print("[reference] scalar reference ...", file=sys.stderr, flush=True)
    out = subprocess.run(
        [sys.executable, __file__, "--reference-worker", a.rules, str(a.seconds), str(a.repeats)],
        capture_output=True, text=True, check=True, cwd=ROOT,
    )
    ref = json.loads(out.stdout.strip().splitlines()[-1])

    print(f"\nRandom legal play, rules={a.rules}, threads={a.threads}, median of {a.repeats} runs of ~{a.seconds:g} s")
    print(f"python {platform.python_version()}, numpy {np.__version__}, {platform.machine()}\n")
    print("| batch | decisions/s | hands/s | decisions/s with observe() | hands/s with observe() | peak RSS (MiB) |")
    print("|---:|---:|---:|---:|---:|---:|")
    by = {(r["batch"], r["obs"]): r for r in rows}
    for b in a.batch_sizes:
        r0, r1 = by.get((b, False)), by.get((b, True))
        if r0 is None:
            continue
        print(
            f"| {b} | {fmt(r0['decisions_per_s'])} | {fmt(r0['hands_per_s'])} | {fmt(r1['decisions_per_s'])} | "
            f"{fmt(r1['hands_per_s'])} | {max(r0['peak_rss_mib'], r1['peak_rss_mib']):.0f} |"
        )
    print(f"| scalar reference | {fmt(ref['decisions_per_s'])} | {fmt(ref['hands_per_s'])} | | | |")
    best0 = max(rows, key=lambda r: (not r["obs"], r["decisions_per_s"]))
    best1 = max((r for r in rows if r["obs"]), key=lambda r: r["decisions_per_s"])
    print(f"\nbest without observe(): {fmt(best0['decisions_per_s'])} decisions/s at batch {best0['batch']}")
    print(f"best with observe():    {fmt(best1['decisions_per_s'])} decisions/s at batch {best1['batch']}")
    if a.json:
        a.json.write_text(json.dumps({"rules": a.rules, "threads": a.threads, "rows": rows, "reference": ref}, indent=2))


if __name__ == "__main__":
    main()
