"""Export a trained policy to ONNX, with a JSON card beside it.

    python -m agents.export runs/NAME/checkpoint.pt --out agents/models/cuatrola.onnx --torch-out agents/models/cuatrola.pt

The ONNX graph has two inputs, ``observation`` float32 [N, OBS_DIM] and ``action_mask``
bool [N, 24] (dynamic batch N), and one output, ``logits`` float32 [N, 24] with illegal
actions at ``MASKED_LOGIT`` (-1e9). Only the policy is exported: the perfect-information
critic is a training aid and never plays. The card (``agents/models/cuatrola.json`` beside
``agents/models/cuatrola.onnx``) records the observation version, the rules preset, the
training summary (config, decisions, updates) and the SHA-256 of the ONNX file; the
torch-free :class:`cuatrola_serve.bot.Bot` refuses a model whose card does not fit.

``--measured R.json ...`` records beside the training summary what evaluations of the exported
model measured (``evaluate.py --json`` files: each one's players, seed, deals and matches, game
points a hand and match share with their 95% intervals, and the command that plays it again), and
``--compute TEXT`` what the training cost and on what hardware ("4.5 hours on a 2-core x86-64
CPU, no GPU").

``--check N`` (default 10,000) compares onnxruntime with PyTorch on N observations from
real games (random play) and fails unless every logit agrees within 1e-5 and the greedy
actions are the same.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import json
import sys
import warnings
from pathlib import Path

import numpy as np
import torch

from cuatrola_env.cli import ArgumentParser, int_in, not_installed, run_main
from cuatrola_env.files import atomic_open
from cuatrola_env.observation import OBS_DIM, OBS_VERSION
from cuatrola_env.rules import NUM_ACTIONS
from cuatrola_env.vector import VectorCuatrola

from .checkpoint import network_spec, read_checkpoint, save_checkpoint
from .results import read_runs
from .torch_agent import load_network

CARD_FORMAT = "cuatrola-onnx-card"
CARD_VERSION = 1


class _Policy(torch.nn.Module):
    """The policy half of a :class:`~agents.network.PolicyValueNet` (what gets exported)."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, observation: torch.Tensor, action_mask: torch.Tensor) -> torch.Tensor:
        return self.net.policy(observation, action_mask)


def onnx_graph(net) -> bytes:
    """The policy of ``net`` (a :class:`~agents.network.PolicyValueNet`) as an ONNX graph: inputs
    ``observation`` (N, OBS_DIM) float32 and ``action_mask`` (N, 24) bool, output ``logits``. The
    network is left in the mode it was in."""
    training = net.training
    model = _Policy(net).eval()
    example = (torch.zeros(2, OBS_DIM), torch.ones(2, NUM_ACTIONS, dtype=torch.bool))
    buffer = io.BytesIO()
    try:
        with warnings.catch_warnings():  # TorchScript exporter: plain MLPs need no newer
            warnings.simplefilter("ignore", DeprecationWarning)
            torch.onnx.export(
                model, example, buffer, input_names=["observation", "action_mask"], output_names=["logits"],
                dynamic_axes={"observation": {0: "N"}, "action_mask": {0: "N"}, "logits": {0: "N"}},
                opset_version=17, dynamo=False,
            )
    finally:
        net.train(training)
    return buffer.getvalue()


def sample_observations(n: int, rules: str = "online", seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``n`` (observation, legal mask) pairs from real games played at random."""
    env = VectorCuatrola(num_envs=min(n, 1024), rules=rules, seed=seed)
    rng = np.random.default_rng(seed)
    obs, masks = [], []
    total = 0
    while total < n:
        obs.append(env.observe())
        masks.append(env.action_mask.copy())
        total += env.num_envs
        p = rng.random(env.action_mask.shape) * env.action_mask
        env.step(p.argmax(1))
    return np.concatenate(obs)[:n], np.concatenate(masks)[:n]


def measured(files: list[str]) -> list[dict]:
    """What each evaluation (an ``evaluate.py --json`` file, checked as ``evaluate.py compare`` reads
    them) measured, for a model card: per pairing its two players, the seed, deals and matches,
    game points a hand and match share (means and 95% intervals), and the command that plays it."""
    found = []
    for run in read_runs([Path(f) for f in files]):
        rules = run["rules"]
        for p in run["pairings"]:
            gp, mw = p["game_points_per_hand"], p["match_win_rate"]
            found.append({
                "player": p["a"], "against": p["b"], "rules": rules["name"], "target": rules["target"],
                "seed": run["seed"], "deals": p["deals"], "matches": p["matches"],
                "game_points_per_hand": None if gp is None else {"mean": gp["mean"], "ci95": gp["ci95"]},
                "match_win_rate": None if mw is None else {"mean": mw["mean"], "ci95": mw["ci95"]},
                "command": (f"python evaluate.py {p['a']} {p['b']} --rules {rules['name']} --target {rules['target']} "
                            f"--deals {run['deals']} --matches {run['matches']} --seed {run['seed']}"),
            })
    return found


def export(checkpoint: str, out: str, check: int = 10_000, results: list[str] = (), compute: str = "") -> dict:
    """Write ``out`` (ONNX) and its card (``.json`` beside it); return the card. ``results``:
    evaluations of the model to record in the card (:func:`measured`; read before anything is
    written, so a bad file leaves no half-made model); ``compute``: what its training cost, on
    what hardware."""
    found = measured(list(results))
    ck = read_checkpoint(checkpoint, older=True)
    net = load_network(checkpoint)
    out_path = Path(out)
    obs_dim = OBS_DIM  # the graph takes today's observation whole; a network of an earlier version reads its leading columns
    with atomic_open(out_path, "wb") as f:
        f.write(onnx_graph(net))
    cfg = ck.get("config", {})
    card = {
        "format": CARD_FORMAT,
        "version": CARD_VERSION,
        "model": out_path.name,
        "sha256": hashlib.sha256(out_path.read_bytes()).hexdigest(),
        "obs_version": OBS_VERSION,
        "obs_dim": obs_dim,
        "num_actions": NUM_ACTIONS,
        "rules": ck["rules"],
        "inputs": {"observation": ["N", obs_dim, "float32"], "action_mask": ["N", NUM_ACTIONS, "bool"]},
        "outputs": {"logits": ["N", NUM_ACTIONS, "float32"]},
        "training": {
            "checkpoint": str(checkpoint),
            "run_name": ck.get("run_name"),
            "recipe": cfg.get("recipe") or None,  # the preset whose command made it: python train.py --config RECIPE
            "decisions": int(ck.get("step", 0)),
            "updates": int(ck.get("update", 0)),
            "config": cfg,
            "network": {**net.spec.to_dict(),  # the whole network trained (its spec); the graph is its policy
                        "parameters": sum(p.numel() for head in (net.policy_net, net.early_net, net.late_net)
                                          if head is not None
                                          for p in head.parameters()),
                        "late_head": None if net.late_net is None else [m.out_features for m in net.late_net[:-1:2]]},
            "compute": compute or None,
        },
        "measured": found,
    }
    if check:
        card["parity"] = check_parity(net, out_path, check)
    with atomic_open(out_path.with_suffix(".json")) as f:
        f.write(json.dumps(card, indent=2) + "\n")
    return card


def slim_checkpoint(checkpoint: str, out: str) -> Path:
    """A small copy of a training checkpoint for play and evaluation (``model:PATH``): the
    weights, config, rules, observation version and counters; no optimiser, games or pool."""
    ck = read_checkpoint(checkpoint, older=True)
    keep = {k: ck[k] for k in ("run_name", "config", "rules", "obs_version", "model", "step", "update") if k in ck}
    return save_checkpoint(out, {**keep, "network": network_spec(ck, checkpoint).to_dict()})


def check_parity(net, onnx_path, n: int = 10_000, seed: int = 0) -> dict:
    """Compare onnxruntime with PyTorch on ``n`` real observations; raise if they disagree."""
    import onnxruntime as ort

    obs, mask = sample_observations(n, seed=seed)
    sess = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    got = sess.run(["logits"], {"observation": obs, "action_mask": mask})[0]
    with torch.no_grad():
        want = net.policy(torch.from_numpy(obs), torch.from_numpy(mask)).numpy()
    legal = mask
    diff = float(np.abs(got[legal] - want[legal]).max())
    scale = max(1.0, float(np.abs(want[legal]).max()))  # float32 rounding grows with the logits' size
    same = bool((got.argmax(1) == want.argmax(1)).all())
    illegal_ok = bool((got[~legal] <= -1e8).all())
    if diff > 1e-5 * scale or not same or not illegal_ok:
        raise RuntimeError(f"ONNX and PyTorch disagree: max |diff| {diff:.2e} (logits up to {scale:.1f}), same actions "
                           f"{same}, masked {illegal_ok}")
    return {"observations": n, "max_abs_diff": diff, "same_actions": same}


def main(argv=None) -> int:
    p = ArgumentParser(prog="python -m agents.export", description="Export a checkpoint's policy to ONNX.")
    p.add_argument("checkpoint", help="a checkpoint written by train.py")
    p.add_argument("--out", default="agents/models/cuatrola.onnx", help="ONNX file to write (the card goes beside it)")
    p.add_argument("--check", type=int_in(0), default=10_000, help="observations for the parity check (0: skip)")
    p.add_argument("--torch-out", help="also write a slim PyTorch checkpoint here (weights and config only)")
    p.add_argument("--measured", nargs="+", default=[], metavar="RESULT.json",
                   help="evaluate.py --json files of this model's evaluations, recorded in the card")
    p.add_argument("--compute", default="", help="what the training cost, on what hardware, recorded in the card "
                                                  "(\"4.5 hours on a 2-core x86-64 CPU, no GPU\")")
    a = p.parse_args(argv)
    missing = [m for m in ("onnx", "onnxruntime") if importlib.util.find_spec(m) is None]
    if missing:
        print(f"error: the export needs {not_installed(' and '.join(missing), 'export')}", file=sys.stderr)
        return 2
    try:
        card = export(a.checkpoint, a.out, a.check, a.measured, a.compute)
    except ValueError as e:  # a checkpoint that does not fit (CheckpointError), a bad output
        print(f"error: {e}", file=sys.stderr)
        return 2
    except RuntimeError as e:  # the exported graph does not play as the network does
        print(f"error: {e}", file=sys.stderr)
        return 1
    if a.torch_out:
        slim_checkpoint(a.checkpoint, a.torch_out)
        print(f"wrote {a.torch_out} ({Path(a.torch_out).stat().st_size / 1024:.0f} KiB)")
    size = Path(a.out).stat().st_size
    print(f"wrote {a.out} ({size / 1024:.0f} KiB) and {Path(a.out).with_suffix('.json')}")
    if "parity" in card:
        print(f"parity on {card['parity']['observations']} observations: max |diff| {card['parity']['max_abs_diff']:.2e}, "
              "same actions")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
