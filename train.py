"""Self-play training of a Cuatrola bot (the ``cuatrola-train`` command): see :mod:`agents.training`.

    python train.py                                   # the default run, configs/default.yaml (the actual deal teaches)
    python train.py --resume runs/NAME/checkpoint.pt  # continue a run exactly where it stopped
"""

import sys

from cuatrola_rl.commands import launch

if __name__ == "__main__":
    sys.exit(launch("cuatrola-train"))
