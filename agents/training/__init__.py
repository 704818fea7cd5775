"""Self-play training of a Cuatrola bot: teacher–student self-play (the default; the teacher named
by an agent spec, the actual deal by default) or masked PPO with a perfect-information critic.

    python train.py                                  # the default recipe, configs/default.yaml (:mod:`.distill`)
    python train.py --config expert                  # level expert's recipe, six stages, one command
    python train.py --algorithm ppo --total-decisions 2000000 --num-envs 512  # PPO from scratch
    python train.py --resume runs/NAME/checkpoint.pt # continue a run exactly where it stopped
    tensorboard --logdir runs

What follows is PPO's (:mod:`.ppo`); the others' pages are their modules. One network plays
all four seats from each seat's own observation and learns both the
bids and the card play, with illegal actions masked. Every decision's return is its seat's
result of the hand (game points, undiscounted; hands are short), its advantage that return
minus a critic that sees every hand (training only). Games run batched in
``VectorCuatrola``; acting is batched through the network; no Python loop over games in the
hot path. TensorBoard namespaces: ``charts/`` (throughput, game points), ``losses/``
(policy, value, entropy, KL), ``eval/`` (duplicate evaluation against random and heuristic,
with 95% intervals), ``bids/`` (frequency and success per contract and per seat relative to
the dealer); the config is logged as text. Checkpoints (model, optimiser, config, rules,
observation version, counters, RNG and game state) are written atomically every
``checkpoint_minutes``, at the end and on Ctrl-C or SIGTERM.

Each algorithm is a module (:mod:`.distill`, :mod:`.ppo`; listed in :mod:`.algorithms`) with its
config and run; :mod:`.loop` (``main``) reads the config and hands the run to it. The pieces,
DouZero-style: :mod:`.config` (the fields of every run, and resuming), :mod:`.rollout`
(self-play: games, opponents, the decisions collected; :mod:`.actors` runs it on Ray),
:mod:`.update` (the learner's step), :mod:`.report` (TensorBoard and the periodic evaluation),
:mod:`.state` (checkpoints) and :mod:`.stopping` (Ctrl-C and SIGTERM).
"""

from ..checkpoint import CheckpointError
from .algorithms import ALGORITHMS
from .config import RunConfig
from .loop import main, parse_config

__all__ = ["ALGORITHMS", "CheckpointError", "RunConfig", "main", "parse_config"]
