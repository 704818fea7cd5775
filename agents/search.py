"""Search at play time with the trained network: belief inference + policy rollouts.

The network alone plays from its seat's observation in one forward pass. This agent spends
a few milliseconds more per decision and plays better (measured in docs/search.md):

1. **Worlds.** It samples ``candidates`` deals of the hidden cards consistent with the rules
   (:func:`agents.belief.sample_world_array`: voids, compulsory overtakes, the muestra).
2. **Inference** (``infer`` > 0). The bids and plays the other seats made say more than the
   rules do: a seat that bid cuatrola holds trumps. Every candidate deal is replayed through
   the batched engine and weighted by how likely the network finds each of the other seats'
   past actions in it, ``exp(infer * sum log p)`` (each probability mixed with ``floor`` of a
   uniform choice, so one surprising move does not rule a deal out). ``worlds`` deals are
   drawn from the candidates by these weights.
3. **Evaluation.** For every legal action, the hand is played out from each drawn world
   by the network for all seats (batched: worlds x actions games stepped at once), and the
   action with the best mean game points for the agent's team is chosen; every action
   meets the same worlds (paired comparison). With ``play=pimc`` card plays are instead
   chosen by the double-dummy solver over the drawn worlds (as :mod:`agents.pimc`).

Options: ``path`` (ONNX model with its card; by default the shipped model of the game's rules preset), ``worlds``
(default 32), ``candidates`` (default 128), ``infer`` (default 1.0; 0 = uniform worlds),
``infer_play`` (the weight of the card plays' evidence, default ``infer``; the bids' is ``infer``),
``infer_partner`` (default 1: a factor on the weight of the partner's bids and plays, which master's
partner makes by search, not as the network; 0 ignores them),
``floor`` (default 0.1), ``play`` (``rollout`` default, ``pimc`` or ``policy``), ``bid``
(``rollout`` default; ``solver``: PIMC's bidding, each contract solved double-dummy, over the
inferred deals; or ``policy``), ``utility`` (``match`` default: a rollout's result is valued
by the chance of winning the match from the score it leads to, :func:`match_win_table`, so
the agent risks more when behind and less when ahead; ``points``: by game points),
``bid_margin`` (default 0: counts that share of the rollouts' wins of a contract the agent
would declare as losses, against rollouts' optimism about a declarer; below 0, that share of its
losses as wins, a bolder bidder), ``bid_worlds`` (worlds
drawn for a bid, default ``worlds``; with inference, from ``max(candidates, bid_worlds)``), ``hand_edge``
(default 0.5: with ``utility=match``, the chance the agent's team wins a hand, which the match
table assumes; above 0.5 a team that expects to be the stronger plays a longer, safer match:
it needs a surer contract before it raises the stakes), ``dealer_edge`` (default 0.5: the chance that the
team dealing a hand wins it, in the match table; the deal passes to the other team every hand, so
a lead is worth more to the team that deals next), ``opponent`` (default none: a rule-based agent's
name, e.g. ``heuristic``, taken as a second model of every other seat: each seat's actions this hand are
weighed as ``opponent_prior * P(as that agent) + (1 - opponent_prior) * P(as the network)``, a Bayesian
mixture over two kinds of player; it knows the agent's code, so against that very agent it is opponent
modelling, not general strength), ``opponent_prior`` (default 0.5), ``solver_weight`` (default 0: with
``bid=rollout``, the share of each bid's value taken from its double-dummy result in the same drawn worlds,
the seats after passing, as PIMC bids), ``prior`` (default 0: with ``play=pimc``, the weight of the
network's probability of each card, added to the card's mean solved outcome (a chance, in [0, 1]);
small weights break the solver's ties and near-ties the network's way), ``exploit`` (default 0; 1, with
``opponent``: the other team's seats in the rollouts are played by that agent instead of the
network, so bids are valued against the opponent's own play; exploitation, not general strength), ``postpone``
(default 0; 1, with ``play=pimc``: in each drawn deal the seats after the agent finish the trick in play as
the network plays them, each from its own view, and only then is the rest of the hand solved double-dummy:
PIMC's reasoning postponed to the trick's end, so it no longer supposes that those seats see every card,
:meth:`SearchAgent.postponed_values`), ``label`` (default ``points``: as a teacher, a bid's label is its
rollouts' mean game points; ``match``, with ``bid=rollout``: the chance of winning the match it leads
to, as the search bids by it, in game points at the score's rate, :meth:`SearchAgent.match_bid_values`).
Uses numpy
and onnxruntime only (plus numba with ``play=pimc``).
"""

from __future__ import annotations

import dataclasses
import typing

import numpy as np

from cuatrola_env.positions import Positions
from cuatrola_env.rules import NUM_ACTIONS, NUM_CARDS

from .base import Agent, SeatView, batch_views
from .belief import sample_world_array
from .heuristic import HeuristicAgent
from .models import ONNX_MODEL
from .policy import OnnxPolicy, load_policies, policy_for

#: A prior of how often a hand is worth 1, 2, 4 or 5 game points (pass, solo, cuatrola, quintola), rounded
#: from the contracts of PIMC(32) against the heuristic; used only to value a hand's result by the match.
HAND_VALUES = {1: 0.72, 2: 0.22, 4: 0.055, 5: 0.005}


def match_win_table(target: int, values: dict[int, float] = HAND_VALUES, edge: float = 0.5,
                    exact_target: bool = False) -> np.ndarray:
    """``V[a, b]``: chance that a team at ``a`` points wins the match against a team at ``b``
    (``a, b`` up to ``target + 5``), if each hand goes to the first team with chance ``edge``
    (0.5: two equal teams) and is worth ``v`` game points with probability ``values[v]``.

    With ``exact_target`` (the rule of that name) a contract is declared by either team with even
    chance, and one that would carry its declarer past the target becomes the highest one it may bid
    (a pass hand, worth 1, when it may bid none); the other team may still pass the target by
    winning it."""
    return match_win_tables(target, values, edge, exact_target)[..., 0]


def match_win_tables(target: int, values: dict[int, float] = HAND_VALUES, edge: float = 0.5,
                     exact_target: bool = False, dealer_edge: float = 0.5) -> np.ndarray:
    """``V[a, b, d]``: :func:`match_win_table` when the dealer's team wins a hand more often. ``d`` is 1
    when the first team deals the next hand (the deal passes to the other team every hand); that
    hand goes to the first team with chance ``edge + dealer_edge - 0.5`` if it deals, else ``edge -
    dealer_edge + 0.5``. With ``dealer_edge`` 0.5 both layers are :func:`match_win_table`."""
    if not 0.0 < edge < 1.0:
        raise ValueError(f"edge must be in (0, 1), got {edge}")
    shift = dealer_edge - 0.5
    if not (0.0 < edge - abs(shift) and edge + abs(shift) < 1.0):
        raise ValueError(f"edge and dealer_edge must keep a hand's chance in (0, 1), got {edge} and {dealer_edge}")
    size = target + max(values) + 1
    v = np.zeros((size, size, 2))
    v[target:, :target] = 1.0
    for total in range(2 * target - 2, -1, -1):  # every hand adds points: fill from the end of the match back
        for a in range(max(0, total - target + 1), min(total, target - 1) + 1):
            b = total - a
            hands = _hand_values(values, target, a, b, exact_target)
            for deals in (0, 1):
                e = edge + (shift if deals else -shift)
                v[a, b, deals] = sum(p * (e * v[a + g, b, 1 - deals] + (1 - e) * v[a, b + g, 1 - deals])
                                     for g, p in hands)
    return v


def _hand_values(values: dict[int, float], target: int, a: int, b: int, exact_target: bool):
    """(game points, probability) of the next hand at scores ``a`` and ``b``: ``values`` as they are,
    or under the exact-target rule each contract (worth 2 or more) capped by its declarer's room."""
    if not exact_target:
        return values.items()
    contracts = sorted(g for g in values if g > 1)
    out: dict[int, float] = {}
    for g, p in values.items():
        for room in (target - a, target - b):  # the declarer is either team, with even chance
            capped = max([c for c in contracts if c <= min(g, room)], default=1) if g > 1 else 1
            out[capped] = out.get(capped, 0.0) + p / 2
    return out.items()


def _policy_logp(logits: np.ndarray, mask: np.ndarray, floor: float) -> np.ndarray:
    """(N, 24) log-probabilities of the network's policy mixed with ``floor`` of uniform over the legal actions."""
    z = np.where(mask, logits.astype(np.float64), -np.inf)
    z -= z.max(1, keepdims=True)
    p = np.exp(z)
    p /= p.sum(1, keepdims=True)
    p = (1 - floor) * p + floor * mask / np.maximum(mask.sum(1, keepdims=True), 1)
    with np.errstate(divide="ignore"):
        return np.log(p)


#: how :meth:`SearchAgent.solved_values` may value a bid
BID_VALUATIONS = ("solver", "rollout")

#: rule-based agents the search can model the other seats with, by name (``opponent=heuristic``);
#: an instance of any agent marked ``deterministic`` serves too
OPPONENT_MODELS = {"heuristic": HeuristicAgent}


def _option(default, help: str, check=None, why: str = ""):
    """A search option: its default, a help line, and the test a value must pass (``why`` says it)."""
    return dataclasses.field(default=default, metadata={"help": help, "check": check, "why": why})


@dataclasses.dataclass(frozen=True)
class SearchOptions:
    """Every option of :class:`SearchAgent` (``search:NAME=VALUE,...``), with its default, what it
    means and the values it takes; a bad value raises ``ValueError`` naming the option."""

    path: str = _option(str(ONNX_MODEL), "ONNX model with its card (by default the shipped one of each game's preset)")
    worlds: int = _option(32, "deals drawn for a card play", lambda v: v >= 1, "at least 1")
    candidates: int = _option(128, "deals weighed by inference, of which worlds are drawn", lambda v: v >= 1, "at least 1")
    infer: float = _option(1.0, "weight of the bids' evidence (0: uniform worlds)")
    floor: float = _option(0.1, "share of uniform play mixed into the network's policy", lambda v: 0 <= v <= 1, "in [0, 1]")
    play: str = _option("rollout", "card play: rollout, pimc or policy", lambda v: v in ("rollout", "pimc", "policy"),
                        "rollout, pimc or policy")
    bid: str = _option("rollout", "bidding: rollout, solver or policy", lambda v: v in ("rollout", "solver", "policy"),
                       "rollout, solver or policy")
    utility: str = _option("match", "a rollout's value: match (chance of the match) or points",
                           lambda v: v in ("match", "points"), "match or points")
    bid_margin: float = _option(0.0, "share of a declaration's won rollouts counted as lost (below 0: lost as won)",
                                lambda v: -1 < v < 1, "in (-1, 1)")
    bid_worlds: int | None = _option(None, "deals drawn for a bid (default: worlds)", lambda v: v is None or v >= 1,
                                     "at least 1")
    hand_edge: float = _option(0.5, "the chance of winning a hand the match table assumes", lambda v: 0 < v < 1,
                               "in (0, 1)")
    dealer_edge: float = _option(0.5, "the chance that the dealing team wins a hand, in the match table (0.5: none)",
                                 lambda v: 0 < v < 1, "in (0, 1)")
    infer_play: float | None = _option(None, "weight of the card plays' evidence (default: infer)",
                                       lambda v: v is None or v >= 0, "at least 0")
    opponent: str = _option("", "a rule-based agent taken as a second model of the other seats (e.g. heuristic)")
    opponent_prior: float = _option(0.5, "prior weight of the opponent model", lambda v: 0 <= v <= 1, "in [0, 1]")
    solver_weight: float = _option(0.0, "share of a bid's value from its double-dummy result", lambda v: 0 <= v <= 1,
                                   "in [0, 1]")
    prior: float = _option(0.0, "with play=pimc: weight of the network's probability of each card", lambda v: v >= 0,
                           "at least 0")
    exploit: int = _option(0, "1: the other team plays as the opponent model in the rollouts", lambda v: v in (0, 1),
                           "0 or 1")
    infer_partner: float = _option(1.0, "factor on the weight of the partner's evidence", lambda v: v >= 0, "at least 0")
    postpone: int = _option(0, "with play=pimc, 1: the network plays the rest of the trick before the solver",
                            lambda v: v in (0, 1), "0 or 1")
    label: str = _option("points", "as a teacher, with bid=rollout: a bid's label in game points, or (match) its "
                         "chance of the match in game points at the score's rate", lambda v: v in ("points", "match"),
                         "points or match")

    def __post_init__(self):
        for f in dataclasses.fields(self):
            check, value = f.metadata["check"], getattr(self, f.name)
            if check is not None and not check(value):
                raise ValueError(f"{f.name} must be {f.metadata['why']}, got {value!r}")
        shift = abs(self.dealer_edge - 0.5)
        if not (0 < self.hand_edge - shift and self.hand_edge + shift < 1):
            raise ValueError(f"hand_edge and dealer_edge must keep a hand's chance in (0, 1), got {self.hand_edge} "
                             f"and {self.dealer_edge}")
        if self.exploit and not self.opponent:
            raise ValueError(f"exploit must be 0 or 1, and 1 needs an opponent model (opponent=...), got {self.exploit}")


class SearchAgent(Agent):
    """Network-guided search; see the module docstring and :class:`SearchOptions`."""

    #: option name -> type, for specs (``search:worlds=64``)
    OPTIONS = {name: next(a for a in typing.get_args(t) or (t,) if a is not type(None))
               for name, t in typing.get_type_hints(SearchOptions).items()}

    def __init__(self, seed: int | None = None, policy: OnnxPolicy | None = None, opponent: str | Agent = "",
                 **options):
        super().__init__(seed)
        name = opponent if isinstance(opponent, str) else getattr(opponent, "spec", type(opponent).__name__)
        opts = SearchOptions(**options, opponent=name)
        #: the models to search with: ``policy``, the model at ``path``, or for the default path every
        #: shipped preset's model; each decision uses the one trained under the game's rules (:meth:`act`)
        self.policies = [policy] if policy is not None else load_policies(opts.path)
        self.policy = self.policies[0]
        self.worlds, self.candidates, self.infer, self.floor = opts.worlds, opts.candidates, opts.infer, opts.floor
        self.bid_worlds = opts.worlds if opts.bid_worlds is None else opts.bid_worlds
        self.play, self.bid, self.utility = opts.play, opts.bid, opts.utility
        self.bid_margin, self.hand_edge, self.prior = opts.bid_margin, opts.hand_edge, opts.prior
        self.dealer_edge = opts.dealer_edge
        self.infer_play = opts.infer if opts.infer_play is None else opts.infer_play  # weight of the card plays' evidence
        self.infer_partner = opts.infer_partner  # a factor on the weight of the partner's evidence
        self.opponent_prior, self.solver_weight = opts.opponent_prior, opts.solver_weight
        self._tables: dict[tuple[int, bool], np.ndarray] = {}  # match tables by target and exact-target rule
        # a second model of every other seat, besides the network (Bayesian mixture per seat)
        model = opponent if isinstance(opponent, Agent) else OPPONENT_MODELS[name](seed=0) if name in OPPONENT_MODELS else None
        if name and not getattr(model, "deterministic", False):
            raise ValueError(f"opponent must be a deterministic agent (the same view, the same action) such as "
                             f"'heuristic', a model:PATH or bot:level=expert, got {name!r}")
        self.opponent = model
        self.exploit = bool(opts.exploit)  # the other team's seats in the rollouts play as the opponent model
        self.postpone = bool(opts.postpone)  # the rest of the trick played by the network, then solved
        self.label = opts.label  # a teacher's bid labels: game points, or the match's chance at the score's rate

    # ------------------------------------------------------------------ network
    def _logits(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return self.policy.logits(obs, mask)

    def _greedy(self, pos: Positions, bits: np.ndarray) -> np.ndarray:
        """The network's greedy action in every game of ``pos`` (``bits``: their legal actions)."""
        bools = pos.legal_mask(bits)
        logits = self._logits(pos.observe(), bools)
        return np.where(bools, logits, -np.inf).argmax(1)

    # ------------------------------------------------------------------ decisions
    def act(self, view: SeatView) -> int:
        self.policy = policy_for(self.policies, view.rules)
        legal = view.legal_actions
        if len(legal) == 1:
            return legal[0]
        mode = self.bid if view.phase == 0 else self.play
        if mode == "policy":
            logits = self._logits(view.observation[None], view.legal_mask[None])[0]
            return int(np.where(view.legal_mask, logits, -np.inf).argmax())
        state = self._worlds(view)
        if mode in ("pimc", "solver"):  # PIMC's card play or bidding, over the inferred deals
            from .pimc import PIMCAgent  # the compiled solver (numba, the eval extra): only when it is asked for

            pimc, worlds = PIMCAgent(worlds=1), state.hand_lists()
            if mode == "solver":
                return pimc.choose_bid(view, legal, worlds)
            if self.postpone:
                values = dict(zip(legal, self.postponed_values(view, legal, state).sum(1), strict=True))
            elif self.prior == 0:
                return pimc.choose_card(view, legal, worlds)
            else:
                values = pimc.play_values(view, legal, worlds)  # summed solved outcome
            logits = self._logits(view.observation[None], view.legal_mask[None])[0]
            policy = np.exp(_policy_logp(logits[None], view.legal_mask[None], 0.0)[0])
            return max(legal, key=lambda c: (values[c] / len(worlds) + self.prior * policy[c], -c))
        return self._rollouts(view, legal, state)

    def solved_values(self, view: SeatView, legal: list[int], margin_coef: float = 0.0, bids: str = "solver") -> np.ndarray:
        """(len(legal),) each legal action's mean game points for the acting seat's team over the
        drawn worlds (inferred as for play): a card with each world solved double-dummy
        (:meth:`PIMCAgent.card_points <agents.pimc.PIMCAgent.card_points>`; ``margin_coef``: its share
        of the card-point margin, as there); a bid with ``bids="solver"`` as PIMC values it (the whole
        hand solved under the contract it leads to, the seats after passing), with ``bids="rollout"``
        by the network playing the hand out in every seat (:meth:`action_values`): what the
        contract is worth with the network's own card play. The expert's targets."""
        from .pimc import PIMCAgent  # the compiled solver (numba, the eval extra): only when it is asked for

        if bids not in BID_VALUATIONS:
            raise ValueError(f"bids must be one of {', '.join(BID_VALUATIONS)}, got {bids!r}")
        state = self._worlds(view)
        if view.phase == 0:
            if bids == "rollout":
                return self.action_values(view, legal, state).mean(1)
            return PIMCAgent.bid_points(view, legal, state.hand_lists()).mean(1)
        return PIMCAgent.card_points(view, legal, state.hand_lists(), margin_coef).mean(1)

    def label_values(self, view: SeatView, legal: list[int], margin_coef: float = 0.0) -> np.ndarray:
        """(len(legal),) the values this search gives as a teacher, :meth:`solved_values` with each bid
        valued as the search itself values bids: by the network's rollouts when it bids by rollouts
        (``bid=rollout``, level master), as PIMC does otherwise."""
        if view.phase == 0 and self.bid == "rollout" and self.label == "match":
            return self.match_bid_values(view, legal)
        return self.solved_values(view, legal, margin_coef, "rollout" if self.bid == "rollout" else "solver")

    def match_bid_values(self, view: SeatView, legal: list[int]) -> np.ndarray:
        """(len(legal),) each bid's chance of winning the match, the mean over the drawn worlds of the
        network's rollouts valued as the search bids by them (:meth:`_values`), in game points at the
        score's rate: ``(chance - the chance now) / (the chance one game point is worth now)``. At
        0-0 a small stake's label is about its game points; a win that would win the match whatever
        its size is worth no more than the smallest win."""
        chance = self._values(view, legal, self.action_values(view, legal, self._worlds(view))).mean(1)
        now, one_up, one_down = self._utility(view, np.array([0, 1, -1]))
        return (chance - now) / max((one_up - one_down) / 2, 1e-3)

    def _worlds(self, view: SeatView) -> Positions:
        """The drawn worlds, replayed to the present: a batched state of ``worlds`` games."""
        rules = view.rules
        draw = self.bid_worlds if view.phase == 0 else self.worlds
        inferring = self.infer > 0 or self.infer_play > 0
        n = max(self.candidates, draw) if inferring else draw
        played_by = [0, 0, 0, 0]
        for seat, a in view.history:
            if a < 20:
                played_by[seat] |= 1 << a
        worlds = sample_world_array(view, n, self.rng).astype(np.uint32) | np.array(played_by, dtype=np.uint32)
        s = Positions.deal(worlds, view.dealer, view.muestra, rules, view.score)
        if not inferring:
            for _, a in view.history:
                s.step(np.full(n, a))
            return s
        obs, masks, acts, scale, seats, other = [], [], [], [], [], []
        for seat, a in view.history:
            weight = (self.infer if a >= NUM_CARDS else self.infer_play) * (self.infer_partner if seat == view.seat ^ 2 else 1.0)
            if seat != view.seat and weight > 0:  # my own actions are equally likely in every world
                bits = s.legal_bits
                if bits[0] & (bits[0] - 1):  # more than one legal action (the same in every world)
                    obs.append(s.observe())
                    masks.append(s.legal_mask(bits))
                    acts.append(a)
                    scale.append(weight)
                    seats.append(seat)
                    if self.opponent is not None:
                        other.append(self._opponent_logp(s, bits, masks[-1][0].sum(), a))
            s.step(np.full(n, a))
        loglik = np.zeros(n)
        if obs:
            o, m = np.concatenate(obs), np.concatenate(masks)
            logp = _policy_logp(self._logits(o, m), m, self.floor).reshape(len(acts), n, NUM_ACTIONS)
            weights = np.array(scale)[:, None]
            evidence = weights * logp[np.arange(len(acts)), :, np.array(acts)]  # (decisions, n)
            if self.opponent is None:
                loglik = evidence.sum(0)
            else:  # per seat: P(its actions) = prior * P(as the opponent model) + (1 - prior) * P(as the network)
                alt = weights * np.array(other)
                seat_of = np.array(seats)
                with np.errstate(divide="ignore"):
                    lp, lq = np.log(self.opponent_prior), np.log1p(-self.opponent_prior)
                for seat in set(seats):
                    rows = seat_of == seat
                    loglik += np.logaddexp(lq + evidence[rows].sum(0), lp + alt[rows].sum(0))
        w = np.exp(loglik - loglik.max())
        pick = self.rng.choice(n, size=draw, p=w / w.sum())
        return s.take(pick)

    def postponed_values(self, view: SeatView, legal: list[int], state: Positions) -> np.ndarray:
        """(len(legal), worlds) PIMC's outcome for my team (:func:`agents.pimc.outcome`) of each legal card
        in each world of ``state`` when the seats after mine finish the trick as the network plays them
        (greedy, each from its own view: they do not see the other hands) and the rest of the hand is
        solved double-dummy from the next lead. PIMC with its reasoning postponed to the trick's end:
        it no longer supposes that the seats still to play in this trick see every card."""
        from .pimc import outcome  # the compiled solver (numba, the eval extra): only when it is asked for
        from .solver import Position

        k = len(state)
        s = state.take(np.tile(np.arange(k), len(legal)))
        s.step(np.repeat(np.array(legal), k))
        for _ in range(int(s.state.trick_size[0]) - len(view.trick) - 1):  # the network completes the trick in play
            s.step(self._greedy(s, s.legal_bits))  # (a hand ends only with a trick: none is over before)
        st, out = s.state, np.empty(len(s))
        hands = s.hand_lists()
        for i in range(len(s)):
            v = 0 if s.done[i] else Position(hands[i], int(st.current[i]), [], int(st.trick_num[i]), int(st.sung[i]),
                                              view.trump, view.sitter, view.contract, view.declarer, view.rules).solve()
            out[i] = outcome(view, int(st.tricks_won[i, view.declarer]), st.points[i], v)
        return out.reshape(len(legal), k)

    def _opponent_views(self, pos: Positions, games: np.ndarray, bits: np.ndarray) -> list[SeatView]:
        """The views of the seats to act in ``games`` of ``pos``, as the opponent model reads them: with
        their observations where it is not a rule-based agent (a network reads them; the heuristic does not)."""
        reads = not isinstance(self.opponent, tuple(OPPONENT_MODELS.values()))
        return batch_views(pos, games, legal_bits=bits, obs=pos.observe()[games] if reads else None)

    def _opponent_logp(self, s: Positions, bits: np.ndarray, legal: int, action: int) -> np.ndarray:
        """(n,) log-probability of ``action`` in each world if the seat to act played like ``self.opponent``
        (its choice, mixed with ``floor`` of a uniform choice among the ``legal`` actions, the same in every world)."""
        same = np.array(self.opponent.act_batch(self._opponent_views(s, np.arange(len(s)), bits))) == action
        with np.errstate(divide="ignore"):
            return np.log((1 - self.floor) * same + self.floor / legal)

    def _rollouts(self, view: SeatView, legal: list[int], state: Positions) -> int:
        values = self._values(view, legal, self.action_values(view, legal, state))
        if self.solver_weight > 0 and view.phase == 0:  # blend in each bid's double-dummy result in the same worlds
            from .pimc import PIMCAgent  # the compiled solver (numba, the eval extra): only when it is asked for

            solved = self._values(view, legal, PIMCAgent.bid_points(view, legal, state.hand_lists()))
            values = (1 - self.solver_weight) * values + self.solver_weight * solved
        return legal[int(np.argmax(values.mean(1)))]

    def _values(self, view: SeatView, legal: list[int], points: np.ndarray) -> np.ndarray:
        """Each result (game points for my team, per action and world) valued by :meth:`_utility`, a bid
        I would declare shaded by ``bid_margin``."""
        win, lose = self._utility(view, np.abs(points)), self._utility(view, -np.abs(points))
        values = np.where(points > 0, win, lose)
        if self.bid_margin != 0 and view.phase == 0:  # shade the wins (or, below 0, lift the losses) of my declaring
            declare = np.array([view.declares(a) for a in legal])[:, None]
            m = abs(self.bid_margin)
            moved = declare & ((points > 0) if self.bid_margin > 0 else (points < 0))
            values = np.where(moved, (1 - m) * values + m * np.where(points > 0, lose, win), values)
        return values

    def _utility(self, view: SeatView, points: np.ndarray) -> np.ndarray:
        """What a hand won (points > 0) or lost by ``points`` game points is worth to the acting seat's team."""
        if self.utility == "points":
            return points.astype(float)
        target, exact = view.rules.target, view.rules.exact_target  # by the chance of winning the match from the score
        tables = self._tables.get((target, exact))
        if tables is None:
            tables = self._tables[target, exact] = match_win_tables(target, edge=self.hand_edge, exact_target=exact,
                                                                    dealer_edge=self.dealer_edge)
        table = tables[..., int((view.dealer + 1) % 2 == view.seat % 2)]  # my team deals the next hand, or not
        mine, theirs = view.score[view.seat & 1], view.score[1 - (view.seat & 1)]
        g = np.abs(points).astype(int)
        return np.where(points > 0, table[np.minimum(mine + g, target), theirs], table[mine, np.minimum(theirs + g, target)])

    def action_values(self, view: SeatView, legal: list[int], state: Positions) -> np.ndarray:
        """(len(legal), worlds) game points for the acting seat's team when it plays each legal
        action in each world of ``state`` and the network plays the rest of the hand (greedy, all seats)."""
        k, team = len(state), view.seat & 1
        s = state.take(np.tile(np.arange(k), len(legal)))
        s.step(np.repeat(np.array(legal), k))
        winner, points = s.play_out(self._rollout_policy(team))
        return np.where(winner == team, points, -points).reshape(len(legal), k)

    def _rollout_policy(self, team: int):
        """The network's greedy play in every seat (the other team's, with ``exploit``, the opponent model's)."""
        def policy(pos: Positions, live: np.ndarray, bits: np.ndarray) -> np.ndarray:
            a = self._greedy(pos, bits)[live]
            if self.exploit:
                theirs = (pos.current[live] & 1) != team
                if theirs.any():
                    a[theirs] = self.opponent.act_batch(self._opponent_views(pos, live[theirs], bits))
            return a

        return policy


__all__ = ["BID_VALUATIONS", "SearchAgent"]
