"""Oracle-labelled self-play: the network learns, at every decision it meets, what each legal
action is worth on the *actual* deal, played out double-dummy.

    python train.py                                                 # the default run (configs/default.yaml)
    python train.py --algorithm oracle --workers 2                  # the same, labelling on 2 Ray workers
    python train.py --resume runs/NAME/checkpoint.pt                # continue after the last iteration

In self-play the trainer knows every hidden card, so labelling a decision costs one double-dummy
solve per legal card (a bid: each contract solved on the deal, as PIMC values a bid) instead of a
search over many sampled deals: a hundred times more labels for the same compute. Fitted by least
squares over the deals as they really occur, an action value learned from such labels tends to the
expected double-dummy value *given the observation*: PIMC with unlimited worlds drawn from the true
posterior of the games played.

Each iteration:

1. **Play and label** (tasks of ``oracle_per_task`` hands on ``workers`` Ray workers): a batch of
   hands stepped at once, the network sampled at ``oracle_temperature`` in every seat, except that
   in ``oracle_heuristic_frac`` of the games one team is the heuristic bot, in
   ``oracle_pimc_frac`` a cheap PIMC (``oracle_pimc_worlds`` deals solved a decision: players that
   reason from the double-dummy solver, whose plays the network must learn to read too) and in
   ``oracle_past_frac`` a past network of this run (no heuristic anywhere unless a run asks for
   it). Each decision with more than one legal action gets the game points, for the acting seat's
   team, of every legal action on the actual deal.
2. **Keep** the latest ``oracle_window`` labelled decisions (the replay window), compactly
   (:mod:`.labels`); older ones are dropped.
3. **Fit** ``fit_epochs`` passes over the window: the action-value head (a state value plus a
   centred advantage) by a Huber loss on the legal actions' labels; the policy by cross-entropy
   towards ``softmax(Q / tau)`` of its *own* action-value head (never of one deal's labels, which
   would be PIMC's voting); the card-location head (which other seat holds each card the seat
   cannot place) against the actual deal, weighted ``owner_coef``. A twentieth of the deals,
   chosen by the deal itself, is never fitted: held-out agreement is measured on them.

TensorBoard: ``charts/labels_per_s``, ``charts/labels``, ``losses/`` (Huber, policy cross-entropy,
card location, held-out agreement of the policy and the action values with the best label, and
the card-location head's held-out accuracy), ``eval/`` (as every run). A checkpoint (and the
window, ``data/window.npz``) is written atomically after every iteration; a resumed run goes on
exactly as the uninterrupted one.
"""

from __future__ import annotations

import dataclasses
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

from ..belief import sample_worlds
from ..checkpoint import CheckpointError, kept, network_spec, save_checkpoint
from ..heuristic import HeuristicAgent
from ..network import MASKED_LOGIT, NetworkSpec, PolicyValueNet
from ..parallel import Runner, Stopped
from ..pimc import PIMCAgent
from ..player import PolicyPlayer
from ..policy import policy_for
from ..search import SearchAgent
from .config import LATER_FIELDS, RESUMABLE, Algorithm, RunConfig, check_counts, learner_device, option, run_rules
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

WINDOW_FILE = "data/window.npz"
SELF, HEURISTIC, PAST, PIMC = 0, 1, 2, 3  #: who plays the opposing team of a game
BID_LABELS = ("solver", "rollout", "none")  #: how a bid may be valued (none: bids are not labelled)
POLICY_TARGETS = ("q", "labels")  #: what the policy may be distilled towards


@dataclasses.dataclass
class OracleConfig(RunConfig):
    """An oracle-labelled self-play run: the fields of every run (some with defaults of its own), and
    these. The defaults are the default run's recipe (``python train.py``)."""

    algorithm: str = option("oracle", RunConfig.__dataclass_fields__["algorithm"].metadata["help"])
    exp_name: str = option("cuatrola_oracle", "run name prefix: runs/<exp_name>_<seed>_<time>")
    hidden: int = option(256, "hidden units per layer")
    eval_every: int = option(6, "evaluate after the first iteration and every N iterations (0: never)")
    workers: int = option(2, RunConfig.__dataclass_fields__["workers"].metadata["help"])
    then: str = option("finetune", RunConfig.__dataclass_fields__["then"].metadata["help"])
    oracle_iterations: int = option(30, "play-label-fit iterations")
    oracle_hands: int = option(12_000, "hands played and labelled per iteration")
    oracle_per_task: int = option(1_000, "hands per task (stepped at once, the network's inference batched)")
    oracle_window: int = option(1_000_000, "labelled decisions kept for fitting (the latest; the replay window)")
    oracle_temperature: float = option(1.0, "temperature of the network's sampled play")
    oracle_heuristic_frac: float = option(0.0, "share of games in which one team is the heuristic bot")
    oracle_past_frac: float = option(0.2, "share of games in which one team is a past network of this run")
    oracle_pimc_frac: float = option(0.0, "share of games in which one team is PIMC with oracle_pimc_worlds deals")
    oracle_pimc_worlds: int = option(4, "deals PIMC solves a decision, where it plays a team")
    oracle_pool: int = option(5, "past networks kept (one added every iteration)")
    oracle_bids: str = option("rollout", "value a bid by solving the actual deal under the contract it leads to (solver) "
                                        "or by the network playing the actual deal out in every seat (rollout); "
                                        "none: bids are not labelled")
    oracle_sampled_frac: float = option(0.0, "share of decisions labelled on a deal drawn as PIMC draws its deals "
                                             "(uniformly among those that fit what the seat saw) instead of the actual "
                                             "deal: values tend to PIMC's with unlimited deals (bid rollouts stay on the "
                                             "actual deal)")
    oracle_search_worlds: int = option(0, "0: label each decision on one deal (the actual one, or as oracle_sampled_frac "
                                          "says); N: average its values over N deals drawn by PIMC's sampler (PIMC's own "
                                          "values; N solves a label)")
    oracle_actual_weight: float = option(0.0, "with oracle_search_worlds: the actual deal's share of each label, the "
                                              "drawn deals' mean having the rest (the actual deal carries what the "
                                              "bids and plays say of the hidden cards, which PIMC's uniform draw ignores)")
    oracle_from_trick: int = option(0, "0: label every decision; k: only the card plays of trick k on (from 0)")
    oracle_to_trick: int = option(NUM_TRICKS, "label only the card plays of the tricks before this one (5: all of them)")
    oracle_master_tricks: int = option(0, "label the card plays of the first N tricks by level master's search (PIMC "
                                          "over deals drawn from many candidates as the shipped model reads the bids "
                                          "and plays; about three times PIMC(32)'s cost) instead of as the rest")
    late_from_trick: int = option(0, "0: one policy head; k: a second card-play head for the tricks from k on (from 0), "
                                     "started as a copy of the policy head: labels of those tricks then move only it")
    early_head: bool = option(False, "a card-play head for the tricks before late_from_trick (all tricks without one), "
                                     "started as a copy of the policy head, which then only bids: with oracle_bids "
                                     "none the labels leave the bids as they are")
    oracle_policy_target: str = option("q", "what the policy is distilled towards: softmax(Q / tau) of its own "
                                            "action values (q) or of the labels (labels: for labels averaged over many "
                                            "deals, not one deal's)")
    oracle_margin_coef: float = option(0.5, "add this times the team's final card-point margin / 100 to a card's "
                                            "label (pass, solo)")
    tau: float = option(0.1, "policy target softmax(Q / tau) of the network's own action values, in game points")
    q_coef: float = option(1.0, "weight of the action-value head's Huber loss")
    owner_coef: float = option(0.5, "weight of the card-location head's cross-entropy")
    fit_epochs: int = option(1, "passes over the window per iteration")
    fit_suits: bool = option(False, "fit each decision with its suits renamed at random (the rules treat the suits "
                                    "alike: one label stands for 24 positions)")
    fit_batch: int = option(1024, "minibatch size")
    lr_final: float = option(5e-5, "learning rate of the last iteration, reached linearly from learning_rate "
                                   "(below 0: learning_rate throughout)")


#: fields a resumed oracle run may change (its labels depend on no worker count: each task has its own seed)
ORACLE_RESUMABLE = RESUMABLE + ("oracle_iterations", "workers")

#: what an oracle checkpoint to resume from holds
RESUME_FIELDS = ("run_name", "config", "optimizer", "iteration", "rng", "torch_rng", "pool", "labels")

#: fields runs from before them did without: the learning rate did not decay, no team was PIMC
ORACLE_LATER = {**LATER_FIELDS, "lr_final": -1.0, "oracle_pimc_frac": 0.0, "oracle_pimc_worlds": 4,
                "oracle_sampled_frac": 0.0, "oracle_search_worlds": 0, "oracle_actual_weight": 0.0,
                "oracle_from_trick": 0, "late_from_trick": 0, "early_head": False, "oracle_master_tricks": 0,
                "oracle_to_trick": NUM_TRICKS,
                "oracle_policy_target": "q", "fit_suits": False}


def network(hidden: int, layers: int, start: dict | None = None, late_from_trick: int = 0,
            early_head: bool = False) -> PolicyValueNet:
    """A network with the dueling action-value head and the card-location head, starting from
    ``start`` (``{"model": weights, "network": their NetworkSpec}``; a policy network's, whose missing
    heads start fresh): a late card-play head from trick ``late_from_trick`` on when ``start`` has one
    (of its size) or it is given (not 0), and an early card-play head when ``start`` has one or
    ``early_head`` asks; a head ``start`` lacks starts as a copy of its policy head, so that it plays
    as ``start`` does."""
    spec = start["network"] if start else None
    held = spec.late_from_trick if spec else None
    if held is not None and late_from_trick and held != late_from_trick:
        raise CheckpointError(f"the network's late head plays from trick {held}, not late_from_trick {late_from_trick}")
    late = held if held is not None else (late_from_trick or None)
    held_early = bool(spec and spec.early_head)
    net = PolicyValueNet(hidden, layers, dueling=True, owners=True, late_from_trick=late, early_head=early_head or held_early,
                         late_hidden=spec.late_hidden if held is not None else None,
                         late_layers=spec.late_layers if held is not None else None)
    net = with_weights(net, start["model"] if start else None,
                       ("q_net.", "owner_net.", "late_net.", "late_from_trick", "early_net."))
    for head, held_it in ((net.late_net, held is not None), (net.early_net, held_early)):
        if head is not None and not held_it:
            head.load_state_dict(net.policy_net.state_dict())
    return net


# ----------------------------------------------------------------------------- labels on the actual deal
def oracle_values(view, world: list[int], margin_coef: float = 0.0) -> np.ndarray:
    """(24,) game points for the acting seat's team of each legal action of ``view`` when the hand is
    played out double-dummy on ``world`` (every seat's unplayed cards, the actual deal); NaN off the
    legal actions. A card: the position solved after it; a bid: the hand solved under the contract
    it leads to, the seats after it passing (:class:`~agents.pimc.PIMCAgent`'s valuation, one world)."""
    return searched_values(view, [world], margin_coef)


def searched_values(view, worlds: list[list[int]], margin_coef: float = 0.0) -> np.ndarray:
    """(24,) :func:`oracle_values` averaged over ``worlds`` (deals, each every seat's unplayed cards):
    over deals drawn by PIMC's sampler, PIMC's own values of the actions; NaN off the legal actions."""
    legal = view.legal_actions
    out = np.full(NUM_ACTIONS, np.nan, np.float32)
    if view.phase == 0:
        out[legal] = PIMCAgent.bid_points(view, legal, worlds).mean(1)
    else:
        out[legal] = PIMCAgent.card_points(view, legal, worlds, margin_coef).mean(1)
    return out


def master_search_of(rules: Rules, seed: int) -> SearchAgent:
    """Level ``master``'s search over the shipped model of ``rules``'s preset (the teacher of
    ``oracle_master_tricks``)."""
    player = PolicyPlayer(seed, level="master")
    return player.search(policy_for(player.policies, rules))


def master_values(view, search: SearchAgent, margin_coef: float = 0.0) -> np.ndarray:
    """(24,) the legal actions' values by ``search`` (:meth:`SearchAgent.solved_values`: PIMC over the
    deals it draws as the bids and plays make likely); NaN off the legal actions."""
    out = np.full(NUM_ACTIONS, np.nan, np.float32)
    out[view.legal_actions] = search.solved_values(view, view.legal_actions, margin_coef)
    return out


def rollout_bid_values(pos: Positions, rows: np.ndarray, bits: np.ndarray, net: PolicyValueNet) -> list[np.ndarray]:
    """(24,) per game ``rows`` (bidding): each legal bid's game points for the bidder's team when the
    actual deal is then played out (the rest of the bidding too) by the network's most likely action
    in every seat: what the bid is worth with the network's own play, which double-dummy play
    flatters. NaN off the legal actions."""
    rows = np.asarray(rows, np.int64)
    if not rows.size:
        return []
    legal = [np.flatnonzero((int(bits[i]) >> np.arange(NUM_ACTIONS)) & 1) for i in rows]
    game = np.repeat(np.arange(rows.size), [len(x) for x in legal])
    bid = np.concatenate(legal)
    trial = pos.take(rows[game])
    team = trial.current & 1
    trial.step(bid)
    winner, points = trial.play_out(lambda p, live, b: _greedy(net, p, live, b))
    out = [np.full(NUM_ACTIONS, np.nan, np.float32) for _ in rows]
    for g, a, w, gp, me in zip(game, bid, winner, points, team, strict=True):
        out[g][a] = gp if w == me else -gp
    return out


def _greedy(net: PolicyValueNet, pos: Positions, live: np.ndarray, bits: np.ndarray) -> np.ndarray:
    at = pos.take(live)
    with torch.no_grad():
        logits = net.policy(torch.from_numpy(at.observe()), torch.from_numpy(pos.legal_mask(bits[live])))
    return logits.argmax(-1).numpy()


def play_and_label(weights: dict, past: dict | None, spec: dict, rules: str | dict, options: dict, seed: int,
                   hands: int) -> dict:
    """Play ``hands`` hands at once, every decision with more than one legal action labelled on the
    actual deal. ``options``: ``temperature``, ``heuristic_frac``, ``pimc_frac``, ``pimc_worlds``, ``past_frac``,
    ``margin``, ``sampled_frac``, ``bids``
    (``solver``: each contract solved double-dummy; ``rollout``: :func:`rollout_bid_values`). Returns the
    compact data of :mod:`.labels`. ``weights`` and ``past`` are networks of ``spec`` (a
    :class:`~agents.network.NetworkSpec` as a dict)."""
    torch.set_num_threads(1)
    rules_set, rng, spec = get_rules(rules), np.random.default_rng(seed), NetworkSpec.from_dict(spec)
    nets = {SELF: network(spec.hidden, spec.layers, {"model": weights, "network": spec}),
            PAST: network(spec.hidden, spec.layers, {"model": past, "network": spec}) if past is not None else None}
    opponent, opp_team = _opponents(hands, options, past is not None, rng), rng.integers(0, 2, hands)
    pos = Positions.random(hands, rules_set, int(rng.integers(2**63)), score=_match_scores(hands, rules_set, rng))
    deal, labels, history = pos.hands.copy(), [], HandHistories(hands)  # history: PIMC's sampler reads it
    rivals = {HEURISTIC: HeuristicAgent(), PIMC: PIMCAgent(seed, options["pimc_worlds"])}
    if options.get("master_tricks", 0):
        options = {**options, "master": master_search_of(rules_set, seed)}
    for t in range(MAX_DECISIONS):
        live = np.flatnonzero(~pos.done)
        if not live.size:
            break
        bits = pos.legal_bits
        views = batch_views(pos, live, bits, history=history)
        labels += [(i, t, v) for i, v in _label_step(pos, live, bits, views, nets[SELF], options, rng)]
        who = np.where((pos.current[live] & 1) == opp_team[live], opponent[live], SELF)
        acts = _actions(pos, live, bits, who, views, nets, rivals, options["temperature"], rng)
        history.record(live, pos.current[live], acts)
        step = np.full(hands, NUM_CARDS)
        step[live] = acts
        pos.step(step)
    return _compact(pos, deal, history.action, labels)


def _label_step(pos: Positions, live: np.ndarray, bits: np.ndarray, views, net: PolicyValueNet,
                options: dict, rng: np.random.Generator) -> list[tuple[int, np.ndarray]]:
    """(game, its 24 values) of each live game with more than one legal action: bids by rollouts
    when ``options["bids"]`` says so, the rest by the solver on the actual deal (on a deal drawn by
    PIMC's sampler in ``options["sampled_frac"]`` of them), or, when ``options["search_worlds"]`` is
    set, averaged over that many deals drawn by PIMC's sampler (blended with the actual deal's values
    by ``options["actual_weight"]``, :func:`blended_values`); the card plays of the first
    ``options["master_tricks"]`` tricks by ``options["master"]``'s search (:func:`master_values`).
    With ``options["from_trick"]`` set (not 0) only the card plays from that trick on are labelled,
    with ``options["to_trick"]`` only those before it; with ``options["bids"]`` ``none`` no bid is."""
    from_trick, to_trick = options.get("from_trick", 0), options.get("to_trick", NUM_TRICKS)
    choice = np.bitwise_count(bits[live]) > 1
    trick = np.array([v.trick_num for v in views])
    if from_trick:
        choice &= (pos.phase[live] == 1) & (trick >= from_trick)
    choice &= (pos.phase[live] == 0) | (trick < to_trick)
    if options["bids"] == "none":
        choice &= pos.phase[live] == 1
    rolled = live[choice & (pos.phase[live] == 0)] if options["bids"] == "rollout" else live[:0]
    out = list(zip(rolled.tolist(), rollout_bid_values(pos, rolled, bits, net), strict=True))
    solved = choice & ~np.isin(live, rolled)
    hands, share, searched = pos.hands, options.get("sampled_frac", 0.0), options.get("search_worlds", 0)
    actual_weight, master_tricks = options.get("actual_weight", 0.0), options.get("master_tricks", 0)
    for k in np.flatnonzero(solved):
        if views[k].phase == 1 and views[k].trick_num < master_tricks:
            values = master_values(views[k], options["master"], options["margin"])
        elif searched:
            drawn = sample_worlds(views[k], searched, rng)
            values = blended_values(views[k], drawn, hands[live[k]], actual_weight, options["margin"])
        else:
            values = searched_values(views[k], [label_world(views[k], hands[live[k]], share, rng)], options["margin"])
        out.append((int(live[k]), values))
    return out


def blended_values(view, drawn: list[list[int]], actual: np.ndarray, actual_weight: float,
                   margin_coef: float = 0.0) -> np.ndarray:
    """(24,) ``actual_weight`` times the actual deal's values (``actual``: every seat's unplayed
    cards) plus the rest times the mean over the ``drawn`` deals (:func:`searched_values`); the drawn
    deals' mean alone at weight 0, with no solve of the actual deal."""
    values = searched_values(view, drawn, margin_coef)
    if actual_weight <= 0:
        return values
    return actual_weight * oracle_values(view, [int(h) for h in actual], margin_coef) + (1 - actual_weight) * values


def label_world(view, actual: np.ndarray, sampled_frac: float, rng: np.random.Generator) -> list[int]:
    """The deal a decision is labelled on: the ``actual`` one (every seat's unplayed cards), or, with
    probability ``sampled_frac``, one drawn by PIMC's sampler from what ``view`` shows (no draw at 0)."""
    if sampled_frac > 0 and rng.random() < sampled_frac:
        return sample_worlds(view, 1, rng)[0]
    return [int(h) for h in actual]


def _opponents(n: int, options: dict, have_past: bool, rng: np.random.Generator) -> np.ndarray:
    shares = {HEURISTIC: options["heuristic_frac"], PIMC: options["pimc_frac"],
              PAST: options["past_frac"] if have_past else 0.0}
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
    PIMC's (``rivals``, by kind) their own."""
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
def fit(net: PolicyValueNet, opt, cfg: OracleConfig, window: Window, rng: np.random.Generator,
        stop: Callable[[], bool] | None = None) -> dict:
    """``cfg.fit_epochs`` passes over the window's fitted decisions; the losses and held-out agreement
    (:class:`~agents.parallel.Stopped` between two steps once ``stop()``)."""
    device = next(net.parameters()).device
    train = np.flatnonzero(~window.held)
    def losses(idx: np.ndarray) -> dict:
        o, m, v, owners = _batch(window, idx, device)
        if cfg.fit_suits:
            o, (m, v, owners) = renamed_suits(o, (m, v, owners), rng)
        return _losses(net, cfg, o, m, v, owners)

    stats = minibatch_passes(net, opt, train, cfg.fit_epochs, cfg.fit_batch, cfg.max_grad_norm, losses,
                             lambda x: x["policy_ce"] + cfg.q_coef * x["q_huber"] + cfg.owner_coef * x["owner_ce"], rng,
                             stop)
    held = np.flatnonzero(window.held)
    if held.size:
        with torch.no_grad():
            stats.update(held_out(net, cfg, *_batch(window, held, device)))
    return stats


def _batch(w: Window, idx: np.ndarray, device) -> tuple[torch.Tensor, ...]:
    return tuple(torch.from_numpy(x[idx]).to(device) for x in (w.obs, w.mask, w.values, w.owners))


def _losses(net: PolicyValueNet, cfg: OracleConfig, o, m, v, owners) -> dict[str, torch.Tensor]:
    q = net.q(o, m)
    target = soft_targets(v if cfg.oracle_policy_target == "labels" else q.detach(), m, cfg.tau)
    ce = soft_cross_entropy(net.policy(o, m), target, m).mean()
    owner_logits = net.owners(o, m).reshape(-1, 3)
    owner_ce = torch.nn.functional.cross_entropy(owner_logits, owners.reshape(-1), ignore_index=-1)
    return {"policy_ce": ce, "q_huber": torch.nn.functional.huber_loss(q[m], v[m]), "owner_ce": owner_ce}


def held_out(net: PolicyValueNet, cfg: OracleConfig, o, m, v, owners) -> dict[str, float]:
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
def play_options(cfg: OracleConfig) -> dict:
    """The ``options`` of :func:`play_and_label` that ``cfg`` sets."""
    return {"temperature": cfg.oracle_temperature, "heuristic_frac": cfg.oracle_heuristic_frac,
            "pimc_frac": cfg.oracle_pimc_frac, "pimc_worlds": cfg.oracle_pimc_worlds, "past_frac": cfg.oracle_past_frac,
            "margin": cfg.oracle_margin_coef, "bids": cfg.oracle_bids, "sampled_frac": cfg.oracle_sampled_frac,
            "search_worlds": cfg.oracle_search_worlds, "actual_weight": cfg.oracle_actual_weight,
            "from_trick": cfg.oracle_from_trick, "master_tricks": cfg.oracle_master_tricks,
            "to_trick": cfg.oracle_to_trick}


def label(runner: Runner, net: PolicyValueNet, pool: list[dict], cfg: OracleConfig, iteration: int,
          rng: np.random.Generator, stop: Callable[[], bool] = lambda: False, postfix: dict | None = None) -> dict:
    """One iteration's data: ``cfg.oracle_hands`` hands in tasks of ``cfg.oracle_per_task``
    (:class:`~agents.parallel.Stopped` once ``stop()``)."""
    weights = {k: v.detach().cpu().numpy() for k, v in net.state_dict().items()}
    options = play_options(cfg)
    split = hand_tasks(cfg.oracle_hands, cfg.oracle_per_task, cfg.seed, iteration)
    past = [pool[int(rng.integers(len(pool)))] if pool and cfg.oracle_past_frac > 0 else None for _ in split]
    tasks = [(weights, p, net.spec.to_dict(), run_rules(cfg).to_dict(), options, seed, n)
             for (seed, n), p in zip(split, past, strict=True)]
    desc = f"iteration {iteration + 1} of {cfg.oracle_iterations}: playing and labelling"
    return label_in_tasks(runner, play_and_label, tasks, [n for _, n in split], desc,
                          stop, postfix)


def run(cfg: OracleConfig, run_name: str, run_dir: Path, net: PolicyValueNet, opt, rng: np.random.Generator,
        iteration: int, window: Window, pool: list[dict], labels: int, stop: dict, evaluate) -> int:
    """Iterations from ``iteration`` up to ``cfg.oracle_iterations``, a checkpoint after each; returns
    the iterations done."""
    rules = run_rules(cfg)
    writer = SummaryWriter(str(run_dir))
    writer.add_text("config", "\n".join(f"|{k}|{v}|" for k, v in dataclasses.asdict(cfg).items()))
    shown: dict[str, str] = {}  #: beside the labelling bar: the latest evaluation against the heuristic
    durations: list[float] = []  #: seconds of each iteration of this process, for the time left
    with Runner(cfg.workers, cfg.ray_address or None) as runner:
        while iteration < cfg.oracle_iterations and not stop["now"]:
            started = time.perf_counter()
            before = kept(snapshot(run_name, cfg, rules, net, opt, rng, iteration, pool, labels))
            try:
                data = label(runner, net, pool, cfg, iteration, rng, lambda: stop["now"], shown)
                seconds = time.perf_counter() - started
                grown = window.add(Window.of(data, rules), cfg.oracle_window)
                for group in opt.param_groups:
                    group["lr"] = learning_rate(cfg, iteration)
                stats = fit(net, opt, cfg, grown, rng, lambda: stop["now"])
            except Stopped:  # Ctrl-C while labelling or fitting: the run as it was before this iteration
                save_data(run_dir / WINDOW_FILE, window.data)
                save_checkpoint(run_dir / "checkpoint.pt", before)
                break
            window, labels = grown, labels + len(data["hand"])
            pool = (pool + [{k: v.detach().cpu().clone() for k, v in net.state_dict().items()}])[-cfg.oracle_pool:]
            iteration += 1
            _log(writer, stats, labels, iteration, len(data["hand"]) / seconds, len(window))
            writer.add_scalar("charts/learning_rate", learning_rate(cfg, iteration - 1), labels)
            if cfg.eval_every and (iteration == 1 or iteration % cfg.eval_every == 0):  # a first figure early
                shown["vs_heuristic"] = interval(evaluate(writer, net, rules, cfg, labels)["heuristic"])
                print(f"iteration {iteration}: against the heuristic {shown['vs_heuristic']} game points a hand "
                      f"({cfg.eval_deals} deals)", file=sys.stderr)
            save_data(run_dir / WINDOW_FILE, window.data)
            save_checkpoint(run_dir / "checkpoint.pt", snapshot(run_name, cfg, rules, net, opt, rng, iteration, pool, labels))
            durations.append(time.perf_counter() - started)
            print(f"{time_left(iteration, cfg.oracle_iterations, durations)}: {len(data['hand'])} labels "
                  f"({len(data['hand']) / seconds:.0f}/s), window "
                  f"{len(window)}; " + ", ".join(f"{k} {x:.3f}" for k, x in stats.items()), file=sys.stderr)
    writer.close()
    return iteration


def learning_rate(cfg: OracleConfig, iteration: int) -> float:
    """The learning rate of iteration ``iteration`` (from 0): ``learning_rate`` decayed linearly to
    ``lr_final`` at the last iteration; constant when ``lr_final`` is below 0."""
    if cfg.lr_final < 0 or cfg.oracle_iterations < 2:
        return cfg.learning_rate
    done = min(iteration / (cfg.oracle_iterations - 1), 1.0)
    return cfg.learning_rate + done * (cfg.lr_final - cfg.learning_rate)


def _log(writer, stats: dict, labels: int, iteration: int, rate: float, window: int) -> None:
    for k, x in stats.items():
        writer.add_scalar(f"losses/{k}", x, labels)
    writer.add_scalar("charts/labels", labels, iteration)
    writer.add_scalar("charts/labels_per_s", rate, labels)
    writer.add_scalar("charts/window", window, labels)


def snapshot(run_name: str, cfg: OracleConfig, rules: Rules, net, opt, rng: np.random.Generator, iteration: int,
             pool: list[dict], labels: int) -> dict:
    """An oracle checkpoint: what every run holds, and its place, labels and past networks (the
    window is :data:`WINDOW_FILE` beside it)."""
    return run_state(run_name, cfg, rules, net, opt, rng, iteration=iteration, step=labels, update=iteration,
                     labels=labels, pool=pool)


def restore(ck: dict, path: str, run_dir: Path, net, opt, rng: np.random.Generator, rules: Rules):
    """Put an oracle checkpoint and its window back; :class:`CheckpointError` names what does not fit."""
    restore_run(ck, path, net, opt, rng)
    pool = put_back(path, "pool", lambda: [network(net.hidden, net.layers, {"model": p, "network": net.spec}).state_dict()
                                           for p in ck["pool"]])
    data = load_data(run_dir / WINDOW_FILE)
    try:
        window = Window.of(data, rules)
    except ValueError as e:
        raise CheckpointError(f"{run_dir / WINDOW_FILE}: {e}") from None
    return int(ck["iteration"]), window, pool, int(ck["labels"])


def check(cfg: OracleConfig) -> None:
    """``ValueError`` naming an oracle field no run can start with."""
    check_counts(cfg, "oracle_hands", "oracle_per_task", "oracle_window", "oracle_pool", "fit_epochs", "fit_batch")
    shares = (cfg.oracle_heuristic_frac, cfg.oracle_pimc_frac, cfg.oracle_past_frac)
    if min(shares) < 0 or sum(shares) > 1:
        raise ValueError("oracle_heuristic_frac, oracle_pimc_frac and oracle_past_frac must be shares summing to at most 1, "
                         f"got {shares}")
    if not 0 <= cfg.oracle_sampled_frac <= 1:
        raise ValueError(f"oracle_sampled_frac must be a share between 0 and 1, got {cfg.oracle_sampled_frac}")
    if cfg.oracle_pimc_worlds < 1:
        raise ValueError(f"oracle_pimc_worlds must be at least 1, got {cfg.oracle_pimc_worlds}")
    if cfg.oracle_bids not in BID_LABELS:
        raise ValueError(f"oracle_bids must be one of {', '.join(BID_LABELS)}, got {cfg.oracle_bids!r}")
    if not 0 <= cfg.oracle_actual_weight <= 1:
        raise ValueError(f"oracle_actual_weight must be a share between 0 and 1, got {cfg.oracle_actual_weight}")
    if cfg.oracle_actual_weight and not cfg.oracle_search_worlds:
        raise ValueError("oracle_actual_weight blends the actual deal into labels over drawn deals: it needs "
                         "oracle_search_worlds (without it every label is the actual deal's already)")
    if cfg.oracle_search_worlds < 0:
        raise ValueError(f"oracle_search_worlds must be 0 (one deal) or a number of deals, got {cfg.oracle_search_worlds}")
    for name in ("oracle_from_trick", "late_from_trick", "oracle_master_tricks"):
        if not 0 <= getattr(cfg, name) <= NUM_TRICKS - 1:
            raise ValueError(f"{name} must be 0 (off) or a trick from 1 to {NUM_TRICKS - 1}, got {getattr(cfg, name)}")
    if not cfg.oracle_from_trick < cfg.oracle_to_trick <= NUM_TRICKS:
        raise ValueError(f"oracle_to_trick must be a trick after oracle_from_trick, up to {NUM_TRICKS} (all), "
                         f"got {cfg.oracle_to_trick}")
    if cfg.oracle_policy_target not in POLICY_TARGETS:
        raise ValueError(f"oracle_policy_target must be one of {', '.join(POLICY_TARGETS)}, got {cfg.oracle_policy_target!r}")
    if cfg.tau <= 0 or cfg.oracle_temperature < 0:
        raise ValueError(f"tau must be positive and oracle_temperature at least 0, got {cfg.tau} and {cfg.oracle_temperature}")


def check_checkpoint(ck: dict, path: str) -> None:
    """:class:`CheckpointError` naming the first field of an oracle checkpoint a run cannot resume from."""
    if not isinstance(ck["pool"], list) or not all(isinstance(p, dict) for p in ck["pool"]):
        raise CheckpointError(f"{path}: field 'pool' must be the list of the run's past networks")
    if type(ck["labels"]) is not int or ck["labels"] < 0:
        raise CheckpointError(f"{path}: field 'labels' must be a count of labels, got {brief(ck['labels'], 40)}")


def start(cfg: OracleConfig, resume: str | None, ck: dict | None, init: dict | None, run_name: str, run_dir: Path,
          rng: np.random.Generator) -> int:
    """Play, label, fit (:func:`run`), the learner on its device; until ``oracle_iterations``, or Ctrl-C / SIGTERM."""
    rules = run_rules(cfg)
    start_from = {"model": ck["model"], "network": network_spec(ck, resume)} if ck else init
    net = network(cfg.hidden, cfg.layers, start_from, cfg.late_from_trick, cfg.early_head).to(learner_device(cfg.device))
    opt = torch.optim.Adam(net.parameters(), lr=cfg.learning_rate, eps=1e-5)
    if ck:
        iteration, window, pool, labels = restore(ck, resume, run_dir, net, opt, rng, rules)
    else:
        iteration, window, pool, labels = 0, Window.of(empty_data(), rules), [], 0
    with stop_signals() as stop:
        iteration = run(cfg, run_name, run_dir, net, opt, rng, iteration, window, pool, labels, stop, evaluate_policy)
    print(f"{'stopped' if stop['now'] else 'finished'}: {iteration} iterations; checkpoint {run_dir / 'checkpoint.pt'}")
    return 0


def init_weights(init: dict) -> dict:
    """An ``--init`` network for this run's network: a plain action-value head (expert iteration's,
    24 outputs) is dropped, to start fresh as a dueling one."""
    spec = init["network"]
    if not spec.q_head or spec.dueling:
        return init
    return {"model": {k: v for k, v in init["model"].items() if not k.startswith("q_net.")},
            "network": dataclasses.replace(spec, q_head=False)}


ALGORITHM = Algorithm("oracle", OracleConfig, resumable=ORACLE_RESUMABLE, resume_fields=RESUME_FIELDS,
                      later=ORACLE_LATER, check=check, check_checkpoint=check_checkpoint,
                      init_weights=init_weights, run=start,
                      finished=lambda ck: ck["iteration"] >= ck["config"]["oracle_iterations"])

__all__ = ["ALGORITHM", "OracleConfig", "oracle_values", "play_and_label", "play_options"]
