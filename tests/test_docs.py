"""The examples in the docstrings run as written: every module of the three packages."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import agents
import cuatrola_env
import cuatrola_serve

ROOT = Path(__file__).resolve().parents[1]


def _modules() -> list[str]:
    return sorted(m.name for pkg in (cuatrola_env, agents, cuatrola_serve)
                  for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + ".") if not m.name.endswith("__main__"))


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples(name):
    try:
        module = importlib.import_module(name)
    except ImportError as e:  # an optional extra (torch, onnxruntime, FastAPI) not installed
        pytest.skip(f"{name} needs {e.name}")
    result = doctest.testmod(module)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {name} fail"


def test_the_examples_are_found():
    ran = sum(doctest.testmod(importlib.import_module(n)).attempted for n in ("cuatrola_env.vector", "cuatrola_env.game",
                                                                              "agents.solver"))
    assert ran >= 10


MARKDOWN = sorted({*ROOT.glob("*.md"), *ROOT.glob("docs/*.md"), *ROOT.glob("docs/results/*.md"), *ROOT.glob("agents/models/*.md"),
                   *ROOT.glob("models/*/*.md")})


def _anchors(path: Path) -> set[str]:
    """The anchors of a markdown file's headings, as GitHub writes them."""
    heads = re.findall(r"^#+ (.+)$", path.read_text(), flags=re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in heads}


@pytest.mark.parametrize("page", MARKDOWN, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_of_the_docs_reaches_a_file_and_heading_of_the_repository(page):
    for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
        if re.match(r"[a-z]+://|mailto:", target):
            continue
        file, _, anchor = target.partition("#")
        path = (page.parent / file).resolve() if file else page
        assert path.exists(), f"{page.name}: link to {target}: no such file"
        assert ROOT in path.parents or path == ROOT, f"{page.name}: link to {target} leaves the repository"
        if anchor and path.suffix == ".md":
            assert anchor in _anchors(path), f"{page.name}: link to {target}: no such heading in {path.name}"


def test_the_files_the_readmes_commands_write_are_ignored_by_git():
    """``--json out.json``, ``--png table.png``, ``save_record("hand.json")``: what a reader's first
    commands leave in the checkout is not offered to ``git add``."""
    import shutil
    import subprocess

    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    text = (ROOT / "README.md").read_text()
    written = set(re.findall(r"--(?:json|png) ([\w./-]+)", text)) | set(re.findall(r'save_record\("([^"]+)"\)', text))
    written = {w for w in written if not w.startswith(("docs/", "runs/"))}
    assert {"out.json", "table.png", "hand.json"} <= written
    ignored = subprocess.run(["git", "check-ignore", *sorted(written)], cwd=ROOT, capture_output=True, text=True).stdout
    assert set(ignored.split()) == written


def test_the_readmes_engine_example_runs_as_written():
    """The README's first Python example (the batched engine), executed verbatim."""
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)
    engine = next(b for b in blocks if "VectorCuatrola(" in b)
    namespace: dict = {}
    exec(compile(engine, "README.md", "exec"), namespace)  # noqa: S102 - the project's own README
    assert namespace["env"].num_envs == 4096


def test_the_readmes_evaluate_commands_use_only_files_a_reader_has(tmp_path):
    """Every ``python evaluate.py`` line of the README, run in order as written (smaller: 20 deals,
    no workers), in a copy of its working folder: ``compare a.json b.json`` finds the files the lines
    before it wrote, and ``examples.my_agents:HighCard`` is the shipped example."""
    import os
    import shutil
    import subprocess
    import sys

    pytest.importorskip("numba")
    text = (ROOT / "README.md").read_text()
    lines = [line.split("  #")[0].strip() for line in re.findall(r"^python evaluate\.py .*$", text, flags=re.M)]
    assert any("compare a.json b.json" in line for line in lines) and any("examples.my_agents" in line for line in lines)
    shutil.copy(ROOT / "evaluate.py", tmp_path)
    for line in lines:
        args = line.split()[2:]
        args = [("20" if prev == "--deals" else a) for prev, a in zip(["", *args[:-1]], args, strict=True)]
        if "--workers" in args or "pimc:" in " ".join(args):
            continue  # the same code on more processes; PIMC compiles its solver for a minute
        if args[0] not in ("compare", "pool"):
            args.append("--no-progress")
        out = subprocess.run([sys.executable, "evaluate.py", *args], cwd=tmp_path, capture_output=True, text=True,
                             timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert out.returncode == 0, (line, out.stderr[-500:])


def test_every_result_file_the_docs_cite_exists():
    """A result file named in a guide or the model card (a path under docs/results/) is in the
    repository, a glob matching at least one; templates (NAME, seed S, an optional [trad_]) aside."""
    pages = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md", ROOT / "agents" / "models" / "README.md"]
    missing = []
    for page in pages:
        for cited in re.findall(r"docs/results/[\w./*\[\]-]+?\.(?:json|png)", page.read_text()):
            if re.search(r"[A-Z]", cited) or "[trad_]" in cited:
                continue  # a template: docs/results/partner/NAME_seedS.json
            if not list(ROOT.glob(cited)):
                missing.append(f"{page.name}: {cited}")
    assert not missing, missing
