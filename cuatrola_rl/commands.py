"""The console scripts (``cuatrola-train``, ``cuatrola-eval``, ``cuatrola-serve``, ``cuatrola-play``):
each checks that ``agents`` is this project's (:func:`cuatrola_rl.foreign_agents`) before it imports
the command's module, so a clashing package is one line and exit 2, never a traceback."""

from __future__ import annotations

import importlib
import sys

from cuatrola_env.cli import run_main

from . import foreign_agents

#: each command's module and function
COMMANDS = {
    "cuatrola-train": ("agents.training", "main"),
    "cuatrola-eval": ("agents.evaluation", "main"),
    "cuatrola-serve": ("cuatrola_serve.serve", "main"),
    "cuatrola-play": ("cuatrola_serve.play", "main"),
}


def launch(command: str) -> int:
    """Run ``command`` with the process's arguments: its exit status."""
    problem = foreign_agents()
    if problem:
        print(f"{command}: error: {problem}", file=sys.stderr)
        return 2
    module, function = COMMANDS[command]
    return run_main(getattr(importlib.import_module(module), function))  # by name: the check must come first


def train() -> int:
    return launch("cuatrola-train")


def evaluate() -> int:
    return launch("cuatrola-eval")


def serve() -> int:
    return launch("cuatrola-serve")


def play() -> int:
    return launch("cuatrola-play")


__all__ = ["COMMANDS", "evaluate", "launch", "play", "serve", "train"]
