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
    except Exception as e:  # the one place that turns any failure into a line
        if DEBUG_FLAG in argv:
            raise
        text = str(e).strip()
        first = text.splitlines()[0] if text else ""
        print(f"error: {type(e).__name__}{': ' + first if first else ''} (an unexpected failure: run again with "
              f"{DEBUG_FLAG} for the traceback)", file=sys.stderr)
        return 1


__all__ = ["ArgumentParser", "run_main"]
