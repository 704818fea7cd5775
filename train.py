"""Self-play training of a Cuatrola bot (the ``cuatrola-train`` command): see :mod:`agents.training`.

    python train.py                                   # the default run, configs/default.yaml (oracle labels)
    python train.py --resume runs/NAME/checkpoint.pt  # continue a run exactly where it stopped
"""

import sys

from agents.training import main
from cuatrola_env.cli import run_main

if __name__ == "__main__":
    sys.exit(run_main(main))
