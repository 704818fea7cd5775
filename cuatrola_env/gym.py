"""Cuatrola as a Gymnasium single-agent environment: one learning seat, three given policies.

>>> import gymnasium, cuatrola_env
>>> env = gymnasium.make("Cuatrola-v0", rules="online", seat=0)      # partner and opponents random
>>> obs, info = env.reset(seed=0)
>>> mask = info["action_mask"]                                      # also env.unwrapped.action_masks()

An illegal action ends the episode with the worst reward by default (``illegal_action="lose"``, so
that Gymnasium's ``check_env`` and unmasked learners work); ``illegal_action="raise"`` is the strict
mode.

The learning seat's team mate and the two opponents play the given policies: a callable
``policy(observation, action_mask) -> action`` each, ``"random"`` (the default), or an agent
(anything with ``act(view)``: ``agents.registry.make_agent("bot:level=expert")`` turns any agent
spec of ``evaluate.py`` into one), shown only what its seat may see. Their
decisions happen inside ``step`` until the learning seat must act again or the episode
ends. Rewards are the learning seat's (hand mode: ± game points at the end of the hand;
match mode: ± 1 at the end of the match).

Works with Stable-Baselines3-contrib's ``MaskablePPO`` through :meth:`action_masks`, and with
Stable-Baselines3's ``make_vec_env("Cuatrola-v0")``, which asks for ``render_mode="rgb_array"``: a
picture of the table as the learning seat sees it (:mod:`cuatrola_env.picture`), which Gymnasium's
``RecordVideo`` turns into videos. Examples that run: ``examples/sb3_maskable_ppo.py``,
``examples/record_video.py``. Once an episode is over the action mask marks every action allowed
(none is played: a vector environment's next step only resets), so the mask is never empty.
"""

from __future__ import annotations

from collections.abc import Callable

import gymnasium
import numpy as np
from gymnasium import spaces

from .cli import brief
from .game import Game
from .observation import OBS_DIM
from .picture import render_rgb
from .records import save_record
from .render import render_text
from .rules import NUM_ACTIONS, RulesLike
from .vector import Mode

Policy = Callable[[np.ndarray, np.ndarray], int]


class PolicyError(ValueError):
    """A partner or opponent policy returned something that is not a legal action; the message
    names the seat. The episode cannot go on: call ``reset()``."""


class CuatrolaGymEnv(gymnasium.Env):
    """One learning seat of Cuatrola against given policies.

    Args:
        rules: preset name, ``Rules`` or dict.
        mode: ``"hand"`` or ``"match"``.
        seat: the learning seat (0..3), or ``"random"`` to draw it each episode.
        partner: the team mate's policy or agent (default ``"random"``).
        opponents: the opponents' policy, or a pair of policies (default ``"random"``).
        render_mode: ``None``, ``"ansi"`` (``render()`` returns a text table, every hand shown),
            ``"human"`` (prints it) or ``"rgb_array"`` (``render()`` returns a (480, 720, 3) uint8
            picture of the table as the learning seat sees it: :mod:`cuatrola_env.picture`; what
            Gymnasium's ``RecordVideo`` and Stable-Baselines3 ask for).
        illegal_action: ``"lose"`` (default): an illegal action ends the episode with the worst
            reward (−5 in hand mode, −1 in match mode) and ``info["illegal_action"]`` naming it,
            as PettingZoo's ``TerminateIllegalWrapper`` does, so that tools which step random
            actions (Gymnasium's and Stable-Baselines3's ``check_env``) and unmasked learners
            (plain PPO or DQN) work; ``"raise"``: an illegal action raises ``ValueError`` naming
            the legal ones and changes nothing (the strict mode, for code that must never send one).
    """

    metadata = {"render_modes": ["ansi", "human", "rgb_array"], "render_fps": 2}

    def __init__(
        self,
        rules: RulesLike = "online",
        mode: Mode = "hand",
        seat: int | str = 0,
        partner: Policy | str = "random",
        opponents: Policy | str | tuple = "random",
        render_mode: str | None = None,
        illegal_action: str = "lose",
    ):
        if illegal_action not in ("raise", "lose"):
            raise ValueError(f"illegal_action must be 'raise' or 'lose', got {illegal_action!r}")
        self.illegal_action = illegal_action
        if not (seat == "random" or (isinstance(seat, (int, np.integer)) and not isinstance(seat, bool) and 0 <= seat <= 3)):
            raise ValueError(f"seat must be 0..3 or 'random', got {seat!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None, 'ansi', 'human' or 'rgb_array', got {render_mode!r}")
        self.game = Game(rules=rules, mode=mode)
        self._agents: list = []  # the agents among partner and opponents, reset with each episode
        self.seat_option = seat
        self.seat = 0 if seat == "random" else int(seat)
        self.partner = self._policy(partner, "partner")
        opp = opponents if isinstance(opponents, tuple) else (opponents, opponents)
        if len(opp) != 2:
            raise ValueError("opponents must be one policy or a pair of policies")
        self.opponents = tuple(self._policy(p, "opponents") for p in opp)
        self.render_mode = render_mode
        self.observation_space = spaces.Box(low=0.0, high=2.0, shape=(OBS_DIM,), dtype=np.float32)
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self._forfeit = False
        self._interrupted = False  # a policy of another seat failed mid-episode: only reset() goes on

    def _policy(self, p, what: str) -> Policy:
        if isinstance(p, str) and p == "random":
            return self._random_policy
        if callable(getattr(p, "act", None)):
            return self._agent_policy(p)
        if not callable(p):
            raise ValueError(f"{what} must be 'random', a callable policy(observation, action_mask) -> action, or an "
                             f"agent with act(view) (agents.registry.make_agent('heuristic')), got {brief(p, 40)}")
        return p

    def _agent_policy(self, agent) -> Policy:
        """An agent (``act(view)``, as every agent of :mod:`agents` has) as a policy: it is shown the
        acting seat's :class:`~cuatrola_env.view.SeatView`, what that seat may see and no more."""
        if all(agent is not known for known in self._agents):
            self._agents.append(agent)
        return lambda observation, action_mask: agent.act(self.game.seat_view(self.game.current_player))

    def _random_policy(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(self.np_random.choice(np.flatnonzero(action_mask)))

    def _policy_of(self, seat: int) -> Policy:
        if seat == (self.seat + 2) % 4:
            return self.partner
        return self.opponents[0] if seat == (self.seat + 1) % 4 else self.opponents[1]

    # ------------------------------------------------------------------ API
    def reset(self, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        opts = dict(options or {})
        unknown = set(opts) - {"hands", "dealer", "muestra", "score"}
        if unknown:
            raise ValueError(f"unknown reset option(s) {sorted(unknown)}")
        self._forfeit = False
        deal_seed = None if seed is None else int(self.np_random.integers(2**31))
        self.game.reset(seed=deal_seed, **opts)
        if self.seat_option == "random":
            self.seat = int(self.np_random.integers(4))
        for agent in self._agents:
            if callable(getattr(agent, "reset", None)):
                agent.reset(seed=int(self.np_random.integers(2**31)))
        reward = self._play_others()
        if self.game.over:  # cannot happen: the learner always has a bid to make
            raise RuntimeError("the episode ended before the learning seat acted")
        assert reward == 0.0
        return self.game.observe(self.seat), self._info()

    def step(self, action):
        if self._interrupted:
            raise ValueError("the episode was interrupted by a failing partner or opponent policy: call reset()")
        if self.game.over or self._forfeit:
            raise ValueError("the episode is over: call reset()")
        if self.game.current_player != self.seat:  # pragma: no cover - guarded by _play_others
            raise RuntimeError("internal error: the learning seat is not to act")
        a = np.asarray(action)
        if a.shape not in ((), (1,)) or not np.issubdtype(a.dtype, np.integer):
            raise ValueError(f"action must be one integer id in 0..{NUM_ACTIONS - 1}, got {action!r}")
        action = int(a.reshape(()))
        if self.illegal_action == "lose" and not (0 <= action < NUM_ACTIONS and self.game.legal_mask()[action]):
            self._forfeit = True
            worst = -5.0 if self.game.mode == "hand" else -1.0
            return self.game.observe(self.seat), worst, True, False, {**self._info(), "illegal_action": action}
        rewards, over = self.game.step(action)  # raises on an illegal action, changing nothing
        reward = float(rewards[self.seat])
        if not over:
            reward += self._play_others()
        if self.render_mode == "human":
            self.render()
        return self.game.observe(self.seat), reward, self.game.over, False, self._info()

    def action_masks(self) -> np.ndarray:
        """(24,) bool: the learning seat's legal actions (for MaskablePPO). Once the episode is over
        every action is marked allowed: none is played (a single environment needs ``reset()``; a
        Gymnasium vector environment's next step only resets it), and a masked sampler or the
        ``np.flatnonzero(mask)[0]`` idiom never meets an empty mask."""
        return self.game.legal_mask() if not (self.game.over or self._forfeit) else np.ones(NUM_ACTIONS, dtype=bool)

    def render(self):
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode")
            return None
        if self.render_mode == "rgb_array":
            return render_rgb(self.game.state, self.game.rules, seat=self.seat,
                              result=self.game.last_result if self.game.over else None)
        text = render_text(self.game.state, self.game.rules)
        if self.render_mode == "human":
            print(text + "\n")
            return None
        return text

    def perfect_information_observation(self) -> np.ndarray:
        """The learning seat's observation plus every hidden hand: for critics only."""
        return self.game.perfect_information(self.seat)

    def record(self) -> dict:
        return self.game.record()

    def save_record(self, path) -> None:
        save_record(self.record(), path)

    # ------------------------------------------------------------------ internals
    def _play_others(self) -> float:
        """The other seats' decisions until the learning seat is to act or the episode ends. A
        policy that fails (or returns an illegal action) leaves the episode interrupted."""
        reward = 0.0
        g = self.game
        self._interrupted = True
        while not g.over and g.current_player != self.seat:
            seat = g.current_player
            mask = g.legal_mask()
            action = self._legal_choice(self._policy_of(seat)(g.observe(seat), mask), seat, mask)
            rewards, _ = g.step(action)
            reward += float(rewards[self.seat])
        self._interrupted = False
        return reward

    def _legal_choice(self, action, seat: int, mask: np.ndarray) -> int:
        a = np.asarray(action)
        if a.shape in ((), (1,)) and np.issubdtype(a.dtype, np.integer) and 0 <= int(a.reshape(())) < NUM_ACTIONS:
            if mask[int(a.reshape(()))]:
                return int(a.reshape(()))
        role = "partner" if seat == (self.seat + 2) % 4 else "opponent"
        raise PolicyError(f"the {role} policy (seat {seat}) returned {brief(action, 40)}, which is not a legal action; "
                          f"legal actions were {np.flatnonzero(mask).tolist()}. The episode is interrupted: call reset()")

    def _info(self) -> dict:
        return {"action_mask": self.action_masks(), "seat": self.seat}
