"""Self-play training of a Cuatrola bot: masked PPO with a perfect-information critic.

    python train.py                                  # the default preset, configs/default.yaml
    python train.py --config configs/default.yaml --total-decisions 2000000 --num-envs 512
    python train.py --resume runs/NAME/checkpoint.pt # continue a run exactly where it stopped
    tensorboard --logdir runs

One network plays all four seats from each seat's own observation and learns both the
bids and the card play, with illegal actions masked. Every decision's return is its seat's
result of the hand (game points, undiscounted; hands are short), its advantage that return
minus a critic that sees every hand (training only). Games run batched in
``VectorCuatrola``; acting is batched through the network; no Python loop over games in the
hot path. TensorBoard namespaces: ``charts/`` (throughput, game points), ``losses/``
(policy, value, entropy, KL), ``eval/`` (duplicate evaluation against random and heuristic,
with 95% intervals), ``bids/`` (frequency and success per contract and per seat relative to
the dealer); the config is logged as text. Checkpoints (model, optimiser, config, rules,
observation version, counters, RNG and game state) are written atomically every
``checkpoint_minutes``, at the end and on Ctrl-C.
"""

from __future__ import annotations

import argparse
import dataclasses
import signal
import sys
import time
from pathlib import Path

import numpy as np
import torch
import yaml
from torch.utils.tensorboard import SummaryWriter
from tqdm import tqdm

from cuatrola_env import VectorCuatrola, get_rules
from cuatrola_env.observation import OBS_VERSION
from cuatrola_env.rules import CONTRACT_NAMES

from . import evaluation
from .base import batch_views
from .checkpoint import CheckpointError, read_checkpoint, save_checkpoint, to_arrays
from .heuristic import HeuristicAgent
from .network import PolicyValueNet
from .torch_agent import TorchAgent

__all__ = ["Config", "CheckpointError", "main", "parse_config"]


@dataclasses.dataclass
class Config:
    exp_name: str = dataclasses.field(default="cuatrola_ppo", metadata={"help": "run name prefix: runs/<exp_name>_<seed>_<time>"})
    seed: int = dataclasses.field(default=1, metadata={"help": "seed of torch, numpy and the deals"})
    rules: str = dataclasses.field(default="online", metadata={"help": "rules preset: online or traditional"})
    num_envs: int = dataclasses.field(default=1024, metadata={"help": "games stepped at once"})
    num_steps: int = dataclasses.field(default=24, metadata={"help": "decisions per game per rollout"})
    total_decisions: int = dataclasses.field(default=70_000_000, metadata={"help": "decisions to train for"})
    learning_rate: float = dataclasses.field(default=5e-4, metadata={"help": "Adam learning rate"})
    update_epochs: int = dataclasses.field(default=1, metadata={"help": "PPO epochs per rollout"})
    num_minibatches: int = dataclasses.field(default=16, metadata={"help": "minibatches per epoch"})
    clip_coef: float = dataclasses.field(default=0.2, metadata={"help": "PPO clipping"})
    ent_coef: float = dataclasses.field(default=0.01, metadata={"help": "entropy bonus"})
    vf_coef: float = dataclasses.field(default=0.5, metadata={"help": "value loss weight"})
    max_grad_norm: float = dataclasses.field(default=0.5, metadata={"help": "gradient clipping"})
    imitation_decisions: int = dataclasses.field(
        default=6_000_000, metadata={"help": "warm start: imitate the heuristic's choices for N decisions (DAgger), then PPO"})
    bid_ent_coef: float = dataclasses.field(
        default=0.05, metadata={"help": "extra entropy bonus on bidding decisions (keeps the contracts explored)"})
    card_points_coef: float = dataclasses.field(
        default=0.5, metadata={"help": "shaping: add this times the team's card-point margin / 100 to each return"})
    heuristic_frac: float = dataclasses.field(
        default=0.35, metadata={"help": "share of games where one team is the heuristic bot (the other the learner)"})
    pool_frac: float = dataclasses.field(
        default=0.25, metadata={"help": "share of games where one team is a frozen past version of the network"})
    pool_size: int = dataclasses.field(default=8, metadata={"help": "frozen past versions kept in the opponent pool"})
    pool_every: int = dataclasses.field(default=10, metadata={"help": "add the current network to the pool every N updates"})
    hidden: int = dataclasses.field(default=128, metadata={"help": "hidden units per layer"})
    layers: int = dataclasses.field(default=2, metadata={"help": "hidden layers"})
    eval_every: int = dataclasses.field(default=50, metadata={"help": "evaluate every N updates (0: never)"})
    eval_deals: int = dataclasses.field(default=200, metadata={"help": "duplicate deals per evaluation"})
    checkpoint_minutes: float = dataclasses.field(default=5.0, metadata={"help": "checkpoint every N minutes"})
    torch_threads: int = dataclasses.field(default=2, metadata={"help": "torch CPU threads"})
    run_dir: str = dataclasses.field(default="runs", metadata={"help": "where runs are written"})
    init: str = dataclasses.field(
        default="", metadata={"help": "fine-tune: start from the network in this checkpoint or model file (fresh optimiser)"})


#: config fields a resumed run may change: they alter how long it runs and how it reports, not what it learns
RESUMABLE = ("total_decisions", "checkpoint_minutes", "eval_every", "eval_deals", "torch_threads")

#: what a checkpoint to resume from holds, besides the fields every model file has
RESUME_FIELDS = ("run_name", "config", "optimizer", "step", "update", "rng", "torch_rng", "env", "hand_uid", "pending", "pool")


def _flags(fields) -> str:
    return ", ".join("--" + f.replace("_", "-") for f in fields)


def parse_config(argv=None) -> tuple[Config, str | None, dict | None]:
    """The run's config, and the path and contents of the checkpoint it resumes from (``None`` for a new run)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--config", help="YAML preset whose keys are config fields (configs/*.yaml)")
    p.add_argument("--resume", help=f"checkpoint to continue from: its own config, of which {_flags(RESUMABLE)} may change")
    for f in dataclasses.fields(Config):
        p.add_argument("--" + f.name.replace("_", "-"), type=type(f.default), default=None, help=f.metadata["help"])
    a = p.parse_args(argv)
    values = {}
    if a.config:
        data = yaml.safe_load(Path(a.config).read_text()) or {}
        unknown = set(data) - {f.name for f in dataclasses.fields(Config)}
        if unknown:
            p.error(f"unknown key(s) {sorted(unknown)} in {a.config}")
        values.update(data)
    for f in dataclasses.fields(Config):
        v = getattr(a, f.name)
        if v is not None:
            values[f.name] = v
    if a.resume:
        ck = read_checkpoint(a.resume)
        check_resumable(ck, a.resume)
        return resumed_config(ck["config"], values), a.resume, ck
    cfg = Config(**values)
    get_rules(cfg.rules)  # a clear error for a bad preset
    return cfg, None, None


def resumed_config(saved: dict, given: dict) -> Config:
    """The saved run's config with the ``given`` fields applied; a field that would change what the
    run learns is refused (:class:`CheckpointError` naming it), never dropped in silence."""
    refused = sorted(k for k, v in given.items() if k not in RESUMABLE and saved[k] != v)
    if refused:
        changes = ", ".join(f"--{k.replace('_', '-')} {given[k]!r} (the run has {saved[k]!r})" for k in refused)
        raise CheckpointError(f"a resumed run keeps its config, so these cannot change: {changes}; "
                              f"only {_flags(RESUMABLE)} can")
    return Config(**{**saved, **given})


def check_resumable(ck: dict, path: str) -> None:
    """Raise :class:`CheckpointError` naming the first field of ``ck`` that a run cannot resume from."""
    missing = [k for k in RESUME_FIELDS if k not in ck]
    if missing:
        raise CheckpointError(f"{path} cannot be resumed: it lacks {', '.join(map(repr, missing))} (a model file, "
                              "not a training checkpoint? --init fine-tunes from one)")
    known = {f.name for f in dataclasses.fields(Config)}
    unknown, absent = sorted(set(ck["config"]) - known), sorted(known - set(ck["config"]))
    if unknown or absent:
        raise CheckpointError(f"{path}: its config does not fit this version's Config "
                              f"(unknown field(s) {unknown}, missing field(s) {absent})")
    n = ck["config"]["num_envs"]
    state = ck["env"].get("state") if isinstance(ck["env"], dict) else None
    if not isinstance(state, dict) or not state:
        raise CheckpointError(f"{path}: field 'env' holds no game state")
    wrong = sorted(k for k, v in state.items() if not isinstance(v, torch.Tensor) or tuple(v.shape[:1]) != (n,))
    if not isinstance(ck["hand_uid"], torch.Tensor) or tuple(ck["hand_uid"].shape) != (n,):
        wrong.append("hand_uid")
    if wrong:
        raise CheckpointError(f"{path}: field(s) {wrong} of field 'env' do not hold the run's {n} games (num_envs)")


def _initial_weights(cfg: Config) -> dict:
    """The network weights of ``cfg.init``, checked against this run's rules and network shape."""
    init = read_checkpoint(cfg.init, cfg.rules)
    shape = init.get("config", {})
    if (shape.get("hidden"), shape.get("layers")) != (cfg.hidden, cfg.layers):
        raise CheckpointError(
            f"{cfg.init} holds a network of {shape.get('layers')} layers of {shape.get('hidden')} units; "
            f"this run builds {cfg.layers} of {cfg.hidden} (set --hidden and --layers to match)")
    return init["model"]


def main(argv=None) -> int:
    cfg, resume, ck = parse_config(argv)
    init = _initial_weights(cfg) if cfg.init and not ck else None  # checked before anything is written
    run_name = ck["run_name"] if ck else f"{cfg.exp_name}_{cfg.seed}_{int(time.time())}"
    run = Path(resume).parent if resume else Path(cfg.run_dir) / run_name  # a resumed run goes on beside its checkpoint
    run.mkdir(parents=True, exist_ok=True)

    # ---- seeding -------------------------------------------------------------------------
    np.random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)
    torch.set_num_threads(cfg.torch_threads)
    rng = np.random.default_rng(cfg.seed)

    rules = get_rules(cfg.rules)
    env = VectorCuatrola(num_envs=cfg.num_envs, rules=rules, seed=cfg.seed)
    net = PolicyValueNet(cfg.hidden, cfg.layers)
    pool_net = PolicyValueNet(cfg.hidden, cfg.layers).eval()  # plays the frozen past versions
    opt = torch.optim.Adam(net.parameters(), lr=cfg.learning_rate, eps=1e-5)
    step = update = 0
    hand_uid = np.zeros(cfg.num_envs, dtype=np.int64)
    pending: dict[str, np.ndarray] | None = None
    pool: list[dict] = []  # state dicts of frozen past networks (the opponent pool)
    if init is not None:
        net.load_state_dict(init)
    if ck:
        step, update, hand_uid, pending, pool = _restore(ck, resume, net, opt, rng, env)

    writer = SummaryWriter(str(run))
    writer.add_text("config", "\n".join(f"|{k}|{v}|" for k, v in dataclasses.asdict(cfg).items()))
    stop = {"now": False}

    def on_stop_signal(signum, frame):  # Ctrl-C or SIGTERM: finish this update, checkpoint, exit
        stop["now"] = True

    old_handlers = {sig: signal.signal(sig, on_stop_signal) for sig in (signal.SIGINT, signal.SIGTERM)}

    def checkpoint():
        save_checkpoint(run / "checkpoint.pt", {
            "run_name": run_name, "config": dataclasses.asdict(cfg), "rules": rules.to_dict(),
            "obs_version": OBS_VERSION, "model": net.state_dict(), "optimizer": opt.state_dict(),
            "step": step, "update": update, "rng": rng.bit_generator.state, "torch_rng": torch.get_rng_state(),
            "env": _snapshot_env(env), "hand_uid": hand_uid, "pending": pending, "pool": pool,
        })

    bar = tqdm(total=cfg.total_decisions, initial=step, unit="dec", desc=run_name, file=sys.stderr, smoothing=0.1)
    last_ckpt = time.time()
    ring = 64
    results = np.zeros((cfg.num_envs, ring, 4), dtype=np.float32)
    result_uid = np.full((cfg.num_envs, ring), -1, dtype=np.int64)
    contract_log, episode_log = [], []
    n, T = cfg.num_envs, cfg.num_steps
    heuristic = HeuristicAgent()
    # every game slot has a fixed kind of opponent team: the heuristic, a frozen past network
    # (one drawn from the pool per rollout), or the learner itself (self-play)
    n_heur, n_pool = int(round(cfg.heuristic_frac * n)), int(round(cfg.pool_frac * n))
    if n_heur + n_pool > n:
        raise SystemExit(f"heuristic_frac + pool_frac must be at most 1 (got {cfg.heuristic_frac} + {cfg.pool_frac})")
    slot = np.arange(n)
    vs_heuristic, vs_pool = slot < n_heur, (slot >= n_heur) & (slot < n_heur + n_pool)
    while step < cfg.total_decisions and not stop["now"]:
        t0 = time.perf_counter()
        if pool:
            pool_net.load_state_dict(pool[int(rng.integers(len(pool)))])
        # ---- rollout: every acting seat of every game, batched ------------------------------
        keys = ("obs", "pobs", "mask", "action", "logp", "env", "uid", "seat", "learn", "bidding", "imitated", "target")
        buf: dict[str, list] = {k: [] for k in keys}
        for _ in range(T):
            obs = env.observe()
            pobs = env.hidden_hands()  # the critic's extra input
            mask = env.action_mask
            obs_t, mask_t = torch.from_numpy(obs), torch.from_numpy(mask)
            with torch.no_grad():
                logits = net.policy(obs_t, mask_t)
                dist = torch.distributions.Categorical(logits=logits)
                action = dist.sample()
                logp = dist.log_prob(action)
            seat = env.current_player.astype(np.int64)
            # the opponents' team alternates hand by hand, so the learner plays every seat
            theirs = (seat & 1) == ((hand_uid + slot) & 1)
            # warm start (DAgger): the heuristic labels every decision; it also plays them in the
            # first half, the learner (sampling) in the second, so the labels cover its own states
            imitating = step < cfg.imitation_decisions
            heur = slot if imitating else np.flatnonzero(vs_heuristic & theirs)
            frozen = np.flatnonzero(vs_pool & theirs) if pool and not imitating else np.zeros(0, dtype=np.int64)
            actions = action.numpy().copy()
            target = actions.copy()
            if heur.size:
                target[heur] = heuristic.act_batch(batch_views(env, heur, obs=obs[heur]))
                if not imitating or 2 * step < cfg.imitation_decisions:
                    actions[heur] = target[heur]
            if frozen.size:
                with torch.no_grad():
                    fl = pool_net.policy(obs_t[frozen], mask_t[frozen])
                    actions[frozen] = torch.distributions.Categorical(logits=fl).sample().numpy()
            learn = np.ones(n, dtype=bool)
            learn[frozen] = False
            if not imitating:
                learn[heur] = False  # the heuristic's own decisions are not learned from
            for k, v in (("obs", obs), ("pobs", pobs), ("mask", mask), ("action", actions),
                         ("logp", logp.numpy()), ("env", slot), ("uid", hand_uid.copy()), ("seat", seat),
                         ("learn", learn), ("bidding", env.state.phase == 0), ("imitated", np.full(n, imitating)),
                         ("target", target)):
                buf[k].append(v)
            rewards, done = env.step(actions)
            ended = np.flatnonzero(done)
            if ended.size:
                r = env.last_results
                margin = (r["points"][:, 0] - r["points"][:, 1]).astype(np.float32) / 100.0
                shaped = rewards[ended] + cfg.card_points_coef * margin[:, None] * np.array([1, -1, 1, -1], np.float32)
                results[ended, hand_uid[ended] % ring] = shaped
                result_uid[ended, hand_uid[ended] % ring] = hand_uid[ended]
                contract_log.append((r["contract"], r["declarer"], r["dealer"], r["winner"], r["value"]))
                mine = 1 - ((hand_uid[ended] + ended) & 1)  # the learner's team in games with an opponent
                episode_log.append((vs_heuristic[ended], vs_pool[ended], rewards[ended, mine]))
                hand_uid[ended] += 1
        batch = {k: np.concatenate(v) for k, v in buf.items()}
        if pending is not None:
            batch = {k: np.concatenate([pending[k], batch[k]]) for k in batch}
        finished = result_uid[batch["env"], batch["uid"] % ring] == batch["uid"]
        pending = {k: v[~finished] for k, v in batch.items()}
        use = finished & batch["learn"] & (batch["imitated"] == imitating)  # no phase mixes the other's data
        data = {k: v[use] for k, v in batch.items()}
        returns = results[data["env"], data["uid"] % ring, data["seat"]]
        step += n * T
        # ---- PPO update -------------------------------------------------------------------
        stats = (_imitation_update if imitating else _ppo_update)(net, opt, cfg, data, returns, rng)
        update += 1
        sps = n * T / (time.perf_counter() - t0)
        bar.update(n * T)
        writer.add_scalar("charts/decisions_per_s", sps, step)
        writer.add_scalar("charts/mean_abs_game_points", float(np.abs(returns).mean()) if returns.size else 0.0, step)
        for k, v in stats.items():
            writer.add_scalar(f"losses/{k}", v, step)
        if contract_log and update % 5 == 0:
            _log_bids(writer, contract_log, step)
            h, f, gp = (np.concatenate(col) for col in zip(*episode_log, strict=True))
            for name, sel in (("vs_heuristic", h), ("vs_pool", f)):
                if sel.any():
                    writer.add_scalar(f"charts/game_points_{name}", float(gp[sel].mean()), step)
            contract_log, episode_log = [], []
        if cfg.pool_frac > 0 and update % cfg.pool_every == 0:
            pool.append({k: v.clone() for k, v in net.state_dict().items()})
            del pool[: -cfg.pool_size]
        if cfg.eval_every and update % cfg.eval_every == 0:
            _evaluate(writer, net, rules, cfg, step)
        if time.time() - last_ckpt > 60 * cfg.checkpoint_minutes:
            checkpoint()
            last_ckpt = time.time()
    checkpoint()
    bar.close()
    writer.close()
    for sig, handler in old_handlers.items():
        signal.signal(sig, handler)
    print(f"{'stopped' if stop['now'] else 'finished'}: {step} decisions; checkpoint {run / 'checkpoint.pt'}")
    return 0


def _optimise(net, opt, loss: torch.Tensor, cfg: Config) -> None:
    """One gradient step with the gradient norm clipped."""
    opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(net.parameters(), cfg.max_grad_norm)
    opt.step()


def _accumulate(sums: dict[str, float], **values: torch.Tensor) -> None:
    """Add each minibatch statistic to its running sum (averaged by the caller)."""
    for k, v in values.items():
        sums[k] = sums.get(k, 0.0) + v.item()


def _imitation_update(net, opt, cfg: Config, data: dict, returns: np.ndarray, rng: np.random.Generator) -> dict:
    """Warm start: cross-entropy towards the heuristic's actions; the critic learns their returns."""
    size = len(returns)
    if size < cfg.num_minibatches:
        return {}
    t = {k: torch.from_numpy(data[k]) for k in ("obs", "pobs", "mask", "target")}
    ret = torch.from_numpy(returns.astype(np.float32))
    sums: dict[str, float] = {}
    for idx in torch.from_numpy(rng.permutation(size)).tensor_split(cfg.num_minibatches):
        logits = net.policy(t["obs"][idx], t["mask"][idx])
        ce = torch.nn.functional.cross_entropy(logits, t["target"][idx])
        v_loss = 0.5 * ((net.value(t["obs"][idx], t["pobs"][idx]) - ret[idx]) ** 2).mean()
        loss = ce + cfg.vf_coef * v_loss
        _optimise(net, opt, loss, cfg)
        with torch.no_grad():
            agree = (logits.argmax(-1) == t["target"][idx]).float().mean()
        _accumulate(sums, imitation_loss=ce, value_loss=v_loss, imitation_accuracy=agree)
    return {k: v / cfg.num_minibatches for k, v in sums.items()}


def _ppo_update(net, opt, cfg: Config, data: dict, returns: np.ndarray, rng: np.random.Generator) -> dict:
    size = len(returns)
    if size < cfg.num_minibatches:
        return {}
    t = {k: torch.from_numpy(v) for k, v in data.items() if k in ("obs", "pobs", "mask", "action", "logp")}
    t["bidding"] = torch.from_numpy(data["bidding"].astype(np.float32))
    ret = torch.from_numpy(returns.astype(np.float32))
    sums: dict[str, float] = {}
    for _ in range(cfg.update_epochs):
        # exactly num_minibatches near-equal minibatches (no tiny remainder batch, whose
        # normalised advantages would be noise)
        for idx in torch.from_numpy(rng.permutation(size)).tensor_split(cfg.num_minibatches):
            logits = net.policy(t["obs"][idx], t["mask"][idx])
            dist = torch.distributions.Categorical(logits=logits)
            logp = dist.log_prob(t["action"][idx])
            value = net.value(t["obs"][idx], t["pobs"][idx])
            adv = ret[idx] - value.detach()
            adv = (adv - adv.mean()) / (adv.std(unbiased=False) + 1e-8)
            ratio = (logp - t["logp"][idx]).exp()
            pg = torch.max(-adv * ratio, -adv * ratio.clamp(1 - cfg.clip_coef, 1 + cfg.clip_coef)).mean()
            v_loss = 0.5 * ((value - ret[idx]) ** 2).mean()
            ent_all = dist.entropy()  # masked actions have probability 0 and contribute 0
            ent = ent_all.mean()
            bid_ent = (ent_all * t["bidding"][idx]).sum() / t["bidding"][idx].sum().clamp(min=1)
            loss = pg + cfg.vf_coef * v_loss - cfg.ent_coef * ent - cfg.bid_ent_coef * bid_ent
            _optimise(net, opt, loss, cfg)
            with torch.no_grad():
                kl = ((ratio - 1) - (logp - t["logp"][idx])).mean()
            _accumulate(sums, policy_loss=pg, value_loss=v_loss, entropy=ent, bid_entropy=bid_ent, approx_kl=kl)
    return {k: v / (cfg.update_epochs * cfg.num_minibatches) for k, v in sums.items()}


def _log_bids(writer, log, step) -> None:
    contract, declarer, dealer, winner, _ = (np.concatenate(col) for col in zip(*log, strict=True))
    for c in range(1, 4):
        sel = contract == c
        writer.add_scalar(f"bids/{CONTRACT_NAMES[c]}_frequency", float(sel.mean()), step)
        if sel.any():
            writer.add_scalar(f"bids/{CONTRACT_NAMES[c]}_success", float((winner[sel] == declarer[sel] % 2).mean()), step)
        for rel in range(4):  # declarer's seat relative to the dealer (1 = la mano)
            s2 = sel & ((declarer - dealer) % 4 == rel)
            writer.add_scalar(f"bids/{CONTRACT_NAMES[c]}_by_seat_{rel}", float(s2.mean()), step)


def _evaluate(writer, net, rules, cfg: Config, step: int) -> dict:
    """Duplicate evaluation of the current policy against random and heuristic."""
    deals = evaluation.make_deals(cfg.eval_deals, 12345)
    me = evaluation.Side("model", (TorchAgent(net), TorchAgent(net)))
    out = {}
    for opp in ("random", "heuristic"):
        r = evaluation.evaluate_pair(me, evaluation.Side.from_spec(opp, 0), rules, deals, 0, 0)
        gp = r["game_points_per_hand"]
        writer.add_scalar(f"eval/vs_{opp}_game_points", gp["mean"], step)
        writer.add_scalar(f"eval/vs_{opp}_ci_low", gp["ci95"][0], step)
        writer.add_scalar(f"eval/vs_{opp}_ci_high", gp["ci95"][1], step)
        out[opp] = gp
    return out


def _snapshot_env(env: VectorCuatrola) -> dict:
    return {
        "state": {k: v.copy() for k, v in vars(env.state).items()},
        "rngs": [sh.rng.bit_generator.state for sh in env._shards],
        "deals": [(sh.deals._masks.copy(), sh.deals._last.copy(), sh.deals._pos) for sh in env._shards],
    }


def _restore_env(env: VectorCuatrola, snap: dict) -> None:
    for k, v in snap["state"].items():
        getattr(env.state, k)[...] = v
    for sh, st, (masks, last, pos) in zip(env._shards, snap["rngs"], snap["deals"], strict=True):
        sh.rng.bit_generator.state = st
        sh.deals._masks, sh.deals._last, sh.deals._pos = masks, last, pos
    env._mask_cache = None


def _restore(ck: dict, path: str, net, opt, rng: np.random.Generator, env: VectorCuatrola):
    """Put a checked checkpoint's state into the run; :class:`CheckpointError` names a field that does not fit."""

    def fit(field, restore):
        try:
            return restore()
        except (RuntimeError, ValueError, TypeError, KeyError, AttributeError, IndexError) as e:
            first = str(e).splitlines()[0] if str(e) else type(e).__name__
            raise CheckpointError(f"{path}: field {field!r} does not fit this run: {first}") from None

    fit("model", lambda: net.load_state_dict(ck["model"]))
    fit("optimizer", lambda: opt.load_state_dict(ck["optimizer"]))
    fit("rng", lambda: setattr(rng.bit_generator, "state", ck["rng"]))
    fit("torch_rng", lambda: torch.set_rng_state(ck["torch_rng"]))
    fit("env", lambda: _restore_env(env, to_arrays(ck["env"])))
    pending = to_arrays(ck["pending"])
    if pending is not None and not isinstance(pending, dict):
        raise CheckpointError(f"{path}: field 'pending' must be a dict of arrays or None")
    pool, shapes = ck["pool"], {k: v.shape for k, v in net.state_dict().items()}
    for i, p in enumerate(pool if isinstance(pool, list) else [None]):
        if not isinstance(p, dict) or {k: getattr(v, "shape", None) for k, v in p.items()} != shapes:
            raise CheckpointError(f"{path}: field 'pool' must be a list of state dicts of this run's network (pool[{i}] is not)")
    return int(ck["step"]), int(ck["update"]), to_arrays(ck["hand_uid"]), pending, pool


if __name__ == "__main__":
    sys.exit(main())

