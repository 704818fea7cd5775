"""Duplicate-deal evaluation of Cuatrola agents (the ``cuatrola-eval`` command): see :mod:`agents.evaluation`.

    python evaluate.py heuristic random --deals 2000 --seed 0 --json out.json
"""

import sys

from agents.evaluation import main
from cuatrola_env.cli import run_main

if __name__ == "__main__":
    sys.exit(run_main(main))
