"""Duplicate-deal evaluation of Cuatrola agents (the ``cuatrola-eval`` command): see :mod:`agents.evaluation`.

    python evaluate.py heuristic random --deals 2000 --seed 0 --json out.json
"""

import sys

from cuatrola_rl.commands import launch

if __name__ == "__main__":
    sys.exit(launch("cuatrola-eval"))
