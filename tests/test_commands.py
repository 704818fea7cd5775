"""Every command refuses bad input the same way: one line, ``error: ...``, exit status 2, no
traceback (train.py, evaluate.py and its subcommands, the terminal game, the service)."""

from __future__ import annotations

import errno
import importlib
import re
import subprocess
import sys

import numpy as np
import pytest

CASES = [
    ("agents.training.loop", ["--rules", "tradtional"], "unknown rules preset"),
    ("agents.training.loop", ["--algorithm", "dqn"], "algorithm must be one of"),
    ("agents.training.loop", ["--algorithm", "ppo", "--num-envs", "0"], "num_envs (--num-envs) must be at least 1"),
    ("agents.training.loop", ["--resume", "no/such/checkpoint.pt"], "no checkpoint or model file"),
    ("agents.training.loop", ["--init", "no/such/model.pt"], "no checkpoint or model file"),
    ("agents.training.loop", ["--seed", "one"], "invalid int value"),
    ("agents.evaluation", ["heuristic", "random", "--deals", "many"], "invalid int value"),
    ("agents.evaluation", ["heuristic", "nobody"], "nobody"),
    ("agents.evaluation", ["compare", "a.json", "no/such.json"], "cannot read"),
    ("cuatrola_serve.play", ["--rules", "tradtional", "--bots", "heuristic,heuristic,heuristic"], "unknown rules preset"),
    ("cuatrola_serve.serve", ["--log-level", "loud"], "invalid choice"),
    # numbers out of range, refused where they are parsed, naming the flag
    ("agents.evaluation", ["heuristic", "random", "--target", "0"], "argument --target: must be an integer in 1..1000"),
    ("agents.evaluation", ["heuristic", "random", "--seed", "-1"], "argument --seed: must be an integer in 0.."),
    ("agents.evaluation", ["heuristic", "random", "--workers", "0"], "argument --workers: must be an integer of at least 1"),
    ("agents.evaluation", ["heuristic", "pimc:seconds=nan"], "seconds='nan' of 'pimc:seconds=nan' must be a finite number"),
    ("agents.evaluation", ["heuristic", "pimc:seconds=-1"], "seconds must be a time budget of 0 (none) or more"),
    ("agents.evaluation", ["heuristic", "pimc:bid_worlds=0"], "bid_worlds must be at least 1"),
    ("cuatrola_serve.serve", ["--port", "99999"], "argument --port: must be an integer in 1..65535, got 99999"),
    ("cuatrola_serve.serve", ["--port", "0"], "argument --port: must be an integer in 1..65535, got 0"),
    ("cuatrola_serve.serve", ["--max-body", "-1"], "argument --max-body: must be an integer of at least 1"),
    ("cuatrola_serve.serve", ["--body-timeout", "nan"], "argument --body-timeout: must be a finite number above 0"),
    ("cuatrola_serve.play", ["--target", "0"], "argument --target: must be an integer in 1..1000"),
    ("cuatrola_serve.play", ["--seat", "4"], "argument --seat: must be an integer in 0..3"),
    ("agents.training.loop", ["--hidden", "-5"], "hidden (--hidden) must be at least 1, got -5"),
    ("agents.training.loop", ["--layers", "0"], "layers (--layers) must be at least 1, got 0"),
    ("agents.training.loop", ["--seed", "-1"], "seed (--seed) must be at least 0, got -1"),
    ("agents.training.loop", ["--learning-rate", "nan"], "learning_rate (--learning-rate) must be a finite number"),
    ("agents.training.loop", ["--learning-rate", "-0.1"], "learning_rate (--learning-rate) must be at least 0"),
    # outputs checked before any work
    ("agents.evaluation", ["heuristic", "random", "--json", "/proc/nope/out.json"], "--json /proc/nope/out.json: cannot write"),
    ("agents.evaluation", ["heuristic", "random", "--png", "table.jpgx"], "--png table.jpgx: the picture's format comes"),
    ("agents.training.loop", ["--config", "tiny", "--run-dir", "/proc/nope"], "--run-dir /proc/nope"),
    ("agents.export", ["no/such.pt"], "no checkpoint or model file"),
]


@pytest.mark.parametrize("module,argv,says", CASES, ids=[f"{m.split('.')[-1]} {' '.join(a)}" for m, a, _ in CASES])
def test_a_bad_input_is_one_line_and_exit_status_2(module, argv, says, capsys, tmp_path, monkeypatch):
    if module == "cuatrola_serve.serve":
        pytest.importorskip("fastapi")
    if module.startswith("agents.training") or module == "agents.export":
        pytest.importorskip("torch")
    monkeypatch.chdir(tmp_path)  # nothing may be written: a refused training run leaves no folder here
    main = importlib.import_module(module).main
    try:
        code = main(argv)
    except SystemExit as e:
        code = e.code
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("error: ") and says in err[0], (code, err)
    assert not list(tmp_path.iterdir())


def test_an_unexpected_failure_is_one_line_and_its_traceback_comes_with_debug(capsys):
    from cuatrola_env.cli import run_main

    def broken(argv):
        raise RuntimeError("the disk is full\nmore detail")

    assert run_main(broken, ["--seed", "1"]) == 1
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line == "error: RuntimeError: the disk is full (an unexpected failure: run again with --debug for the traceback)"
    with pytest.raises(RuntimeError, match="the disk is full"):
        run_main(broken, ["--debug"])
    assert run_main(lambda argv: 0, []) == 0


@pytest.mark.parametrize("module", ["agents.training.loop", "agents.evaluation", "cuatrola_serve.play", "cuatrola_serve.serve"])
def test_every_command_takes_debug(module, capsys):
    if module == "cuatrola_serve.serve":
        pytest.importorskip("fastapi")
    if module.startswith("agents.training"):
        pytest.importorskip("torch")
    with pytest.raises(SystemExit) as e:
        importlib.import_module(module).main(["--help"])
    assert e.value.code == 0 and "--debug" in capsys.readouterr().out


# --------------------------------------------------------------------------- values checked where they enter
@pytest.mark.parametrize("make, says", [
    (lambda: __import__("cuatrola_env").VectorCuatrola(4, seed=0).step(np.full(4, 20.0)), "actions must be an array of integers"),
    (lambda: __import__("cuatrola_env").VectorCuatrola(4, seed=-1), "seed must be None or a non-negative integer"),
    (lambda: __import__("cuatrola_env.game").game.Game(seed=1.5), "seed must be None or a non-negative integer, got 1.5"),
    (lambda: __import__("cuatrola_env.game").game.Game().reset(seed=True), "seed must be None or a non-negative integer"),
    (lambda: __import__("cuatrola_env.game").game.Game(score=[True, 0]), "score must be integers"),
    (lambda: __import__("cuatrola_env.gym").gym.CuatrolaGymEnv(seat=True), "seat must be 0..3 or 'random', got True"),
    (lambda: __import__("cuatrola_env.gym").gym.CuatrolaGymEnv().reset(seed=0, options={"score": [0, True]}),
     "score must be integers"),
], ids=["float actions", "negative seed", "float seed", "bool seed on reset", "bool in a score", "bool seat",
        "bool score on reset"])
def test_a_value_of_the_wrong_kind_is_a_value_error_naming_it(make, says):
    with pytest.raises(ValueError, match=re.escape(says)):
        make()


# --------------------------------------------------------------------------- a base install
@pytest.mark.parametrize("command, argv, blocked, extra", [
    ("cuatrola-train", ["--config", "tiny"], ["torch"], "train"),
    ("cuatrola-serve", [], ["fastapi", "uvicorn", "pydantic", "onnxruntime"], "serve"),
    ("cuatrola-play", ["--model", "none"], ["fastapi", "uvicorn", "pydantic", "onnxruntime"], "serve"),
    ("cuatrola-play", [], ["fastapi", "uvicorn", "pydantic", "onnxruntime"], "serve"),
])
def test_a_command_whose_extra_is_missing_says_which_to_install(command, argv, blocked, extra):
    """Run as on a base install (the extra's modules unimportable): one line naming the extra, exit 2."""
    code = (f"import sys\nfor m in {blocked!r}: sys.modules[m] = None\n"
            f"from cuatrola_rl.commands import launch\nsys.exit(launch({command!r}, {argv!r}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    err = out.stderr.strip().splitlines()
    assert out.returncode == 2 and len(err) == 1 and f"pip install 'cuatrola-rl[{extra}]'" in err[0], (out.returncode, err)


def test_the_export_without_onnx_names_its_extra(monkeypatch, capsys):
    pytest.importorskip("torch")
    from agents import export

    monkeypatch.setattr(export.importlib.util, "find_spec", lambda name: None if name == "onnx" else object())
    assert export.main(["whatever.pt"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "pip install 'cuatrola-rl[export]'" in line


def test_a_full_disk_is_said_as_such_and_leaves_the_file_as_it_was(tmp_path, monkeypatch):
    """A write that fails for want of space (a library's own error, as torch.save raises one) is an
    OSError saying 'no space left on device'; the file written before stays whole."""
    import shutil

    from cuatrola_env import files

    target = tmp_path / "out.json"
    target.write_text("before")
    monkeypatch.setattr(shutil, "disk_usage", lambda folder: shutil._ntuple_diskusage(10**9, 10**9, 0))
    with pytest.raises(OSError, match="no space left on device while writing") as e:
        with files.atomic_open(target) as f:
            f.write("half")
            raise RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 64 vs 0")
    assert e.value.errno == errno.ENOSPC and target.read_text() == "before" and list(tmp_path.iterdir()) == [target]


def test_a_checkpoint_written_to_a_full_disk_says_so(tmp_path, monkeypatch, capsys):
    torch = pytest.importorskip("torch")
    import shutil

    from agents.checkpoint import save_checkpoint
    from cuatrola_env.cli import run_main

    def full(*args, **kwargs):
        raise RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 64 vs 0")

    monkeypatch.setattr(torch, "save", full)
    monkeypatch.setattr(shutil, "disk_usage", lambda folder: shutil._ntuple_diskusage(10**9, 10**9, 0))
    assert run_main(lambda argv: save_checkpoint(tmp_path / "c.pt", {"step": 1}), []) == 1
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("error: no space left on device while writing") and "inline_container" not in line


def test_evaluate_writes_its_json_whole_or_not_at_all(tmp_path, monkeypatch):
    from agents import evaluation

    out = tmp_path / "out.json"
    out.write_text("{}")

    def dies(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(evaluation.json, "dumps", dies)
    with pytest.raises(OSError, match="no space left on device"):
        evaluation.main(["heuristic", "random", "--deals", "2", "--matches", "0", "--no-progress", "--json", str(out)])
    assert out.read_text() == "{}", "the earlier file is kept"
