"""Cuatrola as an OpenSpiel game: ``python_cuatrola`` (the ``[openspiel]`` extra).

>>> import pyspiel, cuatrola_env.openspiel                          # importing registers the game
>>> game = pyspiel.load_game("python_cuatrola", {"rules": "traditional"})
>>> state = game.new_initial_state()                                # the deal comes first, as chance

One hand of Cuatrola for four players (0 and 2 against 1 and 3), every rule played by the engine
(:class:`cuatrola_env.game.Game`): this module only translates.

- **Chance, explicit**: the dealer (4 outcomes), then the 20 cards one by one, each drawn uniformly
  from those left (seat by seat, the dealer's five last; the very last card is the dealer's
  muestra, turned up). Then the bids and the card play, every decision asked.
- **Parameters**: ``rules`` (``"online"`` or ``"traditional"``), ``target`` (0: the preset's own) and
  ``score_0``, ``score_1`` (the match score before the hand); the observation shows the score and
  the target, as in a match. A whole match is not offered (each hand's deal would be chance again).
- **Returns**: each seat's game points at the end of the hand (1, 2, 4 or 5 to each winner, the
  same taken from each loser): zero-sum, terminal.
- **Observation and information state**: the tensor is the engine's observation of the seat
  (:mod:`cuatrola_env.observation`, ``OBS_DIM`` floats), whose named pieces (``hand``,
  ``played_by``, ``current_trick``, ``bids``, ...) are the observer's ``dict``; it holds everything
  the seat has seen this hand, so it serves as the information-state tensor too. The strings are
  the seat's own deal and the public actions (information state), or the nonzero pieces of the
  tensor (observation). A public-only observer leaves the seat's own hand out.

OpenSpiel's algorithms (IS-MCTS, CFR-family solvers, NFSP, R-NaD) and its conformance test
(``pyspiel.random_sim_test``) then run on it; ``openspiel:ismcts`` is its IS-MCTS bot as an agent
of ``evaluate.py`` (:mod:`agents.openspiel_agent`).
"""

from __future__ import annotations

import numpy as np
import pyspiel

from .bitboards import cards_of
from .game import Game
from .observation import OBS_DIM, OFFSETS
from .rules import NUM_ACTIONS, NUM_CARDS, action_name, get_rules

NAME = "python_cuatrola"
NUM_PLAYERS = 4
#: the chance nodes of a deal: the dealer, then the 20 cards
DEAL_STEPS = 1 + NUM_CARDS
#: the most decisions a hand can ask: 4 bids and 20 cards
MAX_DECISIONS = 4 + NUM_CARDS

GAME_TYPE = pyspiel.GameType(
    short_name=NAME,
    long_name="Cuatrola (one hand)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=NUM_PLAYERS,
    min_num_players=NUM_PLAYERS,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification={"rules": "online", "target": 0, "score_0": 0, "score_1": 0},
)
GAME_INFO = pyspiel.GameInfo(
    num_distinct_actions=NUM_ACTIONS,
    max_chance_outcomes=NUM_CARDS,
    num_players=NUM_PLAYERS,
    min_utility=-5.0,
    max_utility=5.0,
    utility_sum=0.0,
    max_game_length=DEAL_STEPS + MAX_DECISIONS,
)


class CuatrolaGame(pyspiel.Game):
    """``python_cuatrola``: one hand under the rules its parameters name."""

    def __init__(self, params: dict | None = None):
        super().__init__(GAME_TYPE, GAME_INFO, params or {})
        p = self.get_parameters()
        target = int(p["target"])
        self.rules = get_rules(str(p["rules"]), **({"target": target} if target else {}))
        self.score = [int(p["score_0"]), int(p["score_1"])]
        Game(rules=self.rules).reset(seed=0, score=self.score)  # a bad score is refused here, naming it

    def new_initial_state(self) -> CuatrolaState:
        return CuatrolaState(self)

    def make_py_observer(self, iig_obs_type=None, params=None) -> CuatrolaObserver:
        return CuatrolaObserver(iig_obs_type or pyspiel.IIGObservationType(perfect_recall=True), params)


class CuatrolaState(pyspiel.State):
    """A hand: being dealt (chance), then played by the engine's :class:`~cuatrola_env.game.Game`."""

    def __init__(self, game: CuatrolaGame):
        super().__init__(game)
        self.rules, self.score = game.rules, game.score
        self.dealer: int | None = None
        self.dealt: list[int] = []  # cards in the order drawn: seat by seat, the dealer's last
        self.game: Game | None = None  # the hand, once dealt
        self.actions: list[int] = []  # the players' actions, in order (all public)
        self._returns = [0.0] * NUM_PLAYERS

    # ------------------------------------------------------------------ the deal
    def deal_order(self) -> list[int]:
        """The seats the 20 cards go to, in the order drawn: the seat after the dealer first, the dealer last."""
        return [(self.dealer + 1 + k // 5) % NUM_PLAYERS for k in range(NUM_CARDS)]

    def hands(self) -> list[list[int]]:
        hands = [[] for _ in range(NUM_PLAYERS)]
        for seat, card in zip(self.deal_order(), self.dealt, strict=False):  # the cards dealt so far
            hands[seat].append(card)
        return hands

    # ------------------------------------------------------------------ OpenSpiel's API
    def current_player(self) -> int:
        if self.game is None:
            return pyspiel.PlayerId.CHANCE
        if self.game.over:
            return pyspiel.PlayerId.TERMINAL
        return self.game.current_player

    def _legal_actions(self, player: int) -> list[int]:
        return self.game.legal_actions()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if self.dealer is None:
            return [(seat, 1 / NUM_PLAYERS) for seat in range(NUM_PLAYERS)]
        left = sorted(set(range(NUM_CARDS)) - set(self.dealt))
        return [(card, 1 / len(left)) for card in left]

    def _apply_action(self, action: int) -> None:
        if self.game is not None:
            rewards, _ = self.game.step(int(action))  # the engine checks it
            self.actions.append(int(action))
            self._returns = [r + float(x) for r, x in zip(self._returns, rewards, strict=True)]
            return
        if self.dealer is None:
            self.dealer = int(action)
            return
        self.dealt.append(int(action))
        if len(self.dealt) == NUM_CARDS:
            self.game = Game(rules=self.rules)
            self.game.reset(hands=self.hands(), dealer=self.dealer, muestra=self.dealt[-1], score=self.score)

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"dealer {action}" if self.dealer is None and not self.dealt else f"deal {action_name(action)}"
        return action_name(action)

    def is_terminal(self) -> bool:
        return self.game is not None and self.game.over

    def returns(self) -> list[float]:
        return list(self._returns)

    def __str__(self) -> str:
        if self.game is None:
            return f"dealer {self.dealer}, {len(self.dealt)} cards dealt"
        hands = " | ".join(" ".join(action_name(c) for c in cards_of(h)) for h in self.game.hands)
        played = " ".join(action_name(a) for a in self.actions)
        return f"dealer {self.dealer}, muestra {action_name(self.dealt[-1])}; hands {hands}; actions {played}"


def state_of(game: CuatrolaGame, dealer: int, hands: list[list[int]], muestra: int, actions) -> CuatrolaState:
    """The state of ``game`` after this deal (each seat's five cards, the dealer's muestra among its
    own) and these players' actions: the chance outcomes that deal it, then the actions (for a
    search that draws the cards it cannot see, then replays the hand so far)."""
    state = game.new_initial_state()
    state.apply_action(int(dealer))
    for seat in state.deal_order()[::5]:
        cards = sorted(int(c) for c in hands[seat])
        if seat == dealer:
            cards = [c for c in cards if c != muestra] + [int(muestra)]  # the muestra: the last card dealt
        for card in cards:
            state.apply_action(card)
    for action in actions:
        state.apply_action(int(action))
    return state


class CuatrolaObserver:
    """OpenSpiel's observer (the PyObserver interface): ``tensor`` is the engine's observation of a
    seat, ``dict`` its named pieces (views into ``tensor``, the layout of
    :data:`cuatrola_env.observation.OFFSETS`)."""

    def __init__(self, iig_obs_type, params):
        if params:
            raise ValueError(f"python_cuatrola's observer takes no parameters, got {params}")
        if iig_obs_type.private_info == pyspiel.PrivateInfoType.ALL_PLAYERS:
            raise ValueError("python_cuatrola observes one seat: no observer sees every hand")
        self.private = iig_obs_type.private_info == pyspiel.PrivateInfoType.SINGLE_PLAYER
        self.perfect_recall = iig_obs_type.perfect_recall
        self.tensor = np.zeros(OBS_DIM, np.float32)
        self.dict = {name: self.tensor[piece] for name, piece in OFFSETS.items()}

    def set_from(self, state: CuatrolaState, player: int) -> None:
        self.tensor.fill(0.0)
        if state.game is None:
            return  # nothing to see while the cards are being dealt
        self.tensor[:] = state.game.observe(player)
        if not self.private:
            self.dict["hand"][:] = 0.0

    def string_from(self, state: CuatrolaState, player: int) -> str:
        if self.perfect_recall:
            return self.information_state_string(state, player)
        self.set_from(state, player)
        pieces = [f"{name}:{','.join(f'{i}={v:g}' for i, v in enumerate(piece) if v)}"
                  for name, piece in self.dict.items() if piece.any()]
        return f"p{player} " + " ".join(pieces)

    def information_state_string(self, state: CuatrolaState, player: int) -> str:
        """What ``player`` knows: its own five cards as dealt (if private), the dealer and the muestra,
        and every action so far (all public)."""
        if state.game is None:
            return f"p{player} dealing {len(state.dealt)}"
        own = " ".join(action_name(c) for c in sorted(state.hands()[player])) if self.private else "?"
        played = " ".join(action_name(a) for a in state.actions)
        return f"p{player} hand {own}; dealer {state.dealer} muestra {action_name(state.dealt[-1])}; {played}"


pyspiel.register_game(GAME_TYPE, CuatrolaGame)

__all__ = ["NAME", "CuatrolaGame", "CuatrolaObserver", "CuatrolaState", "state_of"]
