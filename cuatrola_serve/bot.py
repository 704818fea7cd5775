"""A torch-free bot: an exported ONNX policy that plays from a JSON game state.

>>> from cuatrola_serve.bot import Bot
>>> bot = Bot.load(level="expert")                                   # the shipped model  # doctest: +SKIP
>>> bot.act({"seat": 1, "dealer": 0, "muestra": 13, "hand": [0, 4, 9, 17, 19]})  # doctest: +SKIP
21

Needs NumPy, onnxruntime and pydantic (level ``master`` also numba). The state's fields are checked by
its one schema, :class:`cuatrola_serve.state.SeatState` (the service's too); the rules come from the engine: the state is replayed
through :class:`~cuatrola_env.game.Game` (every bid and card checked for legality and turn
order), with the hidden cards placed (:func:`agents.belief.any_world`, a matching of the cards
to the seats that may hold them) so that every play so far was legal; the seat's observation
does not depend on where the hidden cards are, so any such placement gives the same
observation the seat had in a real game.

The game state (what an online game server holds for one seat)
--------------------------------------------------------------

=========  ========================================================  ==================
key        meaning                                                    default
=========  ========================================================  ==================
seat       the seat the bot plays (0..3); it must be its turn         required
dealer     the dealer's seat (0..3); la mano is the seat after it     required
muestra    card id (0..19) of the turned-up card (trump suit)         required
hand       the seat's unplayed cards, card ids                        required
bids       bids so far, in order from la mano: ``"pass"``,            ``[]``
           ``"solo"``, ``"cuatrola"``, ``"quintola"`` or ids 20..23
tricks     cards played so far, one list per trick in play order,     ``[]``
           each play ``[seat, card]``; the last may be unfinished
score      match score before this hand, ``[team 0, team 1]``         ``[0, 0]``
rules      preset name, or a dict of :class:`~cuatrola_env.rules.Rules`  ``"online"``
           fields
contract   optional check: the contract the server believes holds    (not checked)
=========  ========================================================  ==================

Card ids are those of docs/rules.md (suit × 5 + rank; oros, copas, espadas, bastos; sota,
caballo, rey, tres, as). A state that is malformed or impossible raises
:class:`BotStateError` naming the field.

Levels
------
Each level is a way of choosing from the policy; their strength against the heuristic bot
is measured in docs/evaluation.md.

=========  ===========================================================
level      how it plays
=========  ===========================================================
master     searches every decision (:mod:`agents.search`): deals of the
           hidden cards weighted by how likely the policy finds the
           bids and plays seen, bids by policy rollouts, card plays by
           the double-dummy solver over those deals (needs numba; about
           30 ms per decision; the solver compiles on first use)
expert     the most likely legal action
strong     samples the policy at temperature 0.5
medium     samples the policy at temperature 1; 20% of its card plays at random
easy       samples the policy at temperature 1; 40% of its card plays at random
beginner   samples the policy at temperature 1; 70% of its card plays at random
=========  ===========================================================
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from agents.base import seat_view
from agents.belief import Inconsistent, any_world
from agents.models import ONNX_MODEL
from agents.player import PolicyPlayer
from agents.policy import LEVELS, ModelError, OnnxPolicy, load_policies
from cuatrola_env.bitboards import cards_of
from cuatrola_env.game import Game
from cuatrola_env.rules import CONTRACT_NAMES, NUM_CARDS, Rules, action_name, get_rules

from .state import BotStateError, SeatState, read_seat_state

STATE_KEYS = tuple(SeatState.model_fields)  #: the keys of a seat state, declared once (cuatrola_serve.state)

#: the start of the refusal of a contradiction that no specific check names (none is known)
UNNAMED = "tricks: the bids and plays contradict each other"


@dataclass(frozen=True)
class _ReplayInput:
    """What the replay reads from a seat state checked by :class:`~cuatrola_serve.state.SeatState`: its
    rules as a :class:`Rules`, its bids as ids, every card played with the field it came from."""

    rules: Rules
    seat: int
    dealer: int
    muestra: int
    hand: list[int]
    bids: list[int]
    tricks: list
    plays: list[tuple[str, int, int]]  #: (field, seat, card) of every card played, in order
    score: list[int]
    contract: str | None

    @property
    def mine_played(self) -> list[int]:
        return [c for _, s, c in self.plays if s == self.seat]


def replay_state(state: dict) -> tuple[Game, int]:
    """The game of ``state`` replayed through the engine, and the seat to play.

    The bids are replayed on a deal that gives the seat its own cards; when cards were played, the
    whole hand again on a placement of the hidden cards that makes every play legal (any one: what
    a seat may see does not depend on it).

    Raises :class:`BotStateError` naming the field of a malformed or impossible state, or
    saying whose turn it is when it is not ``state["seat"]``'s.
    """
    s = _read_state(state)
    _check_cards(s)
    try:
        game, history = _replay_bids(s)
        if s.plays:
            _replay_hand(s, game, _hidden_deal(s, game, history))
        _check_turn(s, game)
    except BotStateError:
        raise
    except (IndexError, KeyError, ValueError) as e:  # a contradiction no check above names: still a refusal
        raise BotStateError(f"{UNNAMED}: {type(e).__name__}") from None
    return game, s.seat


def _read_state(state) -> _ReplayInput:
    """The state's fields, each checked for type and range by :class:`~cuatrola_serve.state.SeatState`."""
    m = read_seat_state(state)
    try:
        rules = get_rules(m.rules)
    except (ValueError, TypeError) as e:
        raise BotStateError(f"rules: {e}") from None
    plays = [(f"tricks[{t}][{j}]", seat, card) for t, trick in enumerate(m.tricks) for j, (seat, card) in enumerate(trick)]
    return _ReplayInput(rules, m.seat, m.dealer, m.muestra, list(m.hand), m.bid_ids, m.tricks, plays, list(m.score),
                      m.contract)


def _check_cards(s: _ReplayInput) -> None:
    """Each card in one place only; the hand's size fits the seat's plays; the muestra where it must be."""
    seen: dict[int, str] = {}
    for i, c in enumerate(s.hand):
        if c in seen:
            raise BotStateError(f"hand[{i}]: card {c} ({action_name(c)}) appears twice")
        seen[c] = f"hand[{i}]"
    for f, _, c in s.plays:
        if c in seen:
            raise BotStateError(f"{f}: card {c} ({action_name(c)}) is also in {seen[c]}")
        seen[c] = f
    if len(s.hand) + len(s.mine_played) != 5:
        raise BotStateError(f"hand has {len(s.hand)} cards, but seat {s.seat} played {len(s.mine_played)}: "
                            "they must make 5")
    muestra_by = [(f, seat) for f, seat, c in s.plays if c == s.muestra]
    if muestra_by and muestra_by[0][1] != s.dealer:
        f, seat = muestra_by[0]
        raise BotStateError(f"{f}: seat {seat} played the muestra (card {s.muestra}), but it is the dealer's "
                            f"(seat {s.dealer}): only the dealer holds it")
    if not muestra_by and (s.muestra in s.hand) != (s.dealer == s.seat):
        where = "the dealer's" if s.dealer != s.seat else "this seat's (the dealer's)"
        raise BotStateError(f"muestra: card {s.muestra} is unplayed, so it is in {where} hand; hand says otherwise")


def _replay_bids(s: _ReplayInput) -> tuple[Game, list[tuple[int, int]]]:
    """The bids replayed on any deal that gives this seat its cards (bids do not depend on the
    hands), checking the trick sizes against the contract; the game and the hand's history."""
    trial = _deal_for_bids(sum(1 << c for c in s.hand + s.mine_played), s.seat, s.dealer, s.muestra)
    game = _new_game(s.rules, trial, s.dealer, s.muestra, s.score)
    for i, b in enumerate(s.bids):
        _step(game, b, f"bids[{i}]")
    if s.plays and game.seat_view(s.seat).phase == 0:
        raise BotStateError(f"tricks: cards were played but the bidding is not over (bids: {s.bids})")
    _check_trick_sizes(s.tricks, game.trick_size)
    return game, game.history + [(seat, c) for _, seat, c in s.plays]


def _hidden_deal(s: _ReplayInput, game: Game, history) -> list[int]:
    """A placement of the hidden cards (:func:`agents.belief.any_world`) that makes every play so far legal."""
    # the seat's view after the bids, with the plays as history: what the placement infers the hidden cards from
    view = dataclasses.replace(game.seat_view(s.seat), hand=sum(1 << c for c in s.hand), legal=0,
                               muestra_held=not any(c == s.muestra for _, _, c in s.plays), history=tuple(history),
                               played=sum(1 << c for _, _, c in s.plays))
    try:
        unplayed = any_world(view)
    except Inconsistent:
        raise BotStateError("tricks: no deal of the hidden cards makes these plays legal (a seat played a card "
                            "it could not have held, or played out of turn)") from None
    deal = [unplayed[q] | sum(1 << c for _, seat, c in s.plays if seat == q) for q in range(4)]
    if any(bin(h).count("1") != 5 for h in deal):
        raise BotStateError("tricks: the seats played the wrong numbers of cards for this point of the hand")
    return deal


def _replay_hand(s: _ReplayInput, game: Game, deal: list[int]) -> None:
    """The whole hand replayed on ``deal``: every bid and card checked by the engine."""
    _reset(game, deal, s.dealer, s.muestra, s.score)
    for i, b in enumerate(s.bids):
        _step(game, b, f"bids[{i}]")
    for f, seat, c in s.plays:
        if game.over:
            raise BotStateError(f"{f}: the hand is already over")
        if game.current_player != seat:
            raise BotStateError(f"{f}: seat {seat} played, but it was seat {game.current_player}'s turn")
        _step(game, c, f)


def _check_turn(s: _ReplayInput, game: Game) -> None:
    """The hand is not over, it is the state's seat's turn, and the contract is the one the bids give."""
    if game.over:
        raise BotStateError("the hand is over: there is nothing to play")
    if game.current_player != s.seat:
        raise BotStateError(f"seat: it is seat {game.current_player}'s turn, not seat {s.seat}'s")
    if s.contract is not None:
        contract = game.seat_view(s.seat).contract
        have = CONTRACT_NAMES[contract] if contract >= 0 else None
        if s.contract != have:
            raise BotStateError(f"contract: the bids give {have!r}, the state says {s.contract!r}")


def _check_trick_sizes(tricks: list, size: int) -> None:
    """Every trick but the last holds ``size`` plays (the contract's: 4, or 3 when a declarer's
    partner sits out), the last at most that."""
    for t, trick in enumerate(tricks):
        if len(trick) > size or (t < len(tricks) - 1 and len(trick) != size):
            raise BotStateError(f"tricks[{t}] has {len(trick)} plays; a trick of this contract has {size}")


def _deal_for_bids(mine: int, seat: int, dealer: int, muestra: int) -> list[int]:
    """A deal that gives ``seat`` its own cards and the dealer the muestra, the other cards in
    increasing order: enough to replay the bids, whose legality depends on no hand (the rules'
    ``legal_bids``). Where the hidden cards may be is for :func:`_hidden_deal` to say."""
    hands = [0, 0, 0, 0]
    hands[seat] = mine
    if not mine >> muestra & 1:
        hands[dealer] |= 1 << muestra
    rest = iter(c for c in range(NUM_CARDS) if not (mine | 1 << muestra) >> c & 1)
    for q in range(4):
        while hands[q].bit_count() < 5:
            hands[q] |= 1 << next(rest)
    return hands


def _new_game(rules: Rules, masks: list[int], dealer: int, muestra: int, score: list[int]) -> Game:
    try:
        return Game(rules, hands=[cards_of(m) for m in masks], dealer=dealer, muestra=muestra, score=score)
    except ValueError as e:
        raise _deal_error(e) from None


def _reset(game: Game, masks: list[int], dealer: int, muestra: int, score: list[int]) -> None:
    try:
        game.reset(hands=[cards_of(m) for m in masks], dealer=dealer, muestra=muestra, score=score)
    except ValueError as e:
        raise _deal_error(e) from None


def _deal_error(e: ValueError) -> BotStateError:
    return BotStateError(f"score: {e}" if "score" in str(e) else str(e))


def _step(game: Game, action: int, field: str) -> None:
    try:
        game.step(action)
    except ValueError as e:
        raise BotStateError(f"{field}: {e}") from None


def seat_state(game: Game, seat: int | None = None) -> dict:
    """The JSON game state of ``seat`` (default: the seat to act) of a game: what a game
    server holds for one seat, the inverse of :func:`replay_state`."""
    v = game.seat_view(seat)
    plays, size = [[s, a] for s, a in game.plays], game.trick_size
    return {
        "seat": v.seat, "dealer": v.dealer, "muestra": v.muestra, "score": list(v.score), "rules": game.rules.name,
        "hand": cards_of(v.hand), "bids": [a for _, a in game.history if a >= NUM_CARDS],
        "tricks": [plays[i : i + size] for i in range(0, len(plays), size)],
    }


# --------------------------------------------------------------------------- bot
class Bot:
    """A player at a level (:class:`agents.player.PolicyPlayer`) that plays from a JSON seat state:
    :meth:`decide` replays the state through the engine, then asks the player. With several models
    (one per rules preset), each game is played by the one trained under its rules; the default's
    card is the one the bot reports."""

    def __init__(self, player: PolicyPlayer):
        self.player = player

    @classmethod
    def load(cls, path: str | Path = ONNX_MODEL, level: str = "expert", seed: int | None = None, threads: int = 1,
             **search) -> Bot:
        """Load the model at ``path`` (default: the shipped ones, one per rules preset) and its card,
        checked before anything plays (:meth:`agents.policy.OnnxPolicy.load`; :class:`ModelError` names
        what does not fit). ``search``: ``worlds``, ``candidates`` and ``infer_play`` of level master's
        search (default: those of each model's rules preset, :func:`agents.policy.master_search`)."""
        return cls(PolicyPlayer(seed, level=level, policies=load_policies(path, threads),
                                expert_policies=load_policies(path, threads, expert=True), **search))

    @property
    def level(self) -> str:
        return self.player.level

    @property
    def rng(self) -> np.random.Generator:
        return self.player.rng

    @property
    def policy(self) -> OnnxPolicy:
        return self.player.policy

    @property
    def card(self) -> dict:
        return self.player.policy.card

    @property
    def rules(self):
        return self.player.policy.rules

    @property
    def policies(self) -> list[OnnxPolicy]:
        return self.player.policies

    def with_level(self, level: str, seed: int | None = None) -> Bot:
        """The same models at another level (shares the loaded sessions)."""
        return Bot(self.player.with_level(level, seed))

    def play(self, game: Game) -> tuple[int, np.ndarray]:
        """The action for the seat to act in ``game``, and the (24,) probabilities it was drawn from."""
        view = seat_view(game)
        p = self.player.probabilities(view)
        return self.player.choose(view, p), p

    def decide(self, state: dict) -> dict:
        """``{"action", "name", "probabilities", "legal"}`` for a JSON game state."""
        game, _ = replay_state(state)
        mask = game.legal_mask()
        a, p = self.play(game)
        return {"action": a, "name": action_name(a), "probabilities": [round(float(x), 6) for x in p],
                "legal": [int(x) for x in np.flatnonzero(mask)]}

    def act(self, state: dict) -> int:
        """A legal action for the seat of ``state`` (see the module docstring)."""
        return self.decide(state)["action"]


__all__ = ["Bot", "BotStateError", "LEVELS", "ModelError", "replay_state", "seat_state"]
