"""The layers hold: no module imports another that imports it back, directly or through others
(lint-imports checks the order of the layers themselves)."""

import pytest

grimp = pytest.importorskip("grimp")

PACKAGES = ("cuatrola_env", "agents", "cuatrola_serve")


def test_no_import_cycle():
    graph = grimp.build_graph(*PACKAGES)
    cycles = set()
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            back = graph.find_shortest_chain(importer=imported, imported=module)
            if back:
                cycles.add(" -> ".join((module, *back)))
    assert not cycles, "import cycles:\n" + "\n".join(sorted(cycles))


def test_lower_layers_never_import_higher_ones():
    graph = grimp.build_graph(*PACKAGES)
    for low, high in (("cuatrola_env", "agents"), ("cuatrola_env", "cuatrola_serve"), ("agents", "cuatrola_serve")):
        assert not graph.chain_exists(importer=low, imported=high, as_packages=True), f"{low} imports {high}"


HEAVY = ("torch", "ray", "gymnasium", "pettingzoo", "tensorboard")


@pytest.mark.parametrize("module", ["cuatrola_serve.serve", "cuatrola_serve.bot", "cuatrola_env", "agents.search"])
def test_the_runtime_loads_no_training_or_environment_library(module):
    """A fresh interpreter that imports the bot service (or the engine, or the search) has loaded
    none of torch, Ray, Gymnasium or PettingZoo: the torch-free runtime is a fact, not a habit."""
    import subprocess
    import sys

    code = f"import sys, {module}; print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", f"importing {module} loads {out.stdout.strip()}"


def test_gymnasium_finds_the_environment_whichever_is_imported_first():
    import subprocess
    import sys

    for order in ("import cuatrola_env, gymnasium", "import gymnasium, cuatrola_env"):
        code = f"{order}; env = gymnasium.make('Cuatrola-v0'); env.reset(seed=0); print(type(env.unwrapped).__name__)"
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        assert out.stdout.strip() == "CuatrolaGymEnv", (order, out.stderr[-500:])
