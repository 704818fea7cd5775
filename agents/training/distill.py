"""Teacher–student self-play: the network plays, a teacher labels each decision with the value of
every legal action, and the network learns those values and a policy from them.

    python train.py                                                 # the default run (configs/default.yaml)
    python train.py --config expert                                 # the recipe of level expert's model
    python train.py --resume runs/NAME/checkpoint.pt                # continue after the last iteration

The teacher is named with the spec language of ``evaluate.py`` agents (:mod:`.teachers`):
``actual`` (the actual deal, played out double-dummy: the trainer knows every hidden card, so a
label costs one solve a legal action; the default run's), ``rollout`` (the student's own greedy play
of the actual deal after each legal action, every seat from its own view), ``pimc:worlds=32`` (PIMC's own values over
32 deals drawn from what the seat saw), ``search:…`` or ``bot:level=master``. Which decisions it
labels is the run's :class:`LabelSpec` (bids or not, and how; the tricks whose card plays), how the
games are played its :class:`PlaySpec`.

Each iteration:

1. **Play and label** (tasks of ``per_task`` hands on ``workers`` Ray workers): a batch of hands
   stepped at once, the network sampled at ``temperature`` in every seat, except that in
   ``heuristic_frac`` of the games one team is the heuristic bot, in ``rival_frac`` the agent
   ``rival`` names (by default a cheap PIMC: players that reason from the double-dummy solver,
   whose plays the network must learn to read too) and in ``past_frac`` a past network of this run.
   The scores before each hand are drawn below the match target. Each decision the label spec
   chooses that has more than one legal action gets the teacher's value of every legal action.
2. **Keep** the latest ``window`` labelled decisions (the replay window), compactly
   (:mod:`.labels`); older ones are dropped.
3. **Fit** ``fit_epochs`` passes over the window: the action-value head (a state value plus a
   centred advantage) by a Huber loss on the legal actions' labels; the policy by cross-entropy
   towards ``softmax(Q / tau)`` of its *own* action-value head (``policy_target: q``; one deal's
   labels would be PIMC's voting) or of the labels (``labels``: for teachers that average many
   deals); the card-location head against the actual deal, weighted ``owner_coef``. A twentieth of
   the deals, chosen by the deal itself, is never fitted: held-out agreement and regret (what the
   policy's choice gives up against the best label) are measured on them.

After the last iteration, ``final_epochs`` more passes over the window (no new labels), the
learning rate falling from ``learning_rate`` to 0 by a cosine: a head declared larger than the
others (``late_hidden``, ``late_layers``) comes closer to its teacher this way.

The network is :class:`~agents.network.NetworkSpec`'s, its heads declared by the config: a late
card-play head from trick ``late_from_trick`` on (``late_hidden`` x ``late_layers``), an early one
before it (``early_head``); a head the starting network lacks starts as a copy of its policy head
(widened), or fresh when deeper. The starting network's own heads are kept as they are.

TensorBoard: ``charts/labels_per_s``, ``charts/labels``, ``losses/`` (Huber, policy cross-entropy,
card location, held-out agreement and regret), ``eval/`` (as every run). A checkpoint (and the
window, ``data/window.npz``) is written atomically after every iteration and final pass; a resumed
run goes on exactly as the uninterrupted one.
"""

from __future__ import annotations

import dataclasses
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from torch.utils.tensorboard import SummaryWriter

from cuatrola_env.cli import brief
from cuatrola_env.positions import Positions
from cuatrola_env.rules import NUM_ACTIONS, NUM_CARDS, NUM_TRICKS, Rules, get_rules
from cuatrola_env.view import HandHistories, batch_views

from ..checkpoint import CheckpointError, kept, network_spec, save_checkpoint
from ..heuristic import HeuristicAgent
from ..network import MASKED_LOGIT, NetworkSpec, PolicyValueNet, build
from ..parallel import Runner, Stopped
from ..registry import make_agent
from .config import (
    LATER_FIELDS,
    RESUMABLE,
    Algorithm,
    RunConfig,
    check_at_least,
    check_choice,
    check_counts,
    later_minutes,
    learner_device,
    option,
    run_rules,
)
from .fitting import minibatch_passes, renamed_suits, soft_cross_entropy, soft_targets, with_weights
from .labels import (
    HAND_FIELDS,
    LABEL_FIELDS,
    MAX_DECISIONS,
    card_owners,
    empty_data,
    hand_tasks,
    label_in_tasks,
    load_data,
    merge,
    replay_decisions,
    save_data,
)
from .report import evaluate_policy, interval, time_left
from .state import put_back, restore_run, run_state
from .stopping import stop_signals
from .teachers import ACTUAL, ROLLOUT, StudentPolicy, teacher_for

WINDOW_FILE = "data/window.npz"
SELF, HEURISTIC, PAST, RIVAL = 0, 1, 2, 3  #: who plays the opposing team of a game
BID_LABELS = ("teacher", "rollout", "none")  #: how a bid is valued (none: bids are not labelled)
POLICY_TARGETS = ("q", "labels")  #: what the policy is distilled towards


@dataclasses.dataclass
class DistillConfig(RunConfig):
    """A teacher–student run: the fields of every run (some with defaults of its own), and these. The
    defaults are the default run's first stage (``python train.py``)."""

    algorithm: str = option("distill", RunConfig.__dataclass_fields__["algorithm"].metadata["help"])
    exp_name: str = option("cuatrola", "run name prefix: runs/<exp_name>_<seed>_<time>")
    hidden: int = option(256, "hidden units per layer")
    eval_every: int = option(6, "evaluate after the first iteration and every N iterations (0: never)")
    workers: int = option(2, RunConfig.__dataclass_fields__["workers"].metadata["help"])
    then: str = option("finetune", RunConfig.__dataclass_fields__["then"].metadata["help"])
    minutes: float = option(42.0, RunConfig.__dataclass_fields__["minutes"].metadata["help"])
    iterations: int = option(30, "play-label-fit iterations")
    hands: int = option(12_000, "hands played and labelled per iteration")
    per_task: int = option(1_000, "hands per task (stepped at once, the network's inference batched)")
    window: int = option(1_000_000, "labelled decisions kept for fitting (the latest; the replay window)")
    temperature: float = option(1.0, "temperature of the network's sampled play")
    heuristic_frac: float = option(0.0, "share of games in which one team is the heuristic bot")
    rival: str = option("pimc:worlds=4", "agent spec of the team of rival_frac of the games (evaluate.py's specs)")
    rival_frac: float = option(0.0, "share of games in which one team is the agent rival names")
    past_frac: float = option(0.2, "share of games in which one team is a past network of this run")
    pool: int = option(5, "past networks kept (one added every iteration)")
    teacher: str = option(ACTUAL, "what labels each decision: actual (the actual deal, played out double-dummy), rollout "
                                  "(the network itself playing the actual deal out in every seat), or an "
                                  "agent spec that values actions (pimc:worlds=32, search:..., bot:level=master), or "
                                  "imitate:SPEC (the agent's own choice 1, the rest 0: behaviour cloning)")
    bids: str = option("rollout", "how a bid is labelled: teacher (as the teacher values it), rollout (the network "
                                  "playing the actual deal out in every seat under each bid) or none (not labelled)")
    from_trick: int = option(0, "label the card plays from this trick on (from 0; 0: every trick)")
    to_trick: int = option(NUM_TRICKS, "label the card plays of the tricks before this one (5: all of them; 0: none, "
                                        "the bids alone)")
    margin_coef: float = option(0.5, "add this times the team's final card-point margin / 100 to a card's label "
                                     "(pass, solo)")
    policy_target: str = option("q", "what the policy is distilled towards: softmax(Q / tau) of its own action values "
                                     "(q) or of the labels (labels: for labels averaged over many deals)")
    late_from_trick: int = option(0, "0: one policy head; k: a late card-play head plays the tricks from k on (from 0)")
    late_hidden: int = option(0, "units a layer of the late head (0: hidden)")
    late_layers: int = option(0, "hidden layers of the late head (0: layers)")
    early_head: bool = option(False, "a card-play head for the tricks before late_from_trick (the policy head then "
                                     "only bids)")
    tau: float = option(0.1, "temperature of the policy target softmax(values / tau), in game points")
    q_coef: float = option(1.0, "weight of the action-value head's Huber loss")
    owner_coef: float = option(0.5, "weight of the card-location head's cross-entropy")
    fit_epochs: int = option(1, "passes over the window per iteration")
    fit_rows: int = option(0, "fit at most this many decisions an iteration pass, drawn from the window afresh each "
                              "time (0: the whole window): an iteration's time stays bounded as the window grows")
    final_epochs: int = option(0, "passes over the window after the last iteration, the learning rate falling from "
                                  "learning_rate to 0 by a cosine")
    fresh_final: bool = option(False, "the final passes refit the late head afresh: its weights drawn anew from the "
                                      "seed before the first, every other head frozen in them")
    stream: int = option(0, "the stream of deals drawn from the seed (0: its own); a later stage draws another")
    join: str = option("", "a new run's window starts with the labels of an earlier recipe stage: its name (that "
                           "stage's latest run with this seed in --run-dir) or a window file (data/window.npz)")
    fit_suits: bool = option(False, "fit each decision with its suits renamed at random (the rules treat the suits "
                                    "alike: one label stands for 24 positions)")
    fit_batch: int = option(1024, "minibatch size")
    lr_final: float = option(5e-5, "learning rate of the last iteration, reached linearly from learning_rate "
                                   "(below 0: learning_rate throughout)")


#: fields a resumed run may change (its labels depend on no worker count: each task has its own seed)
DISTILL_RESUMABLE = RESUMABLE + ("iterations", "final_epochs", "workers")

#: what a checkpoint to resume from holds
RESUME_FIELDS = ("run_name", "config", "optimizer", "iteration", "rng", "torch_rng", "pool", "labels")


@dataclasses.dataclass(frozen=True)
class PlaySpec:
    """How the labelled games are played: the network sampled at ``temperature`` in every seat but
    the opposing team's of a share of the games (the heuristic, the ``rival`` agent, a past network)."""

    temperature: float = 1.0
    heuristic_frac: float = 0.0
    rival: str = "pimc:worlds=4"
    rival_frac: float = 0.0
    past_frac: float = 0.0

    @classmethod
    def of(cls, cfg: DistillConfig) -> PlaySpec:
        return cls(cfg.temperature, cfg.heuristic_frac, cfg.rival, cfg.rival_frac, cfg.past_frac)


@dataclasses.dataclass(frozen=True)
class LabelSpec:
    """Which decisions are labelled, and by what: the ``teacher`` (a spec, :mod:`.teachers`); bids by
    it, by rollouts of the network on the actual deal, or not at all (``bids``); the card plays of
    tricks ``from_trick`` to ``to_trick - 1``; a card's share of the card-point margin ``margin``."""

    teacher: str = ACTUAL
    bids: str = "rollout"
    from_trick: int = 0
    to_trick: int = NUM_TRICKS
    margin: float = 0.0

    @classmethod
    def of(cls, cfg: DistillConfig) -> LabelSpec:
        return cls(cfg.teacher, cfg.bids, cfg.from_trick, cfg.to_trick, cfg.margin_coef)

    def chooses(self, phase: np.ndarray, trick: np.ndarray, choice: np.ndarray) -> np.ndarray:
        """(N,) bool: the decisions (``phase``, ``trick`` in play, more than one legal action:
        ``choice``) this spec labels."""
        card = (phase == 1) & (trick >= self.from_trick) & (trick < self.to_trick)
        bid = (phase == 0) & (self.bids != "none")
        return choice & (card | bid)


def student(cfg: DistillConfig, start: dict | None = None) -> PolicyValueNet:
    """The network of a run of ``cfg`` (with the dueling action-value head and the card-location
    head) from ``start`` (``{"model": weights, "network": their NetworkSpec}``, or None: fresh): the
    heads ``start`` holds are kept as they are (a late head of its own size and trick); the heads the
    config declares and ``start`` lacks are added (:func:`agents.network.build`: a late head of the
    policy head's depth starts as its copy, widened; an early head as its copy)."""
    held = start["network"] if start else NetworkSpec(cfg.hidden, cfg.layers)  # fresh: no head held
    late_held, early_held = held.late_from_trick is not None, held.early_head
    if late_held and cfg.late_from_trick not in (0, held.late_from_trick):
        raise CheckpointError(f"the network's late head plays from trick {held.late_from_trick}, "
                              f"not late_from_trick {cfg.late_from_trick}")
    if late_held:
        late = (held.late_from_trick, held.late_hidden, held.late_layers)
    elif cfg.late_from_trick:
        late = (cfg.late_from_trick, cfg.late_hidden or cfg.hidden, cfg.late_layers or cfg.layers)
    else:
        late = (None, None, None)
    net = build(NetworkSpec(cfg.hidden, cfg.layers, q_head=True, dueling=True, owners=True, late_from_trick=late[0],
                            late_hidden=late[1], late_layers=late[2], early_head=cfg.early_head or early_held))
    if start is None:
        return net.eval()
    net = with_weights(net, start["model"], ("q_net.", "owner_net.") + (() if late_held else ("late_net.", "late_from_trick"))
                       + (() if early_held else ("early_net.",)))
    net.heads_from_policy(late=not late_held, early=not early_held)
    return net


# ----------------------------------------------------------------------------- the batched labeller
def play_and_label(weights: dict, past: dict | None, spec: dict, rules: str | dict, play: dict, labels: dict,
                   seed: int, hands: int) -> dict:
    """Play ``hands`` hands at once as ``play`` (a :class:`PlaySpec` as a dict) says, each decision
    ``labels`` (a :class:`LabelSpec` as a dict) chooses valued by its teacher. Returns the compact
    data of :mod:`.labels`. ``weights`` and ``past`` are networks of ``spec`` (a
    :class:`~agents.network.NetworkSpec` as a dict)."""
    torch.set_num_threads(1)
    play, how = PlaySpec(**play), LabelSpec(**labels)
    rules_set, rng, spec = get_rules(rules), np.random.default_rng(seed), NetworkSpec.from_dict(spec)
    nets = {SELF: _network(weights, spec), PAST: _network(past, spec) if past is not None else None}
    opponent, opp_team = _opponents(hands, play, past is not None, rng), rng.integers(0, 2, hands)
    pos = Positions.random(hands, rules_set, int(rng.integers(2**63)), score=_match_scores(hands, rules_set, rng))
    deal, found, history = pos.hands.copy(), [], HandHistories(hands)  # history: the agents' samplers read it
    rivals = {HEURISTIC: HeuristicAgent(), RIVAL: make_agent(play.rival, seed=seed)}
    teacher = teacher_for(how.teacher, seed=seed + 1, student=StudentPolicy(nets[SELF], rules_set))
    for t in range(MAX_DECISIONS):
        live = np.flatnonzero(~pos.done)
        if not live.size:
            break
        bits = pos.legal_bits
        views = batch_views(pos, live, bits, history=history)
        found += [(i, t, v) for i, v in _label_step(pos, live, bits, views, nets[SELF], how, teacher)]
        who = np.where((pos.current[live] & 1) == opp_team[live], opponent[live], SELF)
        acts = _actions(pos, live, bits, who, views, nets, rivals, play.temperature, rng)
        history.record(live, pos.current[live], acts)
        step = np.full(hands, NUM_CARDS)
        step[live] = acts
        pos.step(step)
    return _compact(pos, deal, history.action, found)


def _network(weights: dict, spec: NetworkSpec) -> PolicyValueNet:
    return with_weights(build(spec), weights, ())


def _label_step(pos: Positions, live: np.ndarray, bits: np.ndarray, views, net: PolicyValueNet, how: LabelSpec,
                teacher) -> list[tuple[int, np.ndarray]]:
    """(game, its 24 values) of each live game whose decision ``how`` labels: by rollouts of the
    network (bids when ``how.bids`` says so; every decision with the ``rollout`` teacher), the rest by
    the teacher."""
    trick = np.array([v.trick_num if v.phase == 1 else -1 for v in views])
    chosen = how.chooses(pos.phase[live], trick, np.bitwise_count(bits[live]) > 1)
    bid = pos.phase[live] == 0
    by_rollout = (bid & (how.bids == "rollout")) | (teacher.rolls_out & (~bid | (how.bids == "teacher")))
    rolled = live[chosen & by_rollout]
    out = list(zip(rolled.tolist(), rollout_values(pos, rolled, bits, net), strict=True))
    for k in np.flatnonzero(chosen & ~np.isin(live, rolled)):
        out.append((int(live[k]), teacher.values(views[k], pos.hands[live[k]], how.margin)))
    return out


def rollout_values(pos: Positions, rows: np.ndarray, bits: np.ndarray, net: PolicyValueNet) -> list[np.ndarray]:
    """(24,) per game ``rows``: each legal action's game points for the acting seat's team when the
    actual deal is then played out (the rest of the bidding too) by the network's most likely action
    in every seat, each seat reading its own observation: what the action is worth with the
    network's own play, which double-dummy play flatters. NaN off the legal actions."""
    rows = np.asarray(rows, np.int64)
    if not rows.size:
        return []
    legal = [np.flatnonzero((int(bits[i]) >> np.arange(NUM_ACTIONS)) & 1) for i in rows]
    game = np.repeat(np.arange(rows.size), [len(x) for x in legal])
    action = np.concatenate(legal)
    trial = pos.take(rows[game])
    team = trial.current & 1
    trial.step(action)
    winner, points = trial.play_out(lambda p, live, b: _greedy(net, p, live, b))
    out = [np.full(NUM_ACTIONS, np.nan, np.float32) for _ in rows]
    for g, a, w, gp, me in zip(game, action, winner, points, team, strict=True):
        out[g][a] = gp if w == me else -gp
    return out


def _greedy(net: PolicyValueNet, pos: Positions, live: np.ndarray, bits: np.ndarray) -> np.ndarray:
    at = pos.take(live)
    with torch.no_grad():
        logits = net.policy(torch.from_numpy(at.observe()), torch.from_numpy(pos.legal_mask(bits[live])))
    return logits.argmax(-1).numpy()


def _opponents(n: int, play: PlaySpec, have_past: bool, rng: np.random.Generator) -> np.ndarray:
    shares = {HEURISTIC: play.heuristic_frac, RIVAL: play.rival_frac, PAST: play.past_frac if have_past else 0.0}
    edges = np.cumsum(list(shares.values()))
    kind = np.searchsorted(edges, rng.random(n), side="right")  # the first share whose edge is above u
    return np.append(list(shares), SELF)[kind]


def _match_scores(n: int, rules: Rules, rng: np.random.Generator) -> np.ndarray:
    """Scores before each hand: 0-0 for half the hands, else any score short of the target (the
    bids a team may make depend on it)."""
    score = rng.integers(0, rules.target, size=(n, 2))
    score[rng.random(n) < 0.5] = 0
    return score.astype(np.int16)


def _actions(pos: Positions, live: np.ndarray, bits: np.ndarray, who: np.ndarray, views, nets, rivals: dict,
             temperature: float, rng: np.random.Generator) -> np.ndarray:
    """The actions of the live games: each network's sampled at ``temperature``, the heuristic's and
    the rival's (``rivals``, by kind) their own."""
    out = np.zeros(live.size, np.int64)
    obs, mask = pos.take(live).observe(), pos.legal_mask(bits[live])
    for kind in (SELF, PAST):
        rows = np.flatnonzero(who == kind)
        if rows.size:
            with torch.no_grad():
                logits = nets[kind].policy(torch.from_numpy(obs[rows]), torch.from_numpy(mask[rows])).numpy()
            out[rows] = sample(logits, mask[rows], temperature, rng)
    for kind, agent in rivals.items():
        for r in np.flatnonzero(who == kind):
            out[r] = agent.act(views[r])
    return out


def sample(logits: np.ndarray, mask: np.ndarray, temperature: float, rng: np.random.Generator) -> np.ndarray:
    """One legal action per row: ``softmax(logits / temperature)`` sampled (Gumbel), or the most likely at 0."""
    z = np.where(mask, logits.astype(np.float64), MASKED_LOGIT)
    if temperature > 0:
        z = z / temperature - np.log(-np.log(rng.random(z.shape)))
        z[~mask] = -np.inf
    return z.argmax(1)


def _compact(pos: Positions, deal: np.ndarray, actions: np.ndarray, labels: list) -> dict:
    """The hands played and their labels as :mod:`.labels`' compact arrays, labels in hand order."""
    s = pos.state
    labels = sorted(labels, key=lambda x: (x[0], x[1]))
    return {
        "deal": deal.astype(np.uint32), "dealer": s.dealer.astype(np.int8), "muestra": s.muestra.astype(np.int8),
        "score": s.score.astype(np.int16), "actions": actions, "length": (actions >= 0).sum(1).astype(np.int8),
        "hand": np.array([x[0] for x in labels], np.int32), "step": np.array([x[1] for x in labels], np.int8),
        "values": np.array([x[2] for x in labels], np.float16).reshape(-1, NUM_ACTIONS),
    }


# ----------------------------------------------------------------------------- the replay window
@dataclasses.dataclass
class Window:
    """The latest labelled decisions: their compact data and, rebuilt from it once, the fitting arrays."""

    data: dict
    obs: np.ndarray
    mask: np.ndarray
    values: np.ndarray  #: the labels, 0 off the legal actions
    owners: np.ndarray  #: the card-location targets (:func:`~.labels.card_owners`)
    held: np.ndarray  #: decisions of held-out deals (never fitted)

    @classmethod
    def of(cls, data: dict, rules: Rules) -> Window:
        r = replay_decisions(data, rules)
        held = held_out_deals(data["deal"])[data["hand"]]
        return cls(data, r.obs, r.mask, np.nan_to_num(data["values"].astype(np.float32)), card_owners(r), held)

    def __len__(self) -> int:
        return len(self.data["hand"])

    def add(self, new: Window, limit: int) -> Window:
        """This window with ``new`` appended, cut to the latest ``limit`` decisions (rounded up to whole
        hands: the oldest hand kept brings all its labels)."""
        data = merge([self.data, new.data])
        joined = Window(data, *(np.concatenate([getattr(self, k), getattr(new, k)])
                                for k in ("obs", "mask", "values", "owners", "held")))
        return joined.latest(limit)

    def latest(self, limit: int) -> Window:
        if len(self) <= limit:
            return self
        hand = self.data["hand"]  # in hand order: the labels kept are a suffix
        first = int(hand[len(self) - limit])  # the oldest hand kept whole
        keep = slice(int(np.searchsorted(hand, first)), None)
        data = {k: self.data[k][first:] for k in HAND_FIELDS} | {k: self.data[k][keep] for k in LABEL_FIELDS}
        data["hand"] = data["hand"] - first  # hands are numbered by their rows
        return Window(data, self.obs[keep], self.mask[keep], self.values[keep], self.owners[keep], self.held[keep])


def held_out_deals(deal: np.ndarray) -> np.ndarray:
    """(hands,) bool: a twentieth of the deals, chosen by the cards themselves (the same deal is
    always on the same side of the split)."""
    h = deal.astype(np.uint64)
    key = (h[:, 0] * np.uint64(0x9E3779B97F4A7C15)) ^ (h[:, 1] * np.uint64(0xBF58476D1CE4E5B9)) ^ h[:, 2]
    return (key >> np.uint64(33)) % np.uint64(20) == 0


# ----------------------------------------------------------------------------- fitting
def fit(net: PolicyValueNet, opt, cfg: DistillConfig, window: Window, rng: np.random.Generator,
        stop: Callable[[], bool] | None = None, final: bool = False) -> dict:
    """``cfg.fit_epochs`` passes over the window's fitted decisions (one, for a ``final`` pass); the
    losses and held-out agreement (:class:`~agents.parallel.Stopped` between two steps once ``stop()``)."""
    device = next(net.parameters()).device
    train = np.flatnonzero(~window.held)
    if cfg.fit_rows and not final and len(train) > cfg.fit_rows:
        train = np.sort(rng.choice(train, cfg.fit_rows, replace=False))
    def losses(idx: np.ndarray) -> dict:
        o, m, v, owners = _batch(window, idx, device)
        if cfg.fit_suits:
            o, (m, v, owners) = renamed_suits(o, (m, v, owners), rng)
        return _losses(net, cfg, o, m, v, owners)

    stats = minibatch_passes(net, opt, train, 1 if final else cfg.fit_epochs, cfg.fit_batch, cfg.max_grad_norm, losses,
                             lambda x: x["policy_ce"] + cfg.q_coef * x["q_huber"] + cfg.owner_coef * x["owner_ce"], rng,
                             stop)
    held = np.flatnonzero(window.held)
    if held.size:
        with torch.no_grad():
            stats.update(held_out(net, cfg, *_batch(window, held, device)))
    return stats


def late_head_alone(net: PolicyValueNet, opt, seed: int, redraw: bool) -> None:
    """A final pass of a ``fresh_final`` run: only the late head learns, every other parameter frozen;
    before the first (``redraw``), its weights drawn afresh from ``seed`` and its optimiser state cleared."""
    if redraw:
        net.redraw_late_head(seed)
        for param in net.late_net.parameters():
            opt.state.pop(param, None)
    for name, param in net.named_parameters():
        param.requires_grad_(name.startswith("late_net."))


def _batch(w: Window, idx: np.ndarray, device) -> tuple[torch.Tensor, ...]:
    return tuple(torch.from_numpy(x[idx]).to(device) for x in (w.obs, w.mask, w.values, w.owners))


def _losses(net: PolicyValueNet, cfg: DistillConfig, o, m, v, owners) -> dict[str, torch.Tensor]:
    q = net.q(o, m)
    target = soft_targets(v if cfg.policy_target == "labels" else q.detach(), m, cfg.tau)
    ce = soft_cross_entropy(net.policy(o, m), target, m).mean()
    owner_logits = net.owners(o, m).reshape(-1, 3)
    owner_ce = torch.nn.functional.cross_entropy(owner_logits, owners.reshape(-1), ignore_index=-1)
    return {"policy_ce": ce, "q_huber": torch.nn.functional.huber_loss(q[m], v[m]), "owner_ce": owner_ce}


def held_out(net: PolicyValueNet, cfg: DistillConfig, o, m, v, owners) -> dict[str, float]:
    """On the held-out deals: how often the policy's and the action values' best action is a best
    label (ties count), what each gives up against the best label (game points), the losses, and
    how often the card-location head names the right seat."""
    best = torch.where(m, v, torch.full_like(v, -torch.inf)).amax(-1, keepdim=True)
    is_best = (v >= best - 1e-6) & m
    pick = net.policy(o, m).argmax(-1, keepdim=True)
    q_pick = torch.where(m, net.q(o, m), torch.full_like(v, -torch.inf)).argmax(-1, keepdim=True)
    seen = owners >= 0
    owner_hit = (net.owners(o, m).argmax(-1) == owners)[seen]
    losses = _losses(net, cfg, o, m, v, owners)
    label_of = lambda a: v.gather(1, a)  # noqa: E731
    return {"held_out_agreement": float(is_best.gather(1, pick).float().mean()),
            "held_out_regret": float((best - label_of(pick)).mean()),
            "held_out_q_regret": float((best - label_of(q_pick)).mean()),
            "held_out_q_agreement": float(is_best.gather(1, q_pick).float().mean()),
            "held_out_q_huber": losses["q_huber"].item(), "held_out_owner_ce": losses["owner_ce"].item(),
            "held_out_owner_accuracy": float(owner_hit.float().mean()) if owner_hit.numel() else float("nan")}


# ----------------------------------------------------------------------------- the run
def label(runner: Runner, net: PolicyValueNet, pool: list[dict], cfg: DistillConfig, iteration: int,
          rng: np.random.Generator, stop: Callable[[], bool] = lambda: False, postfix: dict | None = None) -> dict:
    """One iteration's data: ``cfg.hands`` hands in tasks of ``cfg.per_task``
    (:class:`~agents.parallel.Stopped` once ``stop()``)."""
    weights = {k: v.detach().cpu().numpy() for k, v in net.state_dict().items()}
    split = hand_tasks(cfg.hands, cfg.per_task, cfg.seed, iteration, cfg.stream)
    past = [pool[int(rng.integers(len(pool)))] if pool and cfg.past_frac > 0 else None for _ in split]
    play, how = dataclasses.asdict(PlaySpec.of(cfg)), dataclasses.asdict(LabelSpec.of(cfg))
    tasks = [(weights, p, net.spec.to_dict(), run_rules(cfg).to_dict(), play, how, seed, n)
             for (seed, n), p in zip(split, past, strict=True)]
    desc = f"iteration {iteration + 1} of {steps(cfg)}: playing and labelling"
    return label_in_tasks(runner, play_and_label, tasks, [n for _, n in split], desc, stop, postfix)


def steps(cfg: DistillConfig) -> int:
    """The run's iterations and final passes: its length in checkpoints."""
    return cfg.iterations + cfg.final_epochs


def run(cfg: DistillConfig, run_name: str, run_dir: Path, net: PolicyValueNet, opt, rng: np.random.Generator,
        iteration: int, window: Window, pool: list[dict], labels: int, stats: dict, stop: dict, evaluate) -> int:
    """Iterations from ``iteration`` up to ``cfg.iterations``, then the final passes, a checkpoint
    after each (with ``stats``, the last step's losses and held-out figures); returns the steps done."""
    rules = run_rules(cfg)
    writer = SummaryWriter(str(run_dir))
    writer.add_text("config", "\n".join(f"|{k}|{v}|" for k, v in dataclasses.asdict(cfg).items()))
    shown: dict[str, str] = {}  #: beside the labelling bar: the latest evaluation against the heuristic
    durations: list[float] = []  #: seconds of each step of this process, for the time left
    later = later_minutes(cfg)  #: minutes the recipe's later stages take on 2 cores (None: unknown)
    with Runner(cfg.workers, cfg.ray_address or None) as runner:
        while iteration < steps(cfg) and not stop["now"]:
            started = time.perf_counter()
            before = kept(snapshot(run_name, cfg, rules, net, opt, rng, iteration, pool, labels, stats))
            try:
                data = label(runner, net, pool, cfg, iteration, rng, lambda: stop["now"], shown) \
                    if iteration < cfg.iterations else empty_data()
                seconds = time.perf_counter() - started
                grown = window.add(Window.of(data, rules), cfg.window) if len(data["hand"]) else window
                for group in opt.param_groups:
                    group["lr"] = learning_rate(cfg, iteration)
                if cfg.fresh_final and iteration >= cfg.iterations:
                    late_head_alone(net, opt, cfg.seed, redraw=iteration == cfg.iterations)
                stats = fit(net, opt, cfg, grown, rng, lambda: stop["now"], final=iteration >= cfg.iterations)
            except Stopped:  # Ctrl-C while labelling or fitting: the run as it was before this step
                save_data(run_dir / WINDOW_FILE, window.data)
                save_checkpoint(run_dir / "checkpoint.pt", before)
                break
            window, labels = grown, labels + len(data["hand"])
            if len(data["hand"]):
                pool = (pool + [{k: v.detach().cpu().clone() for k, v in net.state_dict().items()}])[-cfg.pool:]
            iteration += 1
            _log(writer, stats, labels, iteration, len(data["hand"]) / max(seconds, 1e-9), len(window))
            writer.add_scalar("charts/learning_rate", learning_rate(cfg, iteration - 1), iteration)
            if cfg.eval_every and (iteration == 1 or iteration % cfg.eval_every == 0 or iteration == steps(cfg)):
                shown["vs_heuristic"] = interval(evaluate(writer, net, rules, cfg, labels)["heuristic"])
                print(f"iteration {iteration}: against the heuristic {shown['vs_heuristic']} game points a hand "
                      f"({cfg.eval_deals} deals)", file=sys.stderr)
            save_data(run_dir / WINDOW_FILE, window.data)
            save_checkpoint(run_dir / "checkpoint.pt", snapshot(run_name, cfg, rules, net, opt, rng, iteration, pool, labels,
                                                                stats))
            durations.append(time.perf_counter() - started)
            print(f"{time_left(iteration, steps(cfg), durations, minutes=cfg.minutes, later=later)}: {len(data['hand'])} labels "
                  f"({len(data['hand']) / max(seconds, 1e-9):.0f}/s), window "
                  f"{len(window)}; " + ", ".join(f"{k} {x:.3f}" for k, x in stats.items()), file=sys.stderr, flush=True)
    writer.close()
    return iteration


def learning_rate(cfg: DistillConfig, iteration: int) -> float:
    """The learning rate of step ``iteration`` (from 0): ``learning_rate`` decayed linearly to
    ``lr_final`` at the last iteration (constant when ``lr_final`` is below 0); in the final passes,
    a cosine from ``learning_rate`` towards 0."""
    if iteration >= cfg.iterations:
        return cfg.learning_rate * 0.5 * (1 + math.cos(math.pi * (iteration - cfg.iterations) / cfg.final_epochs))
    if cfg.lr_final < 0 or cfg.iterations < 2:
        return cfg.learning_rate
    done = min(iteration / (cfg.iterations - 1), 1.0)
    return cfg.learning_rate + done * (cfg.lr_final - cfg.learning_rate)


def _log(writer, stats: dict, labels: int, iteration: int, rate: float, window: int) -> None:
    for k, x in stats.items():
        writer.add_scalar(f"losses/{k}", x, iteration)
    writer.add_scalar("charts/labels", labels, iteration)
    writer.add_scalar("charts/labels_per_s", rate, iteration)
    writer.add_scalar("charts/window", window, iteration)


def snapshot(run_name: str, cfg: DistillConfig, rules: Rules, net, opt, rng: np.random.Generator, iteration: int,
             pool: list[dict], labels: int, stats: dict) -> dict:
    """A checkpoint: what every run holds, and its place, labels, past networks and last step's
    figures (the window is :data:`WINDOW_FILE` beside it)."""
    return run_state(run_name, cfg, rules, net, opt, rng, iteration=iteration, step=labels, update=iteration,
                     labels=labels, pool=pool, stats=dict(stats))


def restore(ck: dict, path: str, run_dir: Path, net, opt, rng: np.random.Generator, rules: Rules):
    """Put a checkpoint and its window back; :class:`CheckpointError` names what does not fit."""
    restore_run(ck, path, net, opt, rng)
    pool = put_back(path, "pool", lambda: [_network(p, net.spec).state_dict() for p in ck["pool"]])
    data = load_data(run_dir / WINDOW_FILE)
    try:
        window = Window.of(data, rules)
    except ValueError as e:
        raise CheckpointError(f"{run_dir / WINDOW_FILE}: {e}") from None
    return int(ck["iteration"]), window, pool, int(ck["labels"]), dict(ck.get("stats", {}))


def check(cfg: DistillConfig) -> None:
    """``ValueError`` naming a field no run can start with."""
    check_counts(cfg, "iterations", "hands", "per_task", "window", "pool", "fit_epochs", "fit_batch")
    check_at_least(cfg, 0, "fit_rows", "final_epochs", "late_hidden", "late_layers", "temperature", "stream")
    check_choice(cfg, "bids", BID_LABELS)
    check_choice(cfg, "policy_target", POLICY_TARGETS)
    shares = (cfg.heuristic_frac, cfg.rival_frac, cfg.past_frac)
    if min(shares) < 0 or sum(shares) > 1:
        raise ValueError(f"heuristic_frac, rival_frac and past_frac must be shares summing to at most 1, got {shares}")
    teacher_for(cfg.teacher, seed=0)  # a spec that cannot teach is refused before anything runs
    if cfg.rival_frac:
        make_agent(cfg.rival, seed=0)
    for name in ("from_trick", "late_from_trick"):
        if not 0 <= getattr(cfg, name) <= NUM_TRICKS - 1:
            raise ValueError(f"{name} must be 0 or a trick from 1 to {NUM_TRICKS - 1}, got {getattr(cfg, name)}")
    if cfg.to_trick == 0 and cfg.bids == "none":
        raise ValueError("to_trick 0 labels no card play, and bids 'none' no bid: nothing would be labelled")
    if cfg.to_trick != 0 and not cfg.from_trick < cfg.to_trick <= NUM_TRICKS:
        raise ValueError(f"to_trick must be 0 (no card play) or a trick after from_trick, up to {NUM_TRICKS} (all), "
                         f"got {cfg.to_trick}")
    if cfg.fresh_final and not (cfg.late_from_trick and cfg.bids == "none" and cfg.from_trick >= cfg.late_from_trick):
        raise ValueError("fresh_final refits the late head alone: it needs a late head (late_from_trick) and labels of "
                         "its tricks only (bids none, from_trick at least late_from_trick)")
    if cfg.join:
        joined_file(cfg)
    if cfg.tau <= 0:
        raise ValueError(f"tau must be positive, got {cfg.tau}")
    if cfg.teacher == ROLLOUT and cfg.margin_coef:
        raise ValueError(f"margin_coef shares the solver's card-point margin; the rollout teacher values game points "
                         f"only: set margin_coef 0, got {cfg.margin_coef}")


def check_checkpoint(ck: dict, path: str) -> None:
    """:class:`CheckpointError` naming the first field of a checkpoint a run cannot resume from."""
    if not isinstance(ck["pool"], list) or not all(isinstance(p, dict) for p in ck["pool"]):
        raise CheckpointError(f"{path}: field 'pool' must be the list of the run's past networks")
    if type(ck["labels"]) is not int or ck["labels"] < 0:
        raise CheckpointError(f"{path}: field 'labels' must be a count of labels, got {brief(ck['labels'], 40)}")


def start(cfg: DistillConfig, resume: str | None, ck: dict | None, init: dict | None, run_name: str, run_dir: Path,
          rng: np.random.Generator) -> int:
    """Play, label, fit (:func:`run`), the learner on its device; until the last step, or Ctrl-C / SIGTERM."""
    rules = run_rules(cfg)
    start_from = {"model": ck["model"], "network": network_spec(ck, resume)} if ck else init
    net = student(cfg, start_from).to(learner_device(cfg.device))
    opt = torch.optim.Adam(net.parameters(), lr=cfg.learning_rate, eps=1e-5)
    if ck:
        iteration, window, pool, labels, stats = restore(ck, resume, run_dir, net, opt, rng, rules)
    else:
        iteration, window, pool, labels, stats = 0, first_window(cfg, rules), [], 0, {}
    with stop_signals() as stop:
        iteration = run(cfg, run_name, run_dir, net, opt, rng, iteration, window, pool, labels, stats, stop,
                        evaluate_policy)
    print(f"{'stopped' if stop['now'] else 'finished'}: {iteration} of {steps(cfg)} steps; "
          f"checkpoint {run_dir / 'checkpoint.pt'}")
    return 0


def first_window(cfg: DistillConfig, rules: Rules) -> Window:
    """A new run's window: empty, or the latest ``cfg.window`` labels of the window ``cfg.join`` names."""
    if not cfg.join:
        return Window.of(empty_data(), rules)
    path = joined_file(cfg)
    print(f"the window starts with the labels of {path}", file=sys.stderr, flush=True)
    try:
        return Window.of(load_data(path), rules).latest(cfg.window)
    except ValueError as e:
        raise CheckpointError(f"{path}: {e}") from None


def joined_file(cfg: DistillConfig) -> Path:
    """The window file ``cfg.join`` names: a file, or the latest run of a stage of that name and seed in
    ``cfg.run_dir``; ``ValueError`` when there is none."""
    if cfg.join.endswith(".npz"):
        if not Path(cfg.join).is_file():
            raise ValueError(f"join: no window file {cfg.join}")
        return Path(cfg.join)
    found = sorted(Path(cfg.run_dir).glob(f"{cfg.join}_{cfg.seed}_*/{WINDOW_FILE}"), key=lambda p: p.stat().st_mtime)
    if not found:
        raise ValueError(f"join {cfg.join!r}: no run of that stage with seed {cfg.seed} in {cfg.run_dir} (run the "
                         f"recipe's stage {cfg.join} there first, or name a window file)")
    return found[-1]


def init_weights(init: dict) -> dict:
    """An ``--init`` network for this run's network: a plain action-value head (24 outputs, not a
    dueling one) is dropped, to start fresh as a dueling one."""
    spec = init["network"]
    if not spec.q_head or spec.dueling:
        return init
    return {"model": {k: v for k, v in init["model"].items() if not k.startswith("q_net.")},
            "network": dataclasses.replace(spec, q_head=False)}


#: the fields added after the first checkpoints, with the value the runs before them had
DISTILL_LATER = {**LATER_FIELDS, "fresh_final": False, "join": "", "stream": 0}

ALGORITHM = Algorithm("distill", DistillConfig, resumable=DISTILL_RESUMABLE, resume_fields=RESUME_FIELDS,
                      later=DISTILL_LATER, check=check, check_checkpoint=check_checkpoint,
                      init_weights=init_weights, run=start,
                      finished=lambda ck: ck["iteration"] >= ck["config"]["iterations"] + ck["config"]["final_epochs"])

__all__ = ["ALGORITHM", "DistillConfig", "LabelSpec", "PlaySpec", "Window", "play_and_label", "student"]
