"""A table: one human seat and three bots, with the human's view as plain JSON.

Used by the terminal game (``python -m cuatrola_serve.play``) and the browser game of the bot
service (``cuatrola-serve``). The rules come from :class:`~cuatrola_env.game.Game`; a table
only seats the players, runs the bots until the human is to act, and builds what the human
may see: :meth:`Table.view` never holds another seat's unplayed card (the game record,
which holds the whole deal, is never exposed).

Bots are named by level: a model level (``expert``, ``strong``, ``medium``, ``easy``; see
:mod:`cuatrola_serve.bot`) or a baseline (``heuristic``, ``random``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from agents.base import seat_view
from agents.heuristic import HeuristicAgent
from cuatrola_env.bitboards import cards_of
from cuatrola_env.core import CABALLO_OF_SUIT
from cuatrola_env.game import Game
from cuatrola_env.rules import CONTRACT_NAMES, SUIT_NAMES, RulesLike, action_name, card_name

BASELINES = ("heuristic", "random")
Player = Callable[[Game], int]


def make_player(level: str, bot=None, seed: int | None = None) -> Player:
    """A function ``game -> action`` for the seat to act, playing at ``level``."""
    rng = np.random.default_rng(seed)
    if level == "random":
        return lambda game: int(rng.choice(game.legal_actions()))
    if level == "heuristic":
        agent = HeuristicAgent(seed=seed)
        return lambda game: agent.act(seat_view(game))
    if bot is None:
        raise ValueError(f"level {level!r} needs a model (--model); without one use {' or '.join(BASELINES)}")
    b = bot.with_level(level, seed)
    return lambda game: b.play(game)[0]


def _check_human(human) -> None:
    if human not in range(4):
        raise ValueError(f"human seat must be 0..3, got {human!r}")


class Table:
    """A match (or one hand) with a human at ``human`` and ``players`` at the other seats.

    ``players`` maps each other seat to a :data:`Player`. :meth:`play` takes the human's
    action, then lets the bots act until the human is to act again or the game is over.
    """

    def __init__(self, players: dict[int, Player], human: int = 0, rules: RulesLike = "online",
                 mode: str = "match", seed: int | None = None):
        _check_human(human)
        if sorted(players) != sorted(set(range(4)) - {human}):
            raise ValueError(f"players must be given for seats {sorted(set(range(4)) - {human})}")
        self.game = Game(rules, mode=mode, seed=seed)
        self.human, self.players = human, players
        self.events: list[dict] = []
        self._advance()

    @classmethod
    def with_levels(cls, levels, human: int = 0, rules: RulesLike = "online", bot=None,
                    seed: int | None = None, mode: str = "match") -> Table:
        """A table whose other seats, in seat order, play at ``levels`` (see :func:`make_player`)."""
        _check_human(human)
        others = [s for s in range(4) if s != human]
        if len(levels) != len(others):
            raise ValueError(f"give {len(others)} bot levels (one per other seat), got {len(levels)}")
        players = {s: make_player(lv, bot, None if seed is None else seed + s) for s, lv in zip(others, levels, strict=True)}
        return cls(players, human, rules, mode, seed)

    # ------------------------------------------------------------------ play
    def play(self, action: int) -> dict:
        """The human's action (an id, checked by the engine), then the bots'; the new view."""
        if self.game.over:
            raise ValueError("the game is over")
        if self.game.current_player != self.human:
            raise ValueError(f"it is seat {self.game.current_player}'s turn, not the human's")
        self.events = []
        self._step(action)
        self._advance()
        return self.view()

    def resume(self) -> dict:
        """Let the bots act until the human is to act (after a play whose bots were interrupted); the view."""
        self._advance()
        return self.view()

    def _advance(self) -> None:
        while not self.game.over and self.game.current_player != self.human:
            self._step(self.players[self.game.current_player](self.game))

    def _step(self, action: int) -> None:
        seat = self.game.current_player
        before = self.game.hands_dealt
        self.game.step(action)
        self.events.append({"seat": seat, "action": int(action), "name": action_name(action)})
        if self.game.hands_dealt > before or self.game.over:  # a hand ended
            self.events.append({"hand_over": self.game.last_result})

    # ------------------------------------------------------------------ the human's view
    def view(self) -> dict:
        """What the human seat may see, as plain JSON (no other seat's unplayed card)."""
        game, me = self.game, self.human
        g = game.seat_view(me)  # what the human may see; no other seat's unplayed card is read below
        plays, size, trick = game.plays, game.trick_size, game.trick
        done = plays[: len(plays) - len(trick)]  # the plays of the finished tricks
        last_trick = done[-size:] if done else []
        to_act = None if game.over else game.current_player
        return {
            "seat": me,
            "to_act": to_act,
            "phase": "over" if game.over else ("bidding" if g.phase == 0 else "playing"),
            "dealer": g.dealer,
            "mano": g.mano,
            "muestra": g.muestra,
            "muestra_name": card_name(g.muestra),
            "muestra_held": g.muestra_held,
            "trump": SUIT_NAMES[g.trump],
            "hand": cards_of(g.hand),
            "cards_left": game.cards_left,
            "legal": game.legal_actions() if to_act == me else [],
            "bids": [None if b < 0 else CONTRACT_NAMES[b] for b in g.bids],
            "contract": None if g.contract < 0 else CONTRACT_NAMES[g.contract],
            "declarer": None if g.declarer < 0 else g.declarer,
            "sitter": None if g.sitter < 0 else g.sitter,
            "trick": [[s, c] for s, c in trick],
            "last_trick": [[s, c] for s, c in last_trick],
            "trick_num": g.trick_num,
            "tricks_won": list(g.tricks_won),
            "points": list(g.points),
            "sung": [SUIT_NAMES[s] for s in range(4) if g.sung & CABALLO_OF_SUIT[s]],
            "score": list(g.score),
            "target": game.rules.target,
            "rules": game.rules.name,
            "last_result": game.last_result,
            "match_over": game.over,
            "events": self.events,
        }

