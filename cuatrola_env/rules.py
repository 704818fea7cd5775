"""The numbers of Cuatrola (cards, points, contracts, action ids) and the options a game is played
with (:class:`Rules` and its presets).

What the rules *do* with them (legal moves, who wins a trick, scoring, the end of a hand) is
written once, in :mod:`cuatrola_env.core`. Everything here follows ``docs/rules.md``, the
project's rules contract.

Cards
-----
``card id = 5 * suit + rank``; suits 0 oros, 1 copas, 2 espadas, 3 bastos;
ranks in strength order, weakest first: 0 sota, 1 caballo, 2 rey, 3 tres, 4 as.
Bit ``i`` of a 20-bit hand mask is card ``i``.

Actions (one discrete space of 24)
----------------------------------
``0..19`` play that card; ``20`` pass, ``21`` solo, ``22`` cuatrola, ``23`` quintola.
"""

from __future__ import annotations

import dataclasses
from typing import Literal, Union

import numpy as np

from .cli import brief

# --------------------------------------------------------------------------- cards
NUM_SUITS = 4
NUM_RANKS = 5
NUM_CARDS = 20
NUM_SEATS = 4
HAND_SIZE = 5
NUM_TRICKS = 5

SUIT_NAMES = ("oros", "copas", "espadas", "bastos")
RANK_NAMES = ("sota", "caballo", "rey", "tres", "as")
SOTA, CABALLO, REY, TRES, AS = range(5)

#: card points by rank (sota 2, caballo 3, rey 4, tres 10, as 11): 120 in the deck
RANK_POINTS = (2, 3, 4, 10, 11)
CARD_POINTS = np.array([RANK_POINTS[c % 5] for c in range(NUM_CARDS)], dtype=np.int16)
CARD_SUIT = np.arange(NUM_CARDS, dtype=np.int8) // NUM_RANKS
CARD_RANK = np.arange(NUM_CARDS, dtype=np.int8) % NUM_RANKS
DECK_POINTS = int(CARD_POINTS.sum())  # 120
LAST_TRICK_BONUS = 10  # "diez de últimas"
CANTE_TRUMP = 40
CANTE_PLAIN = 20


def card_id(suit: int, rank: int) -> int:
    """Card id of ``rank`` (0 sota .. 4 as) of ``suit`` (0 oros .. 3 bastos)."""
    return NUM_RANKS * suit + rank


def card_name(card: int) -> str:
    """Spanish name of a card id, e.g. ``card_name(4) == "as de oros"``."""
    if not 0 <= int(card) < NUM_CARDS:
        raise ValueError(f"card id must be in 0..19, got {card!r}")
    return f"{RANK_NAMES[card % 5]} de {SUIT_NAMES[card // 5]}"


# --------------------------------------------------------------------------- actions
NUM_ACTIONS = 24
#: contract codes used in the state (action id - 20); -1 = not decided yet
PASS, SOLO, CUATROLA, QUINTOLA = 0, 1, 2, 3
CONTRACT_NAMES = ("pass", "solo", "cuatrola", "quintola")
#: game points of each contract (pass 1, solo 2, cuatrola 4, quintola 5)
CONTRACT_VALUE = np.array([1, 2, 4, 5], dtype=np.int16)
#: the longest hand: 4 bids + 20 card plays
MAX_DECISIONS_PER_HAND = 24


def action_name(action: int) -> str:
    """Human name of an action id (a card name or a bid)."""
    a = int(action)
    if 0 <= a < NUM_CARDS:
        return card_name(a)
    if NUM_CARDS <= a < NUM_ACTIONS:
        return CONTRACT_NAMES[a - NUM_CARDS]
    raise ValueError(f"action id must be in 0..23, got {action!r}")


# --------------------------------------------------------------------------- presets
TieRule = Literal["last_trick", "mano"]


@dataclasses.dataclass(frozen=True)
class Rules:
    """A rule set. The two named presets are :data:`ONLINE` and :data:`TRADITIONAL`.

    Every field is an option of docs/rules.md marked *(preset)*; the engine reads them as
    arguments, never as forks of the code.
    """

    name: str = "online"
    #: following suit after the trick was trumped, must you still beat the best led card?
    overtake_when_trumped: bool = True
    #: void in the led suit and no trump in the trick yet: must you trump if you can?
    must_trump: bool = False
    #: who wins a tie in pass/solo: "last_trick" (team that won the last trick) or "mano"
    tie_rule: TieRule = "last_trick"
    #: a seat may not bid a contract that would carry its team past the target
    exact_target: bool = False
    #: match target (11 standard, 5 "exprés", 21 traditional variant)
    target: int = 11

    def __post_init__(self) -> None:
        if self.tie_rule not in ("last_trick", "mano"):
            raise ValueError(f"Rules.tie_rule must be 'last_trick' or 'mano', got {self.tie_rule!r}")
        if not isinstance(self.name, str) or not 0 < len(self.name) <= 64:
            raise ValueError(f"Rules.name must be a name of 1 to 64 characters, got {brief(self.name, 80)}")
        target_is_int = isinstance(self.target, (int, np.integer)) and not isinstance(self.target, (bool, np.bool_))
        if not target_is_int or not 1 <= int(self.target) <= 1000:
            raise ValueError(f"Rules.target must be an integer in 1..1000, got {brief(self.target, 80)}")
        for f in ("overtake_when_trumped", "must_trump", "exact_target"):
            if not isinstance(getattr(self, f), (bool, np.bool_)):
                raise ValueError(f"Rules.{f} must be a bool, got {getattr(self, f)!r}")

    def replace(self, **changes) -> Rules:
        """A copy with some options changed, e.g. ``ONLINE.replace(target=5)``."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


ONLINE = Rules(name="online")
TRADITIONAL = Rules(
    name="traditional",
    overtake_when_trumped=False,
    must_trump=True,
    tie_rule="mano",
    exact_target=True,
    target=11,
)
PRESETS = {"online": ONLINE, "traditional": TRADITIONAL}

RulesLike = Union[str, Rules, dict]  # noqa: UP007 (a runtime alias; Python 3.10 needs Union here)


def get_rules(rules: RulesLike = "online", **overrides) -> Rules:
    """Resolve a preset name, a :class:`Rules` or a dict of fields into a :class:`Rules`.

    ``get_rules("traditional", target=21)`` gives the traditional preset to 21.
    """
    if isinstance(rules, Rules):
        base = rules
    elif isinstance(rules, str):
        if rules not in PRESETS:
            raise ValueError(
                f"unknown rules preset {rules!r}: expected one of {sorted(PRESETS)} or a Rules object"
            )
        base = PRESETS[rules]
    elif isinstance(rules, dict):
        d = dict(rules)
        name = d.pop("name", None)
        base = get_rules(name) if name in PRESETS else Rules(name=name or "custom")
        unknown = set(d) - {f.name for f in dataclasses.fields(Rules)}
        if unknown:
            raise ValueError(f"unknown rules option(s) {sorted(unknown)}")
        base = base.replace(**d)
    else:
        raise TypeError(f"rules must be a preset name, a Rules or a dict, got {type(rules).__name__}")
    return base.replace(**overrides) if overrides else base
