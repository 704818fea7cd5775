"""How much is there to win? A cheating player that sees every hand, against a fair opponent.

    python benchmarks/oracle_bound.py --bids oracle --play oracle --deals 2000 --matches 200 --seed 11
    python benchmarks/oracle_bound.py --bids oracle --play pimc --deals 500 --matches 50 --seed 11

The oracle is PIMC whose only "world" is the true deal: it bids what the double-dummy solver says
each contract is worth on the real cards and plays the solver's best card. It is not a player
(it reads the hidden hands, which no observation, agent or bot in this project ever may); it is
a ceiling. Against the heuristic it bounds what any fair player could reach, and mixing it with
fair PIMC (``--bids oracle --play pimc`` and the reverse) shows whether the edge lies in knowing
the cards at the bid or during the play. Evaluation is ``evaluate.py``'s duplicate design; the
result is written as its JSON (``--json``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import evaluate  # noqa: E402
from agents.pimc import PIMCAgent  # noqa: E402
from cuatrola_env.rules import get_rules  # noqa: E402

_TRUE_HANDS: dict[int, list[int]] = {}  # id(view) -> the game's unplayed hands (the cheat; this script only)


def _cheating_seat_view(game, seat=None, _fair=evaluate.seat_view):
    view = _fair(game, seat)
    _TRUE_HANDS.clear()
    _TRUE_HANDS[id(view)] = [int(h) for h in game.single.hands]
    return view


class Oracle(PIMCAgent):
    """PIMC over the one true deal for the phases named in ``cheat`` ("bids", "play"); fair PIMC otherwise."""

    def __init__(self, seed=None, worlds: int = 32, cheat: tuple[str, ...] = ("bids", "play")):
        super().__init__(seed, worlds=worlds)
        self.cheat = cheat

    def act(self, view):
        legal = view.legal_actions
        if len(legal) == 1:
            return legal[0]
        bidding = view.phase == 0
        truth = [list(_TRUE_HANDS[id(view)])] if ("bids" if bidding else "play") in self.cheat else None
        return self._bid(view, legal, worlds=truth) if bidding else self._play(view, legal, worlds=truth)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bids", choices=("oracle", "pimc"), default="oracle", help="bid on the true deal, or fair PIMC")
    p.add_argument("--play", choices=("oracle", "pimc"), default="oracle", help="play on the true deal, or fair PIMC")
    p.add_argument("--worlds", type=int, default=32, help="worlds of the fair PIMC half")
    p.add_argument("--opponent", default="heuristic", help="the fair side (an evaluate.py spec)")
    p.add_argument("--deals", type=int, default=2000)
    p.add_argument("--matches", type=int, default=200)
    p.add_argument("--seed", type=int, default=11)
    p.add_argument("--json", type=Path, help="write the pairing here")
    a = p.parse_args(argv)
    cheat = tuple(phase for phase, how in (("bids", a.bids), ("play", a.play)) if how == "oracle")
    evaluate.seat_view = _cheating_seat_view  # the fair side's views are the same; only Oracle reads the table
    name = f"oracle(bids={a.bids},play={a.play})"
    me = evaluate.Side(name, (Oracle(a.seed, a.worlds, cheat), Oracle(a.seed + 1, a.worlds, cheat)))
    them = evaluate.Side.from_spec(a.opponent, a.seed + 17)
    t = time.perf_counter()
    r = evaluate.evaluate_pair(me, them, get_rules("online"), evaluate.make_deals(a.deals, a.seed), a.matches, a.seed)
    gp, cp, mw = r["game_points_per_hand"], r["card_points_per_hand"], r["match_win_rate"]
    print(f"{name} vs {a.opponent}: {gp['mean']:+.3f} [{gp['ci95'][0]:+.3f}, {gp['ci95'][1]:+.3f}] game points/hand, "
          f"{cp['mean']:+.1f} card points, matches won {mw['mean']:.1%} [{mw['ci95'][0]:.1%}, {mw['ci95'][1]:.1%}] "
          f"of {2 * a.matches}; {time.perf_counter() - t:.0f} s")
    for c, b in r["bids"]["a"].items():
        print(f"  {c}: {b['declared_per_hand']:.3f} per hand, made {b['success_rate'] or 0:.0%}")
    if a.json:
        a.json.write_text(json.dumps({"bids": a.bids, "play": a.play, "seed": a.seed, "pairings": [r]}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
