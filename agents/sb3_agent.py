"""An agent playing a Stable-Baselines3 policy saved as a ``.zip`` (``sb3:PATH`` in agent specs).

The policy is one trained on ``Cuatrola-v0`` (MaskablePPO from sb3-contrib, or SB3's PPO, A2C or DQN):
it is shown the seat's observation and plays its most likely legal action (MaskablePPO reads the
legal actions' mask; for the others the illegal actions' values are masked out here).

A Stable-Baselines3 file stores some of its fields pickled (the spaces, the policy's class, the
learning-rate schedule). Nothing in it is unpickled here: every pickled field is replaced before
loading (:func:`safe_objects`), the spaces by Cuatrola's, the class by the algorithm's default policy,
schedules by constants; the weights are read with ``torch.load(weights_only=True)`` (as
Stable-Baselines3 does). A file whose ``policy_kwargs`` could only be rebuilt by unpickling is
refused, with the reason.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import torch
from gymnasium import spaces
from sb3_contrib import MaskablePPO
from stable_baselines3 import A2C, DQN, PPO
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.callbacks import BaseCallback

from cuatrola_env.observation import OBS_DIM
from cuatrola_env.rules import NUM_ACTIONS

from .base import Agent, SeatView

#: the algorithm of a file, by the module of the policy class it records
POLICY_MODULES = {"sb3_contrib.common.maskable.policies": MaskablePPO, "stable_baselines3.dqn.policies": DQN,
                  "stable_baselines3.common.policies": PPO}  # (or A2C: a file without clip_range)
SPACES = {"observation_space": spaces.Box(low=0.0, high=2.0, shape=(OBS_DIM,), dtype=np.float32),
          "action_space": spaces.Discrete(NUM_ACTIONS)}
#: what stands in for the pickled fields that matter when a policy is loaded to play (the policy class
#: is set by :func:`load_policy`; schedules are rebuilt from the JSON learning rate or unused in play);
#: any other pickled field is training state (the last observations, episode buffers) and stands as None
STAND_INS = {**SPACES, "train_freq": 4, "lr_schedule": 0.0, "learning_rate": 0.0, "clip_range": 0.2,
             "exploration_schedule": 0.0}
#: pickled fields that shape the network: a file that pickles them is refused
SHAPING = ("policy_kwargs",)


class SB3Error(ValueError):
    """A Stable-Baselines3 file this agent cannot play; the message says why."""


def read_data(path: str) -> dict:
    """The JSON ``data`` of a Stable-Baselines3 zip (a clear :class:`SB3Error` for anything else)."""
    if not Path(path).is_file():
        raise SB3Error(f"sb3:{path}: no such file")
    try:
        with zipfile.ZipFile(path) as z:
            data = json.loads(z.read("data"))
    except (zipfile.BadZipFile, KeyError, json.JSONDecodeError, UnicodeDecodeError) as e:
        raise SB3Error(f"sb3:{path} is not a Stable-Baselines3 model file (a .zip with a JSON 'data'): {e}") from None
    if not isinstance(data, dict):
        raise SB3Error(f"sb3:{path}: its 'data' is not a JSON object")
    return data


def algorithm_of(data: dict, path: str):
    """The Stable-Baselines3 algorithm that saved ``data`` (by its policy class's module)."""
    policy = data.get("policy_class")
    module = policy.get("__module__") if isinstance(policy, dict) else None
    algorithm = POLICY_MODULES.get(module)
    if algorithm is None:
        raise SB3Error(f"sb3:{path}: its policy class (module {module!r}) is not the default policy of MaskablePPO, "
                       "PPO, A2C or DQN")
    return A2C if algorithm is PPO and "clip_range" not in data else algorithm


def safe_objects(data: dict, algorithm, path: str) -> dict:
    """``custom_objects`` for ``algorithm.load`` that stand in for every pickled field of the file's
    ``data``, so that Stable-Baselines3 unpickles none; a file that pickles what shapes the network is refused."""
    pickled = {k for k, v in data.items() if isinstance(v, dict) and ":serialized:" in v}
    shaping = sorted(pickled & set(SHAPING))
    if shaping:
        raise SB3Error(f"sb3:{path}: its {', '.join(shaping)} hold Python objects (an activation function or a class) "
                       "that only unpickling could rebuild; save the model with plain policy_kwargs (net_arch as "
                       "lists of ints)")
    return {**{k: STAND_INS.get(k) for k in pickled}, **SPACES, "policy_class": algorithm.policy_aliases["MlpPolicy"]}


def load_policy(path: str):
    """The Stable-Baselines3 model in ``path``, loaded with nothing unpickled, on the CPU."""
    data = read_data(path)
    algorithm = algorithm_of(data, path)
    objects = safe_objects(data, algorithm, path)
    try:
        return algorithm.load(path, device="cpu", custom_objects=objects)
    except (RuntimeError, ValueError, KeyError, TypeError) as e:
        raise SB3Error(f"sb3:{path}: Stable-Baselines3 could not load it as {algorithm.__name__}: "
                       f"{str(e).splitlines()[0]}") from None


def best_legal(policy, view: SeatView, q_values: bool = False) -> int:
    """The most likely legal action of a Stable-Baselines3 ``policy`` for ``view`` (with ``q_values``,
    a DQN policy's highest-valued one)."""
    obs = torch.as_tensor(view.observation[None])
    with torch.no_grad():
        out = policy.q_net(obs)[0] if q_values else policy.get_distribution(obs).distribution.logits[0]
    scores = out.numpy().astype(np.float64)
    scores[~view.legal_mask] = -np.inf
    return int(np.argmax(scores))


class SB3Agent(Agent):
    """Plays a Stable-Baselines3 policy (``sb3:PATH``): its most likely legal action."""

    OPTIONS: dict = {}

    def __init__(self, path: str, seed: int | None = None):
        super().__init__(seed)
        self.model = load_policy(path)

    def act(self, view: SeatView) -> int:
        return best_legal(self.model.policy, view, isinstance(self.model, DQN))


class PastSelves(Agent):
    """Self-play for Stable-Baselines3: a partner or opponent of ``Cuatrola-v0`` that plays one of a
    learning model's past snapshots, drawn afresh each episode (the latest with probability
    ``latest``, else any of the last ``size``). :class:`SnapshotCallback` follows the model and adds
    its snapshots as it learns; until the first one, it plays random legal actions. The environments
    must run in the learning process (``make_vec_env``'s default ``DummyVecEnv``)::

        selves = PastSelves()
        env = make_vec_env("Cuatrola-v0", n_envs=8, env_kwargs={"opponents": selves})
        model = MaskablePPO("MlpPolicy", env)
        model.learn(200_000, callback=SnapshotCallback(selves, every=20_000))
    """

    def __init__(self, size: int = 8, latest: float = 0.5, seed: int | None = None):
        super().__init__(seed)
        if size < 1 or not 0.0 <= latest <= 1.0:
            raise ValueError(f"PastSelves needs size >= 1 and latest in [0, 1], got size={size}, latest={latest}")
        self.size, self.latest = size, latest
        self.model: BaseAlgorithm | None = None
        self.player = None  # a copy of the model's policy, with the snapshot of this episode
        self.snapshots: list[dict] = []

    def add(self, model: BaseAlgorithm) -> None:
        """``model``'s policy as it is now, as the newest snapshot."""
        if self.player is None:
            self.model = model
            self.player = model.policy.__class__(**model.policy._get_constructor_parameters())
            self.player.set_training_mode(False)
        state = {k: v.detach().clone() for k, v in model.policy.state_dict().items()}
        self.snapshots = [*self.snapshots, state][-self.size:]

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        if self.snapshots:
            newest = self.rng.random() < self.latest
            pick = len(self.snapshots) - 1 if newest else int(self.rng.integers(len(self.snapshots)))
            self.player.load_state_dict(self.snapshots[pick])

    def act(self, view: SeatView) -> int:
        if not self.snapshots:
            return int(self.rng.choice(view.legal_actions))
        return best_legal(self.player, view, isinstance(self.model, DQN))


class SnapshotCallback(BaseCallback):
    """Adds the learning model's policy to ``selves`` when learning starts and every ``every`` steps
    (of all environments) after."""

    def __init__(self, selves: PastSelves, every: int = 10_000):
        super().__init__()
        if every < 1:
            raise ValueError(f"every must be at least 1, got {every}")
        self.selves, self.every, self.last = selves, every, 0

    def _on_training_start(self) -> None:
        self.selves.add(self.model)
        self.last = self.num_timesteps

    def _on_step(self) -> bool:
        if self.num_timesteps - self.last >= self.every:
            self.selves.add(self.model)
            self.last = self.num_timesteps
        return True


__all__ = ["PastSelves", "SB3Agent", "SB3Error", "SnapshotCallback", "best_legal", "load_policy"]
