"""Research tools, not part of the installed package: the oracle bound of what seeing hidden
cards is worth (``oracle_bound``), distilling the search into the network (``distill_search``),
side-by-side training variants (``sweep``), plots of a run's TensorBoard curves (``plot_run``)
and of the oracle's learning curve (``plot_curve``); Stable-Baselines3's MaskablePPO on the
Gymnasium environment is an example (``examples/sb3_maskable_ppo.py``). Run each as
``python -m experiments.NAME --help`` from the repository.
Their results are logged in ``docs/experiments.md``.
"""
