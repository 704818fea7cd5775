"""``VectorCuatrola``: thousands of Cuatrola games stepped at once.

>>> import numpy as np
>>> from cuatrola_env import OBS_DIM, VectorCuatrola
>>> env = VectorCuatrola(num_envs=8, rules="online", seed=0)
>>> rng = np.random.default_rng(0)
>>> for _ in range(100):
...     mask = env.action_mask                       # (8, 24) bool
...     actions = np.array([rng.choice(np.flatnonzero(m)) for m in mask])
...     rewards, done = env.step(actions)            # (8, 4) float32, (8,) bool
>>> env.observe().shape == (8, OBS_DIM)
True

A game whose hand (hand mode) or match (match mode) ends in ``step`` reports its rewards
and ``done=True`` in that call and is dealt a fresh hand before ``step`` returns; what the
finished hands looked like is kept in :attr:`VectorCuatrola.last_results`.

With ``num_threads=2`` the batch is cut into two contiguous shards stepped in two threads
(NumPy releases the GIL inside its loops); each shard deals from its own random stream,
so the deals depend on ``seed`` and ``num_threads`` together.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Literal

import numpy as np

from . import bitboards as bb
from . import core, engine
from .observation import OBS_DIM, hidden_hands, observe, observe_perfect_information
from .rules import NUM_ACTIONS, NUM_SEATS, Rules, RulesLike, action_name, get_rules

Mode = Literal["hand", "match"]

#: keys of :attr:`VectorCuatrola.last_results` (each an array over the hands that just ended)
RESULT_KEYS = (
    "index", "winner", "value", "contract", "declarer", "dealer", "points", "cante_points",
    "tricks_won", "winners", "cantes", "match_over", "score",
)


class _Shard:
    """A contiguous slice of the batch: a State of views, its own deal stream."""

    def __init__(self, state: engine.State, lo: int, hi: int, rng: np.random.Generator):
        self.lo, self.hi = lo, hi
        self.state = state.take(slice(lo, hi))
        self.rng = rng
        self.deals = engine.DealPool(rng)
        self.all = np.arange(hi - lo)

    def deal_all(self, dealer=None) -> None:
        n = self.hi - self.lo
        d = self.rng.integers(0, NUM_SEATS, size=n).astype(np.int8) if dealer is None else dealer
        masks, m = self.deals.draw(d)
        engine.start_hand(self.state, self.all, masks, d, m)

    def advance(self, a: np.ndarray, rules: Rules, mode: Mode, rewards: np.ndarray, done: np.ndarray, autoreset: bool):
        """Step this shard; fill its rows of ``rewards``/``done``; return its results dict."""
        s = self.state
        ended = engine.step(s, a, rules)
        if ended.size == 0:
            return None
        winner, value = engine.hand_results(s, ended, rules)
        res = {
            "index": ended + self.lo,
            "winner": winner,
            "value": value,
            "contract": s.contract[ended],
            "declarer": s.declarer[ended],
            "dealer": s.dealer[ended],
            "points": engine.take_rows(s.points, ended),
            "cante_points": engine.take_rows(s.cante_pts, ended),
            "tricks_won": engine.take_rows(s.tricks_won, ended),
            "winners": engine.take_rows(s.winners, ended),
            "cantes": engine.take_rows(s.cantes, ended),
        }
        next_dealer = core.next_dealer(core.NP, s.dealer[ended]).astype(np.int8)
        if mode == "hand":
            rewards[ended] = engine.seat_rewards(winner, value)
            done[ended] = True
            res["match_over"] = np.ones(ended.size, dtype=bool)
            res["score"] = engine.take_rows(s.score, ended)
        else:
            score = s.score.reshape(-1)
            at = ended * 2 + winner
            score[at], over = core.match_after_hand(core.NP, rules, score[at], value)
            res["match_over"] = over
            res["score"] = engine.take_rows(s.score, ended)
            finished = ended[over]
            rewards[finished] = engine.seat_rewards(winner[over], 1.0)
            done[finished] = True
            if autoreset:
                s.score[finished] = 0
                # a new match draws its first dealer at random
                next_dealer[over] = self.rng.integers(0, NUM_SEATS, size=int(over.sum()))
        if not autoreset:  # the episode's final state stays until reset()
            s.phase[ended[res["match_over"]]] = engine.DONE
            keep = ~res["match_over"]
            ended, next_dealer = ended[keep], next_dealer[keep]
        masks, m = self.deals.draw(next_dealer)
        engine.start_hand(s, ended, masks, next_dealer, m, after_hand=True)
        return res


class VectorCuatrola:
    """A batch of ``num_envs`` Cuatrola games with one decision per game per :meth:`step`.

    Args:
        num_envs: number of games in the batch.
        rules: ``"online"`` (default), ``"traditional"``, a :class:`~cuatrola_env.rules.Rules`
            or a dict of its fields.
        mode: ``"hand"`` (an episode is one hand; rewards ±game points) or ``"match"``
            (an episode is a match to ``rules.target``; rewards ±1 at its end).
        seed: seed of the dealing RNG.
        num_threads: step the batch as this many shards in parallel threads (default 1).
        autoreset: deal a finished episode's game afresh inside ``step`` (default). With
            ``False`` a finished game keeps its final state (phase 2, no legal action) until
            :meth:`reset`; actions given for it are ignored.

    Attributes:
        state: the :class:`cuatrola_env.engine.State` of every game (read it, don't write it).
        last_results: arrays describing the hands that ended in the last :meth:`step`
            (keys in :data:`RESULT_KEYS`; ``index`` gives their games); empty if none did.
    """

    def __init__(
        self,
        num_envs: int = 1,
        rules: RulesLike = "online",
        mode: Mode = "hand",
        seed: int | None = None,
        num_threads: int = 1,
        autoreset: bool = True,
    ):
        if not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        if mode not in ("hand", "match"):
            raise ValueError(f"mode must be 'hand' or 'match', got {mode!r}")
        if not isinstance(num_threads, (int, np.integer)) or not 1 <= num_threads <= num_envs:
            raise ValueError(f"num_threads must be an integer in 1..num_envs, got {num_threads!r}")
        self.num_envs = int(num_envs)
        self.rules: Rules = get_rules(rules)
        self.mode: Mode = mode
        self.num_threads = int(num_threads)
        self.autoreset = bool(autoreset)
        self.state = engine.new_state(self.num_envs)
        self._all = np.arange(self.num_envs)
        self._executor = ThreadPoolExecutor(self.num_threads) if self.num_threads > 1 else None
        self.last_results: dict[str, np.ndarray] = {}
        self._mask_cache = None
        self._make_shards(engine.check_seed(seed))
        self.reset()

    def get_state(self) -> dict:
        """Everything needed to continue exactly (a training checkpoint): the game arrays and each
        shard's stream of deals. Plain arrays, dicts and numbers; :meth:`set_state` restores it."""
        return {"state": {k: v.copy() for k, v in vars(self.state).items()},
                "deals": [sh.deals.get_state() for sh in self._shards]}

    def set_state(self, snapshot: dict) -> None:
        """Continue exactly where :meth:`get_state` left off; a snapshot of another number of games
        or threads raises ``ValueError`` naming what does not fit, and changes nothing."""
        arrays, deals = snapshot["state"], snapshot["deals"]
        fields = vars(self.state)
        if set(arrays) != set(fields):
            raise ValueError(f"the snapshot's game fields differ: {sorted(set(arrays) ^ set(fields))}")
        for k, v in arrays.items():
            if np.shape(v) != fields[k].shape:
                raise ValueError(f"the snapshot's {k!r} has shape {np.shape(v)}, these {self.num_envs} games {fields[k].shape}")
        if len(deals) != len(self._shards):
            raise ValueError(f"the snapshot has {len(deals)} deal streams, this environment {len(self._shards)} (num_threads)")
        for k, v in arrays.items():
            fields[k][...] = v
        for shard, deal_state in zip(self._shards, deals, strict=True):
            shard.deals.set_state(deal_state)
        self._mask_cache = None

    def _make_shards(self, seed) -> None:
        t = self.num_threads
        if t == 1:
            rngs = [np.random.default_rng(seed)]
        else:
            rngs = [np.random.default_rng(ss) for ss in np.random.SeedSequence(seed).spawn(t)]
        cuts = np.linspace(0, self.num_envs, t + 1).astype(int)
        self._shards = [_Shard(self.state, cuts[i], cuts[i + 1], rngs[i]) for i in range(t)]

    def _map(self, fn):
        if self._executor is None:
            return [fn(self._shards[0])]
        return list(self._executor.map(fn, self._shards))

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
        score_arr = engine.validate_score(score, self.rules, n)
        if hands is not None:
            if dealer is None or muestra is None:
                raise ValueError("a given deal needs hands, dealer and muestra together")
            h, d, m = engine.validate_deals(hands, dealer, muestra, n)
        elif muestra is not None:
            raise ValueError("muestra is only meaningful with given hands")
        elif dealer is not None:
            d = np.broadcast_to(np.asarray(dealer), (n,))
            if not np.issubdtype(d.dtype, np.integer) or ((d < 0) | (d > 3)).any():
                raise ValueError(f"dealer must be seats in 0..3, got {dealer!r}")
            d = d.astype(np.int8)
        if engine.check_seed(seed) is not None:
            self._make_shards(seed)
        if hands is not None:
            engine.start_hand(self.state, self._all, bb.from_cards(h), d, m)
        else:
            for sh in self._shards:
                sh.deal_all(None if dealer is None else d[sh.lo : sh.hi])
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
            if self._executor is None:
                self._mask_cache = engine.legal_action_mask(self.state, self.rules)
            else:
                self._mask_cache = np.concatenate(self._map(lambda sh: engine.legal_action_mask(sh.state, self.rules)))
            if not self.autoreset:
                self._mask_cache[self.state.phase == engine.DONE] = 0
        return self._mask_cache

    @property
    def over(self) -> np.ndarray:
        """(num_envs,) bool: games whose episode ended and that wait for :meth:`reset` (``autoreset=False``)."""
        return self.state.phase == engine.DONE

    @property
    def action_mask(self) -> np.ndarray:
        """(num_envs, 24) bool: the legal actions of the seat to act (docs/rules.md action ids)."""
        return bb.to_bools(self.legal_bits, NUM_ACTIONS)

    @property
    def observation_size(self) -> int:
        return OBS_DIM

    def observe(self, seats=None) -> np.ndarray:
        """(num_envs, OBS_DIM) float32 from the point of view of ``seats`` (default: the seats to act)."""
        if self._executor is None or seats is not None:
            return observe(self.state, self.rules, seats)
        return np.concatenate(self._map(lambda sh: observe(sh.state, self.rules)))

    def observe_perfect_information(self, seats=None) -> np.ndarray:
        """(num_envs, PERFECT_INFO_DIM) float32: the observation plus every seat's hidden hand.

        For critics and oracles in training only; never give it to a policy that plays.
        """
        return observe_perfect_information(self.state, self.rules, seats)

    def hidden_hands(self, seats=None) -> np.ndarray:
        """(num_envs, 80) float32: every seat's unplayed hand, seats relative to ``seats``
        (default: the seats to act). The part of the perfect-information view that is
        not in the observation; for critics in training only."""
        return hidden_hands(self.state, seats)

    # ----------------------------------------------------------------------------- step
    def step(self, actions) -> tuple[np.ndarray, np.ndarray]:
        """Play one action per game. Returns ``(rewards (num_envs, 4) float32, done (num_envs,) bool)``.

        Raises ``ValueError`` (and changes nothing) for a wrongly shaped array, an action
        outside 0..23 or an illegal action, naming the first offending game.
        """
        a = self._check_actions(actions)
        rewards = np.zeros((self.num_envs, NUM_SEATS), dtype=np.float32)
        done = np.zeros(self.num_envs, dtype=bool)
        self._mask_cache = None

        def advance(sh: _Shard):
            return sh.advance(
                a[sh.lo : sh.hi], self.rules, self.mode, rewards[sh.lo : sh.hi], done[sh.lo : sh.hi], self.autoreset
            )

        parts = [r for r in self._map(advance) if r is not None]
        if not parts:
            self.last_results = {}
        elif len(parts) == 1:
            self.last_results = parts[0]
        else:
            self.last_results = {k: np.concatenate([p[k] for p in parts]) for k in RESULT_KEYS}
        return rewards, done

    def _check_actions(self, actions) -> np.ndarray:
        a = np.asarray(actions)
        if a.shape != (self.num_envs,):
            raise ValueError(f"actions must have shape ({self.num_envs},), got {a.shape}")
        if not np.issubdtype(a.dtype, np.integer):  # floats (even whole ones) and booleans are another kind of data
            raise ValueError(f"actions must be an array of integers (action ids), got dtype {a.dtype}")
        if not self.autoreset:
            over = self.over
            if over.all():
                raise ValueError("every game is over: call reset() before step()")
            a = np.where(over, NUM_ACTIONS - 4, a)  # finished games: ignored (stepped as a no-op)
        bad = np.flatnonzero((a < 0) | (a >= NUM_ACTIONS))
        if bad.size:
            g = bad[0]
            raise ValueError(f"action {a[g]} of game {g} is out of range 0..{NUM_ACTIONS - 1} ({bad.size} such games)")
        legal = (self.legal_bits >> a.astype(np.uint32)) & np.uint32(1)
        if not self.autoreset:
            legal |= self.over
        bad = np.flatnonzero(legal == 0)
        if bad.size:
            g = bad[0]
            allowed = bb.cards_of(self.legal_bits[g])
            raise ValueError(
                f"illegal action {a[g]} ({action_name(a[g])}) in game {g} for seat {self.current_player[g]}; "
                f"legal actions are {allowed} ({bad.size} illegal in this batch)"
            )
        return a.astype(np.int8)

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=False)
            self._executor = None

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass
