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
