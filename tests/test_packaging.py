"""The wheel works outside the repository: the shipped model and the page are package data,
the commands are console scripts, no generic top-level module lands in site-packages, and a
package that clashes with ``agents`` is named in one line instead of a traceback."""

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
                 "agents/models/cuatrola_traditional.pt", "agents/models/cuatrola_expert.onnx",
                 "agents/models/cuatrola_expert.json", "agents/models/cuatrola_traditional_expert.onnx",
                 "agents/models/cuatrola_traditional_expert.json", "cuatrola_serve/static/index.html"):
        assert data in names, f"{data} is not in the wheel"
    assert wheel.read("agents/models/cuatrola.onnx") == (ROOT / "agents/models/cuatrola.onnx").read_bytes()


def test_the_wheel_installs_exactly_the_three_packages_and_the_commands(wheel):
    top = {n.split("/")[0] for n in wheel.namelist() if not n.split("/")[0].endswith((".dist-info", ".data"))}
    assert top == {"agents", "cuatrola_env", "cuatrola_serve", "cuatrola_rl"}, top
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


CLASH = {  # what a distribution that also imports as ``agents`` (openai-agents does) puts there
    "pyproject.toml": '[project]\nname = "clashing-agents"\nversion = "1.0"\n'
                      '[tool.setuptools]\npackages = ["agents", "agents.models"]\n',
    "agents/__init__.py": "AGENT_SDK = True\n",
    "agents/models/__init__.py": "MODELS = []\n",
}


def test_a_package_that_also_imports_as_agents_is_named_in_one_line(wheel, tmp_path):
    """In a fresh virtual environment: the wheel, then a distribution whose files overwrite
    ``agents/__init__.py`` and ``agents/models/__init__.py``. Every command says what happened and
    the way out in one line (exit 2); with the wheel alone the commands run."""
    venv, clash = tmp_path / "venv", tmp_path / "clash"
    for name, text in CLASH.items():
        (clash / name).parent.mkdir(parents=True, exist_ok=True)
        (clash / name).write_text(text)
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--no-deps", "-q", "--disable-pip-version-check"]
    wheel_path = tmp_path / Path(wheel.filename).name
    shutil.copy(wheel.filename, wheel_path)
    subprocess.run([*pip, str(wheel_path)], check=True, capture_output=True)
    ok = subprocess.run([str(venv / "bin" / "cuatrola-eval"), "--help"], capture_output=True, text=True, cwd=tmp_path)
    assert ok.returncode == 0 and "usage: cuatrola-eval" in ok.stdout, ok.stderr[-1000:]
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path),
                    str(clash)], check=True, capture_output=True)
    subprocess.run([*pip, str(next(tmp_path.glob("clashing_agents-*.whl")))], check=True, capture_output=True)
    for command in ("cuatrola-eval", "cuatrola-train", "cuatrola-serve", "cuatrola-play"):
        done = subprocess.run([str(venv / "bin" / command), "--help"], capture_output=True, text=True, cwd=tmp_path)
        assert done.returncode == 2, (command, done.stderr[-1000:])
        (line,) = done.stderr.strip().splitlines()
        assert line.startswith(f"{command}: error: the import name 'agents' is another package's (installed by "
                               "clashing-agents)"), line
        assert "virtual environment of its own" in line and "Traceback" not in done.stderr
