"""A running Ray cluster, as docs/scaling.md sets one up: a head started with ``ray start --head`` on
loopback (where a token exists, so Ray turns token authentication on), joined by ``evaluate.py
--ray-address`` and ``train.py --ray-address`` with no Ray variable set, and refused with one line
naming the fix when the token is wrong."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from helpers import free_port

pytest.importorskip("ray")
ROOT = Path(__file__).resolve().parents[1]
EVAL = ["heuristic", "random", "--deals", "20", "--matches", "2", "--seed", "5", "--no-progress"]


@pytest.fixture(scope="module")
def cluster():
    """(address, environment of a user of it): a head with 2 CPUs on loopback, its own temp dir and
    home (the token in ~/.ray/auth_token); stopped, with everything it started, at the end."""
    if shutil.which("ray") is None:
        pytest.skip("the ray command is not installed")
    home = Path(tempfile.mkdtemp(prefix="rc", dir="/tmp"))  # short: Ray's socket paths must fit
    (home / ".ray").mkdir()
    (home / ".ray" / "auth_token").write_text(secrets.token_hex(32))
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")} | {"HOME": str(home)}
    port = free_port()
    head = subprocess.Popen(["ray", "start", "--head", "--block", "--node-ip-address", "127.0.0.1", "--port", str(port),
                             "--num-cpus", "2", "--include-dashboard=false", "--disable-usage-stats",
                             "--temp-dir", str(home / "r")], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if head.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"the Ray head did not start: {head.stderr.read()[-2000:]}")
                time.sleep(0.5)
        yield f"127.0.0.1:{port}", env
    finally:
        os.killpg(head.pid, signal.SIGTERM)
        try:
            head.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(head.pid, signal.SIGKILL)
        shutil.rmtree(home, ignore_errors=True)


def run(args: list[str], env: dict, timeout: int = 240) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], env=env, cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def test_evaluate_joins_a_token_cluster_and_gives_the_single_process_figures(cluster, tmp_path):
    address, env = cluster
    joined = run(["evaluate.py", *EVAL, "--ray-address", address, "--json", str(tmp_path / "cluster.json")], env)
    assert joined.returncode == 0, joined.stderr[-2000:]
    assert "InvalidAuthToken" not in joined.stderr
    here = run(["evaluate.py", *EVAL, "--json", str(tmp_path / "here.json")], env)
    assert here.returncode == 0, here.stderr[-2000:]
    a, b = (json.loads((tmp_path / f).read_text())["pairings"] for f in ("cluster.json", "here.json"))
    assert a == b


def test_train_joins_the_cluster(cluster, tmp_path):
    address, env = cluster
    done = run(["train.py", "--algorithm", "distill", "--hands", "40", "--per-task", "20", "--hidden", "16",
                "--eval-every", "0", "--fit-batch", "64", "--iterations", "1", "--workers", "2", "--then", "",
                "--ray-address", address, "--run-dir", str(tmp_path)], env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Connected to Ray cluster" in done.stderr
    assert list(tmp_path.glob("*/checkpoint.pt"))


def test_a_refused_token_is_one_line_naming_the_fix(cluster):
    address, env = cluster
    done = run(["evaluate.py", *EVAL, "--ray-address", address], env | {"RAY_AUTH_TOKEN": "0" * 64})
    assert done.returncode == 2
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in done.stderr
    assert f"could not join a Ray cluster at {address}" in errors[0]
    assert "RAY_AUTH_TOKEN=$(ray get-auth-token)" in errors[0] and "RAY_AUTH_MODE=token" in errors[0]
