"""The console scripts (``cuatrola-train``, ``cuatrola-eval``, ``cuatrola-serve``, ``cuatrola-play``):
each checks that ``agents`` is this project's (:func:`cuatrola_rl.foreign_agents`) before it imports
the command's module, so a clashing package is one line and exit 2, never a traceback."""

from __future__ import annotations

import importlib
import sys

from cuatrola_env.cli import not_installed, run_main

from . import foreign_agents

#: each command's module and function
COMMANDS = {
    "cuatrola-train": ("agents.training", "main"),
    "cuatrola-eval": ("agents.evaluation", "main"),
    "cuatrola-exploit": ("agents.exploit", "main"),
    "cuatrola-serve": ("cuatrola_serve.serve", "main"),
    "cuatrola-play": ("cuatrola_serve.play", "main"),
}


#: a command's subcommands that are commands of their own (``evaluate.py exploit SPEC``: torch, the trainer)
SUBCOMMANDS = {("cuatrola-eval", "exploit"): "cuatrola-exploit"}

#: the extra of the distribution that installs each optional module a command may need
EXTRA_OF = {
    "torch": "train", "tensorboard": "train", "yaml": "train", "ray": "train",
    "fastapi": "serve", "starlette": "serve", "pydantic": "serve", "uvicorn": "serve", "onnxruntime": "serve",
    "numba": "eval", "tqdm": "eval", "matplotlib": "eval", "onnx": "export",
}


def missing_extra(command: str, e: ModuleNotFoundError) -> int:
    """Exit status 2 and one line naming the extra that installs the module ``e`` did not find; ``e``
    raised again when the module is none of an extra's (a broken installation, not a missing option)."""
    root = (e.name or "").split(".")[0]
    if root not in EXTRA_OF:
        raise e
    print(f"{command}: error: this needs {not_installed(root, EXTRA_OF[root])}", file=sys.stderr)
    return 2


def launch(command: str, argv: list[str] | None = None) -> int:
    """Run ``command`` with ``argv`` (default: the process's arguments): its exit status."""
    problem = foreign_agents()
    if problem:
        print(f"{command}: error: {problem}", file=sys.stderr)
        return 2
    args = sys.argv[1:] if argv is None else list(argv)
    if args and (command, args[0]) in SUBCOMMANDS:
        command, argv = SUBCOMMANDS[(command, args[0])], args[1:]
    module, function = COMMANDS[command]
    try:
        main = getattr(importlib.import_module(module), function)  # by name: the check must come first
    except ModuleNotFoundError as e:
        return missing_extra(command, e)

    def main_naming_extras(args):
        try:
            return main(args)
        except ModuleNotFoundError as e:  # an optional module imported as the command goes
            return missing_extra(command, e)

    return run_main(main_naming_extras, argv)


def train() -> int:
    return launch("cuatrola-train")


def evaluate() -> int:
    return launch("cuatrola-eval")


def serve() -> int:
    return launch("cuatrola-serve")


def play() -> int:
    return launch("cuatrola-play")


__all__ = ["COMMANDS", "EXTRA_OF", "evaluate", "launch", "missing_extra", "play", "serve", "train"]
