"""Duplicate evaluation of Cuatrola agents: the luck of the deal taken out.

    python evaluate.py heuristic random --deals 2000 --seed 0 --json out.json
    python evaluate.py heuristic random pimc:worlds=16 --deals 500 --png table.png   # round robin
    python evaluate.py heuristic+random heuristic --deals 1000   # a mixed partnership against two heuristics
    python evaluate.py compare a.json b.json                     # paired: is A better than B? (agents.results)
    python evaluate.py pool runs/pool/m*.json --json pooled.json # one figure from runs on several seeds

Each side is an agent spec (``random``, ``heuristic``, ``pimc:worlds=32``, ...) or a mixed
partnership ``SPEC+SPEC`` (the first plays seats 0/1 of its team, the second its partner).

*Hands*: a fixed, seeded set of deals is played twice, the teams swapping seats, so each side
plays each side of each deal; the dealer rotates from deal to deal. Statistics are on the
paired difference (the mean of the two plays of a deal), with 95% intervals; the unpaired
standard error of the same games is reported beside it to show what pairing buys.
*Matches* to the target are played the same way: each seeded sequence of deals twice, the
teams swapped. Reported per pairing: game points per hand, card points per hand (points
difference), match win rate, bids per contract and their success, and illegal actions
(any is a bug: it is replaced by the first legal action and counted).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from cuatrola_env.cli import SEED, ArgumentParser, int_in, not_installed, run_main
from cuatrola_env.files import atomic_open, check_writable
from cuatrola_env.game import Game
from cuatrola_env.positions import random_deals
from cuatrola_env.rules import CONTRACT_NAMES, get_rules

from .base import Agent, seat_view
from .ladder import ladder_main
from .parallel import BACKENDS, ClusterError, Runner, WorkerError
from .policy import policy_for
from .registry import make_agent
from .results import CHEATER, compare_main, gap_share, mean_ci, pool_main


# ----------------------------------------------------------------------------- sides and deals
@dataclass
class Side:
    """A team: two agents (the same spec twice, or a mixed partnership)."""

    spec: str
    agents: tuple[Agent, Agent]
    seed: int | None = None  #: the seed it was made with from its spec (None: made by hand, not rebuildable)

    @classmethod
    def from_spec(cls, spec: str, seed: int) -> Side:
        parts = spec.split("+")
        if len(parts) > 2 or not all(parts):
            raise ValueError(f"a side is SPEC or SPEC+SPEC, got {spec!r}")
        a = make_agent(parts[0], seed=seed)
        b = make_agent(parts[-1], seed=seed + 1)
        return cls(spec, (a, b), seed)


# ----------------------------------------------------------------------------- playing
@dataclass
class Tally:
    """Counts gathered while playing, per side."""

    bids: Counter = field(default_factory=Counter)  # (side, contract) -> declared
    made: Counter = field(default_factory=Counter)  # (side, contract) -> made
    illegal: Counter = field(default_factory=Counter)  # side -> illegal actions
    decisions: int = 0


def play_episode(game: Game, seats: list[tuple[Agent, int]], tally: Tally) -> None:
    """Play a reset game to its end. ``seats[p]`` = (agent, side index) of seat p."""
    while not game.over:
        seat = game.current_player
        agent, side = seats[seat]
        view = seat_view(game, seat)
        action = agent.act_seeing(view, game.hands) if getattr(agent, "sees_all", False) else agent.act(view)
        tally.decisions += 1
        if not isinstance(action, (int, np.integer)) or not (view.legal >> int(action)) & 1:
            tally.illegal[side] += 1
            action = view.legal_actions[0]
        before = game.hands_dealt
        game.step(int(action))
        if game.hands_dealt > before or game.over:  # a hand just ended
            res = game.last_result
            if res["declarer"] is not None:
                s = seats[res["declarer"]][1]
                tally.bids[(s, res["contract"])] += 1
                tally.made[(s, res["contract"])] += res["winner_team"] == res["declarer"] % 2


def seating(a: Side, b: Side, a_first: bool) -> list[tuple[Agent, int]]:
    """Seat list: side a at seats 0/2 (a_first) or 1/3; its first agent on the lower seat."""
    first, second = (a, b) if a_first else (b, a)
    i_first, i_second = (0, 1) if a_first else (1, 0)
    return [(first.agents[0], i_first), (second.agents[0], i_second), (first.agents[1], i_first), (second.agents[1], i_second)]


@dataclass
class Part:
    """What a set of deals and matches of one pairing gave (a worker's share, or everything)."""

    deals: list[int]
    gp: np.ndarray  # (deals, 2) a's game points in play 1 (a at seats 0/2) and play 2 (a at 1/3)
    cp: np.ndarray  # (deals, 2) a's points minus b's
    matches: list[int]
    wins: np.ndarray  # (matches, 2) whether a won each play of each match
    hands_per_match: list[int]
    tally: Tally


def play_part(a: Side, b: Side, rules, deals, deal_ids, match_ids, seed: int, progress=None) -> Part:
    """Side ``a`` against side ``b`` on the deals numbered ``deal_ids`` (``deals`` holds them in that
    order) and the matches numbered ``match_ids``, each played twice with the teams swapped; every
    agent is re-seeded from ``seed`` and the deal or match number, so any split of the work over
    workers gives the same results."""
    hands, dealer, muestra = deals
    tally = Tally()
    gp, cp = np.zeros((len(deal_ids), 2)), np.zeros((len(deal_ids), 2))
    for row, i in enumerate(deal_ids):
        for k, a_first in enumerate((True, False)):
            _reseed(a, b, seed * 1_000_003 + i)
            g = Game(rules=rules, mode="hand")
            g.reset(hands=hands[row], dealer=int(dealer[row]), muestra=int(muestra[row]))
            play_episode(g, seating(a, b, a_first), tally)
            res = g.last_result
            a_team = 0 if a_first else 1
            gp[row, k] = (1 if res["winner_team"] == a_team else -1) * res["game_points"]
            cp[row, k] = res["points"][a_team] - res["points"][1 - a_team]
        if progress:
            progress.update(1)
    wins, hands_per_match = np.zeros((len(match_ids), 2)), []
    for row, m in enumerate(match_ids):
        for k, a_first in enumerate((True, False)):
            _reseed(a, b, seed * 7_000_003 + m)
            g = Game(rules=rules, mode="match", seed=seed * 10_007 + m)  # the same deals in both plays
            play_episode(g, seating(a, b, a_first), tally)
            rec = g.record()
            wins[row, k] = rec["match"]["winner_team"] == (0 if a_first else 1)
            hands_per_match.append(len(rec["hands"]))
        if progress:
            progress.update(1)
    return Part(list(deal_ids), gp, cp, list(match_ids), wins, hands_per_match, tally)


def _reseed(a: Side, b: Side, seed: int) -> None:
    for side in (a, b):
        for agent in side.agents:
            agent.reset(seed)


_SIDES: dict[tuple[str, int], Side] = {}  # sides a worker process has built, by (spec, seed)


def _play_part_task(a: tuple[str, int], b: tuple[str, int], rules: dict, deals, deal_ids, match_ids, seed: int) -> Part:
    """:func:`play_part` in a worker: the sides rebuilt from their specs and seeds (once per process)."""
    sides = [_SIDES.get(key) or _SIDES.setdefault(key, Side.from_spec(*key)) for key in (a, b)]
    return play_part(sides[0], sides[1], get_rules(rules), deals, deal_ids, match_ids, seed)


def _split(a: Side, b: Side, rules, deals, matches: int, seed: int, chunk: int) -> list[tuple]:
    """The tasks of one pairing: ``chunk`` deals each, then ``max(1, chunk // 4)`` matches each."""
    n = len(deals[1])
    keys = [(s.spec, s.seed) for s in (a, b)]
    if any(s.seed is None for s in (a, b)):
        raise ValueError("only sides made from a spec (Side.from_spec) can be played by workers")
    tasks = []
    for lo in range(0, n, chunk):
        ids = list(range(lo, min(n, lo + chunk)))
        tasks.append((*keys, rules.to_dict(), tuple(x[lo : lo + chunk] for x in deals), ids, [], seed))
    step = max(1, chunk // 4)
    no_deals = tuple(x[:0] for x in deals)
    for lo in range(0, matches, step):
        tasks.append((*keys, rules.to_dict(), no_deals, [], list(range(lo, min(matches, lo + step))), seed))
    return tasks


def _merge(parts: list[Part]) -> Part:
    deals = [p for p in parts if p.deals]
    matches = [p for p in parts if p.matches]
    tally = Tally()
    for p in parts:
        tally.bids.update(p.tally.bids)
        tally.made.update(p.tally.made)
        tally.illegal.update(p.tally.illegal)
        tally.decisions += p.tally.decisions
    return Part([i for p in deals for i in p.deals], np.concatenate([p.gp for p in deals]) if deals else np.zeros((0, 2)),
                np.concatenate([p.cp for p in deals]) if deals else np.zeros((0, 2)),
                [m for p in matches for m in p.matches],
                np.concatenate([p.wins for p in matches]) if matches else np.zeros((0, 2)),
                [h for p in matches for h in p.hands_per_match], tally)


def evaluate_pair(a: Side, b: Side, rules, deals, matches: int, seed: int, progress=None, runner=None,
                  chunk: int = 10) -> dict:
    """Duplicate evaluation of side ``a`` against side ``b``; figures from ``a``'s side. With a
    parallel :class:`~agents.parallel.Runner`, the deals and matches are split into tasks of
    ``chunk`` deals (or a quarter as many matches) and the workers' results merged: the same
    results as in one process."""
    n = len(deals[1])
    if runner is None or not runner.parallel:
        part = play_part(a, b, rules, deals, range(n), range(matches), seed, progress)
    else:
        tasks = _split(a, b, rules, deals, matches, seed, chunk)
        part = _merge(runner.map(_play_part_task, tasks, progress, [len(t[4]) + len(t[5]) for t in tasks]))
        if part.deals != list(range(n)) or part.matches != list(range(matches)):
            raise RuntimeError("the workers' results do not cover every deal and match once")  # never silently
    return {**summarize(a.spec, b.spec, part), "models": {"a": models_played(a, rules), "b": models_played(b, rules)}}


def models_played(side: Side, rules) -> list[str]:
    """The SHA-256 (its card's) of the model file each of the side's two agents plays under ``rules``,
    or ``""`` for an agent that plays no model file: a result then names a model by its bytes, and
    the same model read from two paths pairs and pools as one player (:mod:`agents.results`)."""
    digests = []
    for agent in side.agents:
        policies = getattr(agent, "level_policies", None) or getattr(agent, "policies", None)
        card = getattr(policy_for(policies, rules), "card", None) if policies else None
        digests.append(card.get("sha256", "") if isinstance(card, dict) else "")
    return digests


def summarize(a_spec: str, b_spec: str, part: Part) -> dict:
    """The figures of a pairing from everything it played."""
    n, matches, tally, gp, cp, wins = len(part.deals), len(part.matches), part.tally, part.gp, part.cp, part.wins
    paired = gp.mean(axis=1)
    bids = {}
    for s, name in ((0, "a"), (1, "b")):
        bids[name] = {
            c: {
                "declared_per_hand": tally.bids[(s, c)] / max(1, 2 * n + sum(part.hands_per_match)),
                "declared": tally.bids[(s, c)],
                "success_rate": (tally.made[(s, c)] / tally.bids[(s, c)]) if tally.bids[(s, c)] else None,
            }
            for c in CONTRACT_NAMES[1:]
        }
    return {
        "a": a_spec,
        "b": b_spec,
        "deals": n,
        "matches": matches,
        "game_points_per_hand": mean_ci(paired) if n else None,  # None: a matches-only run (--deals 0)
        "game_points_unpaired_se": float(np.std(gp.reshape(-1), ddof=1) / math.sqrt(2 * n)) if n > 1 else None,
        "card_points_per_hand": mean_ci(cp.mean(axis=1)) if n else None,
        "match_win_rate": mean_ci(wins.mean(axis=1)) if matches else None,
        "mean_hands_per_match": float(np.mean(part.hands_per_match)) if part.hands_per_match else None,
        "bids": bids,
        "illegal_actions": {"a": tally.illegal[0], "b": tally.illegal[1]},
        "decisions": tally.decisions,
        "match_wins": wins.tolist(),
        "deal_game_points": paired.tolist(),  # per deal, the mean of its two plays (for pairing runs)
    }


# ----------------------------------------------------------------------------- ratings
def bradley_terry(names: list[str], results: list[dict], bootstrap: int = 200, seed: int = 0) -> dict:
    """Bradley–Terry ratings (Elo scale, mean 0) from match wins, with bootstrap standard errors."""
    k = len(names)
    idx = {nm: i for i, nm in enumerate(names)}

    def fit(wins_matrix: np.ndarray) -> np.ndarray:
        w = wins_matrix + 0.5 * (wins_matrix + wins_matrix.T > 0)  # a half-win prior keeps ratings finite
        p = np.ones(k)
        games = w + w.T
        for _ in range(500):
            denom = np.array([sum(games[i, j] / (p[i] + p[j]) for j in range(k) if j != i) for i in range(k)])
            new = w.sum(axis=1) / np.maximum(denom, 1e-12)
            new /= np.exp(np.mean(np.log(np.maximum(new, 1e-12))))
            if np.allclose(new, p, rtol=1e-9):
                break
            p = new
        r = 400 * np.log10(np.maximum(p, 1e-12))
        return r - r.mean()

    def matrix(sample) -> np.ndarray:
        m = np.zeros((k, k))
        for res, rows in sample:
            i, j = idx[res["a"]], idx[res["b"]]
            won = float(np.sum(rows))
            m[i, j] += won
            m[j, i] += rows.size - won
        return m

    data = [(r, np.asarray(r["match_wins"])) for r in results]
    rating = fit(matrix(data))
    rng = np.random.default_rng(seed)
    boots = []
    for _ in range(bootstrap):
        sample = [(r, rows[rng.integers(0, len(rows), len(rows))]) for r, rows in data if len(rows)]
        boots.append(fit(matrix(sample)))
    se = np.std(boots, axis=0) if boots else np.full(k, np.nan)
    return {nm: {"rating": float(rating[i]), "se": float(se[i])} for i, nm in enumerate(names)}


# ----------------------------------------------------------------------------- output
def fmt_ci(d: dict, digits: int = 2) -> str:
    return f"{d['mean']:+.{digits}f} [{d['ci95'][0]:+.{digits}f}, {d['ci95'][1]:+.{digits}f}]"


def print_report(results: list[dict], ratings: dict | None) -> None:
    print("\n| A | B | game points/hand (95% CI) | SE paired / unpaired | card points/hand (95% CI) "
          "| A's match win rate (95% CI) | illegal |")
    print("|---|---|---|---|---|---|---|")
    for r in results:
        mw = r["match_win_rate"]
        mwt = f"{100 * mw['mean']:.1f}% [{100 * mw['ci95'][0]:.1f}, {100 * mw['ci95'][1]:.1f}]" if mw else "-"
        gp, cp, unpaired = r["game_points_per_hand"], r["card_points_per_hand"], r["game_points_unpaired_se"]
        se = f"{gp['se']:.3f} / {unpaired:.3f}" if gp and unpaired is not None else "-"
        print(
            f"| {r['a']} | {r['b']} | {fmt_ci(gp) if gp else '-'} | {se} | "
            f"{fmt_ci(cp, 1) if cp else '-'} | {mwt} | {r['illegal_actions']['a'] + r['illegal_actions']['b']} |"
        )
    print("\nBids per hand and success rate (A | B):")
    for r in results:
        parts = []
        for c in CONTRACT_NAMES[1:]:
            cell = []
            for side in ("a", "b"):
                b = r["bids"][side][c]
                sr = "-" if b["success_rate"] is None else f"{100 * b['success_rate']:.0f}%"
                cell.append(f"{b['declared_per_hand']:.3f} ({sr})")
            parts.append(f"{c} {cell[0]} | {cell[1]}")
        print(f"  {r['a']} vs {r['b']}: " + "; ".join(parts))
    if ratings:
        print("\n| agent | rating (Elo scale, mean 0) | ± SE |")
        print("|---|---:|---:|")
        for nm, v in sorted(ratings.items(), key=lambda kv: -kv[1]["rating"]):
            print(f"| {nm} | {v['rating']:+.0f} | {v['se']:.0f} |")


def gap_of(result: dict, top: dict, seed: int) -> dict | None:
    """The share of the gap from B to the cheater that A closes (A vs B ``result``, the cheater vs B
    ``top``, on the same deals), printed as a line; ``None`` where the cheater does not beat B."""
    gap = gap_share(result["deal_game_points"], top["deal_game_points"], seed=seed)
    ceiling = top["game_points_per_hand"]
    if gap is None:
        print(f"\nshare of the gap: none, the cheater does not beat {result['b']} ({fmt_ci(ceiling)})")
        return None
    low, high = gap["ci95"]
    print(f"\nshare of the gap from {result['b']} to the cheater (who sees every card; {fmt_ci(ceiling)} a hand): "
          f"{result['a']} closes {100 * gap['share']:.0f}% [{100 * low:.0f}%, {100 * high:.0f}%]")
    return {**gap, "baseline": result["b"], "cheater": CHEATER}


def draw_png(path: Path, names: list[str], results: list[dict], ratings: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    k = len(names)
    m = np.full((k, k), np.nan)
    for r in results:
        if r["game_points_per_hand"] is None:  # matches only: the cell stays blank
            continue
        i, j = names.index(r["a"]), names.index(r["b"])
        m[i, j] = r["game_points_per_hand"]["mean"]
        m[j, i] = -r["game_points_per_hand"]["mean"]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(6 + 1.2 * k, 3 + 0.5 * k))
    lim = np.nanmax(np.abs(m)) if np.isfinite(m).any() else 1
    im = ax1.imshow(m, cmap="RdBu", vmin=-lim, vmax=lim)
    ax1.set_xticks(range(k), names, rotation=30, ha="right")
    ax1.set_yticks(range(k), names)
    for i in range(k):
        for j in range(k):
            if np.isfinite(m[i, j]):
                dark = abs(m[i, j]) > 0.6 * lim
                ax1.text(j, i, f"{m[i, j]:+.2f}", ha="center", va="center", fontsize=9, color="white" if dark else "black")
    ax1.set_title("game points / hand, row vs column", fontsize=10)
    fig.colorbar(im, ax=ax1, shrink=0.8)
    order = sorted(names, key=lambda nm: ratings[nm]["rating"])
    ax2.barh(order, [ratings[nm]["rating"] for nm in order], xerr=[1.96 * ratings[nm]["se"] for nm in order], color="#4477aa")
    ax2.set_title("Bradley–Terry rating from match wins (±95%)", fontsize=10)
    ax2.axvline(0, color="k", lw=0.5)
    fig.tight_layout()
    with atomic_open(path, "wb") as f:
        fig.savefig(f, dpi=110, format=path.suffix[1:].lower())
    plt.close(fig)


# ----------------------------------------------------------------------------- main
SUBCOMMANDS = {"compare": compare_main, "pool": pool_main, "ladder": ladder_main}  #: ``evaluate.py compare|pool|ladder FILES``


def check_outputs(a) -> None:
    """``--json`` and ``--png`` writable, and ``--png`` of a format the plotting library writes:
    ``ValueError`` naming the flag, before any game is played."""
    if a.json:
        check_writable(a.json, "--json")
    if a.png:
        try:
            from matplotlib.backend_bases import FigureCanvasBase
        except ModuleNotFoundError:
            raise ValueError(f"--png needs {not_installed('matplotlib', 'eval')}") from None
        formats = FigureCanvasBase.get_supported_filetypes()
        if a.png.suffix[1:].lower() not in formats:
            raise ValueError(f"--png {a.png}: the picture's format comes from its suffix, one of "
                             f"{', '.join('.' + f for f in sorted(formats))}")
        check_writable(a.png, "--png")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] in SUBCOMMANDS:  # compare / pool / ladder: result files
        return SUBCOMMANDS[argv[0]](argv[1:])
    p = ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("agents", nargs="+", help="two or more sides: agent specs, or SPEC+SPEC for a mixed partnership")
    p.add_argument("--deals", type=int_in(0), default=2000,
                   help="duplicate deals per pairing (each played twice); 0 with --matches for matches only (default: 2000)")
    p.add_argument("--matches", type=int_in(0), default=None, help="duplicate matches per pairing (default: deals / 4)")
    p.add_argument("--rules", default="online", help="rules preset: online or traditional (default: online)")
    p.add_argument("--target", type=int_in(1, 1000), default=None, help="match target (default: the preset's, 11)")
    p.add_argument("--seed", type=SEED, default=0, help="seed of the deals and the agents (default: 0)")
    p.add_argument("--json", type=Path, help="write the full results as JSON here")
    p.add_argument("--png", type=Path, help="draw the head-to-head table and ratings here")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--workers", type=int_in(1), default=1,
                   help="parallel workers: 1 plays here; N > 1 starts a local Ray with N CPUs (the scale extra; default: 1)")
    p.add_argument("--ray-address", default=None, help="join a running Ray cluster instead (e.g. auto)")
    p.add_argument("--backend", choices=BACKENDS, default="auto",
                   help="auto (Ray when parallel; the default), inline, ray, or processes (a local process pool, no Ray)")
    p.add_argument("--gap", action="store_true",
                   help="with two sides A B: also play the cheater (who sees every card) against B on the same deals, "
                        "and say what share of the gap from B to the cheater A closes")
    a = p.parse_args(argv)
    if len(a.agents) < 2:
        p.error("give at least two sides to compare")
    if a.gap and (len(a.agents) != 2 or a.deals == 0 or CHEATER in a.agents):
        p.error("--gap takes two sides A B (neither the cheater) and deals (--deals at least 2)")
    if a.deals == 1 or a.deals < 0 or (a.matches is not None and a.matches < 0):
        p.error(f"--deals must be 0 or at least 2 (an interval needs two deals) and --matches at least 0, got "
                f"--deals {a.deals} --matches {a.matches}")
    if a.deals == 0 and not a.matches:
        p.error("--deals 0 plays matches only: give --matches N (at least 1)")
    try:
        check_outputs(a)
        rules = get_rules(a.rules, **({} if a.target is None else {"target": a.target}))
        sides = {spec: Side.from_spec(spec, a.seed + 17 * i) for i, spec in enumerate(dict.fromkeys(a.agents))}
        ceiling = Side.from_spec(CHEATER, a.seed + 17 * len(sides)) if a.gap else None
        runner = Runner(a.workers, a.ray_address, a.backend)
    except (ValueError, FileNotFoundError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    matches = a.deals // 4 if a.matches is None else a.matches
    deals = random_deals(a.deals, a.seed)
    pairs = list(itertools.combinations(sides, 2))
    total = len(pairs) * (a.deals + matches) + (a.deals if a.gap else 0)
    progress = None
    if not a.no_progress:
        try:
            from tqdm import tqdm
        except ModuleNotFoundError:
            print(f"error: progress bars need {not_installed('tqdm', 'eval')} (or run with --no-progress)", file=sys.stderr)
            return 2
        unit = "match" if a.deals == 0 else "deal" if not matches else "deal|match"  # each counts one step
        progress = tqdm(total=total, desc="evaluating", unit=unit, file=sys.stderr)
    t = time.perf_counter()
    try:
        with runner:
            results = [evaluate_pair(sides[x], sides[y], rules, deals, matches, a.seed, progress, runner) for x, y in pairs]
            top = evaluate_pair(ceiling, sides[a.agents[1]], rules, deals, 0, a.seed, progress, runner) if a.gap else None
    except ClusterError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except WorkerError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    finally:
        if progress:
            progress.close()
    names = list(sides)
    ratings = bradley_terry(names, results, seed=a.seed) if matches else None
    print_report(results, ratings)
    gap = gap_of(results[0], top, a.seed) if a.gap else None
    print(f"\n{a.deals} deals x 2 and {matches} matches x 2 per pairing, rules {rules.name}, "
          f"target {rules.target}, seed {a.seed}; {time.perf_counter() - t:.1f} s")
    if a.json:
        out = {"rules": rules.to_dict(), "seed": a.seed, "deals": a.deals, "matches": matches,
               "pairings": results, "ratings": ratings,
               **({"gap": gap, "ceiling_pairing": top} if a.gap else {})}  # the cheater's own deals, for later shares
        with atomic_open(a.json) as f:
            f.write(json.dumps(out, indent=1))
    if a.png:
        if ratings is None:
            print("no PNG without matches (--matches 0)", file=sys.stderr)
        else:
            draw_png(a.png, names, results, ratings)
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
