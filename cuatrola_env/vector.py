"""``VectorCuatrola``: thousands of Cuatrola games stepped at once.

>>> import numpy as np
>>> from cuatrola_env import VectorCuatrola
>>> env = VectorCuatrola(num_envs=8, rules="online", seed=0)
>>> rng = np.random.default_rng(0)
>>> for _ in range(100):
...     mask = env.action_mask                       # (8, 24) bool
...     actions = np.array([rng.choice(np.flatnonzero(m)) for m in mask])
...     rewards, done = env.step(actions)            # (8, 4) float32, (8,) bool
>>> env.observe().shape
(8, 386)

A game whose hand (hand mode) or match (match mode) ends in ``step`` reports its rewards
and ``done=True`` in that call and is dealt a fresh hand before ``step`` returns; what the
finished hands looked like is kept in :attr:`VectorCuatrola.last_results`.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from . import bitboards as bb
from . import engine
from .observation import OBS_DIM, observe
from .rules import NUM_ACTIONS, NUM_SEATS, Rules, RulesLike, get_rules

Mode = Literal["hand", "match"]


class VectorCuatrola:
    """A batch of ``num_envs`` Cuatrola games with one decision per game per :meth:`step`.

    Args:
        num_envs: number of games in the batch.
        rules: ``"online"`` (default), ``"traditional"``, a :class:`~cuatrola_env.rules.Rules`
            or a dict of its fields.
        mode: ``"hand"`` (an episode is one hand; rewards ±game points) or ``"match"``
            (an episode is a match to ``rules.target``; rewards ±1 at its end).
        seed: seed of the dealing RNG.
    """

    def __init__(self, num_envs: int = 1, rules: RulesLike = "online", mode: Mode = "hand", seed: int | None = None):
        if not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        if mode not in ("hand", "match"):
            raise ValueError(f"mode must be 'hand' or 'match', got {mode!r}")
        self.num_envs = int(num_envs)
        self.rules: Rules = get_rules(rules)
        self.mode: Mode = mode
        self.rng = np.random.default_rng(seed)
        self._deals = engine.DealPool(self.rng)
        self.state = engine.new_state(self.num_envs)
        self._all = np.arange(self.num_envs)
        self.last_results: dict[str, np.ndarray] = {}
        self.reset(seed=seed)

    # ----------------------------------------------------------------------------- reset
    def reset(self, seed: int | None = None, hands=None, dealer=None, muestra=None, score=None) -> np.ndarray:
        """Start every game afresh and return the observations of the seats to act.

        Args:
            seed: reseed the dealing RNG.
            hands: optional given deals, (num_envs, 4, 5) card ids in seat order; needs
                ``dealer`` and ``muestra`` (each (num_envs,) or a scalar) too.
            dealer: the dealer of each game (random when no deal is given and None).
            muestra: the dealer's face-up card of each given deal.
            score: optional (num_envs, 2) or (2,) match score to start from (default 0-0).

        Bad input raises ``ValueError`` and leaves the current games untouched.
        """
        n = self.num_envs
        if seed is not None:
            self.rng = np.random.default_rng(seed)
            self._deals = engine.DealPool(self.rng)
        if score is None:
            score_arr = np.zeros((n, 2), dtype=np.int16)
        else:
            score_arr = np.broadcast_to(np.asarray(score), (n, 2)) if np.ndim(score) == 1 else np.asarray(score)
            if score_arr.shape != (n, 2) or not np.issubdtype(score_arr.dtype, np.integer):
                raise ValueError(f"score must be integers of shape (2,) or ({n}, 2), got {np.shape(score)}")
            if (score_arr < 0).any() or (score_arr >= self.rules.target).any():
                raise ValueError(f"score must be in 0..{self.rules.target - 1} (below the target), got {score_arr.min()}..{score_arr.max()}")
        if hands is not None:
            if dealer is None or muestra is None:
                raise ValueError("a given deal needs hands, dealer and muestra together")
            h, d, m = engine.validate_deals(hands, dealer, muestra, n)
        else:
            if muestra is not None:
                raise ValueError("muestra is only meaningful with given hands")
            if dealer is None:
                d = self.rng.integers(0, NUM_SEATS, size=n).astype(np.int8)
            else:
                d = np.broadcast_to(np.asarray(dealer), (n,))
                if not np.issubdtype(d.dtype, np.integer) or ((d < 0) | (d > 3)).any():
                    raise ValueError(f"dealer must be seats in 0..3, got {dealer!r}")
                d = d.astype(np.int8)
            masks, m = self._deals.draw(d)
        if hands is not None:
            masks = bb.from_cards(h)
        engine.start_hand(self.state, self._all, masks, d, m)
        self.state.score[:] = score_arr
        self._mask_cache = None
        self.last_results = {}
        return self.observe()

    # ----------------------------------------------------------------------------- views
    @property
    def current_player(self) -> np.ndarray:
        """(num_envs,) int8: the seat to act in each game."""
        return self.state.current

    @property
    def legal_bits(self) -> np.ndarray:
        """(num_envs,) uint32: the legal actions as a 24-bit mask (bit a = action a)."""
        if self._mask_cache is None:
            self._mask_cache = engine.legal_action_mask(self.state, self.rules)
        return self._mask_cache

    @property
    def action_mask(self) -> np.ndarray:
        """(num_envs, 24) bool: the legal actions of the seat to act (RULES.md action ids)."""
        return bb.to_bools(self.legal_bits, NUM_ACTIONS)

    @property
    def observation_size(self) -> int:
        return OBS_DIM

    def observe(self, seats=None) -> np.ndarray:
        """(num_envs, OBS_DIM) float32 from the point of view of ``seats`` (default: the seats to act)."""
        return observe(self.state, self.rules, seats)

    # ----------------------------------------------------------------------------- step
    def step(self, actions) -> tuple[np.ndarray, np.ndarray]:
        """Play one action per game. Returns ``(rewards (num_envs, 4) float32, done (num_envs,) bool)``.

        Raises ``ValueError`` (and changes nothing) for a wrongly shaped array, an action
        outside 0..23 or an illegal action, naming the first offending game.
        """
        a = self._check_actions(actions)
        s = self.state
        ended = engine.step(s, a, self.rules)
        self._mask_cache = None
        rewards = np.zeros((self.num_envs, NUM_SEATS), dtype=np.float32)
        done = np.zeros(self.num_envs, dtype=bool)
        if ended.size == 0:
            self.last_results = {}
            return rewards, done
        winner, value = engine.hand_results(s, ended, self.rules)
        self.last_results = {
            "index": ended,
            "winner": winner,
            "value": value,
            "contract": s.contract[ended].copy(),
            "declarer": s.declarer[ended].copy(),
            "dealer": s.dealer[ended].copy(),
            "points": s.points[ended].copy(),
            "cante_points": s.cante_pts[ended].copy(),
            "tricks_won": s.tricks_won[ended].copy(),
            "winners": s.winners[ended].copy(),
            "cantes": s.cantes[ended].copy(),
        }
        next_dealer = ((s.dealer[ended] + 1) % NUM_SEATS).astype(np.int8)
        if self.mode == "hand":
            rewards[ended] = engine.seat_rewards(winner, value)
            done[ended] = True
        else:
            s.score[ended, winner] += value
            over = s.score[ended, winner] >= self.rules.target
            self.last_results["match_over"] = over
            self.last_results["score"] = s.score[ended].copy()
            finished = ended[over]
            rewards[finished] = engine.seat_rewards(winner[over], 1.0)
            done[finished] = True
            s.score[finished] = 0
            # a new match draws its first dealer at random
            next_dealer[over] = self.rng.integers(0, NUM_SEATS, size=int(over.sum()))
        masks, m = self._deals.draw(next_dealer)
        engine.start_hand(s, ended, masks, next_dealer, m, after_hand=True)
        return rewards, done

    def _check_actions(self, actions) -> np.ndarray:
        a = np.asarray(actions)
        if a.shape != (self.num_envs,):
            raise ValueError(f"actions must have shape ({self.num_envs},), got {a.shape}")
        if not np.issubdtype(a.dtype, np.integer):
            if np.issubdtype(a.dtype, np.floating) and np.all(np.mod(a, 1) == 0):
                a = a.astype(np.int64)
            else:
                raise ValueError(f"actions must be integers, got dtype {a.dtype}")
        bad = np.flatnonzero((a < 0) | (a >= NUM_ACTIONS))
        if bad.size:
            g = bad[0]
            raise ValueError(f"action {a[g]} of game {g} is out of range 0..{NUM_ACTIONS - 1} ({bad.size} such games)")
        legal = (self.legal_bits >> a.astype(np.uint32)) & np.uint32(1)
        bad = np.flatnonzero(legal == 0)
        if bad.size:
            g = bad[0]
            from .rules import action_name

            allowed = [int(i) for i in bb.cards_of(self.legal_bits[g])]
            raise ValueError(
                f"illegal action {a[g]} ({action_name(a[g])}) in game {g} for seat {self.current_player[g]}; "
                f"legal actions are {allowed} ({bad.size} illegal in this batch)"
            )
        return a.astype(np.int16)
