"""What every command of the project shares: its argument parser, whose refusals are one line.

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


class ArgumentParser(argparse.ArgumentParser):
    """:class:`argparse.ArgumentParser` whose errors are one line, ``error: ...``, and exit status 2
    (``--help`` still shows the usage)."""

    def error(self, message: str):
        print(f"error: {message}", file=sys.stderr)
        sys.exit(2)


__all__ = ["ArgumentParser"]
