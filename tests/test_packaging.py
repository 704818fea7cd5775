"""The wheel works outside the repository: the shipped model and the page are package data,
the commands are console scripts, and no generic top-level module lands in site-packages."""

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    out, src = tmp_path_factory.mktemp("wheel"), tmp_path_factory.mktemp("source") / "cuatrola-rl"
    # built from a copy, so that the build leaves nothing in the checkout
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(".git", "build", "runs", "*.egg-info", "__pycache__",
                                                              ".hypothesis", ".pytest_cache", ".ruff_cache"))
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "-q", "-w", str(out)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.fail(f"building the wheel failed:\n{done.stderr[-2000:]}")
    (path,) = out.glob("cuatrola_rl-*.whl")
    return zipfile.ZipFile(path)


def test_the_wheel_carries_the_model_and_the_page(wheel):
    names = set(wheel.namelist())
    for data in ("agents/models/cuatrola.onnx", "agents/models/cuatrola.json", "agents/models/cuatrola.pt",
                 "agents/models/cuatrola_traditional.onnx", "agents/models/cuatrola_traditional.json",
                 "agents/models/cuatrola_traditional.pt", "cuatrola_serve/static/index.html"):
        assert data in names, f"{data} is not in the wheel"
    assert wheel.read("agents/models/cuatrola.onnx") == (ROOT / "agents/models/cuatrola.onnx").read_bytes()


def test_the_wheel_installs_exactly_the_three_packages_and_the_commands(wheel):
    top = {n.split("/")[0] for n in wheel.namelist() if not n.split("/")[0].endswith((".dist-info", ".data"))}
    assert top == {"agents", "cuatrola_env", "cuatrola_serve"}, top
    (entry_points,) = [n for n in wheel.namelist() if n.endswith(".dist-info/entry_points.txt")]
    text = wheel.read(entry_points).decode()
    for command in ("cuatrola-serve", "cuatrola-play", "cuatrola-train", "cuatrola-eval"):
        assert f"{command} = " in text, f"no console script {command}"


def test_the_wheel_carries_the_presets_of_configs(wheel):
    """``cuatrola-train --config tiny`` works outside the repository: the presets are package data,
    the repository's configs/ their source."""
    for path in sorted((ROOT / "configs").glob("*.yaml")):
        assert wheel.read(f"agents/training/presets/{path.name}") == path.read_bytes(), path.name


def test_the_train_extra_takes_a_range_of_torch_and_the_readme_says_how_to_get_the_cpu_build():
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    (torch_req,) = [r for r in extras["train"] if r.startswith("torch")]
    assert "==" not in torch_req and ">=" in torch_req and "<" in torch_req, torch_req
    assert "download.pytorch.org/whl/cpu" in (ROOT / "README.md").read_text()
