"""How much is there to win? A cheating player that sees every hand, against a fair opponent.

    python -m experiments.oracle_bound --bids oracle --play oracle --deals 2000 --matches 200 --seed 11
    python -m experiments.oracle_bound --bids oracle --play pimc --deals 500 --matches 50 --seed 11
    python -m experiments.oracle_bound --bids partner --play partner --deals 0 --matches 100 --seed 11

The oracle is PIMC whose only "world" is the true deal: it bids what the double-dummy solver says
each contract is worth on the real cards and plays the solver's best card. It is not a player
(it reads the hidden hands, which no observation, agent or bot in this project ever may); it is
a ceiling. Against the heuristic it bounds what any fair player could reach, and mixing it with
fair PIMC (``--bids oracle --play pimc`` and the reverse) shows whether the edge lies in knowing
the cards at the bid or during the play. ``partner`` is a smaller cheat: PIMC whose worlds all hold
the partner's true hand, with only the two opponents' cards sampled (every split of them that fits
what the seat has seen, drawn uniformly): what a team would know if each seat could see its
partner's cards, more than any agreement between partners could tell. Evaluation is
``evaluate.py``'s duplicate design; the result is written in its JSON layout (``--json``).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from pathlib import Path

from agents import evaluation as evaluate  # noqa: E402
from agents.belief import constraints  # noqa: E402
from agents.pimc import PIMCAgent  # noqa: E402
from cuatrola_env.positions import random_deals  # noqa: E402
from cuatrola_env.rules import get_rules  # noqa: E402

_TRUE_HANDS: dict[int, list[int]] = {}  # id(view) -> the game's unplayed hands (the cheat; this script only)


def _cheating_seat_view(game, seat=None, _fair=evaluate.seat_view):
    view = _fair(game, seat)
    _TRUE_HANDS.clear()
    _TRUE_HANDS[id(view)] = list(game.hands)
    return view


def partner_worlds(view, truth: list[int], n: int, rng) -> list[list[int]]:
    """``n`` deals in which the partner holds its true hand and the two opponents' unplayed cards
    are split between them at random, uniformly over the splits consistent with what ``view`` saw."""
    me, mate = view.seat, view.seat ^ 2
    left, right = (me + 1) % 4, (me + 3) % 4
    need, forbidden, _ = constraints(view)
    fixed = [0, 0, 0, 0]  # the muestra stays with an opponent dealer until played
    if view.muestra_held and view.dealer in (left, right):
        fixed[view.dealer] = 1 << view.muestra
    pool = (truth[left] | truth[right]) & ~(fixed[left] | fixed[right])
    cards = [c for c in range(20) if pool >> c & 1]
    splits = []
    for pick in itertools.combinations(cards, need[left]):
        a = sum(1 << c for c in pick)
        b = pool & ~a
        if not (a & forbidden[left] or b & forbidden[right]):
            hands = [0, 0, 0, 0]
            hands[me], hands[mate], hands[left], hands[right] = view.hand, truth[mate], a | fixed[left], b | fixed[right]
            splits.append(hands)
    if not splits:
        raise RuntimeError(f"the true deal does not fit seat {me}'s constraints (a bug)")
    return [splits[i] for i in rng.integers(len(splits), size=n)]


class Oracle(PIMCAgent):
    """PIMC that decides each phase (``cheat``: "bids" and "play", each to a way) over the one true deal
    ("oracle"), over deals holding the partner's true hand ("partner"), or as fair PIMC ("pimc")."""

    def __init__(self, seed=None, worlds: int = 32, cheat: dict[str, str] | None = None):
        super().__init__(seed, worlds=worlds)
        self.cheat = {"bids": "oracle", "play": "oracle"} if cheat is None else cheat

    def act(self, view):
        legal = view.legal_actions
        if len(legal) == 1:
            return legal[0]
        bidding = view.phase == 0
        how = self.cheat.get("bids" if bidding else "play", "pimc")
        worlds = None  # fair PIMC: the belief sampler's deals
        if how == "oracle":
            worlds = [list(_TRUE_HANDS[id(view)])]
        elif how == "partner":
            worlds = partner_worlds(view, _TRUE_HANDS[id(view)], self.bid_worlds if bidding else self.worlds, self.rng)
        return self._bid(view, legal, worlds=worlds) if bidding else self._play(view, legal, worlds=worlds)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bids", choices=("oracle", "partner", "pimc"), default="oracle",
                   help="bid on the true deal, on deals holding the partner's true hand, or as fair PIMC")
    p.add_argument("--play", choices=("oracle", "partner", "pimc"), default="oracle",
                   help="play on the true deal, on deals holding the partner's true hand, or as fair PIMC")
    p.add_argument("--worlds", type=int, default=32, help="worlds of the fair PIMC half")
    p.add_argument("--opponent", default="heuristic", help="the fair side (an evaluate.py spec)")
    p.add_argument("--deals", type=int, default=2000)
    p.add_argument("--matches", type=int, default=200)
    p.add_argument("--seed", type=int, default=11)
    p.add_argument("--json", type=Path, help="write the pairing here")
    a = p.parse_args(argv)
    cheat = {"bids": a.bids, "play": a.play}
    evaluate.seat_view = _cheating_seat_view  # the fair side's views are the same; only Oracle reads the table
    name = f"oracle(bids={a.bids},play={a.play})"
    me = evaluate.Side(name, (Oracle(a.seed, a.worlds, cheat), Oracle(a.seed + 1, a.worlds, cheat)))
    them = evaluate.Side.from_spec(a.opponent, a.seed + 17)
    t = time.perf_counter()
    r = evaluate.evaluate_pair(me, them, get_rules("online"), random_deals(a.deals, a.seed), a.matches, a.seed)
    gp, cp, mw = r["game_points_per_hand"], r["card_points_per_hand"], r["match_win_rate"]
    hands, matches = "no deals", "no matches"
    if gp:
        hands = f"{gp['mean']:+.3f} [{gp['ci95'][0]:+.3f}, {gp['ci95'][1]:+.3f}] game points/hand, {cp['mean']:+.1f} card points"
    if mw:
        matches = f"matches won {mw['mean']:.1%} [{mw['ci95'][0]:.1%}, {mw['ci95'][1]:.1%}] of {2 * a.matches}"
    print(f"{name} vs {a.opponent}: {hands}, {matches}; {time.perf_counter() - t:.0f} s")
    for c, b in r["bids"]["a"].items():
        print(f"  {c}: {b['declared_per_hand']:.3f} per hand, made {b['success_rate'] or 0:.0%}")
    if a.json:
        out = {"bids": a.bids, "play": a.play, "seed": a.seed, "deals": a.deals, "matches": a.matches, "pairings": [r]}
        a.json.write_text(json.dumps(out, indent=1) + "\n")  # evaluate.py's layout: pool_results / compare_results read it
    return 0


if __name__ == "__main__":
    sys.exit(main())
