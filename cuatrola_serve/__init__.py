"""Deploying a Cuatrola bot, torch-free: the bot that plays from a JSON seat state
(:mod:`~cuatrola_serve.bot`), the HTTP service and its limits (:mod:`~cuatrola_serve.serve`,
:mod:`~cuatrola_serve.guard`), the table a human plays at (:mod:`~cuatrola_serve.table`), the
terminal game (:mod:`~cuatrola_serve.play`) and the browser page (``static/index.html``).

The top layer of the project: it imports :mod:`agents` and :mod:`cuatrola_env`, and nothing
imports it back.
"""
