"""experiments/q_blend.py: its counts are those of the cards as they lie, its player is the policy at
beta 0, and its label-fit path runs end to end; experiments/bid_bias.py shifts the bids alone."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

from agents.registry import make_agent  # noqa: E402
from cuatrola_env.bitboards import cards_of  # noqa: E402
from cuatrola_env.engine import BIDDING  # noqa: E402
from cuatrola_env.game import Game  # noqa: E402
from cuatrola_env.observation import OFFSETS  # noqa: E402
from cuatrola_env.rules import CARD_RANK, CARD_SUIT, NUM_CARDS  # noqa: E402
from experiments.bid_bias import BidBias  # noqa: E402
from experiments.q_blend import NUM_FEATURES, QBlend, features, main  # noqa: E402

SHIPPED = "agents/models/cuatrola.pt"


def network_play(seeds):
    """(seat view, the shipped network's action) at every decision of hands it plays in every seat."""
    model = make_agent("model:" + SHIPPED)
    for seed in seeds:
        g = Game(seed=seed)
        while not g.over:
            v = g.seat_view()
            action = model.act(v)
            yield v, action
            g.step(action)


def counted(g: Game) -> np.ndarray:
    """The example's features counted by hand from the game: a card is out when it is in another
    seat's unplayed cards (the muestra included while the dealer holds it)."""
    seat = g.current_player
    mine = set(cards_of(g.hands[seat]))
    out = {c for s in range(4) if s != seat for c in cards_of(g.hands[s])}
    higher = [sum(1 for d in out if CARD_SUIT[d] == CARD_SUIT[c] and CARD_RANK[d] > CARD_RANK[c]) for c in range(NUM_CARDS)]
    trump = int(np.argmax(g.observe()[OFFSETS["trump"]]))
    per_suit = lambda cards: [sum(1 for c in cards if CARD_SUIT[c] == s) / 5 for s in range(4)]  # noqa: E731
    return np.array([h / 4 for h in higher] + [c in mine and higher[c] == 0 for c in range(NUM_CARDS)]
                    + per_suit(out) + per_suit(mine) + [sum(1 for c in out if CARD_SUIT[c] == trump) / 5], np.float32)


@pytest.mark.parametrize("preset", ["online", "traditional"])
def test_the_counts_are_those_of_the_cards_as_they_lie(preset):
    """Cards out are exactly the other seats' unplayed cards: the counts read off the observation
    match those counted from the actual deal, at every decision of drawn hands."""
    rng = np.random.default_rng(3)
    checked = 0
    for seed in range(30):
        g = Game(preset, seed=seed)
        while not g.over:
            got = features(g.observe()[None])[0]
            assert got.shape == (NUM_FEATURES,)
            assert np.allclose(got, counted(g)), (seed, g.history)
            g.step(int(rng.choice(g.legal_actions())))
            checked += 1
    assert checked > 200


def test_at_beta_zero_the_blend_is_the_policy(tmp_path):
    """beta 0 plays the network's own choice at every decision; a large beta plays the action
    values' best card, which is not always the policy's."""
    main(["label", "--out", str(tmp_path / "labels"), "--hands", "40", "--per-task", "40"])
    main(["fit", str(tmp_path / "labels" / "*.npz"), "--out", str(tmp_path / "q.pt"), "--epochs", "1", "--features",
          "--threads", "1"])
    policy = QBlend(path=SHIPPED, q=str(tmp_path / "q.pt"), beta=0.0)
    values = QBlend(path=SHIPPED, q=str(tmp_path / "q.pt"), beta=1000.0)
    differ = 0
    for v, action in network_play(range(10)):
        assert policy.act(v) == action
        differ += values.act(v) != action
    assert differ > 0


def test_the_blend_needs_an_action_value_file():
    with pytest.raises(ValueError, match="q=FILE"):
        QBlend(path=SHIPPED)


def test_bid_bias_shifts_only_the_bids():
    """experiments/bid_bias.py: with no shift it is the network; with solo and cuatrola pushed far down
    it never declares them where passing is legal, and its card plays stay the network's."""
    same = BidBias(path=SHIPPED)
    timid = BidBias(path=SHIPPED, solo=-100, cuatrola=-100, quintola=-100)
    bids = 0
    for v, action in network_play(range(60)):
        assert same.act(v) == action
        if v.phase == BIDDING and v.legal_mask[NUM_CARDS]:
            bids += 1
            assert timid.act(v) == NUM_CARDS  # pass
        elif v.phase != BIDDING:
            assert timid.act(v) == action
    assert bids > 60
