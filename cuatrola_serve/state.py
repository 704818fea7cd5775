"""The seat state: what an online game server holds for one seat, declared once.

:class:`SeatState` is both the service's request schema (``POST /v1/act``: its OpenAPI entry,
422 for a malformed state) and the bot's first check (:func:`read_seat_state`, which raises
:class:`BotStateError` naming the field). It checks each field's type and range; whether the state
can have happened (cards in one place, turns, the rules) is the bot's replay through the engine
(:func:`cuatrola_serve.bot.replay_state`).

>>> from cuatrola_serve.state import read_seat_state
>>> read_seat_state({"seat": 1, "dealer": 0, "muestra": 13, "hand": [0, 4, 9, 17, 19]}).bids
[]
>>> read_seat_state({"seat": 4, "dealer": 0, "muestra": 13, "hand": []})
Traceback (most recent call last):
  ...
cuatrola_serve.state.BotStateError: seat: Input should be less than or equal to 3
"""

from __future__ import annotations

from typing import Annotated, Literal

import numpy as np
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from cuatrola_env.rules import CONTRACT_NAMES, NUM_ACTIONS, NUM_CARDS, PRESETS

BID_NAMES = Literal[tuple(CONTRACT_NAMES)]
BID_IDS = {name: NUM_CARDS + i for i, name in enumerate(CONTRACT_NAMES)}


def strict_int(lo: int, hi: int, description: str):
    """A strict integer field in ``lo..hi``: a boolean, a float or a string is refused, not converted."""
    return Annotated[int, Field(strict=True, ge=lo, le=hi, description=description)]


Card = strict_int(0, NUM_CARDS - 1, "a card id")
def _seat_first(play: list[int]) -> list[int]:
    if play[0] > 3:
        raise ValueError(f"a play is [seat, card], and {play[0]} is not a seat 0..3")
    return play


Play = Annotated[list[Card], Field(min_length=2, max_length=2, description="[seat, card]"), AfterValidator(_seat_first)]
RuleValue = Annotated[str, Field(max_length=64)] | bool | strict_int(0, 10_000, "an option's value")


class SeatState(BaseModel):
    """One seat's view of a hand (see the table in :mod:`cuatrola_serve.bot`)."""

    model_config = ConfigDict(extra="forbid", strict=True)
    seat: strict_int(0, 3, "the seat the bot plays; it must be its turn")
    dealer: strict_int(0, 3, "the dealer's seat")
    muestra: strict_int(0, NUM_CARDS - 1, "card id of the muestra (trump suit)")
    hand: list[Card] = Field(max_length=5, description="the seat's unplayed cards (card ids)")
    bids: list[strict_int(NUM_CARDS, NUM_ACTIONS - 1, "a bid id") | BID_NAMES] = Field(
        default=[], max_length=4, description="bids so far from la mano: names or ids 20..23")
    tricks: list[Annotated[list[Play], Field(max_length=4)]] = Field(
        default=[], max_length=5, description="one list per trick of [seat, card] in play order; every trick "
                                              "but the last has the contract's trick size (4, or 3 after a declaration)")
    score: list[strict_int(0, 10_000, "points")] = Field(default=[0, 0], min_length=2, max_length=2,
                                                   description="match score [team 0, team 1]")
    rules: Literal[tuple(PRESETS)] | Annotated[dict[Annotated[str, Field(max_length=32)], RuleValue],
                                               Field(max_length=8)] = Field(
        default="online", description="rules preset, or a dict of rule options (docs/rules.md)")
    contract: BID_NAMES | None = Field(default=None, description="optional check of the contract")

    @property
    def bid_ids(self) -> list[int]:
        """The bids as action ids 20..23."""
        return [b if isinstance(b, int) else BID_IDS[b] for b in self.bids]


class BotStateError(ValueError):
    """A seat state the bot cannot play from; the message names the field."""


def read_seat_state(state) -> SeatState:
    """``state`` (a dict, as JSON gives it; NumPy integers are taken as integers) checked field by
    field; :class:`BotStateError` names the first field that is wrong."""
    try:
        return SeatState.model_validate(_plain(state))
    except ValidationError as e:
        raise BotStateError(_first_error(e)) from None


def _plain(value):
    """``value`` with NumPy integers as Python ones (what a program built from a game may hold)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.integer):
        return int(value)
    return value


#: what a field that takes one of several kinds of value must be (said instead of each kind's own error)
EITHER = {
    "bids": f"must be a bid name ({', '.join(CONTRACT_NAMES)}) or an id {NUM_CARDS}..{NUM_ACTIONS - 1}",
    "rules": f"must be a preset name ({', '.join(PRESETS)}) or a dict of at most 8 rule options",
    "contract": f"must be one of {', '.join(CONTRACT_NAMES)} (or null)",
}


def _first_error(e: ValidationError) -> str:
    """One line naming the field (``hand[4]``, ``tricks[0][1]``) and what is wrong with it."""
    err = e.errors(include_url=False, include_input=False)[0]
    field, *rest = err["loc"] or ("the state",)
    where = str(field) + "".join(f"[{p}]" for p in rest if isinstance(p, int))
    if err["type"] == "extra_forbidden":
        return f"unknown key {where!r}; the state's keys are {', '.join(SeatState.model_fields)}"
    if err["type"] == "model_type":
        return "the state must be a JSON object"
    if field in EITHER and any(isinstance(p, str) for p in rest):  # an error of one kind of a union
        return f"{where} {EITHER[field]}"
    return f"{where}: {err['msg']}"


__all__ = ["BID_IDS", "BotStateError", "SeatState", "read_seat_state", "strict_int"]
