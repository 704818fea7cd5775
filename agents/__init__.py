"""Cuatrola agents: the interface, baseline bots and search.

>>> from agents import make_agent
>>> bot = make_agent("heuristic")
"""

from .base import Agent, SeatView, batch_views, seat_view
from .registry import make_agent, parse_spec

PROJECT = "cuatrola-rl"  #: marks this package as the project's (cuatrola_rl.foreign_agents looks for it)

__all__ = ["Agent", "SeatView", "batch_views", "make_agent", "parse_spec", "seat_view"]
