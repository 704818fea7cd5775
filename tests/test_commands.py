"""Every command refuses bad input the same way: one line, ``error: ...``, exit status 2, no
traceback (train.py, evaluate.py and its subcommands, the terminal game, the service)."""

from __future__ import annotations

import importlib

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
]


@pytest.mark.parametrize("module,argv,says", CASES, ids=[f"{m.split('.')[-1]} {' '.join(a)}" for m, a, _ in CASES])
def test_a_bad_input_is_one_line_and_exit_status_2(module, argv, says, capsys, tmp_path, monkeypatch):
    if module == "cuatrola_serve.serve":
        pytest.importorskip("fastapi")
    if module.startswith("agents.training"):
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
