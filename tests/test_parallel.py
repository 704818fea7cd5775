"""Parallel evaluation: the same results for any number of workers, plug-in agents from outside
the project, and failures that are reported, never lost or left hanging."""

from __future__ import annotations

import json

import pytest

from agents import make_agent
from agents.evaluation import Side, evaluate_pair, main
from agents.parallel import Runner, WorkerError
from cuatrola_env import get_rules
from cuatrola_env.positions import random_deals

ray = pytest.importorskip("ray")

SPECS = ["heuristic", "plugin_agents:LowestCard,always_pass=0"]


@pytest.fixture(scope="module")
def local_ray():
    """One local Ray of 2 CPUs for the module (a runner that finds it running leaves it running)."""
    with Runner(workers=2) as runner:
        runner._ray()
        yield
    ray.shutdown()


def pairing(runner, a=SPECS[0], b=SPECS[1], deals=24, matches=6, seed=5) -> dict:
    rules = get_rules("online")
    return evaluate_pair(Side.from_spec(a, seed), Side.from_spec(b, seed + 17), rules, random_deals(deals, seed), matches,
                         seed, runner=runner, chunk=5)


def test_a_plug_in_agent_from_a_module_in_the_test_folder():
    agent = make_agent("plugin_agents:LowestCard,always_pass=false,depth=2", seed=0)
    assert type(agent).__name__ == "LowestCard" and agent.depth == 2 and agent.always_pass is False
    with pytest.raises(ValueError, match="has no agent class 'Nope'"):
        make_agent("plugin_agents:Nope")
    with pytest.raises(ValueError, match="unknown option 'x'"):
        make_agent("plugin_agents:LowestCard,x=1")


def test_two_ray_workers_give_the_results_of_one_process(local_ray):
    one = pairing(Runner(workers=1))
    with Runner(workers=2) as runner:
        two = pairing(runner)
    assert one == two
    assert one["deals"] == 24 and len(one["match_wins"]) == 6 and one["illegal_actions"] == {"a": 0, "b": 0}


def test_the_process_backend_gives_the_same_results():
    with Runner(workers=2, backend="processes") as runner:
        assert pairing(runner, deals=10, matches=2) == pairing(Runner(workers=1), deals=10, matches=2)


def test_a_killed_worker_is_replaced_and_no_result_is_lost(local_ray, tmp_path):
    """The first task to act kills its worker process; Ray runs the task again on a new worker."""
    dies = f"plugin_agents:DiesOnce,marker={tmp_path / 'died'}"
    with Runner(workers=2) as runner:
        crashed = pairing(runner, b=dies)
    assert (tmp_path / "died").exists(), "a worker really died"
    reference = pairing(Runner(workers=1), b="plugin_agents:LowestCard")
    assert crashed["deal_game_points"] == reference["deal_game_points"]
    assert crashed["match_wins"] == reference["match_wins"] and crashed["deals"] == 24


def test_a_failing_task_is_reported_with_its_traceback(local_ray):
    traceback = "(?s)failed in a worker.*plugin_agents.py.*this agent cannot play"
    with Runner(workers=2) as runner, pytest.raises(WorkerError, match=traceback):
        pairing(runner, b="plugin_agents:FailsToAct")


def test_the_command_line_with_workers(local_ray, tmp_path, capsys):
    out = tmp_path / "w2.json"
    assert main([*SPECS, "random", "--deals", "12", "--matches", "3", "--seed", "4", "--workers", "2", "--no-progress",
                 "--json", str(out)]) == 0
    assert main([*SPECS, "random", "--deals", "12", "--matches", "3", "--seed", "4", "--no-progress",
                 "--json", str(tmp_path / "w1.json")]) == 0
    assert json.loads(out.read_text())["pairings"] == json.loads((tmp_path / "w1.json").read_text())["pairings"]


def test_a_teachers_labelling_runs_as_tasks_with_the_same_labels(local_ray):
    """PIMC teaching the late tricks, labelled in tasks: 1 and 2 workers give the same labels."""
    import numpy as np

    from agents.training import distill

    cfg = distill.DistillConfig(hidden=16, hands=8, per_task=4, teacher="pimc:worlds=2", bids="none", from_trick=1,
                                past_frac=0.0)
    net = distill.student(cfg)
    one, two = (distill.label(Runner(workers), net, [], cfg, 0, np.random.default_rng(0)) for workers in (1, 2))
    assert len(one["hand"]) > 10
    for key in one:
        np.testing.assert_array_equal(one[key], two[key])


def test_a_tiny_training_run_on_two_ray_workers_checkpoints_and_resumes_exactly(local_ray, tmp_path):
    """configs/tiny.yaml with 2 rollout actors: end to end, a checkpoint with each worker's state,
    and a run resumed from its half-way checkpoint ends on the uninterrupted run's weights."""
    import torch

    from agents import training
    from agents.checkpoint import read_checkpoint

    tiny = ["--config", "configs/tiny.yaml", "--eval-every", "0", "--workers", "2"]
    assert training.main([*tiny, "--run-dir", str(tmp_path / "a")]) == 0
    assert training.main([*tiny, "--run-dir", str(tmp_path / "b"), "--total-decisions", "2048"]) == 0
    (half,) = (tmp_path / "b").glob("*/checkpoint.pt")
    assert len(read_checkpoint(half)["env"]["workers"]) == 2
    assert training.main(["--resume", str(half), "--total-decisions", "4096"]) == 0
    (full,) = (tmp_path / "a").glob("*/checkpoint.pt")
    wa, wb = read_checkpoint(full)["model"], read_checkpoint(half)["model"]
    assert all(torch.equal(wa[k], wb[k]) for k in wa), "a resumed run matches an uninterrupted one"
    with pytest.raises(ValueError, match="--workers 1"):
        training.parse_config(["--resume", str(half), "--workers", "1"])


JOIN_WITHOUT_TOKEN = """
import os, subprocess, sys
from agents.parallel import Runner


def square(x):
    return x * x


with Runner(workers=2) as run:
    assert run.map(square, [(2,), (3,)]) == [4, 9]
    import ray
    address = ray.get_runtime_context().gcs_address
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH")}
    joiner = subprocess.run([sys.executable, "-c", f"import ray; ray.init(address={address!r})"], env=env,
                            capture_output=True, text=True, timeout=120)
    print("JOINED" if joiner.returncode == 0 else "REFUSED", "AuthenticationError" in joiner.stderr)
"""


def test_a_local_ray_admits_no_process_without_this_runs_token(tmp_path):
    """Ray's processes listen on every interface; a local Ray this project starts requires a token
    drawn for the run, held in the environment alone (no token file written under HOME)."""
    import os
    import subprocess
    import sys

    env = {**{k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH")}, "HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", JOIN_WITHOUT_TOKEN], env=env, capture_output=True, text=True,
                         timeout=300, cwd=os.path.dirname(os.path.dirname(__file__)))
    assert out.returncode == 0, out.stderr[-2000:]
    assert "REFUSED True" in out.stdout, out.stdout
    assert not (tmp_path / ".ray" / "auth_token").exists(), "no token file another user could read"


@pytest.mark.parametrize("backend", ["ray", "processes", "inline"])
def test_a_stop_request_cancels_the_tasks_not_done(local_ray, backend):
    """Ctrl-C while workers run: once ``stop()`` is true the map gives up within a second or so,
    whatever is left of its tasks, and says so (``Stopped``): a run then keeps what it had."""
    import time

    from plugin_agents import nap

    from agents.parallel import Stopped

    asked = time.time() + 1.0
    with Runner(workers=1 if backend == "inline" else 2, backend=backend) as runner, pytest.raises(Stopped):
        runner.map(nap, [(0.5,)] * 40, stop=lambda: time.time() > asked)
    assert time.time() - asked < 5, "20 s of tasks were not all waited for"
