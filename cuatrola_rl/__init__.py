"""The commands of the cuatrola-rl distribution, and a check that its ``agents`` package is its own.

The project's agents live in a top-level package named ``agents``, a name other distributions use
too (``openai-agents`` imports as ``agents``). Installed in the same environment, one overwrites
the other's files or shadows it on ``sys.path``, and the commands would die on an import error deep
in a module. The console scripts start here instead, in a package whose name is the distribution's
own: :func:`foreign_agents` looks at the ``agents`` that Python would import (without importing it)
and, when it is not this project's, the command says so in one line, with the way out, and exits 2.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
from pathlib import Path

DISTRIBUTION = "cuatrola-rl"
#: a line of this project's ``agents/__init__.py``: a package without it is another distribution's
MARK = 'PROJECT = "cuatrola-rl"'


def foreign_agents() -> str | None:
    """``None`` when ``import agents`` gives this project's package; otherwise a one-line message
    naming where the other package is, who installed it (when the environment records it), and the fix."""
    spec = importlib.util.find_spec("agents")
    init = Path(spec.origin) if spec is not None and spec.origin else None
    try:
        ours = init is not None and MARK in init.read_text(encoding="utf-8", errors="replace")
    except OSError:
        ours = False
    if ours:
        return None
    where = init.parent if init is not None else "nowhere"
    others = sorted(d for d in importlib.metadata.packages_distributions().get("agents", []) if d != DISTRIBUTION)
    by = f" (installed by {', '.join(others)})" if others else ""
    return (f"the import name 'agents' is another package's{by}, at {where}: {DISTRIBUTION}'s agents package is "
            f"overwritten or shadowed by it. Install {DISTRIBUTION} in a virtual environment of its own "
            f"(python -m venv .venv && . .venv/bin/activate && pip install {DISTRIBUTION}), or uninstall "
            f"{others[0] if others else 'the other package'} and reinstall {DISTRIBUTION} "
            f"(pip install --force-reinstall --no-deps {DISTRIBUTION})")


__all__ = ["DISTRIBUTION", "MARK", "foreign_agents"]
