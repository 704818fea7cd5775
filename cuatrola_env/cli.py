"""What every command of the project shares: its argument parser, whose refusals are one line, and
:func:`run_main`, which makes an unexpected failure one line too (its traceback with ``--debug``).

>>> from cuatrola_env.cli import ArgumentParser
>>> p = ArgumentParser(prog="demo")
>>> _ = p.add_argument("--deals", type=int)
>>> try:
...     p.parse_args(["--deals", "many"])
... except SystemExit as e:
...     print("exit", e.code)
exit 2

(the refusal, on standard error, is the one line ``error: argument --deals: invalid int value: 'many'``).
"""

from __future__ import annotations

import argparse
import math
import sys

DEBUG_FLAG = "--debug"


class ArgumentParser(argparse.ArgumentParser):
    """:class:`argparse.ArgumentParser` whose errors are one line, ``error: ...``, and exit status 2
    (``--help`` still shows the usage); every command takes ``--debug`` (:func:`run_main`)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.add_argument(DEBUG_FLAG, action="store_true",
                          help="show the traceback of an unexpected failure (by default one line)")

    def error(self, message: str):
        print(f"error: {message}", file=sys.stderr)
        sys.exit(2)


def int_in(low: int, high: int | None = None):
    """An argparse ``type``: an integer from ``low`` to ``high`` (no bound above when ``None``). Out of
    range, the command refuses it naming the flag (``error: argument --target: must be an integer in
    1..1000, got 0``), so that every command checks a number where it is parsed, by one rule."""
    span = f"in {low}..{high}" if high is not None else f"of at least {low}"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid int value: {text[:40]!r}") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"must be an integer {span}, got {value}")
        return value

    parse.__name__ = "int"
    return parse


def float_in(low: float, high: float = float("inf"), low_open: bool = False):
    """An argparse ``type``: a finite number from ``low`` (excluded with ``low_open``) to ``high``;
    NaN and infinities are refused like any number out of range, naming the flag."""
    span = f"{'above' if low_open else 'at least'} {low:g}" + (f" and at most {high:g}" if high != float("inf") else "")

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid float value: {text[:40]!r}") from None
        if not (math.isfinite(value) and (value > low if low_open else value >= low) and value <= high):
            raise argparse.ArgumentTypeError(f"must be a finite number {span}, got {text[:40]}")
        return value

    parse.__name__ = "float"
    return parse


#: the seeds every command takes: non-negative 64-bit integers (NumPy's seeding takes no negative one)
SEED = int_in(0, 2**63 - 1)


def run_main(main, argv: list[str] | None = None) -> int:
    """``main(argv)``'s exit status; an exception it did not expect is one line on standard error and
    exit status 1, unless ``--debug`` is among the arguments (then the traceback, as Python prints it).
    Ctrl-C that a command did not handle ends it with status 130 and no traceback."""
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        return main(argv)
    except KeyboardInterrupt:
        if DEBUG_FLAG in argv:
            raise
        print("interrupted", file=sys.stderr)
        return 130
    except OSError as e:  # a file or device the command could not use: what and where, one line
        if DEBUG_FLAG in argv:
            raise
        where = f": {e.filename}" if e.filename else ""
        print(f"error: {e.strerror or e}{where}", file=sys.stderr)
        return 1
    except Exception as e:  # the one place that turns any failure into a line
        if DEBUG_FLAG in argv:
            raise
        text = str(e).strip()
        first = text.splitlines()[0] if text else ""
        print(f"error: {type(e).__name__}{': ' + first if first else ''} (an unexpected failure: run again with "
              f"{DEBUG_FLAG} for the traceback)", file=sys.stderr)
        return 1


def not_installed(module: str, extra: str) -> str:
    """``"torch, which is not installed: pip install 'cuatrola-rl[train]' ..."``: the end of every
    message about an optional dependency that is missing, naming the extra that installs it."""
    first = " (after pip install torch==2.13.0, the CPU build)" if module == "torch" else ""
    return f"{module}, which is not installed: pip install 'cuatrola-rl[{extra}]'{first}"


#: containers shown inside containers by :func:`brief`, at most this deep
BRIEF_DEPTH = 4


def brief(value, width: int = 80) -> str:
    """``repr(value)`` in at most ``width`` characters, for a message about a value read from a file
    or a request: a container is shown item by item only until the width is spent, so a value of a
    million items (or a tree of shared references, billions of leaves deep) costs ``width`` characters."""
    out: list[str] = []
    _emit(value, out, [width + 1], 0)
    text = "".join(out)
    return text if len(text) <= width else text[: max(0, width - 3)] + "..."


def _emit(value, out: list[str], budget: list[int], depth: int) -> None:
    if budget[0] <= 0:
        return
    if isinstance(value, (list, tuple, dict)):
        if depth >= BRIEF_DEPTH:
            return _put("[...]" if isinstance(value, list) else "(...)" if isinstance(value, tuple) else "{...}", out, budget)
        _put("[" if isinstance(value, list) else "(" if isinstance(value, tuple) else "{", out, budget)
        for i, item in enumerate(value.items() if isinstance(value, dict) else value):
            if budget[0] <= 0:
                return
            if i:
                _put(", ", out, budget)
            if isinstance(value, dict):
                _emit(item[0], out, budget, depth + 1)
                _put(": ", out, budget)
                item = item[1]
            _emit(item, out, budget, depth + 1)
        return _put("]" if isinstance(value, list) else ")" if isinstance(value, tuple) else "}", out, budget)
    if isinstance(value, (str, bytes)):
        value = value[: budget[0]]
    return _put(repr(value)[: budget[0]], out, budget)


def _put(text: str, out: list[str], budget: list[int]) -> None:
    out.append(text[: budget[0]])
    budget[0] -= len(text)


__all__ = ["SEED", "ArgumentParser", "brief", "float_in", "int_in", "not_installed", "run_main"]
