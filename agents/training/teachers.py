"""Teachers: what labels a decision with the value of each legal action, named by an agent spec.

A teacher is named in a run's config (``teacher: pimc:worlds=32``) with the spec language of
``evaluate.py`` agents (:mod:`agents.registry`), plus one name of its own:

- ``actual``: the *actual* deal, played out double-dummy (:func:`actual_values`; the trainer knows
  every hidden card: one solve a legal action, and over many deals the values tend to PIMC's with
  unlimited worlds drawn from the true posterior of the games played);
- ``pimc:worlds=N``: PIMC's own values, the mean over N deals drawn from what the seat saw
  (:meth:`agents.pimc.PIMCAgent.label_values`);
- ``search:…`` and ``bot:level=master``: the search's values over the deals it draws as the
  bids and plays make likely, a bid valued as the search bids (by the network's rollouts for
  ``bid=rollout``, as level master does) (:meth:`agents.search.SearchAgent.label_values`);
- ``search:…,path=student``: that search over the *student's own* network as it stands at the start
  of each iteration (its inference and its rollouts), not over a file: expert iteration, where
  each round's student powers the next round's teacher, and a recipe names no model outside it;
- ``rollout``: the student itself playing the actual deal out after each legal action, greedily, in
  every seat and from each seat's own view (no seat reads another's cards, as at a real table): each
  label is what the action is worth with the network's own play, and over many deals the values
  tend to the network's own action values, so a policy fitted to them is one step of policy
  improvement (the labeller plays these rollouts in its batch: :func:`.distill.rollout_values`);
- ``imitate:SPEC``: any agent's own choice, valued 1 and every other legal action 0 (with
  ``policy_target: labels`` and a small ``tau``, the network learns to play as the agent does:
  behaviour cloning, as ``evaluate.py exploit --clone`` uses it for agents slow to query).

Any agent with a ``label_values(view, legal, margin_coef) -> values`` method teaches: a new
teacher is that method on an agent (a plug-in ``package.module:Class`` included) and nothing
here. :func:`teacher_for` makes the teacher of a spec; :meth:`Teacher.values` labels one decision.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import torch

from cuatrola_env.observation import OBS_DIM
from cuatrola_env.rules import NUM_ACTIONS, Rules

from ..export import onnx_graph
from ..pimc import PIMCAgent
from ..policy import capped_session_options
from ..registry import make_agent, parse_spec

try:  # the export extra: with onnxruntime, and onnx for torch's exporter, the student's graph runs there (below)
    import onnxruntime
except ImportError:  # the train extra alone: PyTorch runs it
    onnxruntime = None
EXPORTABLE = onnxruntime is not None and importlib.util.find_spec("onnx") is not None

ACTUAL = "actual"  #: the teacher that values each action on the actual deal
ROLLOUT = "rollout"  #: the teacher that values each action by the student's own play of the actual deal
IMITATE = "imitate:"  #: the prefix of a teacher that values the agent's own choice 1, the rest 0
STUDENT = "student"  #: ``path=student``: a search teacher searches with the student's own network


class StudentPolicy:
    """The student network as a search's policy: what :class:`~agents.policy.OnnxPolicy` gives a
    search (``rules``, ``obs_dim``, ``logits``), in the labeller's process. The network must not
    change while the policy is used. With onnx and onnxruntime installed, the network's exported graph
    (:func:`~agents.export.onnx_graph`, made at the first call) runs it, as a shipped model runs: on
    the small batches of a search's rollouts a pass is several times faster than PyTorch's, and the
    search's labels about a quarter faster (``benchmarks/bench_labels.py --phase bids
    --student-torch``); without it, PyTorch runs it."""

    def __init__(self, net: torch.nn.Module, rules: Rules, use_onnx: bool = True):
        self.net, self.rules, self.obs_dim = net, rules, OBS_DIM
        self.use_onnx = use_onnx and EXPORTABLE
        self.session = None

    def logits(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The student's policy logits of a batch, as the exported graph gives them."""
        o = np.ascontiguousarray(obs, np.float32).reshape(-1, OBS_DIM)
        m = np.ascontiguousarray(mask, bool).reshape(-1, NUM_ACTIONS)
        if self.use_onnx:
            return self.graph().run(["logits"], {"observation": o, "action_mask": m})[0]
        with torch.no_grad():
            return self.net.policy(torch.from_numpy(o), torch.from_numpy(m)).numpy()

    def graph(self):
        """The onnxruntime session of the network's graph, made at the first call."""
        if self.session is None:
            options = capped_session_options(onnxruntime, torch.get_num_threads())
            self.session = onnxruntime.InferenceSession(onnx_graph(self.net), options,
                                                        providers=["CPUExecutionProvider"])
        return self.session


def over_student(spec: str) -> str | None:
    """The search spec ``spec`` names without its ``path=student`` when it searches with the
    student's network; None for any other spec."""
    try:
        name, opts = parse_spec(spec)
    except ValueError:
        return None
    if name != "search" or opts.get("path") != STUDENT:
        return None
    return "search:" + ",".join(f"{k}={v}" for k, v in opts.items() if k != "path")


def actual_values(view, world: list[int], margin_coef: float = 0.0) -> np.ndarray:
    """(len(legal),) game points for the acting seat's team of each legal action of ``view`` when
    the hand is played out double-dummy on ``world`` (every seat's unplayed cards): a card, the
    position solved after it; a bid, the hand solved under the contract it leads to, the seats
    after it passing (:class:`~agents.pimc.PIMCAgent`'s valuation on one deal)."""
    legal = view.legal_actions
    if view.phase == 0:
        return PIMCAgent.bid_points(view, legal, [world]).mean(1)
    return PIMCAgent.card_points(view, legal, [world], margin_coef).mean(1)


class Teacher:
    """The teacher a spec names: :meth:`values` of one decision."""

    def __init__(self, spec: str, agent=None, imitate: bool = False):
        self.spec, self.agent, self.imitate = spec, agent, imitate

    @property
    def rolls_out(self) -> bool:
        """Whether the labeller values the decisions by the student's own rollouts (``rollout``),
        in its batch, rather than by :meth:`values` one at a time."""
        return self.spec == ROLLOUT

    def values(self, view, actual: np.ndarray, margin_coef: float = 0.0) -> np.ndarray:
        """(24,) each legal action's value for the acting seat's team (``actual``: every seat's
        unplayed cards, read by the ``actual`` teacher only); NaN off the legal actions."""
        if self.rolls_out:
            raise ValueError("the rollout teacher plays the student's network in the labeller's batch; it values "
                             "no decision alone")
        out = np.full(NUM_ACTIONS, np.nan, np.float32)
        legal = view.legal_actions
        if self.agent is None:
            out[legal] = actual_values(view, [int(h) for h in actual], margin_coef)
        elif self.imitate:
            out[legal] = 0.0
            out[self.agent.act(view)] = 1.0
        else:
            out[legal] = self.agent.label_values(view, legal, margin_coef)
        return out


def teacher_for(spec: str, seed: int | None = None, student: StudentPolicy | None = None) -> Teacher:
    """The teacher ``spec`` names; a ``ValueError`` says why a spec cannot teach. A search over the
    student (``path=student``) searches with ``student``; without one (a config being checked, no
    network yet) with the shipped models, so that its options are checked all the same."""
    if spec in (ACTUAL, ROLLOUT):
        return Teacher(spec)
    searched = over_student(spec)
    if searched is not None:
        return Teacher(spec, make_agent(searched, seed=seed, policy=student))
    if spec.startswith(IMITATE):
        return Teacher(spec, make_agent(spec[len(IMITATE):], seed=seed), imitate=True)
    agent = make_agent(spec, seed=seed)
    if not callable(getattr(agent, "label_values", None)) or not getattr(agent, "at_search_level", True):
        raise ValueError(f"teacher {spec!r} gives no values of the legal actions: teachers are {ACTUAL}, {ROLLOUT}, pimc:…, "
                         "search:…, bot:level=master, imitate:SPEC (any agent's own choices), or an agent with a "
                         "label_values(view, legal, margin_coef) method")
    return Teacher(spec, agent)


__all__ = ["ACTUAL", "IMITATE", "ROLLOUT", "STUDENT", "StudentPolicy", "Teacher", "actual_values", "over_student",
           "teacher_for"]
