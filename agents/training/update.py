"""One learning step from a rollout's data: imitation of the heuristic's labels (the warm start)
or masked PPO with the perfect-information critic; each returns its losses for TensorBoard."""

from __future__ import annotations

import numpy as np
import torch


def _optimise(net, opt, loss: torch.Tensor, cfg) -> None:
    """One gradient step with the gradient norm clipped."""
    opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(net.parameters(), cfg.max_grad_norm)
    opt.step()


def _accumulate(sums: dict[str, float], **values: torch.Tensor) -> None:
    """Add each minibatch statistic to its running sum (averaged by the caller)."""
    for k, v in values.items():
        sums[k] = sums.get(k, 0.0) + v.item()


def imitation_update(net, opt, cfg, data: dict, returns: np.ndarray, rng: np.random.Generator) -> dict:
    """Warm start: cross-entropy towards the heuristic's actions; the critic learns their returns."""
    size = len(returns)
    if size < cfg.num_minibatches:
        return {}
    device = next(net.parameters()).device  # the learner's: the data goes there
    t = {k: torch.from_numpy(data[k]).to(device) for k in ("obs", "pobs", "mask", "target")}
    ret = torch.from_numpy(returns.astype(np.float32)).to(device)
    sums: dict[str, float] = {}
    for idx in torch.from_numpy(rng.permutation(size)).to(device).tensor_split(cfg.num_minibatches):
        logits = net.policy(t["obs"][idx], t["mask"][idx])
        ce = torch.nn.functional.cross_entropy(logits, t["target"][idx])
        v_loss = 0.5 * ((net.value(t["obs"][idx], t["pobs"][idx]) - ret[idx]) ** 2).mean()
        loss = ce + cfg.vf_coef * v_loss
        _optimise(net, opt, loss, cfg)
        with torch.no_grad():
            agree = (logits.argmax(-1) == t["target"][idx]).float().mean()
        _accumulate(sums, imitation_loss=ce, value_loss=v_loss, imitation_accuracy=agree)
    return {k: v / cfg.num_minibatches for k, v in sums.items()}


def ppo_update(net, opt, cfg, data: dict, returns: np.ndarray, rng: np.random.Generator) -> dict:
    size = len(returns)
    if size < cfg.num_minibatches:
        return {}
    device = next(net.parameters()).device  # the learner's: the data goes there
    t = {k: torch.from_numpy(v).to(device) for k, v in data.items() if k in ("obs", "pobs", "mask", "action", "logp")}
    t["bidding"] = torch.from_numpy(data["bidding"].astype(np.float32)).to(device)
    ret = torch.from_numpy(returns.astype(np.float32)).to(device)
    sums: dict[str, float] = {}
    for _ in range(cfg.update_epochs):
        # exactly num_minibatches near-equal minibatches (no tiny remainder batch, whose
        # normalised advantages would be noise)
        for idx in torch.from_numpy(rng.permutation(size)).to(device).tensor_split(cfg.num_minibatches):
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
