"""Cuatrola agents: the interface, baseline bots and search.

>>> from agents import make_agent
>>> bot = make_agent("heuristic")
"""

from .base import Agent, SeatView, batch_views, seat_view
from .registry import make_agent, parse_spec

__all__ = ["Agent", "SeatView", "batch_views", "make_agent", "parse_spec", "seat_view"]
