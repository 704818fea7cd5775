"""Perfect-Information Monte Carlo (PIMC): sample the hidden hands, solve each world exactly.

For a card decision the agent samples ``worlds`` deals consistent with what its seat has
seen (:mod:`agents.belief`), solves every legal card in every world with the double-dummy
solver (:mod:`agents.solver`) and plays the card with the best average outcome for its
team: under pass and solo, the chance of winning the hand on points (ties broken by the
expected points), under cuatrola and quintola the chance that the contract is made (or
broken, for the defenders). For a bid it solves, in every world, the whole hand under each
contract it may bid (supposing the seats after it pass) and bids the one with the best
expected game points. Options: ``worlds`` (default 32), ``seconds`` (a time budget per
decision: sampling stops early when it runs out; 0 = none), ``bid_worlds`` (default
``worlds``), ``bid_margin`` (subtracted from the solved chance of making a contract the agent
would declare, against double-dummy optimism; default 0).
"""

from __future__ import annotations

import time

import numpy as np

from cuatrola_env import core
from cuatrola_env.core import PY
from cuatrola_env.rules import CUATROLA, NUM_CARDS

from .base import Agent, SeatView
from .belief import sample_worlds
from .solver import ALL, INF, Position


class PIMCAgent(Agent):
    OPTIONS = {"worlds": int, "seconds": float, "bid_worlds": int, "bid_margin": float}

    def __init__(self, seed: int | None = None, worlds: int = 32, seconds: float = 0.0, bid_worlds: int | None = None,
                 bid_margin: float = 0.0):
        if worlds < 1:
            raise ValueError(f"worlds must be at least 1, got {worlds}")
        if bid_worlds is not None and bid_worlds < 1:
            raise ValueError(f"bid_worlds must be at least 1, got {bid_worlds}")
        if not 0 <= seconds < float("inf"):
            raise ValueError(f"seconds must be a time budget of 0 (none) or more seconds, got {seconds}")
        if not -1 <= bid_margin <= 1:
            raise ValueError(f"bid_margin must be a share of the solved chance in [-1, 1], got {bid_margin}")
        self.worlds = worlds
        self.seconds = seconds
        self.bid_worlds = worlds if bid_worlds is None else bid_worlds
        self.bid_margin = bid_margin
        super().__init__(seed)

    def act(self, view: SeatView) -> int:
        legal = view.legal_actions
        if len(legal) == 1:
            return legal[0]
        if view.phase == 0:
            return self.choose_bid(view, legal)
        return self.choose_card(view, legal)

    # ------------------------------------------------------------------ card play
    def choose_card(self, view: SeatView, legal: list[int], worlds: list[list[int]] | None = None) -> int:
        """The card with the best average outcome over ``worlds`` (default: ``worlds`` deals
        from the belief sampler)."""
        values = self.play_values(view, legal, worlds)
        return max(legal, key=lambda c: (values[c], -c))

    def play_values(self, view: SeatView, legal: list[int], worlds: list[list[int]] | None = None) -> dict[int, float]:
        """Each legal card's summed outcome for my team over ``worlds`` (default: ``worlds`` deals
        from the belief sampler; fewer if the time budget runs out), each world solved exactly."""
        deadline = time.perf_counter() + self.seconds if self.seconds > 0 else None
        totals = {c: 0.0 for c in legal}
        for hands in sample_worlds(view, self.worlds, self.rng) if worlds is None else worlds:
            pos = Position(hands, view.seat, list(view.trick), view.trick_num, view.sung, view.trump, view.sitter,
                           view.contract, view.declarer, view.rules)
            for c, v in pos.move_values().items():
                totals[c] += outcome(view, view.tricks_won[view.declarer], view.points, v)
            if deadline and time.perf_counter() > deadline:
                break
        return totals

    def label_values(self, view: SeatView, legal: list[int], margin_coef: float = 0.0) -> np.ndarray:
        """(len(legal),) each legal action's mean game points for the acting seat's team over deals
        drawn from what the seat saw (``bid_worlds`` of them for a bid, ``worlds`` for a card; a card's
        share of the card-point margin ``margin_coef``, as :meth:`card_points`): the values PIMC plays
        by, as a teacher gives them."""
        if view.phase == 0:
            return self.bid_points(view, legal, sample_worlds(view, self.bid_worlds, self.rng)).mean(1)
        return self.card_points(view, legal, sample_worlds(view, self.worlds, self.rng), margin_coef).mean(1)

    @staticmethod
    def card_points(view: SeatView, legal: list[int], worlds: list[list[int]], margin_coef: float = 0.0) -> np.ndarray:
        """(len(legal), len(worlds)) game points for my team (+ won, − lost) when I play each legal
        card and the hand is played out double-dummy in each world, plus, under pass and solo,
        ``margin_coef`` times my team's final card-point margin / 100 (a card's worth when the
        winner is the same either way). With no margin only the hand's winner matters, so each card
        is solved in the narrowest window that decides it (who ends ahead on points, or whether the
        contract is made). A points tie under the last-trick rule, whose winner the solver does not
        report, counts 0 game points (neither team)."""
        me, rules = view.seat & 1, view.rules
        out = np.zeros((len(legal), len(worlds)))
        by_tricks = view.contract >= CUATROLA
        lead = view.points[0] - view.points[1]
        exact = margin_coef != 0 and not by_tricks
        if by_tricks:  # the declarer needs `need` more tricks: is v >= need?
            need = core.tricks_needed(PY, view.contract) - view.tricks_won[view.declarer]
            window = (need - 1, need)
        else:  # team 0 ends ahead when v > -lead, level when v == -lead
            window = (-INF, INF) if exact else (-lead - 1, -lead + 1)
        for j, hands in enumerate(worlds):
            pos = Position(list(hands), view.seat, list(view.trick), view.trick_num, view.sung, view.trump, view.sitter,
                           view.contract, view.declarer, rules)
            values = pos.move_values(*window)
            for i, c in enumerate(legal):
                v = values[c]
                diff = 0 if by_tricks else int(np.sign(lead + v))  # team 0 minus team 1 at the end: its sign
                made = by_tricks and v >= window[1]
                tie_unknown = _tie_unknown(view, view.contract, diff)
                out[i, j] = 0.0 if tie_unknown else _game_points(view, view.contract, view.declarer, diff, made)
                if exact:
                    out[i, j] += margin_coef * (lead + v) * (1 if me == 0 else -1) / 100
        return out

    # ------------------------------------------------------------------ bidding
    def choose_bid(self, view: SeatView, legal: list[int], worlds: list[list[int]] | None = None) -> int:
        """The bid with the best expected game points, solving each contract in ``worlds``
        (default: ``bid_worlds`` deals from the belief sampler)."""
        if worlds is None:
            worlds = sample_worlds(view, self.bid_worlds, self.rng)
        points = self.bid_points(view, legal, worlds)
        wins = (points > 0).mean(1)
        # double-dummy play flatters a declarer who bids: shade its chance by bid_margin
        declare = np.array([view.declares(a) for a in legal])
        p = wins - self.bid_margin * declare
        mean = np.abs(points[:, 0]) * (2 * p - 1)
        return legal[int(np.argmax(mean))]

    @staticmethod
    def bid_points(view: SeatView, legal: list[int], worlds: list[list[int]]) -> np.ndarray:
        """(len(legal), len(worlds)) game points for my team (+ won, − lost) when I make each legal
        bid and the seats after me pass, each world's hand solved double-dummy under the contract
        (in the narrowest window that decides the winner)."""
        high = view.high_bid
        out = np.zeros((len(legal), len(worlds)))
        for i, a in enumerate(legal):
            contract, declarer = (a - NUM_CARDS, view.seat) if view.declares(a) else (high, view.declarer if high else -1)
            sitter, leader, _ = core.end_of_bidding(PY, declarer, view.dealer)  # who sits out and who leads: the engine's
            by_tricks = contract >= CUATROLA  # v: the declarer's tricks, else team 0 minus team 1 points
            need = core.tricks_needed(PY, contract)
            window = (need - 1, need) if by_tricks else (-1, 1)  # only the winner matters: the narrowest window
            for j, hands in enumerate(worlds):
                v = Position(list(hands), leader, [], 0, 0, view.trump, sitter, contract, declarer, view.rules).solve(
                    None, ALL, *window)
                # the solver does not say who takes the last trick: a points tie under the last-trick rule
                # counts for team 0 (under the mano rule the engine's kernel decides it exactly)
                out[i, j] = _game_points(view, contract, declarer, 0 if by_tricks else int(np.sign(v)),
                                         by_tricks and v >= need)
        return out


def outcome(view: SeatView, declarer_tricks: int, points, v: int) -> float:
    """What the hand of ``view`` is worth to the acting seat's team in PIMC's units when the rest of it,
    solved, is worth ``v`` (the solver's orientation: under cuatrola and quintola the declarer's further
    tricks, otherwise team 0's further points minus team 1's) after ``declarer_tricks`` tricks of the
    declarer and ``points`` (team 0, team 1) so far: 1 if the team wins the hand, else 0, its winner
    decided by the engine's kernel (:func:`_game_points`; a tie the solver cannot decide counts 0.5);
    under pass and solo plus the team's point margin / 1000."""
    diff = points[0] - points[1] + v  # team 0 minus team 1 at the end of the hand
    if _tie_unknown(view, view.contract, diff):
        return 0.5
    by_tricks = view.contract >= CUATROLA
    made = by_tricks and declarer_tricks + v >= core.tricks_needed(PY, view.contract)
    win = 1.0 if _game_points(view, view.contract, view.declarer, diff, made) > 0 else 0.0
    return win if by_tricks else win + (diff if view.seat & 1 == 0 else -diff) / 1000.0


def _tie_unknown(view: SeatView, contract: int, diff: int) -> bool:
    """A points tie (``diff`` team 0 minus team 1 at the end, pass or solo) under the last-trick rule:
    its winner is whoever takes the last trick, which the solver does not report."""
    return contract < CUATROLA and diff == 0 and view.rules.tie_rule == "last_trick"


def _game_points(view: SeatView, contract: int, declarer: int, diff: int, made: bool) -> int:
    """Game points for the acting seat's team (+ won, − lost) of a hand under ``contract`` that ends
    with team 0 minus team 1 of sign ``diff`` (pass, solo) or with the contract ``made`` or not
    (cuatrola, quintola), its winner decided by the engine's kernel (a points tie under the last-trick
    rule goes to team 0: no last trick is known)."""
    won_team, value = core.hand_winner(PY, view.rules, contract, declarer, diff, 0, 0, view.dealer, 5 if made else 0)
    return value if won_team == (view.seat & 1) else -value
