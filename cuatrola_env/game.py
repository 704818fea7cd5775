"""``Game``: one Cuatrola game with its record: the one-game layer every consumer uses.

The PettingZoo and Gymnasium environments, the replay tool, the bots and the service use it.
It adds no rule: legality, scoring and dealing come from :mod:`cuatrola_env.core` through
:class:`~cuatrola_env.single.SingleGame` (the same kernels the batched engine runs); it keeps
the episode's record (the deal and every action of each hand, and each hand's result) and
offers it through public accessors: :attr:`Game.history`, :attr:`Game.plays`, :attr:`Game.trick`
(the trick in play), :attr:`Game.hands_dealt`, :attr:`Game.last_result` and :meth:`Game.record`.

>>> from cuatrola_env.game import Game
>>> g = Game(rules="online", seed=0)
>>> g.current_player in (0, 1, 2, 3)
True
>>> while not g.over:
...     rewards, done = g.step(g.legal_actions()[0])
>>> g.record()["hands"][0]["result"]["contract"]     # the first legal action of a bid is pass
'pass'
"""

from __future__ import annotations

import numpy as np

from . import engine
from .bitboards import cards_of, from_cards
from .core import DONE
from .observation import observe_perfect_information
from .rules import CONTRACT_NAMES, NUM_ACTIONS, NUM_CARDS, RulesLike, action_name, get_rules
from .single import SingleGame
from .vector import Mode
from .view import SeatView, seat_view

RECORD_FORMAT = "cuatrola-record"
RECORD_VERSION = 1


class Game:
    """One game (hand mode: one hand; match mode: a match to the target) with its record.

    Args:
        rules: preset name, :class:`~cuatrola_env.rules.Rules` or dict.
        mode: ``"hand"`` or ``"match"``.
        seed: seed of the deals.
        hands, dealer, muestra, score: the first hand's deal (or only its dealer) and the match
            score, as :meth:`reset` takes them; without a deal the first hand is dealt at random.
    """

    def __init__(self, rules: RulesLike = "online", mode: Mode = "hand", seed: int | None = None,
                 hands=None, dealer=None, muestra=None, score=None):
        if mode not in ("hand", "match"):
            raise ValueError(f"mode must be 'hand' or 'match', got {mode!r}")
        self.rules = get_rules(rules)
        self.mode = mode
        self.single = SingleGame(self.rules, mode, np.random.default_rng(engine.check_seed(seed)))
        self._mask: int | None = None
        self._hands: list[dict] = []
        self.reset(hands=hands, dealer=dealer, muestra=muestra, score=score)

    # ------------------------------------------------------------------ set-up
    def reset(self, seed=None, hands=None, dealer=None, muestra=None, score=None) -> None:
        """A new episode: random, or the given deal (``hands`` 4 × 5 card ids in seat order,
        ``dealer`` seat, ``muestra`` card id) and match ``score`` [team 0, team 1].

        Bad input raises ``ValueError`` naming the problem and leaves the game as it was.
        """
        engine.check_seed(seed)
        sc = engine.validate_score(score, self.rules, 1)[0]
        if hands is not None or muestra is not None:
            if hands is None or dealer is None or muestra is None:
                raise ValueError("a given deal needs hands, dealer and muestra together")
            h = np.asarray(hands)
            if h.shape != (4, 5):
                raise ValueError(f"hands must be 4 lists of 5 card ids (seat order), got shape {h.shape}")
            h, d, m = engine.validate_deals(h[None], [dealer], [muestra], 1)
        elif dealer is not None and (not isinstance(dealer, (int, np.integer)) or not 0 <= dealer <= 3):
            raise ValueError(f"dealer must be a seat 0..3, got {dealer!r}")
        g = self.single
        if seed is not None:
            g.rng = np.random.default_rng(seed)
            g.deals = engine.DealPool(g.rng, block=64)
        g.score = [int(x) for x in sc]
        if hands is not None:
            g.deal(from_cards(h)[0], int(d[0]), int(m[0]))
        else:
            g.deal_random(dealer)
        self._hands = []
        self._mask = None
        self._start_hand_record()

    def _start_hand_record(self) -> None:
        g = self.single
        self._hands.append(
            {
                "dealer": g.dealer,
                "muestra": g.muestra,
                "hands": [cards_of(m) for m in g.hands],
                "score_before": list(g.score),
                "actions": [],
                "seats": [],
                "result": None,
            }
        )

    # ------------------------------------------------------------------ views
    @property
    def state(self) -> engine.State:
        """A copy of the game as a batched State of one (for rendering and inspection)."""
        return self.single.to_state()

    @property
    def current_player(self) -> int:
        return self.single.current

    @property
    def over(self) -> bool:
        """True once the episode (the hand, or the match in match mode) has ended."""
        return self.single.phase == DONE

    def legal_mask(self) -> np.ndarray:
        """(24,) bool mask of the legal actions (all False once the episode is over)."""
        return self.legal_mask_int8().view(bool)

    def legal_mask_int8(self) -> np.ndarray:
        """(24,) int8 0/1 mask of the legal actions (PettingZoo's ``action_mask`` format)."""
        raw = np.frombuffer(self._legal().to_bytes(4, "little"), np.uint8)
        return np.unpackbits(raw, bitorder="little")[:NUM_ACTIONS].view(np.int8)

    def _legal(self) -> int:
        """The 24-bit legal mask, computed once per decision."""
        if self._mask is None:
            self._mask = self.single.legal_mask()
        return self._mask

    @property
    def legal_bits(self) -> int:
        """The legal actions of the seat to act as a 24-bit mask (bit ``a`` set: action ``a`` is legal)."""
        return self._legal()

    @property
    def history(self) -> list[tuple[int, int]]:
        """The current hand's decisions so far, in order: ``(seat, action id)``."""
        rec = self._hands[-1]
        return list(zip(rec["seats"], rec["actions"], strict=True))

    @property
    def plays(self) -> list[tuple[int, int]]:
        """The current hand's card plays so far, in order: ``(seat, card)``."""
        return [(s, a) for s, a in self.history if a < NUM_CARDS]

    @property
    def trick(self) -> list[tuple[int, int]]:
        """The trick in play, ``(seat, card)`` in play order; empty between tricks and in the bidding."""
        n = self.single.trick_len
        return self.plays[-n:] if n else []

    @property
    def hands_dealt(self) -> int:
        """Hands dealt in this episode so far (1 in hand mode; a match counts on as it deals)."""
        return len(self._hands)

    @property
    def last_result(self) -> dict | None:
        """The result of the last finished hand (record format), or None."""
        done = [h["result"] for h in self._hands if h["result"] is not None]
        return done[-1] if done else None

    def legal_actions(self) -> list[int]:
        m = self._legal()
        return [a for a in range(NUM_ACTIONS) if m >> a & 1]

    def observe(self, seat: int | None = None) -> np.ndarray:
        """(OBS_DIM,) float32 observation of ``seat`` (default: the seat to act)."""
        return self.single.observe(self.single.current if seat is None else seat)

    def seat_view(self, seat: int | None = None) -> SeatView:
        """What ``seat`` (default: the seat to act) may see now, with the hand's history
        (:class:`~cuatrola_env.view.SeatView`)."""
        return seat_view(self, seat)

    @property
    def hands(self) -> list[int]:
        """Every seat's unplayed cards (20-bit masks, seat order): the whole deal as it stands, for a
        referee or a double-dummy analysis, never for a seat's decision (:meth:`seat_view` is that)."""
        return list(self.single.hands)

    @property
    def cards_left(self) -> list[int]:
        """How many unplayed cards each seat holds (public)."""
        return [bin(h).count("1") for h in self.single.hands]

    @property
    def trick_size(self) -> int:
        """Cards in each trick of this hand: 4, or 3 once a declarer's partner sits out."""
        return self.single.trick_size

    def perfect_information(self, seat: int | None = None) -> np.ndarray:
        """The observation plus every hidden hand: for critics and oracles, never for play."""
        seat = self.current_player if seat is None else seat
        return observe_perfect_information(self.state, self.rules, np.array([seat], dtype=np.int8))[0]

    # ------------------------------------------------------------------ play
    def step(self, action: int) -> tuple[np.ndarray, bool]:
        """Play the seat-to-act's action. Returns (rewards of the 4 seats, episode over).

        An illegal or malformed action raises ``ValueError`` and changes nothing.
        """
        if self.over:
            raise ValueError("the game is over: call reset() to start a new one")
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            raise ValueError(f"action must be an integer id in 0..{NUM_ACTIONS - 1}, got {action!r}")
        a = int(action)
        if not 0 <= a < NUM_ACTIONS:
            raise ValueError(f"action {a} is out of range 0..{NUM_ACTIONS - 1}")
        if not self._legal() >> a & 1:
            raise ValueError(
                f"illegal action {a} ({action_name(a)}) for seat {self.current_player}; "
                f"legal actions are {self.legal_actions()}"
            )
        seat = self.single.current
        self._mask = None
        rewards, over, result = self.single.step(a)
        record = self._hands[-1]
        record["actions"].append(a)
        record["seats"].append(seat)
        if result is not None:
            record["result"] = _result_dict(result)
            if not over:
                self._start_hand_record()
        return (np.zeros(4, np.float32) if rewards is None else np.asarray(rewards, np.float32)), over

    # ------------------------------------------------------------------ record
    def record(self) -> dict:
        """The episode as a plain JSON-able dict (see ``docs/records.md``)."""
        rec = {
            "format": RECORD_FORMAT,
            "version": RECORD_VERSION,
            "rules": self.rules.to_dict(),
            "mode": self.mode,
            "hands": [dict(h) for h in self._hands],
        }
        if self.mode == "match" and self.over:
            last = self._hands[-1]["result"]
            rec["match"] = {"final_score": last["score_after"], "winner_team": last["winner_team"]}
        return rec


def _result_dict(res: dict) -> dict:
    """One finished hand's results (from :meth:`SingleGame.step`) as plain record values."""
    played = sum(w >= 0 for w in res["winners"])
    return {
        "contract": CONTRACT_NAMES[res["contract"]],
        "declarer": None if res["declarer"] < 0 else res["declarer"],
        "winner_team": res["winner"],
        "game_points": res["value"],
        "points": res["points"],
        "cante_points": res["cante_points"],
        "tricks_won": res["tricks_won"],
        "trick_winners": res["winners"][:played],
        "cantes": [None if c < 0 else c for c in res["cantes"][:played]],
        "score_after": res["score"],
    }
