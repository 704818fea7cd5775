"""Checkpoint and model files cannot run code; resuming does what it says or refuses by name."""

from __future__ import annotations

import functools
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from helpers import refused

torch = pytest.importorskip("torch")
pytest.importorskip("tensorboard")

from agents import evaluation as evaluate  # noqa: E402
from agents import training as train  # noqa: E402
from agents.checkpoint import CheckpointError, read_checkpoint  # noqa: E402
from agents.checkpoint import main as convert_main  # noqa: E402

TINY = ["--config", "configs/tiny.yaml", "--eval-every", "0"]
ROOT = Path(__file__).resolve().parents[1]


class _Payload:
    """Unpickling this object calls ``open(marker, "w")``: a file appears if the loader runs code."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


def write_malicious(path: Path, marker: Path) -> Path:
    """A file shaped like a checkpoint whose pickle would create ``marker`` when loaded unsafely."""
    torch.save({"run_name": "x", "config": {"hidden": 32, "layers": 2}, "rules": {"name": "online"},
                "obs_version": 1, "model": {"w": _Payload(marker)}}, path)
    return path


@pytest.fixture()
def malicious(tmp_path):
    marker = tmp_path / "code_ran"
    return write_malicious(tmp_path / "evil.pt", marker), marker


def test_no_entry_point_runs_code_from_a_malicious_checkpoint(malicious, tmp_path, capsys):
    """evaluate.py model:, train.py --resume and --init, the export: each refuses, the payload never runs."""
    from agents import evaluation as evaluate
    from agents.export import main as export_main

    evil, marker = malicious
    assert evaluate.main([f"model:{evil}", "random", "--deals", "2", "--matches", "0"]) == 2
    assert not marker.exists()
    assert train.main(["--resume", str(evil)]) == 2
    assert refused(capsys, "could run code") and not marker.exists()
    assert train.main([*TINY, "--run-dir", str(tmp_path / "r"), "--init", str(evil)]) == 2
    assert refused(capsys, "could run code") and not marker.exists()
    assert export_main([str(evil), "--out", str(tmp_path / "x.onnx"), "--check", "0"]) == 2
    assert not marker.exists()


def test_bot_and_service_refuse_a_pickle_posing_as_a_model(malicious, tmp_path):
    """A pickle renamed .onnx with a card whose SHA-256 matches: refused, nothing run."""
    pytest.importorskip("onnxruntime")
    pytest.importorskip("fastapi")
    from cuatrola_serve.bot import Bot, ModelError
    from cuatrola_serve.serve import create_app

    evil, marker = malicious
    onnx = tmp_path / "evil.onnx"
    onnx.write_bytes(evil.read_bytes())
    card = json.loads((ROOT / "agents/models/cuatrola.json").read_text())
    import hashlib

    card["sha256"] = hashlib.sha256(onnx.read_bytes()).hexdigest()
    onnx.with_suffix(".json").write_text(json.dumps(card))
    with pytest.raises(ModelError, match="not a valid ONNX model"):
        Bot.load(onnx)
    with pytest.raises(ModelError):
        create_app(onnx)
    assert not marker.exists()


def test_an_old_pickled_checkpoint_is_refused_with_the_way_to_convert_it(tmp_path):
    old = tmp_path / "old.pt"
    ck = read_checkpoint(ROOT / "agents/models/cuatrola.pt", older=True)
    torch.save({**ck, "hand_uid": np.zeros(4, np.int64)}, old)  # NumPy arrays pickled, as older versions wrote
    with pytest.raises(CheckpointError, match=r"convert it: python -m agents.checkpoint .*old.pt NEW.pt --trust-pickle"):
        read_checkpoint(old)
    assert convert_main([str(old), str(tmp_path / "new.pt")]) == 2, "converting needs --trust-pickle"
    assert not (tmp_path / "new.pt").exists()
    assert convert_main([str(old), str(tmp_path / "new.pt"), "--trust-pickle"]) == 0
    new = read_checkpoint(tmp_path / "new.pt", older=True)
    assert isinstance(new["hand_uid"], torch.Tensor) and all(torch.equal(new["model"][k], ck["model"][k]) for k in ck["model"])


# --------------------------------------------------------------------------- resume
@pytest.fixture(scope="module")
def short_run(tmp_path_factory) -> Path:
    """A tiny run stopped at 2,048 of tiny.yaml's decisions (a run of length 2,048)."""
    root = tmp_path_factory.mktemp("short")
    train.main([*TINY, "--run-dir", str(root), "--total-decisions", "2048"])
    (ck,) = root.glob("*/checkpoint.pt")
    return ck


def edited(ck_path: Path, out: Path, edit) -> str:
    ck = read_checkpoint(ck_path)
    edit(ck)
    torch.save(ck, out)
    return str(out)


def test_resume_keeps_the_runs_own_length_and_applies_safe_flags(short_run):
    cfg, _, _ = train.parse_config(["--resume", str(short_run)])
    assert cfg.total_decisions == 2048, "the run's own length, not the default"
    cfg, _, _ = train.parse_config(["--resume", str(short_run), "--total-decisions", "1024", "--eval-every", "3",
                                    "--checkpoint-minutes", "2", "--torch-threads", "1"])
    assert (cfg.total_decisions, cfg.eval_every, cfg.checkpoint_minutes, cfg.torch_threads) == (1024, 3, 2.0, 1)
    assert cfg.num_envs == 64 and cfg.hidden == 32, "the rest is the run's"
    cfg, _, _ = train.parse_config(["--resume", str(short_run), "--num-envs", "64"])  # the same value: fine
    assert cfg.num_envs == 64


@pytest.mark.parametrize("flags, named", [
    (["--num-envs", "32"], "--num-envs 32 (the run has 64)"),
    (["--learning-rate", "0.1"], "--learning-rate 0.1"),
    (["--seed", "9"], "--seed 9"),
    (["--rules", "traditional"], "--rules 'traditional'"),
    (["--init", "agents/models/cuatrola.pt"], "--init"),
])
def test_resume_refuses_a_flag_that_would_change_the_run(short_run, flags, named):
    with pytest.raises(CheckpointError, match=named.replace("(", r"\(").replace(")", r"\)")):
        train.parse_config(["--resume", str(short_run), *flags])


def test_resume_refuses_checkpoints_that_do_not_fit_naming_the_field(short_run, tmp_path, capsys):
    from agents.export import slim_checkpoint

    slim = slim_checkpoint(str(short_run), str(tmp_path / "slim.pt"))  # a model file: weights, no optimiser
    assert train.main(["--resume", str(slim)]) == 2
    assert refused(capsys, "lacks 'optimizer'")
    assert train.main(["--resume", str(ROOT / "models/ppo/ppo.pt")]) == 2
    assert refused(capsys, "observation version 1, this code builds version 2 (it can play")
    assert train.main(["--resume", edited(short_run, tmp_path / "a.pt", lambda ck: ck["config"].update(warp=1))]) == 2
    assert refused(capsys, "unknown field(s) ['warp']")
    assert train.main(["--resume", edited(short_run, tmp_path / "b.pt", lambda ck: ck["config"].update(num_envs=32))]) == 2
    assert refused(capsys, "of field 'env' do not hold the run's 32 games")

    def narrow(ck):
        ck["model"]["policy_net.0.weight"] = ck["model"]["policy_net.0.weight"][:, :-1]

    assert train.main(["--resume", edited(short_run, tmp_path / "c.pt", narrow)]) == 2
    assert refused(capsys, "field 'model' does not fit")
    bad_rng = edited(short_run, tmp_path / "d.pt", lambda ck: ck.update(rng={"bit_generator": "x"}))
    assert train.main(["--resume", bad_rng]) == 2
    assert refused(capsys, "field 'rng' does not fit")


def test_sigterm_checkpoints_like_ctrl_c(tmp_path):
    cmd = [sys.executable, "train.py", *TINY, "--run-dir", str(tmp_path), "--total-decisions", "100000000"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.time() + 120
    while not list(tmp_path.glob("*/events.out.tfevents.*")) and time.time() < deadline:
        time.sleep(0.2)
    time.sleep(2.0)  # a few updates in
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0, out
    assert "stopped:" in out
    (ck,) = tmp_path.glob("*/checkpoint.pt")
    saved = read_checkpoint(ck)
    assert 0 < saved["step"] < 100_000_000


def test_the_learner_device_option(short_run, tmp_path, monkeypatch):
    """--device cpu trains exactly as the default does here; cuda where there is none is refused
    up front; a checkpoint written before the option existed resumes with its default."""
    a, b = tmp_path / "a", tmp_path / "b"
    train.main([*TINY, "--run-dir", str(a), "--total-decisions", "1024"])
    train.main([*TINY, "--run-dir", str(b), "--total-decisions", "1024", "--device", "cpu"])
    wa, wb = (read_checkpoint(next(d.glob("*/checkpoint.pt")))["model"] for d in (a, b))
    assert all(torch.equal(wa[k], wb[k]) for k in wa)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ValueError, match="no CUDA device"):
        train.parse_config([*TINY, "--device", "cuda"])
    with pytest.raises(ValueError, match="device must be auto, cpu or cuda"):
        train.parse_config([*TINY, "--device", "tpu"])
    old = edited(short_run, tmp_path / "old.pt", lambda ck: ck["config"].pop("device"))
    cfg, _, _ = train.parse_config(["--resume", old])
    assert cfg.device == "auto"
    cfg, _, _ = train.parse_config(["--resume", old, "--device", "cpu"])
    assert cfg.device == "cpu", "the device may change on resume"


# --------------------------------------------------------------------------- a checkpoint is data
def test_a_checkpoint_naming_a_plug_in_is_refused_unless_the_same_spec_is_given(short_run, tmp_path, monkeypatch, capsys):
    """Resuming never imports a module the file names: the same spec must come from the command line."""
    (tmp_path / "planted_agent.py").write_text(f"open({str(tmp_path / 'imported')!r}, 'w').close()\n"
                                               "class Agent:\n    def act(self, view):\n        return 20\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = "planted_agent:Agent"
    ck = edited(short_run, tmp_path / "plug.pt", lambda ck: ck["config"].update(opponent=spec))
    assert train.main(["--resume", ck]) == 2
    assert refused(capsys, "never chooses those") and not (tmp_path / "imported").exists()
    with pytest.raises(CheckpointError, match="cannot change: --opponent 'heuristic'"):
        train.parse_config(["--resume", ck, "--opponent", "heuristic"])
    cfg, _, _ = train.parse_config(["--resume", ck, "--opponent", spec])
    assert cfg.opponent == spec, "given again, the operator chose it"


def test_a_checkpoint_never_chooses_a_next_stage_outside_the_shipped_presets(short_run, tmp_path, capsys):
    """A checkpoint whose next stage is a config of someone's choosing (a YAML file importing a module
    and joining a host): resuming refuses it unless the command line names it. A shipped preset's name
    (a recipe's next stage) names nothing outside the package, and one ``--resume`` goes on with it."""
    planted = tmp_path / "stage.yaml"
    planted.write_text("opponent: 'this:Zen'\nworkers: 2\nray_address: 203.0.113.7:6379\n")
    then = f"finetune,{planted}"
    ck = edited(short_run, tmp_path / "then.pt", lambda ck: ck["config"].update(then=then))
    assert train.main(["--resume", ck]) == 2
    err = capsys.readouterr().err
    assert f"--then '{then}'" in err and "never chooses those" in err and "next stage" not in err
    assert "Zen" not in dir(sys.modules.get("this")), "no module the file named was imported"
    cfg, _, _ = train.parse_config(["--resume", ck, "--then", ""])
    assert cfg.then == "", "the command line chose no next stage"
    cfg, _, _ = train.parse_config(["--resume", ck, "--then", then])
    assert cfg.then == then, "named again, the operator chose it"
    shipped = edited(short_run, tmp_path / "recipe.pt", lambda ck: ck["config"].update(then="finetune,late"))
    cfg, _, _ = train.parse_config(["--resume", shipped])
    assert cfg.then == "finetune,late", "a recipe's own stages are taken as saved"


def test_a_checkpoint_never_chooses_the_cluster_a_resumed_run_joins(short_run, tmp_path):
    ck = edited(short_run, tmp_path / "ray.pt", lambda ck: ck["config"].update(ray_address="203.0.113.7:6379"))
    cfg, _, _ = train.parse_config(["--resume", ck])
    assert cfg.ray_address == "", "the saved address is dropped: a local Ray"
    cfg, _, _ = train.parse_config(["--resume", ck, "--ray-address", "auto"])
    assert cfg.ray_address == "auto", "the command line may name one"


def test_a_checkpoint_config_value_of_the_wrong_type_is_refused(short_run, tmp_path, capsys):
    ck = edited(short_run, tmp_path / "t.pt", lambda ck: ck["config"].update(eval_deals=True))
    assert train.main(["--resume", ck]) == 2
    assert refused(capsys, "eval_deals must be int")


def _rezip(src: Path, out: Path, compression: int) -> Path:
    import zipfile

    with zipfile.ZipFile(src) as z, zipfile.ZipFile(out, "w", compression) as w:
        for info in z.infolist():
            w.writestr(info.filename, z.read(info), compress_type=compression)
    return out


def test_a_compressed_checkpoint_is_refused_before_it_is_inflated(short_run, tmp_path, capsys):
    """A record deflated (torch.save never compresses) is refused unread, by every entry point."""
    import zipfile

    from agents import evaluation as evaluate

    bomb = tmp_path / "bomb.pt"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z:  # 256 MB of zeros in a file of 250 KB
        z.writestr("archive/data.pkl", b"\x80\x02}q\x00.")
        with z.open("archive/data/0", "w") as f:
            for _ in range(256):
                f.write(bytes(1 << 20))
    assert bomb.stat().st_size < 1 << 20
    with pytest.raises(CheckpointError, match="compressed"):
        read_checkpoint(bomb)
    with pytest.raises(CheckpointError, match="compressed"):
        read_checkpoint(_rezip(short_run, tmp_path / "deflated.pt", zipfile.ZIP_DEFLATED))
    assert evaluate.main([f"model:{bomb}", "random", "--deals", "2", "--matches", "0"]) == 2
    assert train.main(["--resume", str(bomb)]) == 2 and refused(capsys, "compressed")
    assert read_checkpoint(_rezip(short_run, tmp_path / "stored.pt", zipfile.ZIP_STORED))["step"] == 2048


def test_a_checkpoint_whose_records_outsize_its_tensors_is_refused(short_run, tmp_path):
    """A tensor record padded past the storage the pickle declares (torch's reader checks the sizes)."""
    import zipfile

    out = tmp_path / "padded.pt"
    with zipfile.ZipFile(short_run) as z, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as w:
        for info in z.infolist():
            data = z.read(info)
            w.writestr(info, data + bytes(1 << 20) if info.filename.split("/")[-2:-1] == ["data"] else data)
    with pytest.raises(CheckpointError, match="record size"):
        read_checkpoint(out)


def test_a_killed_checkpoint_write_leaves_no_temporary_file_behind(short_run, tmp_path):
    from agents.checkpoint import save_checkpoint

    stale = tmp_path / "checkpoint.pt8f3k1.tmp"
    stale.write_bytes(b"half a checkpoint")
    other = tmp_path / "notes.pt.tmp"
    other.write_bytes(b"")
    save_checkpoint(tmp_path / "checkpoint.pt", read_checkpoint(short_run))
    assert not stale.exists() and other.exists(), "only the checkpoint's own temporaries are removed"
    assert read_checkpoint(tmp_path / "checkpoint.pt")["step"] == 2048


# --------------------------------------------------------------------------- a file's structure is bounded
def shared_tree(levels: int = 28):
    """A list of itself twice, ``levels`` times over: a few KB on disk, 2**levels leaves expanded."""
    node = ["x" * 64]
    for _ in range(levels):
        node = [node, node]
    return node


BAD_STRUCTURES = {
    "shared references": (shared_tree, "more than"),
    "deep nesting": (lambda: functools.reduce(lambda inner, _: [inner], range(200), []), "deeper than"),
    "a huge string": (lambda: "y" * (3 * 1024 * 1024), "a string of"),
}


@pytest.mark.parametrize("case", list(BAD_STRUCTURES))
@pytest.mark.parametrize("field", ["rules", "pending"])
def test_a_file_of_unbounded_structure_is_refused_before_anything_walks_it(short_run, tmp_path, capsys, case, field):
    """A tree of shared references (or a deep one, or one huge string) in any field: the evaluator and
    the trainer refuse it in one line, at once, without expanding it."""
    build, says = BAD_STRUCTURES[case]
    bad = edited(short_run, tmp_path / "tree.pt", lambda ck: ck.update({field: build()}))
    t0 = time.monotonic()
    assert train.main(["--resume", bad]) == 2
    assert refused(capsys, says)
    assert evaluate.main([f"model:{bad}", "random", "--deals", "2", "--matches", "0", "--no-progress"]) == 2
    assert refused(capsys, says)
    assert time.monotonic() - t0 < 10, "refused before anything expanded it"


@pytest.mark.parametrize("spec, names", [("heuristic", False), ("pimc:worlds=2", False), ("bot:level=strong", False),
                                         ("heuristic+random", False), ("model:runs/x.pt", True), ("planted:Agent", True),
                                         ("bot:path=/tmp/m.onnx", True), ("heuristic+model:x.pt", True)])
def test_only_an_opponent_that_names_a_file_or_code_must_be_named_again(spec, names):
    from agents.training.config import names_something

    assert names_something("opponent", spec, "heuristic") is names
    assert names_something("then", "", "finetune") is False and names_something("then", "x.yaml", "") is True
