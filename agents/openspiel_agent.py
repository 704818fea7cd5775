"""OpenSpiel's IS-MCTS as an agent of ``evaluate.py``: ``openspiel:ismcts,simulations=100,rollouts=1,uct_c=2``.

It plays ``python_cuatrola`` (:mod:`cuatrola_env.openspiel`) with OpenSpiel's information-set Monte
Carlo tree search (``open_spiel.python.algorithms.ismcts``, Cowling et al. 2012): ``simulations``
searches a decision, each from a deal drawn from what the seat has seen (the project's belief
sampler, :func:`agents.belief.sample_worlds`, is its resampler), leaves valued by ``rollouts``
random play-outs, children chosen by UCT with constant ``uct_c``; the most visited action is played.
"""

from __future__ import annotations

import numpy as np
import pyspiel
from open_spiel.python.algorithms.ismcts import ISMCTSBot, ISMCTSFinalPolicyType
from open_spiel.python.algorithms.mcts import RandomRolloutEvaluator

from cuatrola_env.bitboards import cards_of
from cuatrola_env.openspiel import NAME, CuatrolaState, state_of
from cuatrola_env.rules import NUM_CARDS

from .base import Agent, SeatView
from .belief import sample_worlds

ALGORITHMS = ("ismcts",)


class OpenSpielAgent(Agent):
    """An OpenSpiel search playing a seat (``openspiel:ismcts``)."""

    OPTIONS = {"algorithm": str, "simulations": int, "rollouts": int, "uct_c": float}

    def __init__(self, seed: int | None = None, algorithm: str = "ismcts", simulations: int = 100, rollouts: int = 1,
                 uct_c: float = 2.0):
        super().__init__(seed)
        if algorithm not in ALGORITHMS:
            raise ValueError(f"openspiel:{algorithm}: the OpenSpiel algorithms offered are {', '.join(ALGORITHMS)}")
        if simulations < 1 or rollouts < 1 or uct_c < 0:
            raise ValueError(f"openspiel:{algorithm} needs simulations and rollouts >= 1 and uct_c >= 0, got "
                             f"{simulations}, {rollouts}, {uct_c}")
        self.simulations, self.rollouts, self.uct_c = simulations, rollouts, uct_c
        self.games: dict = {}

    def act(self, view: SeatView) -> int:
        legal = view.legal_actions
        if len(legal) == 1:
            return legal[0]
        game = self.game_for(view)
        state = self.resample(game, view)
        seed = int(self.rng.integers(2**31))
        bot = ISMCTSBot(game, RandomRolloutEvaluator(self.rollouts, np.random.RandomState(seed)), self.uct_c,
                        self.simulations, random_state=np.random.RandomState(seed + 1),
                        final_policy_type=ISMCTSFinalPolicyType.MAX_VISIT_COUNT)
        bot.set_resampler(lambda s, player: self.resample(game, s.game.seat_view(player)))
        return int(bot.step(state))

    def game_for(self, view: SeatView):
        """``python_cuatrola`` under the view's rules preset, target and match score."""
        rules = view.rules
        key = (rules.name, rules.target, view.score)
        if key not in self.games:
            try:
                self.games[key] = pyspiel.load_game(NAME, {"rules": rules.name, "target": rules.target,
                                                           "score_0": view.score[0], "score_1": view.score[1]})
            except (ValueError, pyspiel.SpielError) as e:
                raise ValueError(f"openspiel agents play the online and traditional presets as they are: {e}") from None
        return self.games[key]

    def resample(self, game, view: SeatView) -> CuatrolaState:
        """A state of ``game`` at ``view``'s decision, the cards the seat cannot see drawn from what it saw."""
        world = sample_worlds(view, 1, self.rng)[0]  # each seat's unplayed cards
        hands = [list(cards_of(world[seat])) for seat in range(4)]
        for seat, action in view.history:
            if action < NUM_CARDS:
                hands[seat].append(action)
        return state_of(game, view.dealer, hands, view.muestra, [action for _, action in view.history])


__all__ = ["OpenSpielAgent"]
