"""Self-play in one process: batched games, who plays each seat, and the decisions a rollout collects
(:mod:`.actors` runs it as Ray actors).

Every game slot has a fixed kind of opponent team: the heuristic bot (``heuristic_frac`` of
the slots), a frozen past version of the network (``pool_frac``; one drawn from the pool per
rollout), or the learner itself (self-play). In a slot with an opponent the learner's team
changes so that it sits on each team, and on la mano's team and the dealer's, in half the hands
(:func:`opponents_team`): in the shipped network's sampled self-play the dealer's team wins
about 0.4 game points a hand from la mano's, so a team fixed relative to the dealer would bias
the charts against each opponent. A decision is learned from once its hand is over: its
return is the seat's result of the hand (game points, plus ``card_points_coef`` times the
team's card-point margin / 100); decisions of hands still in play wait in ``pending``.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import torch

from cuatrola_env import VectorCuatrola
from cuatrola_env.rules import Rules
from cuatrola_env.view import HandHistories

from ..base import batch_views
from ..heuristic import HeuristicAgent
from ..network import PolicyValueNet, build
from ..registry import make_agent

#: what a rollout records per decision
KEYS = ("obs", "pobs", "mask", "action", "logp", "env", "uid", "seat", "learn", "bidding", "imitated", "target")
RING = 64  #: finished hands' results kept per game slot, until their decisions are learned from
TEAM_SIGN = np.array([1, -1, 1, -1], np.float32)


@dataclasses.dataclass
class Progress:
    """What a run has done so far (saved in its checkpoints)."""

    step: int  #: decisions played
    update: int  #: learning steps taken
    hand_uid: np.ndarray  #: (num_envs,) hands finished so far in each game slot
    pending: dict | None  #: decisions of hands not yet over, by :data:`KEYS`
    pool: list  #: state dicts of the frozen past networks (the opponent pool)

    @classmethod
    def start(cls, num_envs: int) -> Progress:
        return cls(0, 0, np.zeros(num_envs, dtype=np.int64), None, [])

    def add_to_pool(self, net, size: int) -> None:
        self.pool.append({k: v.clone() for k, v in net.state_dict().items()})
        del self.pool[:-size]


def opponents_team(hand_uid: np.ndarray, slot: np.ndarray) -> np.ndarray:
    """The opponent's team in hand ``hand_uid`` of each game slot (the learner has the other): 0, 1, 1, 0, ...
    shifted by the slot. The dealer moves a seat every hand, so his team alternates; this pattern
    puts the opponent on the dealer's team in every other pair of hands, whatever the first dealer."""
    return (hand_uid + hand_uid // 2 + slot) & 1


class SelfPlay:
    """``num_envs`` games in a :class:`VectorCuatrola`, played by the learner, the heuristic and
    the pool; :meth:`collect` plays ``num_steps`` decisions of every game."""

    def __init__(self, cfg, rules: Rules, net: PolicyValueNet):
        n = cfg.num_envs
        n_heur, n_pool = int(round(cfg.heuristic_frac * n)), int(round(cfg.pool_frac * n))
        if n_heur + n_pool > n:
            raise ValueError(f"heuristic_frac + pool_frac must be at most 1 (got {cfg.heuristic_frac} + {cfg.pool_frac})")
        self.cfg, self.net = cfg, net
        self.env = VectorCuatrola(num_envs=n, rules=rules, seed=cfg.seed)
        self.history = HandHistories(n)  # each game's hand so far, for an opponent that reads it (PIMC)
        self.pool_net = build(net.spec).eval()  # plays the frozen past versions
        self.heuristic = HeuristicAgent()  # the warm start's teacher
        self.opponent = self.heuristic if cfg.opponent == "heuristic" else make_agent(cfg.opponent, seed=cfg.seed)
        self.slot = np.arange(n)
        self.vs_heuristic, self.vs_pool = self.slot < n_heur, (self.slot >= n_heur) & (self.slot < n_heur + n_pool)
        self.results = np.zeros((n, RING, 4), dtype=np.float32)
        self.result_uid = np.full((n, RING), -1, dtype=np.int64)
        self.contract_log: list[tuple] = []  # finished hands' contracts, for the bids/ charts
        self.episode_log: list[tuple] = []  # the learner's results against each kind of opponent

    @property
    def decisions_per_rollout(self) -> int:
        return self.cfg.num_envs * self.cfg.num_steps

    def get_state(self) -> dict:
        """The games, for a checkpoint (:meth:`VectorCuatrola.get_state`), the hands' histories and
        the fixed opponent's random stream (a search's worlds)."""
        return {**self.env.get_state(), "history": self.history.get_state(),
                "opponent_rng": self.opponent.rng.bit_generator.state}

    def set_state(self, state: dict) -> None:
        """Continue from :meth:`get_state`. A checkpoint written before the histories were kept
        restores empty ones (and the opponent's stream from its seed): only an opponent that reads
        them, none of which could run then, would notice."""
        self.env.set_state(state)
        if "history" in state:
            self.history.set_state(state["history"])
        if "opponent_rng" in state:
            self.opponent.rng.bit_generator.state = state["opponent_rng"]

    def close(self) -> None:
        self.env.close()

    def collect(self, run: Progress, rng: np.random.Generator) -> tuple[dict, np.ndarray, bool]:
        """One rollout: the decisions to learn from (finished hands only), their returns, and
        whether they are imitation (warm start) data."""
        if run.pool:
            self.pool_net.load_state_dict(run.pool[int(rng.integers(len(run.pool)))])
        imitating = run.step < self.cfg.imitation_decisions
        buf: dict[str, list] = {k: [] for k in KEYS}
        for _ in range(self.cfg.num_steps):
            for k, v in self._decide(run, imitating).items():
                buf[k].append(v)
            self._step(run, buf["action"][-1])
        batch = {k: np.concatenate(v) for k, v in buf.items()}
        if run.pending is not None:
            batch = {k: np.concatenate([run.pending[k], batch[k]]) for k in batch}
        finished = self.result_uid[batch["env"], batch["uid"] % RING] == batch["uid"]
        run.pending = {k: v[~finished] for k, v in batch.items()}
        use = finished & batch["learn"] & (batch["imitated"] == imitating)  # no phase mixes the other's data
        data = {k: v[use] for k, v in batch.items()}
        return data, self.results[data["env"], data["uid"] % RING, data["seat"]], imitating

    def _decide(self, run: Progress, imitating: bool) -> dict[str, np.ndarray]:
        """Every game's action for its seat to act, by whoever plays that seat, and what to record."""
        env, n = self.env, self.cfg.num_envs
        obs, pobs, mask = env.observe(), env.hidden_hands(), env.action_mask  # pobs: the critic's extra input
        obs_t, mask_t = torch.from_numpy(obs), torch.from_numpy(mask)
        with torch.no_grad():
            dist = torch.distributions.Categorical(logits=self.net.policy(obs_t, mask_t))
            action = dist.sample()
            logp = dist.log_prob(action)
        seat = env.current_player.astype(np.int64)
        theirs = (seat & 1) == opponents_team(run.hand_uid, self.slot)
        # warm start (DAgger): the heuristic labels every decision; it also plays them in the
        # first half, the learner (sampling) in the second, so the labels cover its own states
        heur = self.slot if imitating else np.flatnonzero(self.vs_heuristic & theirs)
        frozen = np.flatnonzero(self.vs_pool & theirs) if run.pool and not imitating else np.zeros(0, dtype=np.int64)
        actions = action.numpy().copy()
        target = actions.copy()
        if heur.size:  # the teacher labels (warm start), or the fixed opponent team plays
            teacher = self.heuristic if imitating else self.opponent
            target[heur] = teacher.act_batch(batch_views(env, heur, obs=obs[heur], history=self.history))
            if not imitating or 2 * run.step < self.cfg.imitation_decisions:
                actions[heur] = target[heur]
        if frozen.size:
            with torch.no_grad():
                logits = self.pool_net.policy(obs_t[frozen], mask_t[frozen])
                actions[frozen] = torch.distributions.Categorical(logits=logits).sample().numpy()
        learn = np.ones(n, dtype=bool)
        learn[frozen] = False
        if not imitating:
            learn[heur] = False  # the heuristic's own decisions are not learned from
        return {"obs": obs, "pobs": pobs, "mask": mask, "action": actions, "logp": logp.numpy(), "env": self.slot,
                "uid": run.hand_uid.copy(), "seat": seat, "learn": learn, "bidding": env.state.phase == 0,
                "imitated": np.full(n, imitating), "target": target}

    def _step(self, run: Progress, actions: np.ndarray) -> None:
        """Step every game; file the shaped results of the hands that end."""
        self.history.record(self.slot, self.env.current_player, actions)
        rewards, done = self.env.step(actions)
        ended = np.flatnonzero(done)
        self.history.clear(ended)
        if not ended.size:
            return
        r, uid = self.env.last_results, run.hand_uid[ended]
        margin = (r["points"][:, 0] - r["points"][:, 1]).astype(np.float32) / 100.0
        self.results[ended, uid % RING] = rewards[ended] + self.cfg.card_points_coef * margin[:, None] * TEAM_SIGN
        self.result_uid[ended, uid % RING] = uid
        self.contract_log.append((r["contract"], r["declarer"], r["dealer"], r["winner"], r["value"]))
        mine = 1 - opponents_team(uid, ended)  # the learner's team in games with an opponent
        self.episode_log.append((self.vs_heuristic[ended], self.vs_pool[ended], rewards[ended, mine]))
        run.hand_uid[ended] += 1
