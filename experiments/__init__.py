"""Research tools, not part of the installed package; each ended with what it showed (the dated
entries of ``docs/experiments.md`` hold the commands and figures):

- ``oracle_bound``: what seeing the hidden cards is worth (a player who sees every card);
- ``sweep``, ``plot_run``, ``plot_curve``: side-by-side training variants and plots of their curves;
- ``averaged_policy``: a network averaged over the 24 suit relabellings, or several networks
  averaged: −0.004 [−0.034, +0.026] and −0.023 [−0.065, +0.019] a hand paired against PIMC(32), no
  gain (the networks' mistakes are shared);
- ``bid_bias``: fewer solos or cuatrolas (constants on the bid logits): −0.007 a hand paired either
  way, no gain (what the network lacks is not in the bidding);
- ``q_blend`` (removed; git history): an action-value network fitted to the actual deal's values,
  added to the policy: +0.000 [−0.027, +0.027] a hand paired at the table, no gain;
- ``distill_search`` (removed; the teacher–student algorithm, ``teacher: bot:level=master``, does it):
  the search distilled into the network;
- ``label_regret``: each player's regret on a run's held-out decisions against the actual
  deal's best (a measurement);
- ``late_prior``: level expert's near-ties broken by the shipped network's preferences: −0.013
  [−0.029, +0.003] a hand paired, not kept;
- ``merge_late_heads``: two late heads averaged into one graph: +0.002 [−0.008, +0.011] a hand
  paired, no gain (they err alike);
- ``widen_network``: a wider copy of a trained network that plays exactly as it does (Net2Net), to
  go on training with more room.

Run each as ``python -m experiments.NAME --help`` from the repository (the agents among them are
specs such as ``experiments.bid_bias:BidBias,...``). Stable-Baselines3's MaskablePPO on the
Gymnasium environment is a user example: ``examples/sb3_maskable_ppo.py``.
"""
