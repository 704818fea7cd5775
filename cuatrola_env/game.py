"""``Game``: one Cuatrola game on the batched engine (a batch of one), with its record.

The PettingZoo and Gymnasium environments, the replay tool and bots use it. It adds no
rule: legality, scoring and dealing all come from :mod:`cuatrola_env.engine` through
:class:`~cuatrola_env.vector.VectorCuatrola`; it keeps the episode's record (the deal and
every action of each hand, and each hand's result) and turns arrays into plain values.

>>> from cuatrola_env.game import Game
>>> g = Game(rules="online", seed=0)
>>> g.current_player in (0, 1, 2, 3)
True
>>> while not g.over:
...     rewards, done = g.step(g.legal_actions()[0])
>>> g.record()["hands"][0]["result"]["contract"]
'quintola'
"""

from __future__ import annotations

import numpy as np

from . import engine
from .bitboards import cards_of
from .rules import CONTRACT_NAMES, NUM_ACTIONS, RulesLike, action_name
from .vector import Mode, VectorCuatrola

RECORD_FORMAT = "cuatrola-record"
RECORD_VERSION = 1


class Game:
    """One game (hand mode: one hand; match mode: a match to the target) with its record.

    Args:
        rules: preset name, :class:`~cuatrola_env.rules.Rules` or dict.
        mode: ``"hand"`` or ``"match"``.
        seed: seed of the deals.
    """

    def __init__(self, rules: RulesLike = "online", mode: Mode = "hand", seed: int | None = None):
        self.env = VectorCuatrola(num_envs=1, rules=rules, mode=mode, seed=seed, autoreset=False)
        self.rules = self.env.rules
        self.mode = mode
        self._hands: list[dict] = []
        self._start_hand_record()

    # ------------------------------------------------------------------ set-up
    def reset(self, seed=None, hands=None, dealer=None, muestra=None, score=None) -> None:
        """A new episode: random, or the given deal (``hands`` 4 × 5 card ids in seat order,
        ``dealer`` seat, ``muestra`` card id) and match ``score`` [team 0, team 1]."""
        kw = {}
        if hands is not None or muestra is not None:
            if hands is None or dealer is None or muestra is None:
                raise ValueError("a given deal needs hands, dealer and muestra together")
            h = np.asarray(hands)
            if h.shape != (4, 5):
                raise ValueError(f"hands must be 4 lists of 5 card ids (seat order), got shape {h.shape}")
            kw = {"hands": h[None], "dealer": [dealer], "muestra": [muestra]}
        elif dealer is not None:
            kw = {"dealer": [dealer]}
        if score is not None:
            sc = np.asarray(score)
            if sc.shape != (2,):
                raise ValueError(f"score must be [team 0, team 1], got {score!r}")
            kw["score"] = sc
        self.env.reset(seed=seed, **kw)
        self._hands = []
        self._start_hand_record()

    def _start_hand_record(self) -> None:
        s = self.env.state
        self._hands.append(
            {
                "dealer": int(s.dealer[0]),
                "muestra": int(s.muestra[0]),
                "hands": [cards_of(m) for m in s.hands[0]],
                "score_before": [int(x) for x in s.score[0]],
                "actions": [],
                "seats": [],
                "result": None,
            }
        )

    # ------------------------------------------------------------------ views
    @property
    def state(self) -> engine.State:
        return self.env.state

    @property
    def current_player(self) -> int:
        return int(self.env.current_player[0])

    @property
    def over(self) -> bool:
        """True once the episode (the hand, or the match in match mode) has ended."""
        return bool(self.env.over[0])

    def legal_mask(self) -> np.ndarray:
        """(24,) bool mask of the legal actions (all False once the episode is over)."""
        return self.env.action_mask[0]

    def legal_actions(self) -> list[int]:
        return [int(a) for a in np.flatnonzero(self.legal_mask())]

    def observe(self, seat: int | None = None) -> np.ndarray:
        """(OBS_DIM,) float32 observation of ``seat`` (default: the seat to act)."""
        seats = None if seat is None else np.array([seat], dtype=np.int8)
        return self.env.observe(seats)[0]

    def perfect_information(self, seat: int | None = None) -> np.ndarray:
        """The observation plus every hidden hand: for critics and oracles, never for play."""
        seat = self.current_player if seat is None else seat
        return self.env.observe_perfect_information(np.array([seat], dtype=np.int8))[0]

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
        if not self.legal_mask()[a]:
            raise ValueError(
                f"illegal action {a} ({action_name(a)}) for seat {self.current_player}; "
                f"legal actions are {self.legal_actions()}"
            )
        seat = self.current_player
        rewards, done = self.env.step(np.array([a]))
        self._hands[-1]["actions"].append(a)
        self._hands[-1]["seats"].append(seat)
        if self.env.last_results:
            self._hands[-1]["result"] = _result_dict(self.env.last_results)
            if not self.over:
                self._start_hand_record()
        return rewards[0], bool(done[0])

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
    """One finished hand's results (``VectorCuatrola.last_results`` of a batch of one)."""
    contract = int(res["contract"][0])
    declarer = int(res["declarer"][0])
    return {
        "contract": CONTRACT_NAMES[contract],
        "declarer": None if declarer < 0 else declarer,
        "winner_team": int(res["winner"][0]),
        "game_points": int(res["value"][0]),
        "points": [int(x) for x in res["points"][0]],
        "cante_points": [int(x) for x in res["cante_points"][0]],
        "tricks_won": [int(x) for x in res["tricks_won"][0]],
        "trick_winners": [int(x) for x in res["winners"][0] if x >= 0],
        "cantes": [None if x < 0 else int(x) for x in res["cantes"][0][: int((res["winners"][0] >= 0).sum())]],
        "score_after": [int(x) for x in res["score"][0]],
    }
