"""Expert iteration with soft targets: the search values every legal action of the positions the
network reaches, and the network learns those values.

    python train.py --algorithm expert --workers 2                  # from scratch: no heuristic anywhere
    python train.py --algorithm expert --init agents/models/cuatrola.pt
    python train.py --resume runs/NAME/checkpoint.pt                # continue after the last iteration

Each iteration:

1. **Play** (DAgger): the latest network plays ``expert_hands`` hands of matches in all four
   seats, sampling at ``label_temperature``, so the labels cover the positions it reaches.
2. **Label**: at every decision with more than one legal action the search
   (:meth:`agents.search.SearchAgent.solved_values`) values *every* legal action: the mean game
   points for the acting seat's team over ``label_worlds`` deals (``label_bid_worlds`` for a bid)
   drawn by the belief sampler and weighted by the network's likelihood of the other seats'
   actions (``label_infer``; uniform while the network is untrained), each deal solved
   double-dummy. PIMC needs no network, so a run can start from nothing. Tasks of
   ``label_per_task`` hands run on ``workers`` Ray workers (the same labels for any number).
   To fine-tune a trained network by card labels alone, ``label_bids: policy`` labels each bid
   with the network's own bidding (:func:`own_play`) so that the fit leaves it where it was;
   ``label_pimc_frac`` puts PIMC at the table in a share of the matches
   (``experiments/configs/master_labels.yaml``); ``label_from_trick`` labels the card plays of the earlier
   tricks with the network's own play too, so that the search teaches only the last tricks
   (``experiments/configs/endgame.yaml``).
3. **Keep** the iteration's data in ``data/iteration_K.npz``, compactly: each hand's deal,
   dealer, muestra, score and actions, and for each labelled decision its hand, its step and
   its 24 values (NaN off the legal actions), about 60 bytes a decision. Observations are
   rebuilt by replaying the hands through the engine (:func:`replay`).
4. **Fit** on the aggregated data (all iterations, or the last ``keep_iterations``): the policy
   by cross-entropy against ``softmax(values / tau)`` over the legal actions (with ``fit_ties``
   false, not where the labels value every legal action alike), the action-value head by a Huber
   loss on the legal actions' values (``q_coef``). A twentieth of the decisions
   is held out to report agreement with the search's best action.

The next iteration plays and labels with the new network (for play and for inference).
``expert_data`` starts a run from earlier runs' label files (copied in, fitted on before the
first labelling): labels are the expensive part, and they stay valid for any network.

TensorBoard: ``losses/`` (policy cross-entropy, the targets' own entropy, Huber, held-out
agreement), ``charts/`` (labels, labels per second), ``eval/`` (as the PPO runs). A checkpoint
is written atomically after every iteration; a resumed run continues with the next one.
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

from cuatrola_env.game import Game
from cuatrola_env.observation import OBS_DIM, OFFSETS, trick_number
from cuatrola_env.rules import NUM_ACTIONS, NUM_TRICKS, Rules

from ..base import seat_view
from ..checkpoint import CheckpointError, kept, save_checkpoint
from ..network import PolicyValueNet
from ..parallel import Runner, Stopped
from ..pimc import PIMCAgent
from ..search import BID_VALUATIONS, SearchAgent
from .config import LATER_FIELDS, RESUMABLE, Algorithm, RunConfig, check_counts, learner_device, option, run_rules
from .fitting import minibatch_passes, renamed_suits, soft_cross_entropy, soft_targets, with_weights
from .labels import MAX_DECISIONS, LabelStore, copy_given_data, hand_tasks, label_in_tasks, save_data
from .report import evaluate_policy, interval, time_left
from .state import restore_run, run_state
from .stopping import stop_signals


@dataclasses.dataclass
class ExpertConfig(RunConfig):
    """An expert-iteration run: the fields of every run, and these."""

    expert_iterations: int = option(6, "label-and-fit iterations (each labels positions the latest network reaches)")
    expert_hands: int = option(4000, "hands played and labelled per iteration")
    label_worlds: int = option(16, "deals drawn to value a card play")
    label_bid_worlds: int = option(8, "deals drawn to value a bid")
    label_candidates: int = option(64, "candidate deals weighed by the network's likelihood of the other seats' actions")
    label_infer: float = option(1.0, "weight of that inference (0: uniform deals; never used on an untrained network)")
    label_infer_play: float = option(-1.0, "weight of the card plays' evidence in it (below 0: label_infer; master "
                                           "weighs them 0.5)")
    label_temperature: float = option(1.0, "temperature of the network's sampled play while positions are gathered")
    label_margin_coef: float = option(0.0, "add this times the team's final card-point margin / 100 to a card's value "
                                           "(pass, solo)")
    label_bids: str = option("solver", "value bids by the solver (PIMC's way), by rollouts of the network's own play "
                                       "(rollout; the solver while the network is untrained), by the labelling "
                                       "network's own bidding (policy: the fit keeps it; not a value), or not at all "
                                       "(none: only card plays are labelled)")
    label_pimc_frac: float = option(0.0, "share of matches in which one team is PIMC with label_pimc_worlds deals (its "
                                          "decisions labelled too), so that the labels cover positions PIMC's play leads to")
    label_pimc_worlds: int = option(4, "deals PIMC solves a decision, where it plays a team")
    label_from_trick: int = option(0, "card plays of earlier tricks (counted from 0) are labelled with the labelling "
                                      "network's own play, as label_bids: policy labels bids, so that the fit keeps "
                                      "them and the search teaches only the later tricks")
    label_per_task: int = option(25, "hands per labelling task")
    tau: float = option(0.1, "policy target softmax(values / tau), values in game points")
    q_coef: float = option(1.0, "weight of the action-value head's Huber loss")
    fit_ties: bool = option(True, "fit the policy on decisions whose legal actions the labels all value alike too "
                                  "(a uniform target; false leaves the network's own choice there)")
    fit_suits: bool = option(False, "rename the suits of each decision the search labelled at random as it is fitted "
                                    "(the rules treat them alike): 24 positions for each one labelled; decisions "
                                    "labelled with the network's own play keep their names, so the fit keeps that play")
    fit_epochs: int = option(3, "passes over the aggregated data per iteration")
    fit_batch: int = option(512, "minibatch size")
    expert_data: str = option("", "label files of earlier runs (comma-separated data/iteration_K.npz), copied in and "
                                  "fitted on first")
    keep_iterations: int = option(0, "fit on the data of the last N iterations (0: all of them)")


#: fields a resumed expert-iteration run may change
EXPERT_RESUMABLE = RESUMABLE + ("expert_iterations",)

#: what an expert-iteration checkpoint to resume from holds
RESUME_FIELDS = ("run_name", "config", "optimizer", "iteration", "rng", "torch_rng", "data")

#: fields added after expert checkpoints were first written (some of them), with their defaults
EXPERT_LATER = {**LATER_FIELDS, **{f.name: f.default for f in dataclasses.fields(ExpertConfig)
                                   if f.name not in {g.name for g in dataclasses.fields(RunConfig)}}}
class TorchPolicy:
    """A torch network seen as the search's policy (``logits(obs, mask)`` on NumPy arrays)."""

    def __init__(self, net: PolicyValueNet):
        self.net = net

    def logits(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return self.net.policy(torch.from_numpy(np.asarray(obs, np.float32).reshape(-1, OBS_DIM)),
                                   torch.from_numpy(np.asarray(mask, bool).reshape(-1, NUM_ACTIONS))).numpy()


def network(hidden: int, layers: int, weights: dict | None = None) -> PolicyValueNet:
    """A network with an action-value head, with ``weights`` (a state dict of tensors or arrays)."""
    return with_weights(PolicyValueNet(hidden, layers, q_head=True), weights)


# ----------------------------------------------------------------------------- labelling (on the workers)
def label_hands(weights: dict, shape: tuple[int, int], rules: str | dict, options: dict, seed: int, hands: int) -> dict:
    """Play ``hands`` hands of matches with the network in all seats and label every decision
    with more than one legal action by the search. ``options``: ``worlds``, ``bid_worlds``,
    ``candidates``, ``infer``, ``infer_play`` (below 0: ``infer``), ``temperature``, ``margin`` (a
    card's share of the card-point margin), ``bids`` (``solver``, ``rollout``, ``policy``: the
    network's own bidding as the target, see :func:`own_play`, with ``tau``; ``none``: bids
    unlabelled), ``from_trick`` (card plays of earlier tricks labelled with the network's own play,
    as ``policy`` labels bids), ``pimc_frac`` and ``pimc_worlds`` (the share of matches in which one team, in turn
    the first and the second, is PIMC with that many deals). Returns the compact data (:data:`FIELDS`)."""
    torch.set_num_threads(1)
    net = network(*shape, weights)
    infer_play = options.get("infer_play", -1.0)
    search = SearchAgent(seed=seed, policy=TorchPolicy(net), worlds=options["worlds"], bid_worlds=options["bid_worlds"],
                         candidates=options["candidates"], infer=options["infer"],
                         infer_play=None if infer_play < 0 else infer_play)
    pimc = PIMCAgent(seed, options.get("pimc_worlds", 4))
    bids = options.get("bids", "solver")
    valuation = bids if bids in BID_VALUATIONS else "solver"  # the search's argument (a card's label ignores it)
    rng = np.random.default_rng(seed)
    share = options.get("pimc_frac", 0.0)
    records, labels, done, games = [], [], 0, 0
    while done < hands:
        game = Game(rules, mode="match", seed=int(rng.integers(2**31)))
        pimc_team = games % 2 if share > 0 and rng.random() < share else None
        games += 1
        while not game.over and done < hands:
            dealt = game.hands_dealt
            view = seat_view(game)
            legal = view.legal_actions
            if len(legal) > 1 and not (bids == "none" and view.phase == 0):
                values = np.full(NUM_ACTIONS, np.nan, np.float32)
                kept = own_play_kept(view.phase == 1, view.trick_num, bids, options.get("from_trick", 0))
                values[legal] = own_play(net, view, options["tau"]) if kept \
                    else search.solved_values(view, legal, options.get("margin", 0.0), valuation)
                labels.append((len(records) + dealt - 1, len(view.history), values))
            by_pimc = pimc_team is not None and view.seat % 2 == pimc_team
            game.step(pimc.act(view) if by_pimc else _sample(net, view, options["temperature"], rng))
            done += game.hands_dealt > dealt or game.over
        records += [h for h in game.record()["hands"] if h["result"] is not None]
    return _pack(records, labels)


#: the least log-probability a label of the network's own play holds (times tau)
LEAST_LOGP = -20.0


def own_play_kept(card_play, trick, bids: str, from_trick: int):
    """Whether a decision (or each of an array of them) is labelled with the network's own play: a
    bid under ``label_bids: policy``, a card play of a trick before ``from_trick``."""
    return np.where(card_play, trick < from_trick, bids == "policy")


def own_play(net: PolicyValueNet, view, tau: float) -> np.ndarray:
    """A decision's label where the fit must keep the network's play (a bid under ``label_bids:
    policy``, a card play before ``label_from_trick``): ``tau`` times the labelling network's
    log-probability of each legal action (at least :data:`LEAST_LOGP`), so that the fit's target
    ``softmax(values / tau)`` is that network's own play. Not a value in game points."""
    logp = torch.log_softmax(_logits(net, view).double(), -1).numpy()[view.legal_actions]
    return tau * np.maximum(logp, LEAST_LOGP)


def _logits(net: PolicyValueNet, view) -> torch.Tensor:
    """(24,) the network's masked logits at one seat view."""
    with torch.no_grad():
        return net.policy(torch.from_numpy(view.observation[None]), torch.from_numpy(view.legal_mask[None]))[0]


def _sample(net: PolicyValueNet, view, temperature: float, rng: np.random.Generator) -> int:
    """The network's action: sampled at ``temperature`` (0: the most likely)."""
    logits = _logits(net, view)
    if temperature <= 0:
        return int(logits.argmax())
    p = torch.softmax(logits.double() / temperature, -1).numpy()
    return int(rng.choice(NUM_ACTIONS, p=p / p.sum()))


def _pack(records: list[dict], labels: list[tuple]) -> dict:
    """Hand records and labels as the compact arrays of :data:`FIELDS`."""
    n = len(records)
    actions = np.full((n, MAX_DECISIONS), -1, np.int8)
    for i, h in enumerate(records):
        actions[i, : len(h["actions"])] = h["actions"]
    return {
        "deal": np.array([[sum(1 << c for c in cards) for cards in h["hands"]] for h in records], np.uint32).reshape(n, 4),
        "dealer": np.array([h["dealer"] for h in records], np.int8),
        "muestra": np.array([h["muestra"] for h in records], np.int8),
        "score": np.array([h["score_before"] for h in records], np.int16).reshape(n, 2),
        "actions": actions,
        "length": np.array([len(h["actions"]) for h in records], np.int8),
        "hand": np.array([x[0] for x in labels], np.int32),
        "step": np.array([x[1] for x in labels], np.int8),
        "values": np.array([x[2] for x in labels], np.float16).reshape(-1, NUM_ACTIONS),
    }


def label(runner: Runner, net: PolicyValueNet, cfg: ExpertConfig, iteration: int, trained: bool,
          stop: Callable[[], bool] = lambda: False, postfix: dict | None = None) -> dict:
    """One iteration's data: ``cfg.expert_hands`` hands in tasks of ``cfg.label_per_task``
    (:class:`~agents.parallel.Stopped` once ``stop()``)."""
    weights = {k: v.detach().cpu().numpy() for k, v in net.state_dict().items()}
    rollout = cfg.label_bids == "rollout" and not trained  # an untrained network's rollouts mean nothing
    options = {"worlds": cfg.label_worlds, "bid_worlds": cfg.label_bid_worlds, "candidates": cfg.label_candidates,
               "infer": cfg.label_infer if trained else 0.0, "infer_play": cfg.label_infer_play if trained else 0.0,
               "temperature": cfg.label_temperature, "margin": cfg.label_margin_coef,
               "bids": "solver" if rollout else cfg.label_bids, "pimc_frac": cfg.label_pimc_frac,
               "pimc_worlds": cfg.label_pimc_worlds, "tau": cfg.tau, "from_trick": cfg.label_from_trick}
    split = hand_tasks(cfg.expert_hands, cfg.label_per_task, cfg.seed, iteration)
    tasks = [(weights, (cfg.hidden, cfg.layers), run_rules(cfg).to_dict(), options, seed, n) for seed, n in split]
    desc = f"iteration {iteration + 1} of {cfg.expert_iterations}: labelling"
    return label_in_tasks(runner, label_hands, tasks, [n for _, n in split], desc, stop,
                          postfix)


# ----------------------------------------------------------------------------- fitting
def fit(net: PolicyValueNet, opt, cfg: ExpertConfig, obs: np.ndarray, mask: np.ndarray, values: np.ndarray,
        rng: np.random.Generator, stop: Callable[[], bool] | None = None) -> dict:
    """``cfg.fit_epochs`` passes over the data; the losses, and held-out agreement with the search."""
    device = next(net.parameters()).device
    o, m = torch.from_numpy(obs).to(device), torch.from_numpy(mask).to(device)
    v = torch.from_numpy(np.nan_to_num(values.astype(np.float32))).to(device)
    target = soft_targets(v, m, cfg.tau)
    taught = torch.from_numpy(np.ones(len(values), bool) if cfg.fit_ties else ~alike(values, mask)).to(device)
    searched = torch.from_numpy(searched_rows(obs, cfg)).to(device)
    order = rng.permutation(len(obs))
    held, train = order[: len(order) // 20], order[len(order) // 20 :]

    def losses(idx: np.ndarray) -> dict:
        i = torch.from_numpy(idx).to(device)
        if not cfg.fit_suits:
            return _losses(net, o[i], m[i], v[i], target[i], taught[i])
        oi, (mi, vi, ti) = renamed_suits(o[i], (m[i], v[i], target[i]), rng, searched[i])
        return _losses(net, oi, mi, vi, ti, taught[i])

    stats = minibatch_passes(net, opt, train, cfg.fit_epochs, cfg.fit_batch, cfg.max_grad_norm, losses,
                             lambda x: x["policy_ce"] + cfg.q_coef * x["q_huber"], rng, stop)
    if len(held):
        with torch.no_grad():
            i = torch.from_numpy(held).to(device)
            best = torch.where(m[i], v[i], torch.full_like(v[i], -torch.inf)).argmax(-1)
            stats["held_out_agreement"] = float((net.policy(o[i], m[i]).argmax(-1) == best).float().mean())
            stats["held_out_q_agreement"] = float((torch.where(m[i], net.q(o[i], m[i]), -torch.inf).argmax(-1) == best)
                                                  .float().mean())
            stats["held_out_policy_ce"] = _losses(net, o[i], m[i], v[i], target[i], taught[i])["policy_ce"].item()
    return stats


def searched_rows(obs: np.ndarray, cfg: ExpertConfig) -> np.ndarray:
    """(N,) whether each decision's label is the search's, not the network's own play
    (:func:`own_play_kept`), the phase and the trick read from the observation."""
    card_play = obs[:, OFFSETS["phase"]][:, 1] > 0
    return ~own_play_kept(card_play, trick_number(obs), cfg.label_bids, cfg.label_from_trick)


def alike(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """(N,) whether every legal action of a decision has the same value (the labels prefer none);
    ``values`` (N, 24), NaN off the legal actions, ``mask`` (N, 24) the legal actions."""
    legal = np.nan_to_num(values.astype(np.float32))
    return np.where(mask, legal, -np.inf).max(1) - np.where(mask, legal, np.inf).min(1) < 1e-6


def _losses(net, o, m, v, target, taught) -> dict[str, torch.Tensor]:
    """The policy's cross-entropy against its targets on the ``taught`` rows, the targets' entropy,
    and the action-value head's Huber loss on every legal action."""
    per_row = soft_cross_entropy(net.policy(o, m), target, m)
    ce = (per_row * taught).sum() / taught.sum().clamp_min(1)
    entropy = -(target * torch.where(m, target.clamp_min(1e-12).log(), torch.zeros_like(target))).sum(-1).mean()
    huber = torch.nn.functional.huber_loss(net.q(o, m)[m], v[m])
    return {"policy_ce": ce, "target_entropy": entropy, "q_huber": huber}


# ----------------------------------------------------------------------------- the run
def run(cfg: ExpertConfig, run_name: str, run_dir: Path, net: PolicyValueNet, opt, rng: np.random.Generator,
        iteration: int, files: list[str], stop: dict, evaluate) -> tuple[int, list[str]]:
    """Iterations from ``iteration`` up to ``cfg.expert_iterations``, a checkpoint after each;
    returns the iterations done and the run's label files (relative to ``run_dir``)."""
    rules = run_rules(cfg)
    writer = SummaryWriter(str(run_dir))
    writer.add_text("config", "\n".join(f"|{k}|{v}|" for k, v in dataclasses.asdict(cfg).items()))
    store = LabelStore(run_dir, rules)
    if iteration == 0 and cfg.expert_data and not files:  # earlier runs' labels: copied in, fitted on first
        files = copy_given_data(cfg.expert_data, run_dir)
        stats, obs = fit_files(net, opt, cfg, store, files, rng)
        for k, x in stats.items():
            writer.add_scalar(f"losses/{k}", x, len(obs))
        save_checkpoint(run_dir / "checkpoint.pt", snapshot(run_name, cfg, rules, net, opt, rng, 0, files, len(obs)))
    labels = sum(len(store.get(f)[2]) for f in files)
    shown: dict[str, str] = {}  #: beside the labelling bar: the latest evaluation against the heuristic
    durations: list[float] = []  #: seconds of each iteration of this process, for the time left
    with Runner(cfg.workers, cfg.ray_address or None) as runner:
        while iteration < cfg.expert_iterations and not stop["now"]:
            started = time.perf_counter()
            before = kept(snapshot(run_name, cfg, rules, net, opt, rng, iteration, files, labels))
            try:
                data = label(runner, net, cfg, iteration, bool(iteration or cfg.init or files), lambda: stop["now"], shown)
                seconds = time.perf_counter() - started
                name = f"data/iteration_{iteration}.npz"
                save_data(run_dir / name, data)
                grown = [f for f in files if f != name] + [name]
                stats, obs = fit_files(net, opt, cfg, store, grown, rng, lambda: stop["now"])
            except Stopped:  # Ctrl-C while labelling or fitting: the run as it was before this iteration
                save_checkpoint(run_dir / "checkpoint.pt", before)
                break
            files, labels = grown, labels + len(data["hand"])
            iteration += 1
            for k, x in stats.items():
                writer.add_scalar(f"losses/{k}", x, labels)
            writer.add_scalar("charts/labels", labels, iteration)
            writer.add_scalar("charts/labels_per_s", len(data["hand"]) / seconds, labels)
            writer.add_scalar("charts/fitted_decisions", len(obs), labels)
            if cfg.eval_every and (iteration == 1 or iteration % cfg.eval_every == 0):  # a first figure early
                shown["vs_heuristic"] = interval(evaluate(writer, net, rules, cfg, labels)["heuristic"])
            save_checkpoint(run_dir / "checkpoint.pt", snapshot(run_name, cfg, rules, net, opt, rng, iteration, files, labels))
            durations.append(time.perf_counter() - started)
            print(f"{time_left(iteration, cfg.expert_iterations, durations)}: {len(data['hand'])} labels "
                  f"({len(data['hand']) / seconds:.0f}/s), fitted on "
                  f"{len(obs)}; " + ", ".join(f"{k} {x:.3f}" for k, x in stats.items()), file=sys.stderr)
    writer.close()
    return iteration, files


def fit_files(net, opt, cfg: ExpertConfig, store: LabelStore, files: list[str], rng,
              stop: Callable[[], bool] | None = None) -> tuple[dict, np.ndarray]:
    """Fit on the label files kept (all, or the last ``keep_iterations``); the stats and the observations
    (:class:`~agents.parallel.Stopped` between two steps once ``stop()``)."""
    chosen = files[-cfg.keep_iterations:] if cfg.keep_iterations else files
    obs, mask, values = (np.concatenate(x) for x in zip(*(store.get(f) for f in chosen), strict=True))
    return fit(net, opt, cfg, obs, mask, values, rng, stop), obs


def snapshot(run_name: str, cfg: ExpertConfig, rules: Rules, net, opt, rng: np.random.Generator, iteration: int,
             files: list[str], labels: int) -> dict:
    """An expert-iteration checkpoint: what every run holds, and its place and label files."""
    return run_state(run_name, cfg, rules, net, opt, rng, iteration=iteration, step=labels, update=iteration, data=files)


def restore(ck: dict, path: str, run_dir: Path, net, opt, rng: np.random.Generator) -> tuple[int, list[str]]:
    """Put an expert-iteration checkpoint back; :class:`CheckpointError` names what does not fit."""
    restore_run(ck, path, net, opt, rng)
    files = list(ck["data"])
    absent = [f for f in files if not (run_dir / f).is_file() or Path(f).is_absolute() or ".." in Path(f).parts]
    if absent:
        raise CheckpointError(f"{path}: label file(s) {absent} are not in the run's folder {run_dir}")
    return int(ck["iteration"]), files


def check(cfg: ExpertConfig) -> None:
    """``ValueError`` naming an expert-iteration field no run can start with (the fields of every
    run: :meth:`RunConfig.check`)."""
    check_counts(cfg, "expert_hands", "label_worlds", "label_bid_worlds", "label_candidates", "label_per_task",
                 "fit_epochs", "fit_batch", "label_pimc_worlds")
    if cfg.label_bids not in BID_VALUATIONS + ("policy", "none"):
        raise ValueError(f"label_bids must be one of {', '.join(BID_VALUATIONS)}, policy, none, got {cfg.label_bids!r}")
    if not 0 <= cfg.label_pimc_frac <= 1:
        raise ValueError(f"label_pimc_frac must be a share in [0, 1], got {cfg.label_pimc_frac}")
    if not 0 <= cfg.label_from_trick < NUM_TRICKS:
        raise ValueError(f"label_from_trick must be a trick from 0 to {NUM_TRICKS - 1}, got {cfg.label_from_trick}")


def check_checkpoint(ck: dict, path: str) -> None:
    """:class:`CheckpointError` naming the first field of an expert checkpoint a run cannot resume from
    (its config's fields already checked)."""
    if not isinstance(ck["data"], list) or not all(isinstance(p, str) for p in ck["data"]):
        raise CheckpointError(f"{path}: field 'data' must be the list of the run's label files")


def start(cfg: ExpertConfig, resume: str | None, ck: dict | None, init: dict | None, run_name: str, run_dir: Path,
          rng: np.random.Generator) -> int:
    """Label, fit, relabel (:func:`run`), the learner on its device; until ``expert_iterations``, or Ctrl-C / SIGTERM."""
    net = network(cfg.hidden, cfg.layers, init["model"] if init else None).to(learner_device(cfg.device))
    opt = torch.optim.Adam(net.parameters(), lr=cfg.learning_rate, eps=1e-5)
    iteration, files = restore(ck, resume, run_dir, net, opt, rng) if ck else (0, [])
    with stop_signals() as stop:
        iteration, files = run(cfg, run_name, run_dir, net, opt, rng, iteration, files, stop, evaluate_policy)
    print(f"{'stopped' if stop['now'] else 'finished'}: {iteration} iterations; checkpoint {run_dir / 'checkpoint.pt'}")
    return 0


ALGORITHM = Algorithm("expert", ExpertConfig, resumable=EXPERT_RESUMABLE, resume_fields=RESUME_FIELDS,
                      later=EXPERT_LATER, check=check, check_checkpoint=check_checkpoint,
                      init_weights=lambda model: model, run=start,
                      finished=lambda ck: ck["iteration"] >= ck["config"]["expert_iterations"])

__all__ = ["ALGORITHM", "ExpertConfig"]
