"""Agents: specs, the seat view, the bots' legality, the belief sampler."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from helpers import scramble_hidden
from scenario import cid

from agents import make_agent, parse_spec, seat_view
from agents.belief import Inconsistent, any_world, consistent, constraints, sample_world_array, sample_worlds
from cuatrola_env.game import Game
from experiments.late_prior import LatePrior, log_softmax


def test_specs():
    assert parse_spec("pimc:worlds=32,seconds=0.5") == ("pimc", {"worlds": "32", "seconds": "0.5"})
    assert parse_spec("model:models/x.onnx") == ("model", {"path": "models/x.onnx"})
    assert make_agent("heuristic").spec == "heuristic"
    known = "bot, cheater, heuristic, model, openspiel, pimc, random, sb3, search"
    with pytest.raises(ValueError, match=f"unknown agent .herustic.*known agents: {known}"):
        make_agent("herustic")
    with pytest.raises(ValueError, match="unknown option 'world' for agent 'pimc'"):
        make_agent("pimc:world=3")
    with pytest.raises(ValueError, match="option worlds='many' of 'pimc:worlds=many' must be int"):
        make_agent("pimc:worlds=many")
    with pytest.raises(ValueError, match="expected key=value"):
        make_agent("pimc:32")
    with pytest.raises(ValueError, match="non-empty"):
        make_agent("")


def test_seat_view_shows_only_what_the_seat_may_see():
    """Dealing the other seats' unplayed cards anew (same counts, the muestra kept by the dealer)
    changes nothing in the view of the seat to act: not a field, not its observation."""
    for seed in range(6):
        g = Game(seed=seed, rules="traditional" if seed % 2 else "online")
        rng = np.random.default_rng(seed)
        while not g.over:
            v = seat_view(g)
            assert v.hand == g.single.hands[v.seat]
            assert v.legal == g.single.legal_mask()
            obs = v.observation.copy()
            saved = list(g.single.hands)
            s = g.single
            g.single.hands = scramble_hidden(saved, s.dealer, s.muestra, s.played, v.seat, rng)
            v2 = seat_view(g)
            obs2 = v2.observation.copy()  # built while the others hold other cards
            g.single.hands = saved
            fields = [f for f in v.__dataclass_fields__ if f not in ("_game", "_obs")]
            assert all(getattr(v, f) == getattr(v2, f) for f in fields)
            np.testing.assert_array_equal(obs, obs2)
            g.step(int(rng.choice(g.legal_actions())))


@pytest.mark.parametrize("spec", ["random", "heuristic"])
@pytest.mark.parametrize("rules", ["online", "traditional"])
def test_bots_always_play_legal_actions(spec, rules):
    agent = make_agent(spec, seed=1)
    for seed in range(300):
        g = Game(rules=rules, mode="match" if seed % 10 == 0 else "hand", seed=seed)
        while not g.over:
            a = agent.act(seat_view(g))
            assert a in g.legal_actions()
            g.step(a)


def test_heuristic_bids_from_strength():
    h = make_agent("heuristic")
    # all five trumps: quintola; nothing: pass
    assert h.hand_strength(sum(1 << (15 + r) for r in range(5)), 3)[0] >= 4.9
    g = Game(seed=0)
    # seat 0 holds the five oros, trump is espadas (the dealer, seat 3, shows the as de espadas)
    g.reset(hands=[[0, 1, 2, 3, 4], [5, 6, 7, 8, 9], [15, 16, 17, 18, 19], [10, 11, 12, 13, 14]], dealer=3, muestra=14)
    assert h.act(seat_view(g)) == 20, "no trump: a side suit alone does not carry a solo"
    g.reset(hands=[[5, 6, 7, 8, 0], [1, 2, 3, 4, 9], [15, 16, 17, 18, 19], [10, 11, 12, 13, 14]], dealer=3, muestra=14)
    assert h.act(seat_view(g)) == 20, "no trump, no as: pass"
    g.reset(hands=[[0, 1, 2, 3, 4], [5, 6, 7, 8, 9], [15, 16, 17, 18, 19], [10, 11, 12, 13, 14]], dealer=0, muestra=4)
    for _ in range(3):  # seats 1, 2, 3 pass; seat 0, the dealer, bids last
        g.step(20)
    assert h.act(seat_view(g)) == 23, "all five trumps (oros, the muestra's suit): quintola"


def test_belief_samples_are_consistent_and_respect_voids():
    rng = np.random.default_rng(0)
    checked_voids = 0
    for seed in range(60):
        g = Game(seed=seed, rules="traditional" if seed % 2 else "online")
        while not g.over:
            v = seat_view(g)
            # the true deal is always among the consistent ones
            assert consistent(v, list(g.single.hands)), f"seed {seed}: the true deal was ruled out"
            need, forbidden, hidden = constraints(v)
            for world in sample_worlds(v, 4, rng):
                assert consistent(v, world, need, forbidden)
                # replaying the hand so far on this world (the played cards put back) is legal throughout
                original = list(world)
                for s, a in v.history:
                    if a < 20:
                        original[s] |= 1 << a
                union = original[0] | original[1] | original[2] | original[3]
                if sum(bin(m).count("1") for m in original) == 20 and union == (1 << 20) - 1:
                    replay = Game(rules=g.rules)
                    hands = [[c for c in range(20) if m >> c & 1] for m in original]
                    replay.reset(hands=hands, dealer=v.dealer, muestra=v.muestra)
                    for _, a in v.history:
                        replay.step(a)  # raises if the world makes a recorded action illegal
                checked_voids += any(forbidden)
            g.step(int(rng.choice(g.legal_actions())))
    assert checked_voids > 50


def test_belief_never_gives_a_void_seat_that_suit():
    # deal A, online: seat 3 shows out of oros on trick 1
    hands = [[cid(c) for c in h.split()] for h in ["Ro Sc Se Sb Cb", "So Ao Cc Ce Rb", "Co 3o Rc Re 3b", "3c Ac 3e Ae Ab"]]
    g = Game()
    g.reset(hands=hands, dealer=3, muestra=cid("Ab"))
    for a in (20, 20, 20, 20, cid("Ro"), cid("Ao"), cid("3o"), cid("Ac")):
        g.step(a)
    v = seat_view(g)  # seat 1 to lead trick 2
    oros = sum(1 << c for c in range(5))
    for world in sample_worlds(v, 200, np.random.default_rng(1)):
        assert world[3] & oros == 0, "seat 3 is void in oros"
        assert world[3] >> cid("Ab") & 1, "the dealer still holds the muestra"


def _deal_a_after_trick_one(plays=("Ro", "Ao", "3o", "Ac")):
    """Deal A (online, dealer 3, muestra As de bastos), all pass, then ``plays``: the view of the seat to act."""
    hands = [[cid(c) for c in h.split()] for h in ["Ro Sc Se Sb Cb", "So Ao Cc Ce Rb", "Co 3o Rc Re 3b", "3c Ac 3e Ae Ab"]]
    g = Game()
    g.reset(hands=hands, dealer=3, muestra=cid("Ab"))
    for a in (20, 20, 20, 20, *(cid(c) for c in plays)):
        g.step(a)
    return seat_view(g)


def _reference_deal(view, rng) -> list[int] | None:
    """One deal by the sampler's scheme, card by card in plain Python (None at a dead end)."""
    need, forbidden, hidden = constraints(view)
    hands = [0, 0, 0, 0]
    hands[view.seat] = view.hand
    if view.muestra_held and view.dealer != view.seat:
        hands[view.dealer] |= 1 << view.muestra
    cards = [c for c in range(20) if hidden >> c & 1]
    eligible = {c: [q for q in range(4) if need[q] > 0 and not forbidden[q] >> c & 1] for c in cards}
    free = list(need)
    for c in sorted(cards, key=lambda c: len(eligible[c])):
        seats = [q for q in eligible[c] if free[q] > 0]
        if not seats:
            return None
        q = rng.choice(seats, p=np.array([free[x] for x in seats]) / sum(free[x] for x in seats))
        hands[q] |= 1 << c
        free[q] -= 1
    return hands


def _where(worlds) -> np.ndarray:
    """(20, 4) share of the deals in which each card lies with each seat."""
    w = np.array(worlds, dtype=np.int64)
    return np.array([[(w[:, q] >> c & 1).mean() for q in range(4)] for c in range(20)])


def test_belief_sampler_draws_each_card_where_the_plain_scheme_does():
    """The batched sampler draws from the distribution of the plain card-by-card scheme, dead ends
    drawn again (here seat 3 has shown out of oros and the dealer keeps the muestra)."""
    view = _deal_a_after_trick_one()
    rng = np.random.default_rng(5)
    batched = sample_world_array(view, 4000, rng)
    plain = [d for d in (_reference_deal(view, rng) for _ in range(6000)) if d is not None][:4000]
    assert len(plain) == 4000 and batched.shape == (4000, 4)
    assert np.abs(_where(batched) - _where(plain)).max() < 0.05


def test_belief_sampler_deals_cards_nothing_constrains_evenly():
    """Before any card is played, a hidden card lies with each other seat in proportion to its unseen
    cards (the dealer's muestra is known, so the dealer has one fewer)."""
    g = Game(seed=8)
    view = seat_view(g)  # la mano, to bid first
    need, _, hidden = constraints(view)
    share = _where(sample_world_array(view, 6000, np.random.default_rng(0)))
    expected = np.array(need) / sum(need)
    for c in range(20):
        if hidden >> c & 1:
            assert np.abs(share[c] - expected).max() < 0.03, f"card {c}"


def test_belief_sampler_names_a_history_no_deal_fits():
    """A history (made up: the engine would refuse it) in which seats 1, 2 and 3 all show out of oros
    while oros are still unseen: no deal fits, and the sampler says so."""
    view = _deal_a_after_trick_one(plays=())  # seat 0 (la mano) to lead
    trick = [(0, cid("Ro")), (1, cid("Cc")), (2, cid("Rc")), (3, cid("3c"))]
    view = dataclasses.replace(view, hand=view.hand & ~(1 << cid("Ro")), history=view.history + tuple(trick),
                               played=sum(1 << c for _, c in trick))
    with pytest.raises(Inconsistent, match="no consistent deal"):
        sample_worlds(view, 8, np.random.default_rng(0))


def test_any_world_places_the_hidden_cards_wherever_the_true_deal_fits():
    """The placement without chance (what the bot replays a JSON state on) is consistent with every
    seat's view at every point of random hands, under both presets, and it names a history no deal
    fits (the made-up one above) instead of searching at length."""
    rng = np.random.default_rng(3)
    checked = 0
    for seed in range(40):
        g = Game(seed=seed, rules="traditional" if seed % 2 else "online")
        while not g.over:
            for seat in range(4):
                v = seat_view(g, seat)
                assert consistent(v, any_world(v)), f"seed {seed}, seat {seat}"
                checked += 1
            g.step(int(rng.choice(g.legal_actions())))
    assert checked > 500
    view = _deal_a_after_trick_one(plays=())
    trick = [(0, cid("Ro")), (1, cid("Cc")), (2, cid("Rc")), (3, cid("3c"))]
    view = dataclasses.replace(view, hand=view.hand & ~(1 << cid("Ro")), history=view.history + tuple(trick),
                               played=sum(1 << c for _, c in trick))
    with pytest.raises(Inconsistent, match="no consistent deal"):
        any_world(view)


def test_batch_views_match_single_game_views():
    """A view built from the batched engine equals the one built from a Game (history aside)."""
    from helpers import draw_deals

    from agents import batch_views
    from cuatrola_env import VectorCuatrola

    n = 40
    rng = np.random.default_rng(2)
    hands, dealer, muestra = draw_deals(rng, n)
    env = VectorCuatrola(num_envs=n, autoreset=False)
    env.reset(hands=hands, dealer=dealer, muestra=muestra)
    games = []
    for i in range(n):
        g = Game()
        g.reset(hands=hands[i], dealer=int(dealer[i]), muestra=int(muestra[i]))
        games.append(g)
    skip = {"history", "_game", "_obs"}
    for _ in range(24):
        live = [i for i in range(n) if not games[i].over]
        if not live:
            break
        views = batch_views(env, live)
        actions = np.full(n, 20)
        for v, i in zip(views, live, strict=True):
            ref = seat_view(games[i])
            for f in ref.__dataclass_fields__:
                if f not in skip:
                    assert getattr(v, f) == getattr(ref, f), f"game {i}: {f}"
            actions[i] = int(rng.choice(ref.legal_actions))
            games[i].step(int(actions[i]))
        env.step(actions)


def test_partner_sighted_worlds_hold_the_partners_true_hand():
    """experiments/oracle_bound.py --bids/--play partner: every world gives the partner its true
    unplayed hand, keeps the opponents' cards between the opponents, fits what the seat saw
    (voids, the muestra with the dealer), and the opponents' split varies when it can."""

    from experiments.oracle_bound import partner_worlds
    rng = np.random.default_rng(3)
    varied = 0
    for seed in range(30):
        g = Game(seed=seed, rules="traditional" if seed % 2 else "online")
        while not g.over:
            v, truth = seat_view(g), [int(h) for h in g.single.hands]
            me, mate = v.seat, v.seat ^ 2
            worlds = partner_worlds(v, truth, 8, rng)
            for w in worlds:
                assert w[me] == truth[me] and w[mate] == truth[mate], "my hand and my partner's are the truth"
                assert w[me ^ 1] | w[me ^ 3] == truth[me ^ 1] | truth[me ^ 3], "opponents' cards stay with them"
                assert consistent(v, w), f"seed {seed}: a world does not fit what seat {me} saw"
            varied += len({tuple(w) for w in worlds}) > 1
            g.step(int(rng.choice(g.legal_actions())))
    assert varied > 30


def split_agent_play(split, rnd, games: int):
    """Each view and the split agent's action in ``games`` hands it plays in every seat, it and the
    random agent it may hold reset to each game's seed (so that both draw alike)."""
    for seed in range(games):
        g = Game(seed=seed)
        split.reset(seed)
        rnd.reset(seed)
        while not g.over:
            v = seat_view(g)
            a = split.act(v)
            yield v, a
            g.step(a)


def test_split_agent_bids_as_one_agent_and_plays_as_the_other():
    """examples/split_agent.py: every bid is the bidder's choice and every card the player's,
    on deals drawn here (random bids would often differ from the heuristic's)."""
    split = make_agent("examples.split_agent:SplitAgent,bidder=heuristic,player=random", seed=3)
    heuristic, rnd = make_agent("heuristic"), make_agent("random")
    bids = plays = 0
    for v, a in split_agent_play(split, rnd, 40):
        if v.phase == 0:
            assert a == heuristic.act(v)
            bids += 1
        else:
            assert a == rnd.act(v)  # the same seed, the same draws
            plays += 1
    assert bids >= 160 and plays >= 400


def test_split_agent_hands_the_card_play_to_the_late_agent_from_its_trick_on():
    """``late``, ``from_trick``: card plays of tricks before ``from_trick`` are the player's, later
    ones the late agent's, on deals drawn here; a trick outside 0..5 is refused by name."""
    split = make_agent("examples.split_agent:SplitAgent,bidder=heuristic,player=heuristic,late=random,from_trick=2",
                       seed=3)
    heuristic, rnd = make_agent("heuristic"), make_agent("random")
    early = late = 0
    for v, a in split_agent_play(split, rnd, 30):
        if v.phase == 1 and v.trick_num >= 2:
            assert a == rnd.act(v)
            late += 1
        elif v.phase == 1:
            assert a == heuristic.act(v)
            early += 1
    assert early >= 150 and late >= 150
    with pytest.raises(ValueError, match="from_trick must be between 0 and 5, got 7"):
        make_agent("examples.split_agent:SplitAgent,late=random,from_trick=7")


def test_late_prior_bids_as_its_model_and_breaks_only_near_ties_of_its_card_plays():
    """experiments/late_prior.py: at beta 0 it plays exactly as level expert's model; at a small beta
    its bids stay the model's and some card plays change, only where the model's two best logits are
    near (the model's lead below beta times the prior's preference the other way), on deals drawn here."""
    plain, bot = LatePrior(beta=0.0), make_agent("bot:level=expert")
    tilted = LatePrior(beta=0.2)
    rng, changed, bids = np.random.default_rng(5), 0, 0
    for seed in range(40):
        g = Game(seed=seed)
        while not g.over:
            v = seat_view(g)
            a = tilted.act(v)
            assert plain.act(v) == bot.act(v)
            if v.phase == 0:
                assert a == bot.act(v)
                bids += 1
            elif a != bot.act(v):
                changed += 1
                obs, mask = v.observation[None], v.legal_mask[None]
                logits, prior = tilted.late.logits(obs, mask)[0], log_softmax(tilted.prior.logits(obs, mask)[0], v.legal_mask)
                first = bot.act(v)  # the model's own choice gave way: its lead is below the prior's tilt
                assert 0 <= logits[first] - logits[a] <= 0.2 * (prior[a] - prior[first]) + 1e-6
            g.step(int(rng.choice(v.legal_actions)))
    assert bids >= 100 and changed > 0
