"""The positions API: a batch of hands stepped by the engine agrees with the single-game engine
(observations, legal actions, results), a finished hand stays as it ended, and taking and joining
games keeps each one whole. Deals are drawn in the test."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import draw_deals

from cuatrola_env import engine
from cuatrola_env.bitboards import from_cards
from cuatrola_env.game import Game
from cuatrola_env.positions import Positions, random_deals
from cuatrola_env.rules import get_rules


def _games(preset: str, n: int, seed: int):
    """n random deals, as Game objects and as one batch of positions."""
    hands, dealer, muestra = draw_deals(np.random.default_rng(seed), n)
    rules = get_rules(preset)
    games = []
    for i in range(n):
        g = Game(rules)
        g.reset(hands=hands[i].tolist(), dealer=int(dealer[i]), muestra=int(muestra[i]))
        games.append(g)
    masks = [[from_cards(h) for h in hands[i]] for i in range(n)]
    return games, Positions.deal(masks, dealer, muestra, rules)


@pytest.mark.parametrize("preset", ["online", "traditional"])
def test_a_batch_agrees_with_single_games_move_by_move(preset):
    """Rules checked: the seat to act, its legal actions and its observation at every decision,
    and each hand's winner and game points, in a batch as in single games."""
    games, pos = _games(preset, 40, seed=3)
    rng = np.random.default_rng(4)
    winners, values = {}, {}
    while not pos.done.all():
        masks, obs = pos.legal_mask(), pos.observe()
        actions = np.zeros(len(pos), np.int64)
        for i, g in enumerate(games):
            if g.last_result is not None:
                continue
            assert pos.current[i] == g.current_player
            assert masks[i].tolist() == g.legal_mask().tolist()
            np.testing.assert_array_equal(obs[i], g.observe())
            actions[i] = int(rng.choice(g.legal_actions()))
            g.step(int(actions[i]))
        for i in pos.step(actions):
            winners[int(i)], values[int(i)] = (int(x[0]) for x in pos.results([i]))
    for i, g in enumerate(games):
        assert (winners[i], values[i]) == (g.last_result["winner_team"], g.last_result["game_points"])


def test_a_finished_hand_stays_as_it_ended_whatever_it_is_given():
    _, pos = _games("online", 8, seed=5)
    winner, points = pos.play_out(lambda p, live, bits: np.array([(int(b) & -int(b)).bit_length() - 1
                                                                  for b in bits[live]]))
    before = {k: v.copy() for k, v in vars(pos.state).items()}
    for junk in (-1, 0, 7, 19, 20, 23):
        assert pos.step(np.full(len(pos), junk)).size == 0
    assert all(np.array_equal(before[k], v) for k, v in vars(pos.state).items())
    assert (pos.results(np.arange(len(pos)))[0] == winner).all() and (points > 0).all()


def test_take_and_concat_keep_each_game_whole():
    games, pos = _games("traditional", 6, seed=6)
    for _ in range(9):
        pos.step(np.array([(int(b) & -int(b)).bit_length() - 1 for b in pos.legal_bits]))
    idx = np.array([5, 0, 0, 3])
    part = pos.take(idx)
    joined = Positions.concat([pos.take([0, 1, 2]), pos.take([3, 4, 5])])
    for k, v in vars(pos.state).items():
        np.testing.assert_array_equal(getattr(part.state, k), v[idx])
        np.testing.assert_array_equal(getattr(joined.state, k), v)
    np.testing.assert_array_equal(part.observe(), pos.observe()[idx])


def test_replay_is_the_deal_then_its_actions():
    games, _ = _games("online", 1, seed=7)
    g, rng = games[0], np.random.default_rng(8)
    actions = []
    for _ in range(6):  # the four bids and two cards: no hand ends sooner
        actions.append(int(rng.choice(g.legal_actions())))
        g.step(actions[-1])
    deal = g.record()["hands"][0]
    dealt = [[from_cards(h) for h in deal["hands"]]]
    pos = Positions.replay(dealt, deal["dealer"], deal["muestra"], g.rules, np.array([actions]))
    np.testing.assert_array_equal(pos.observe()[0], g.observe())
    assert pos.legal_mask()[0].tolist() == g.legal_mask().tolist()
    with pytest.raises(ValueError, match="game 0: its hand is in play"):
        Positions.replay(dealt, deal["dealer"], deal["muestra"], g.rules, np.array([actions + [-1]]))


def test_random_deals_are_valid_seeded_and_uniform_over_seats():
    """Dealing (rules: 5 cards a seat, the muestra in the dealer's hand): every seeded deal is a
    permutation of the 20 cards, the same seed gives the same deals, dealers rotate, and each card
    lands with each seat about equally often."""
    hands, dealer, muestra = random_deals(4000, seed=5)
    engine.validate_deals(hands, dealer, muestra, 4000)  # raises on a bad deal
    again = random_deals(4000, seed=5)
    assert all(np.array_equal(x, y) for x, y in zip((hands, dealer, muestra), again, strict=True))
    assert not np.array_equal(random_deals(4000, seed=6)[0], hands)
    assert dealer.tolist() == [i % 4 for i in range(4000)]
    seat_of = np.zeros((20, 4))
    for seat in range(4):
        np.add.at(seat_of[:, seat], hands[:, seat].ravel(), 1)
    assert np.abs(seat_of / 4000 - 0.25).max() < 0.04  # about 6 standard errors of a share of 4000
    with pytest.raises(ValueError, match="at least 0"):
        random_deals(-1, seed=0)


def test_random_deals_take_the_first_deals_of_a_pool_seeded_alike():
    """Evaluation and training deal by one generator: the deals are the pool's, in order."""
    hands, dealer, muestra = random_deals(50, seed=9)
    masks, pool_muestra = engine.DealPool(np.random.default_rng(9), block=50).draw(dealer)
    assert np.array_equal([[from_cards(h) for h in hand] for hand in hands], masks)
    assert np.array_equal(muestra, pool_muestra)
