"""The network-guided search agent (agents/search.py): legal, blind to hidden cards, and its
rollouts and inference do what they say."""

import dataclasses

import numpy as np
import pytest
from helpers import random_position

from agents.base import seat_view
from agents.registry import make_agent
from cuatrola_env.game import Game
from cuatrola_serve.bot import seat_state

pytest.importorskip("onnxruntime")


def _agent(onnx_model, **kw):
    from agents.search import SearchAgent

    kw = {"worlds": 6, "candidates": 16, **kw}
    return SearchAgent(seed=kw.pop("seed", 0), path=onnx_model, **kw)


@pytest.mark.parametrize("play, bid", [("rollout", "rollout"), ("pimc", "policy"), ("policy", "rollout"), ("policy", "solver")])
def test_search_plays_legal_moves_in_whole_games(onnx_model, play, bid):
    agent = _agent(onnx_model, play=play, bid=bid)
    for seed in range(4):  # both presets
        game = Game("online" if seed % 2 else "traditional", seed=seed)
        while not game.over:
            a = agent.act(seat_view(game))
            assert a in game.legal_actions(), f"illegal action {a} at {seat_state(game)}"
            game.step(a)


def test_search_decision_does_not_depend_on_hidden_cards(onnx_model):
    """The same seat state on two deals that differ only in the cards this seat cannot see
    gives the same decision (same seed): nothing hidden reaches the agent."""
    from cuatrola_serve.bot import replay_state

    checked = redealt = 0
    for seed in range(60):
        game = random_position(seed, 2, 14)
        if game.over or len(game.legal_actions()) == 1:
            continue
        other, seat = replay_state(seat_state(game))
        redealt += list(other.single.hands) != list(game.single.hands)
        a1 = _agent(onnx_model, seed=seed).act(seat_view(game))
        a2 = _agent(onnx_model, seed=seed).act(seat_view(other, seat))
        assert a1 == a2
        checked += 1
    assert checked >= 10 and redealt >= 5


def _true_deal(game):
    """The seat to act's view of ``game``, its true deal as a one-world batch replayed to the
    present (the search's input), and a function giving a fresh Game of that deal at the same
    decision (the reference)."""
    from cuatrola_env.bitboards import from_cards
    from cuatrola_env.positions import Positions

    view = seat_view(game)
    deal = game.record()["hands"][-1]
    world = Positions.replay([[from_cards(h) for h in deal["hands"]]], view.dealer, view.muestra, view.rules,
                             np.array([[a for _, a in view.history]]).reshape(1, -1), view.score)

    def reference() -> Game:
        ref = Game(seed=0)
        ref.reset(hands=deal["hands"], dealer=view.dealer, muestra=view.muestra, score=list(view.score))
        for _, b in view.history:
            ref.step(b)
        return ref

    return view, world, reference


@pytest.mark.parametrize(("exploit", "opponent"), [(0, ""), (1, "heuristic"), (1, "model:agents/models/cuatrola.pt")])
def test_rollout_values_are_the_networks_own_play_of_the_true_deal(onnx_model, exploit, opponent):
    """With the true deal as the only world, the value of each action is what the network gets
    playing the rest of the hand through Game (the reference), for the acting seat's team; with
    ``exploit=1`` the other team's seats play as the opponent model instead (a rule-based agent, or
    any deterministic agent named by its spec: a network's greedy play)."""
    from cuatrola_serve.bot import Bot

    if opponent.startswith("model:"):
        pytest.importorskip("torch")
    bot, model = Bot.load(onnx_model), make_agent(opponent or "heuristic", seed=0)
    net = lambda g: int(np.where(g.legal_mask(), bot.policy.logits(g.observe()[None], g.legal_mask()[None])[0], -np.inf).argmax())
    agent = make_agent(f"search:worlds=1,path={onnx_model}" + (f",exploit=1,opponent={opponent}" if exploit else ""), seed=0)
    assert agent.exploit == bool(exploit) and type(agent.opponent) is (type(model) if exploit else type(None))
    checked = 0
    for seed in range(16):
        game = random_position(seed, 0, 12)  # random bids and plays up to some decision
        if game.over:
            continue
        view, world, reference = _true_deal(game)
        values = agent.action_values(view, view.legal_actions, world)[:, 0]
        for a, v in zip(view.legal_actions, values, strict=True):
            ref = reference()
            rewards, done = ref.step(a)
            while not done:
                theirs = exploit and (ref.single.current & 1) != (view.seat & 1)
                rewards, done = ref.step(model.act(seat_view(ref)) if theirs else net(ref))
            assert v == rewards[view.seat], (seed, a)
        checked += 1
    assert checked >= 10


def _as_bidder():
    """A search agent whose network bids quintola only with the as of oros (trump in these deals)."""
    from agents.search import SearchAgent

    class AsBidder(SearchAgent):
        def _logits(self, obs, mask):
            logits = np.zeros(mask.shape, np.float32)
            logits[:, 23] = np.where(obs[:, 4] > 0, 10.0, -10.0)  # hand view: column 4 = as of oros (trump)
            return logits

    return AsBidder


def test_inference_weights_deals_by_the_bids_seen(onnx_model):
    """Policy-based inference: under a policy that bids quintola only with the as of trump, a
    quintola bid puts the as in the bidder's hand in (nearly) every drawn world; uniform
    sampling puts it there in about 5 of 14 (the hidden cards' share of the bidder's hand)."""
    AsBidder = _as_bidder()

    # dealer 0 turns the sota of oros (card 0): oros are trump, the as of oros is card 4, held by la mano (seat 1)
    hands = [[0, 5, 6, 7, 8], [4, 9, 10, 11, 12], [1, 13, 14, 15, 16], [2, 3, 17, 18, 19]]
    game = Game(seed=0)
    game.reset(hands=hands, dealer=0, muestra=0)
    game.step(23)  # seat 1: quintola
    view = seat_view(game)
    assert view.seat == 2
    share = {}
    for infer, infer_play in ((0.0, 0.0), (1.0, 1.0), (1.0, 0.0), (0.0, 1.0)):
        agent = AsBidder(seed=3, path=onnx_model, worlds=64, candidates=256, infer=infer, floor=0.01, infer_play=infer_play)
        worlds = agent._worlds(view)
        assert (worlds.hands[:, 2] == game.single.hands[2]).all()  # my own hand is never resampled
        share[infer, infer_play] = float(np.mean(worlds.hands[:, 1] >> 4 & 1))
    assert share[1.0, 1.0] >= 0.9 and share[1.0, 0.0] >= 0.9, share
    # the evidence of bids weighs ``infer``; ``infer_play`` weighs only card plays (none seen here)
    assert share[0.0, 0.0] <= 0.6 and share[0.0, 1.0] <= 0.6, share


def test_infer_partner_scales_only_the_partners_evidence(onnx_model):
    """``infer_partner``: a factor on the weight of the partner's actions alone. Under a policy
    that bids quintola only with the as of trump, a quintola by the viewer's partner puts the as
    in the partner's hand in (nearly) every drawn world with the factor 1, at chance with 0; the
    same bid by an opponent is weighed the same either way."""
    AsBidder = _as_bidder()

    hands = [[0, 5, 6, 7, 8], [4, 9, 10, 11, 12], [1, 13, 14, 15, 16], [2, 3, 17, 18, 19]]
    share = {}
    for viewer, bids in ((3, (23, 20)), (2, (23,))):  # seat 1 bids quintola: seat 3's partner, seat 2's opponent
        game = Game(seed=0)
        game.reset(hands=hands, dealer=0, muestra=0)
        for a in bids:
            game.step(a)
        view = seat_view(game)
        assert view.seat == viewer
        for factor in (1.0, 0.0):
            agent = AsBidder(seed=3, path=onnx_model, worlds=64, candidates=256, floor=0.01, infer_partner=factor)
            share[viewer, factor] = float(np.mean(agent._worlds(view).hands[:, 1] >> 4 & 1))
    assert share[3, 1.0] >= 0.9 and share[3, 0.0] <= 0.6, share  # the partner's bid, weighed or ignored
    assert share[2, 1.0] >= 0.9 and share[2, 0.0] >= 0.9, share  # an opponent's bid: no change
    with pytest.raises(ValueError, match="infer_partner"):
        AsBidder(path=onnx_model, infer_partner=-1)


def test_opponent_model_mixture_weights_deals_by_that_players_bids(onnx_model):
    """``opponent=heuristic``: each other seat's actions are weighed as a mixture of the network
    and the rule-based player. With a network that says nothing (equal logits) and the prior on
    the heuristic, a solo bid puts a hand the heuristic would bid solo with (card strength of 7
    or more) in the bidder's seat in (nearly) every drawn world; without the opponent model, or
    with prior 0, the worlds hold such a hand only as often as chance does; with half the prior on
    each, in between."""
    from agents.heuristic import HeuristicAgent
    from agents.search import SearchAgent

    class Blank(SearchAgent):
        def _logits(self, obs, mask):
            return np.zeros(mask.shape, np.float32)

    # dealer 0 turns the sota of oros: la mano (seat 1) holds tres and as of trump and three side aces
    hands = [[0, 5, 6, 7, 8], [3, 4, 9, 14, 19], [1, 2, 10, 11, 12], [13, 15, 16, 17, 18]]
    game = Game(seed=0)
    game.reset(hands=hands, dealer=0, muestra=0)
    h = HeuristicAgent()
    assert h.act(seat_view(game)) == 21  # the heuristic bids solo with it
    game.step(21)
    view = seat_view(game)
    share = {}
    for opponent, prior in (("", 0.5), ("heuristic", 1.0), ("heuristic", 0.0), ("heuristic", 0.5)):
        agent = Blank(seed=3, path=onnx_model, worlds=64, candidates=256, floor=0.01, opponent=opponent, opponent_prior=prior)
        worlds = agent._worlds(view)
        share[opponent, prior] = float(np.mean([h.hand_strength(int(w), 0)[1] >= 7 for w in worlds.hands[:, 1]]))
    assert share["heuristic", 1.0] >= 0.9, share
    assert share["", 0.5] <= 0.3 and share["heuristic", 0.0] <= 0.3, share  # chance: about 1 in 10
    # half the prior on each: a consistent deal is about 5 times as likely (0.62 against 0.13), not certain
    assert share["", 0.5] + 0.1 <= share["heuristic", 0.5] <= share["heuristic", 1.0] - 0.3, share
    with pytest.raises(ValueError, match="opponent"):
        _agent(onnx_model, opponent="pimc")
    with pytest.raises(ValueError, match="opponent must be a deterministic agent"):  # a spec, but random
        make_agent(f"search:path={onnx_model},opponent=random")
    with pytest.raises(ValueError, match="opponent must be a deterministic agent"):  # a level that samples
        make_agent(f"search:path={onnx_model},opponent=bot:level=strong")
    assert make_agent(f"search:path={onnx_model},opponent=bot:level=expert").opponent.deterministic  # greedy
    with pytest.raises(ValueError, match="opponent_prior"):
        _agent(onnx_model, opponent="heuristic", opponent_prior=1.5)


def test_match_win_table_is_a_fair_game_of_chance():
    """Equal teams: V[a, b] + V[b, a] = 1; more points never hurt; reaching the target wins."""
    from agents.search import match_win_table

    v = match_win_table(11)
    assert v[0, 0] == pytest.approx(0.5)
    for a in range(11):
        for b in range(11):
            assert v[a, b] + v[b, a] == pytest.approx(1.0)
            if a < 10:
                assert v[a + 1, b] > v[a, b]
    assert (v[11:, :11] == 1).all()
    # one game point from the target, against a team at 0: only a run of opponents' hands loses
    assert 0.98 < v[10, 0] < 1.0


def test_match_win_table_with_a_hand_edge_favours_the_stronger_team():
    """A team that wins each hand with chance ``edge`` is the other team at ``1 - edge``:
    V_e[a, b] = 1 - V_(1-e)[b, a]; the stronger team wins more matches from level scores, and
    needs a surer solo before it doubles the stakes (the point of ``hand_edge``)."""
    from agents.search import match_win_table

    strong, weak = match_win_table(11, edge=0.6), match_win_table(11, edge=0.4)
    for a in range(11):
        for b in range(11):
            assert strong[a, b] == pytest.approx(1 - weak[b, a])
    assert 0.7 < strong[0, 0] < 0.8

    def solo_needs(v, a=0, b=0):  # the chance of making a solo worth as much as a pass hand won half the time
        pass_value = 0.5 * v[a + 1, b] + 0.5 * v[a, b + 1]
        return (pass_value - v[a, b + 2]) / (v[a + 2, b] - v[a, b + 2])

    assert solo_needs(match_win_table(11)) == pytest.approx(0.5)
    assert solo_needs(strong) > 0.55
    with pytest.raises(ValueError, match="edge"):
        match_win_table(11, edge=1.0)


def test_match_win_table_under_the_exact_target_rule_caps_each_declarer():
    """Exact-target rule: no bid may carry its team past the target. At 9 against 10 the team at 10
    can declare nothing (its hands are pass hands, worth 1, and any it wins ends the match); the team
    at 9 may bid solo at most, so it wins at once only by a contract it declares (half the
    contracts), else reaches 10-10, an even game. Without the rule any contract wins it the match."""
    from agents.search import HAND_VALUES, match_win_table

    declared = 1 - HAND_VALUES[1]  # the share of hands worth a contract
    exact, plain = match_win_table(11, exact_target=True), match_win_table(11)
    assert exact[9, 10] == pytest.approx(0.5 * (declared / 2 + (1 - declared / 2) * 0.5))
    assert plain[9, 10] == pytest.approx(0.5 * (declared + (1 - declared) * 0.5))
    # a fair game still, and the leader is safer: the team behind cannot catch up by a big contract
    for a in range(11):
        for b in range(11):
            assert exact[a, b] + exact[b, a] == pytest.approx(1.0)
    assert exact[8, 2] > plain[8, 2]
    # with pass hands only the rule changes nothing
    assert np.allclose(match_win_table(11, {1: 1.0}, exact_target=True), match_win_table(11, {1: 1.0}))


def test_match_win_tables_give_the_dealing_team_its_edge():
    """The deal passes to the other team every hand. At 10-10 (online) the next hand ends the match,
    so the team dealing it wins with chance ``dealer_edge``; equal teams otherwise: V[a, b, d] +
    V[b, a, 1 - d] = 1; with ``dealer_edge`` 0.5 both layers are the plain table."""
    from agents.search import match_win_table, match_win_tables

    v = match_win_tables(11, dealer_edge=0.6)
    assert v[10, 10, 1] == pytest.approx(0.6) and v[10, 10, 0] == pytest.approx(0.4)
    for a in range(11):
        for b in range(11):
            for d in (0, 1):
                assert v[a, b, d] + v[b, a, 1 - d] == pytest.approx(1.0)
    assert v[5, 5, 1] > 0.5 > v[5, 5, 0]
    even = match_win_tables(11, exact_target=True)
    assert np.allclose(even[..., 0], even[..., 1]) and np.allclose(even[..., 0], match_win_table(11, exact_target=True))
    with pytest.raises(ValueError, match="dealer_edge"):
        match_win_tables(11, edge=0.7, dealer_edge=0.9)


def test_search_values_a_hand_by_who_deals_the_next(onnx_model):
    """At 9-9 a pass hand won leads to 10-9: worth more to the team that deals the next hand (and so
    wins it more often) under ``dealer_edge`` above 0.5, the same to both without it."""
    for dealer_edge, differ in ((0.6, True), (0.5, False)):
        agent = _agent(onnx_model, dealer_edge=dealer_edge)
        worth = {}
        for dealer in (0, 1):  # the next hand is dealt by seat 1 (the other team) or seat 2 (seat 0's partner)
            game = Game("online", mode="match", seed=1)
            game.reset(seed=1, score=[9, 9])
            view = dataclasses.replace(seat_view(game), dealer=dealer, seat=0)
            worth[dealer] = float(agent._utility(view, np.array([1]))[0])
        assert (worth[0] != worth[1]) == differ, worth
        if differ:
            assert worth[1] > worth[0]


def test_every_search_option_is_reachable_by_spec(onnx_model):
    from agents import make_agent

    a = make_agent(f"search:path={onnx_model},utility=points,bid_margin=0.1,bid=solver,play=policy,infer=0.5,bid_worlds=9,"
                   "hand_edge=0.6,infer_play=0.25,opponent=heuristic,opponent_prior=0.3,solver_weight=0.4,prior=0.2,infer_partner=0.7,"
                   "dealer_edge=0.55", seed=1)
    assert (a.utility, a.bid_margin, a.bid, a.play, a.infer, a.bid_worlds, a.hand_edge, a.infer_play, a.opponent_prior,
            a.solver_weight, a.prior, a.infer_partner, a.dealer_edge) == ("points", 0.1, "solver", "policy", 0.5, 9, 0.6,
                                                                          0.25, 0.3, 0.4, 0.2, 0.7, 0.55)
    assert type(a.opponent).__name__ == "HeuristicAgent"
    assert make_agent(f"search:path={onnx_model},infer=0.5").infer_play == 0.5  # card plays weigh as bids by default
    with pytest.raises(ValueError, match="bid_margin"):
        make_agent(f"search:path={onnx_model},bid_margin=1.5")
    with pytest.raises(ValueError, match="hand_edge"):
        make_agent(f"search:path={onnx_model},hand_edge=0")
    with pytest.raises(ValueError, match="dealer_edge"):
        make_agent(f"search:path={onnx_model},hand_edge=0.8,dealer_edge=0.8")


def test_master_agent_is_reproducible_from_its_seed(onnx_model):
    from agents import make_agent

    def actions(seed):
        agent, out = make_agent(f"bot:path={onnx_model},level=master", seed=seed), []
        for s in range(3):
            game = Game(seed=s)
            while not game.over:
                out.append(agent.act(seat_view(game)))
                game.step(out[-1])
        return out

    assert actions(5) == actions(5)


def test_bids_draw_bid_worlds_and_card_plays_draw_worlds(onnx_model):
    """``bid_worlds`` sets how many deals a bid is valued on (from at least as many candidates);
    card plays keep ``worlds``."""
    agent = _agent(onnx_model, worlds=5, bid_worlds=40, candidates=16)
    game = Game(seed=2)
    assert len(agent._worlds(seat_view(game))) == 40
    while game.single.phase == 0:
        game.step(20)
    assert len(agent._worlds(seat_view(game))) == 5
    with pytest.raises(ValueError, match="bid_worlds"):
        _agent(onnx_model, bid_worlds=0)


def test_master_level_searches_with_its_documented_settings(onnx_model):
    from agents.policy import MASTER_SEARCH
    from cuatrola_serve.bot import Bot

    bot = Bot.load(onnx_model, level="master")
    s = bot.player.search(bot.policy)
    assert (s.worlds, s.candidates, s.play) == (MASTER_SEARCH["worlds"], MASTER_SEARCH["candidates"], "pimc")
    assert (s.infer, s.infer_play) == (1.0, MASTER_SEARCH["infer_play"]) == (1.0, 0.5)


def test_master_searches_each_presets_model_with_that_presets_settings():
    """The shipped models: master searches over the traditional model with the traditional settings,
    over the online one with MASTER_SEARCH; a size given to the bot holds for both."""
    from agents.policy import MASTER_SEARCH, MASTER_SEARCH_BY_PRESET
    from cuatrola_serve.bot import Bot

    bot = Bot.load(level="master")
    by_name = {p.rules.name: p for p in bot.player.policies}
    online, traditional = bot.player.search(by_name["online"]), bot.player.search(by_name["traditional"])
    assert (online.worlds, online.candidates) == (MASTER_SEARCH["worlds"], MASTER_SEARCH["candidates"])
    wanted = MASTER_SEARCH_BY_PRESET["traditional"]
    assert (traditional.worlds, traditional.candidates, traditional.infer_play) == (
        wanted["worlds"], wanted["candidates"], wanted["infer_play"])
    assert (traditional.worlds, traditional.candidates) != (online.worlds, online.candidates)
    sized = Bot.load(level="master", worlds=7)
    assert {sized.player.search(p).worlds for p in sized.player.policies} == {7}


def test_master_search_size_is_an_option_of_the_bot_and_its_spec(onnx_model):
    from agents import make_agent
    from cuatrola_serve.bot import Bot

    bot = Bot.load(onnx_model, level="master", worlds=7, candidates=21)
    s = bot.player.search(bot.policy)
    assert (s.worlds, s.candidates, s.play) == (7, 21, "pimc")
    other = bot.player.with_level("master").search(bot.policy)
    assert (other.worlds, other.candidates) == (7, 21), "another level of the same player keeps the size"
    agent = make_agent(f"bot:path={onnx_model},level=master,worlds=9,candidates=30")
    assert (agent.search(agent.policy).worlds, agent.search(agent.policy).candidates) == (9, 30)
    with pytest.raises(ValueError, match="worlds must be at least 1"):
        Bot.load(onnx_model, level="master", worlds=0)
    with pytest.raises(ValueError, match="candidates must be at least 1"):
        make_agent(f"bot:path={onnx_model},level=expert,candidates=0")
    weighed = make_agent(f"bot:path={onnx_model},level=master,infer_play=1")
    assert weighed.search(weighed.policy).infer_play == 1.0
    with pytest.raises(ValueError, match="infer_play must be at least 0"):
        Bot.load(onnx_model, level="master", infer_play=-0.5)


def test_solver_weight_blends_each_bids_double_dummy_result_into_the_rollouts(onnx_model):
    """``solver_weight=1`` bids as PIMC does over the same drawn worlds (each contract solved
    double-dummy, the seats after pass); 0 is the rollouts alone; in between mixes the two values."""
    from agents.pimc import PIMCAgent

    checked = differ = 0
    for seed in range(12):
        game = Game(seed=seed)
        for _ in range(seed % 4):  # every bidding seat, after passes
            game.step(20)
        view = seat_view(game)
        legal = view.legal_actions
        agent = _agent(onnx_model, worlds=12, utility="points", solver_weight=1.0, seed=seed)
        state = agent._worlds(view)
        worlds = [[int(h) for h in hands] for hands in state.hands]
        assert agent._rollouts(view, legal, state) == PIMCAgent(worlds=1).choose_bid(view, legal, worlds)
        agent.solver_weight = 0.0
        rollout = agent._rollouts(view, legal, state)
        assert rollout == legal[int(np.argmax(agent.action_values(view, legal, state).mean(1)))]
        differ += rollout != PIMCAgent(worlds=1).choose_bid(view, legal, worlds)
        checked += 1
    assert checked == 12 and differ >= 1  # the two valuations are not the same thing
    with pytest.raises(ValueError, match="solver_weight"):
        _agent(onnx_model, solver_weight=1.5)
    with pytest.raises(ValueError, match="exploit"):
        _agent(onnx_model, exploit=1)  # no opponent model to exploit


def test_prior_adds_the_networks_probability_of_each_card_to_its_solved_value(onnx_model):
    """``play=pimc,prior=w`` plays the card maximising (mean solved outcome + w x the network's
    probability): 0 is PIMC's card over the drawn worlds; a huge weight is the network's own choice."""
    from agents.pimc import PIMCAgent

    checked = 0
    for seed in range(40):
        game = random_position(seed, 4, 14)
        if game.over or game.single.phase == 0 or len(game.legal_actions()) == 1:
            continue
        view = seat_view(game)
        agent = _agent(onnx_model, play="pimc", seed=seed)
        state = agent._worlds(view)
        agent._worlds = lambda v, s=state: s  # the same drawn worlds for every weight
        worlds = [[int(h) for h in hands] for hands in state.hands]
        assert agent.act(view) == PIMCAgent(worlds=1).choose_card(view, view.legal_actions, worlds)
        agent.prior = 1e6
        logits = agent._logits(view.observation[None], view.legal_mask[None])[0]
        assert agent.act(view) == int(np.where(view.legal_mask, logits, -np.inf).argmax())
        checked += 1
    assert checked >= 10
    with pytest.raises(ValueError, match="prior"):
        _agent(onnx_model, prior=-1)


def test_bid_margin_shades_wins_or_lifts_losses_of_the_agents_own_declarations_only(onnx_model):
    """``bid_margin=m`` > 0 counts a share m of a declaration's won worlds as lost; m < 0 counts a
    share |m| of its lost worlds as won; passing is never moved, nor is anything in card play."""
    view = seat_view(Game(seed=0))  # la mano's bid: pass, solo, cuatrola, quintola
    legal = view.legal_actions
    assert legal == [20, 21, 22, 23]
    points = np.array([[1, -1], [2, -2], [4, -4], [5, -5]], dtype=float)
    agent = _agent(onnx_model, utility="points", bid_margin=0.25)
    np.testing.assert_allclose(agent._values(view, legal, points), [[1, -1], [1, -2], [2, -4], [2.5, -5]])
    agent.bid_margin = -0.25
    np.testing.assert_allclose(agent._values(view, legal, points), [[1, -1], [2, -1], [4, -2], [5, -2.5]])
    agent.bid_margin = 0.0
    np.testing.assert_allclose(agent._values(view, legal, points), points)
    with pytest.raises(ValueError, match="bid_margin"):
        _agent(onnx_model, bid_margin=-1.0)


def test_search_without_a_path_searches_with_the_shipped_model_of_the_games_preset(onnx_model):
    """``search:`` with no ``path`` plays each game with the shipped model trained under its rules
    (as the bot does); with the path of another model, that model under every preset."""
    from agents.models import PRESET_MODELS
    from agents.search import SearchAgent

    if not PRESET_MODELS["traditional"].is_file():
        pytest.skip("the traditional model is not shipped in this checkout")
    agent = SearchAgent(seed=0, worlds=2, candidates=4, play="policy", bid="policy")
    for preset in ("traditional", "online", "traditional"):
        game = Game(preset, seed=5)
        agent.act(seat_view(game))
        assert agent.policy.rules.name == preset
    pinned = SearchAgent(seed=0, path=onnx_model, play="policy", bid="policy")
    pinned.act(seat_view(Game("traditional", seed=5)))
    assert pinned.policies == [pinned.policy] and pinned.policy.rules.name == "online"


def test_postponed_values_are_the_networks_trick_then_the_solver_on_the_true_deal(onnx_model):
    """``postpone=1``: with the true deal as the only world, each card's value is PIMC's outcome
    (:func:`agents.pimc.outcome`) after the network finishes the trick through Game (the reference)
    and the solver, from the game's position, solves the rest; a hand that ends in the trick counts
    as it ended."""
    from agents.pimc import outcome
    from agents.search import SearchAgent
    from agents.solver import Position
    from cuatrola_serve.bot import Bot

    bot = Bot.load(onnx_model)
    net = lambda g: int(np.where(g.legal_mask(), bot.policy.logits(g.observe()[None], g.legal_mask()[None])[0], -np.inf).argmax())
    agent = SearchAgent(seed=0, path=onnx_model, worlds=1, play="pimc", postpone=1)
    checked = ended = 0
    for seed in range(100):
        game = random_position(seed, 4, 20)
        if game.over or game.single.phase == 0 or len(game.legal_actions()) == 1:
            continue
        view, world, reference = _true_deal(game)
        values = agent.postponed_values(view, view.legal_actions, world)[:, 0]
        for card, value in zip(view.legal_actions, values, strict=True):
            ref = reference()
            ref.step(card)
            while not ref.over and ref.single.trick_num == view.trick_num:
                ref.step(net(ref))
            ended += ref.over
            v = 0 if ref.over else Position.from_game(ref).solve()
            g = ref.single
            assert value == outcome(view, g.tricks_won[view.declarer], g.points, v), (seed, card)
        checked += 1
    assert checked >= 10 and ended >= 1


def test_postponing_changes_nothing_for_the_last_seat_of_a_trick(onnx_model):
    """When the acting seat completes the trick, postponing has nothing to postpone: each card's
    summed value over the drawn worlds is PIMC's (``PIMCAgent.play_values``) over the same worlds."""
    from agents.pimc import PIMCAgent

    checked = 0
    for seed in range(80):
        game, rng = random_position(seed, 4, 12), np.random.default_rng(seed)
        while not game.over and (game.single.phase == 0 or game.trick_size != len(game.trick) + 1):
            game.step(int(rng.choice(game.legal_actions())))  # on to the last seat of a trick
        if game.over or len(game.legal_actions()) == 1:
            continue
        view = seat_view(game)
        agent = _agent(onnx_model, play="pimc", postpone=1, seed=seed)
        state = agent._worlds(view)
        worlds = [[int(h) for h in hands] for hands in state.hands]
        mine = agent.postponed_values(view, view.legal_actions, state).sum(1)
        pimc = PIMCAgent(worlds=1).play_values(view, view.legal_actions, worlds)
        assert np.allclose(mine, [pimc[c] for c in view.legal_actions]), seed
        checked += 1
    assert checked >= 10
    with pytest.raises(ValueError, match="postpone"):
        _agent(onnx_model, postpone=2)
