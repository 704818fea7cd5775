"""One network from several that share their bids and early play, whose late card-play head is the
mean of theirs: an ensemble of students of the same teacher, played as one ONNX graph.

Two late heads taught by the same search from the same start learn its play with different errors
(each fitted to a different draw of labelled positions); averaging their logits keeps what they
agree on. The merged head is exact, not a refit: the heads side by side, their outputs averaged,
so two heads of 256 units a layer make one of 512 (``late_hidden``), well within level ``expert``'s
time per decision::

    python -m experiments.merge_late_heads runs/A/checkpoint.pt runs/B/checkpoint.pt --out merged.pt
    python -m agents.export merged.pt --out merged.onnx
    python evaluate.py bot:level=expert,path=merged.onnx pimc:worlds=32 --deals 2000 --matches 0

The networks must share their policy head, the bids and early play (runs started with ``--init``
from the same network, whose early play they keep, such as ``configs/late.yaml``'s); the first
one's other heads and checkpoint fields (its run's config, rules, observation version) go with the
merged network.
"""

from __future__ import annotations

import argparse

from agents.checkpoint import CheckpointError, read_checkpoint, save_checkpoint
from agents.network import merged_late_heads


def merged(paths: list[str]) -> dict:
    """The checkpoint of the first network at ``paths`` with the late heads of all of them merged."""
    cks = [read_checkpoint(p, older=True) for p in paths]
    versions = {ck.get("obs_version") for ck in cks}
    if len(versions) > 1:
        raise ValueError(f"the networks read different observation versions ({sorted(versions)}); merge only one version")
    first = cks[0]
    keep = {k: first[k] for k in ("run_name", "config", "rules", "obs_version") if k in first}
    return {**keep, "model": merged_late_heads([ck["model"] for ck in cks]), "merged_from": list(paths)}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("networks", nargs="+", help="checkpoints or model files written by train.py (two or more)")
    ap.add_argument("--out", required=True, help="where to write the merged network")
    args = ap.parse_args(argv)
    try:
        ck = merged(args.networks)
    except (ValueError, CheckpointError) as e:
        raise SystemExit(f"error: {e}") from None
    save_checkpoint(args.out, ck)
    width = ck["model"]["late_net.0.weight"].shape[0]
    print(f"{args.out}: the late heads of {len(args.networks)} networks as one of {width} units a layer")


if __name__ == "__main__":
    main()
