"""Every command refuses bad input the same way: one line, ``error: ...``, exit status 2, no
traceback (train.py, evaluate.py and its subcommands, the terminal game, the service)."""

from __future__ import annotations

import importlib

import pytest

CASES = [
    ("agents.training.loop", ["--rules", "tradtional"], "unknown rules preset"),
    ("agents.training.loop", ["--algorithm", "dqn"], "algorithm must be one of"),
    ("agents.training.loop", ["--algorithm", "ppo", "--num-envs", "0"], "num_envs must be at least 1"),
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
