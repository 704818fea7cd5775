"""One scenario per rule of docs/rules.md, each with its deal written out in the test.

Card names: rank (S sota, C caballo, R rey, 3 tres, A as) + suit (o oros, c copas,
e espadas, b bastos). Hands are listed in seat order 0..3.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import pick_actions
from scenario import Scenario, cid

from cuatrola_env import VectorCuatrola

# Deal A: dealer 3 (la mano is seat 0), muestra as de bastos: trump bastos.
DEAL_A = ["Ro Sc Se Sb Cb", "So Ao Cc Ce Rb", "Co 3o Rc Re 3b", "3c Ac 3e Ae Ab"]
# Deal B: seat 1 is void in oros and holds a trump; seat 2 holds a lower and a higher oro.
DEAL_B = ["Co Sc Se Sb Cb", "Ce Cc Rc 3c Rb", "So Ro Re 3e 3b", "Ao 3o Ac Ae Ab"]
# Deal C: seat 0 holds all the copas; seats 1 and 2 are void in copas and hold trumps.
DEAL_C = ["Sc Cc Rc 3c Ac", "Rb So Co Ro Se", "Sb Ab 3o Ao Ce", "Cb 3b Re 3e Ae"]
# Deal D: seat 0 leads a trump (arrastre).
DEAL_D = ["Rb So Sc Se Ce", "Sb Ab Co Cc Re", "Cb Ro Rc 3e Ae", "3b 3o Ao 3c Ac"]
# Deal E: seat 0 holds all five trumps (dealer 0, muestra as de bastos).
DEAL_E = ["Sb Cb Rb 3b Ab", "So Co Ro 3o Ao", "Sc Cc Rc 3c Ac", "Se Ce Re 3e Ae"]
# Deal F: cantes. Seat 0 holds rey+caballo of trump (bastos), seat 2 rey+caballo of copas.
DEAL_F = ["Rb Cb Ao Ae Se", "So Co Ce Sc Sb", "Rc Cc 3o 3e Re", "Ro 3c Ac 3b Ab"]

PASS4 = ("pass", "pass", "pass", "pass")


# ------------------------------------------------------------------ deal, mano, bidding
def test_mano_speaks_first_and_bids_must_rise():
    """Bidding: one round from la mano (dealer + 1); each bid strictly higher than the highest so far."""
    g = Scenario(DEAL_A, dealer=1, muestra="Rb")  # la mano is seat 2
    assert g.to_act == 2
    assert g.legal() == {"pass", "solo", "cuatrola", "quintola"}
    g.play("cuatrola", seat=2)
    assert g.legal() == {"pass", "quintola"}, "only a higher bid than cuatrola, or pass"
    g.play("pass", seat=3)
    g.play("quintola", seat=0)  # raising over the partner is allowed
    assert g.legal() == {"pass"}
    g.play("pass", seat=1)
    s = g.state
    assert s.contract[0] == 3 and s.declarer[0] == 0 and s.sitter[0] == 2


def test_all_pass_means_contract_pass_and_all_four_play():
    g = Scenario(DEAL_A, dealer=3, muestra="Ab").play(*PASS4)
    s = g.state
    assert s.contract[0] == 0 and s.sitter[0] == -1 and s.trick_size[0] == 4
    assert g.to_act == 0, "la mano leads the first trick"


# ------------------------------------------------------------------ legal plays
@pytest.mark.parametrize("rules", ["online", "traditional"])
def test_follow_and_overtake(rules):
    """Asistir: follow the led suit; montar: beat the best led card if you can, else any of the suit."""
    g = Scenario(DEAL_A, dealer=3, muestra="Ab", rules=rules).play(*PASS4)
    assert g.legal() == {"Ro", "Sc", "Se", "Sb", "Cb"}, "the leader plays any card"
    g.play("Ro", seat=0)
    assert g.legal() == {"Ao"}, "must overtake the rey with the as (the sota does not beat it)"
    g.play("Ao", seat=1)
    assert g.legal() == {"Co", "3o"}, "cannot beat the as: any oro"


def test_void_no_trump_in_trick_online_free_discard():
    """Online: void in the led suit and no trump yet: any card (trumping allowed, not required)."""
    g = Scenario(DEAL_A, dealer=3, muestra="Ab").play(*PASS4, "Ro", "Ao", "3o")
    assert g.legal() == {"3c", "Ac", "3e", "Ae", "Ab"}


def test_void_no_trump_in_trick_traditional_must_trump():
    """Traditional: void in the led suit and no trump yet: must trump if able."""
    g = Scenario(DEAL_A, dealer=3, muestra="Ab", rules="traditional").play(*PASS4, "Ro", "Ao", "3o")
    assert g.legal() == {"Ab"}


def test_overtake_when_trumped_online():
    """Online: following suit after the trick was trumped, you must still beat the best led card."""
    g = Scenario(DEAL_B, dealer=3, muestra="Ab").play(*PASS4, "Co")
    assert g.legal() == {"Ce", "Cc", "Rc", "3c", "Rb"}, "void, no trump yet: any card"
    g.play("Rb", seat=1)
    assert g.legal() == {"Ro"}, "must beat the caballo even though the trick is trumped"


def test_overtake_when_trumped_traditional():
    """Traditional: once a trump is in a non-trump-led trick, just follow suit."""
    g = Scenario(DEAL_B, dealer=3, muestra="Ab", rules="traditional").play(*PASS4, "Co")
    assert g.legal() == {"Rb"}, "void in oros with a trump: must trump"
    g.play("Rb", seat=1)
    assert g.legal() == {"So", "Ro"}, "any oro: no need to beat the caballo"


@pytest.mark.parametrize("rules", ["online", "traditional"])
def test_over_trump_and_no_higher_trump(rules):
    """Void with a trump in the trick: play a higher trump if you have one; if none, any card."""
    g = Scenario(DEAL_C, dealer=3, muestra="3b", rules=rules).play(*PASS4, "Sc", "Rb")
    assert g.legal() == {"Ab"}, "must over-trump the rey with the as (the sota is lower)"
    g.play("Ab", seat=2)
    assert g.legal() == {"Cb", "3b", "Re", "3e", "Ae"}, "no trump above the as: any card"
    g.play("Re", seat=3)
    assert g.state.tricks_won[0].tolist() == [0, 0, 1, 0], "the highest trump wins"


@pytest.mark.parametrize("rules", ["online", "traditional"])
def test_trump_lead_arrastre(rules):
    """A trump lead is an ordinary lead of the trump suit: follow with trumps and overtake."""
    g = Scenario(DEAL_D, dealer=3, muestra="3b", rules=rules).play(*PASS4, "Rb")
    assert g.legal() == {"Ab"}
    g.play("Ab", seat=1)
    assert g.legal() == {"Cb"}, "a lower trump must still follow"
    g.play("Cb", seat=2)
    assert g.legal() == {"3b"}
    g.play("3b", seat=3)
    assert g.state.winners[0, 0] == 1


def test_trick_winner_highest_led_card_without_trumps():
    """Without trumps the highest card of the led suit wins, whatever the other suits."""
    g = Scenario(DEAL_A, dealer=3, muestra="Ab").play(*PASS4, "Ro", "Ao", "3o", "Ac")
    assert g.state.winners[0, 0] == 1 and g.to_act == 1, "the winner leads the next trick"
    assert g.state.points[0].tolist() == [0, 4 + 11 + 10 + 11]


# ------------------------------------------------------------------ sitting out
def test_partner_sits_out_and_tricks_have_three_cards():
    g = Scenario(DEAL_A, dealer=3, muestra="Ab").play("pass", "solo", "pass", "pass")
    s = g.state
    assert s.declarer[0] == 1 and s.sitter[0] == 3 and s.trick_size[0] == 3
    g.play("Ro", seat=0).play("Ao", seat=1).play("3o", seat=2)
    assert s.trick_num[0] == 1, "the trick is complete with three cards"
    assert s.hands[0, 3] == sum(1 << cid(c) for c in DEAL_A[3].split()), "the sitter's cards stay in hand"


def test_mano_sitting_out_next_seat_leads():
    """Leader of trick 1: la mano; if la mano sits out, the next seat."""
    g = Scenario(DEAL_A, dealer=3, muestra="Ab").play("pass", "pass", "solo", "pass")
    assert g.state.sitter[0] == 0
    assert g.to_act == 1


def test_sitter_skipped_in_turn_order():
    g = Scenario(DEAL_A, dealer=3, muestra="Ab").play("pass", "pass", "solo", "pass")
    g.play("So", seat=1)
    assert g.to_act == 2
    g.play("Co", seat=2)
    assert g.to_act == 3
    g.play("3c", seat=3)  # void in oros: any card (online)
    assert g.to_act == 2, "seat 2 won with the caballo and leads; seat 0 never plays"


# ------------------------------------------------------------------ contracts
def _play_out(g: Scenario, rng_seed=0):
    """Play the lowest legal card until the hand ends."""
    while not g.done:
        g.play(min(g.legal(), key=cid))
    return g


def test_cuatrola_made_ends_early_after_four_tricks():
    g = Scenario(DEAL_E, dealer=0, muestra="Ab").play("pass", "pass", "pass", "cuatrola")  # mano is seat 1
    assert g.state.declarer[0] == 0 and g.state.sitter[0] == 2 and g.to_act == 1
    _play_out(g)
    r = g.results
    assert r["tricks_won"].tolist() == [4, 0, 0, 0], "the hand stops as soon as 4 tricks are won"
    assert r["winner"] == 0 and r["value"] == 4
    assert g.rewards[0].tolist() == [4, -4, 4, -4], "the sitting-out partner shares the result"


def test_quintola_made_plays_all_five():
    g = Scenario(DEAL_E, dealer=0, muestra="Ab").play("pass", "pass", "pass", "quintola")
    _play_out(g)
    assert g.results["tricks_won"].tolist() == [5, 0, 0, 0]
    assert g.rewards[0].tolist() == [5, -5, 5, -5]


def test_quintola_fails_at_first_lost_trick():
    g = Scenario(DEAL_E, dealer=0, muestra="Ab").play("quintola", "pass", "pass", "pass")  # seat 1 declares
    assert g.state.declarer[0] == 1
    _play_out(g)
    r = g.results
    assert sum(r["tricks_won"]) == 1, "ends after the declarer's first lost trick"
    assert r["winner"] == 0 and g.rewards[0].tolist() == [5, -5, 5, -5]


def test_cuatrola_fails_after_two_lost_tricks():
    g = Scenario(DEAL_E, dealer=0, muestra="Ab").play("cuatrola", "pass", "pass", "pass")
    _play_out(g)
    r = g.results
    assert r["tricks_won"][1] == 0 and sum(r["tricks_won"]) == 2, "certain failure after 2 lost tricks"
    assert r["winner"] == 0 and g.rewards[0].tolist() == [4, -4, 4, -4]


def test_solo_won_and_lost():
    """Solo: declarer against the two opponents on points; game points 2."""
    g = Scenario(DEAL_E, dealer=0, muestra="Ab").play("pass", "pass", "pass", "solo")
    _play_out(g)
    assert g.results["winner"] == 0 and g.rewards[0].tolist() == [2, -2, 2, -2]
    assert g.results["points"][0] > g.results["points"][1]
    g = Scenario(DEAL_E, dealer=0, muestra="Ab").play("solo", "pass", "pass", "pass")  # seat 1, no trumps
    _play_out(g)
    assert g.results["winner"] == 0 and g.rewards[0].tolist() == [2, -2, 2, -2]
    assert sum(g.results["tricks_won"]) == 5, "solo always plays five tricks"


def test_pass_won_on_points_with_last_trick_bonus():
    g = Scenario(DEAL_E, dealer=0, muestra="Ab").play(*PASS4)
    _play_out(g)
    r = g.results
    assert r["contract"] == 0 and sum(r["tricks_won"]) == 5
    assert r["points"].sum() == 120 + 10 + r["cante_points"].sum(), "cards 120 + last trick 10 + cantes"
    assert r["winner"] == int(np.argmax(r["points"])) and g.rewards[0].tolist() in ([1, -1, 1, -1], [-1, 1, -1, 1])


# ------------------------------------------------------------------ cantes
def test_cantes_trump_first_one_per_trick():
    """After trick 1 only the trump cante (40) is sung though copas (20) is also held; copas follows."""
    g = Scenario(DEAL_F, dealer=3, muestra="Ab").play(*PASS4)
    g.play("Ao", "So", "3o", "Ro")
    s = g.state
    assert s.cantes[0, 0] == 3 and s.cante_pts[0].tolist() == [40, 0]
    assert s.points[0].tolist() == [11 + 2 + 10 + 4 + 40, 0]
    g.play("Ae", seat=0).play("Ce", "Re", "3c")
    assert s.cantes[0, 1] == 1 and s.cante_pts[0].tolist() == [60, 0], "copas (20) after the next won trick"


def test_no_cantes_under_cuatrola():
    g = Scenario(DEAL_F, dealer=3, muestra="Ab").play("pass", "cuatrola", "pass", "pass")
    g.play("Ao", "So", "3o")  # seat 3 sits out
    assert g.state.cantes[0, 0] == -1 and g.state.cante_pts[0].tolist() == [0, 0]


def test_sitting_out_partner_cannot_sing():
    """Only a seat playing this hand sings: the sitter's rey + caballo do not count."""
    g = Scenario(DEAL_F, dealer=3, muestra="Ab").play("solo", "pass", "pass", "pass")  # seat 2 sits out
    g.play("Ao", "So", "Ro")
    assert g.state.cantes[0, 0] == 3, "the declarer's own trump cante"
    g.play("Ae", seat=0).play("Ce", "3c")
    assert g.state.cantes[0, 1] == -1, "copas is held by the sitter: no cante"


def test_only_the_trick_winners_team_sings():
    g = Scenario(DEAL_F, dealer=3, muestra="Ab").play(*PASS4)
    g.play("Se", seat=0).play("Ce", "Re", "3c")  # seat 2 wins with the rey de espadas
    assert g.state.cantes[0, 0] == 3, "team 0 won: seat 0 sings the trump cante"
    g2 = Scenario(DEAL_F, dealer=3, muestra="Ab").play(*PASS4)
    g2.play("Se", seat=0).play("Ce", "3e", "Ab")  # seat 3 trumps and wins: team 1 holds no pair
    assert g2.state.cantes[0, 0] == -1


# ------------------------------------------------------------------ ties
@pytest.mark.parametrize("rules", ["online", "traditional"])
def test_tie_rules(rules):
    """Ties in pass/solo: online, the last trick's team; traditional, la mano's team.

    Ties are found by playing many random hands, drawn here, and the rule is checked on each.
    """
    env = VectorCuatrola(num_envs=4096, rules=rules, seed=7)
    rng = np.random.default_rng(7)
    ties = discriminating = 0
    for _ in range(600):
        env.step(pick_actions(env.action_mask, rng, pass_bias=0.9))
        r = env.last_results
        if not r:
            continue
        tie = (r["contract"] <= 1) & (r["points"][:, 0] == r["points"][:, 1])
        last_team = r["winners"][:, 4] % 2
        mano_team = ((r["dealer"] + 1) % 4) % 2
        expected = last_team if rules == "online" else mano_team
        assert (r["winner"][tie] == expected[tie]).all()
        ties += int(tie.sum())
        discriminating += int((tie & (last_team != mano_team)).sum())
    assert ties > 20 and discriminating > 5, (ties, discriminating)


# ------------------------------------------------------------------ match
def test_exact_target_limits_bids_traditional():
    """Traditional: no bid that would carry the team past the target (on 8 of 11: solo only)."""
    g = Scenario(DEAL_A, dealer=3, muestra="Ab", rules="traditional", mode="match", score=[8, 0])
    assert g.legal() == {"pass", "solo"}, "seat 0 (team 0) on 8"
    g.play("pass")
    assert g.legal() == {"pass", "solo", "cuatrola", "quintola"}, "team 1 on 0"
    g = Scenario(DEAL_A, dealer=3, muestra="Ab", rules="traditional", mode="match", score=[10, 6])
    assert g.legal() == {"pass"}
    g.play("pass")
    assert g.legal() == {"pass", "solo", "cuatrola", "quintola"}, "6 + 5 = 11 reaches, does not pass"
    g = Scenario(DEAL_A, dealer=3, muestra="Ab", rules="online", mode="match", score=[10, 6])
    assert g.legal() == {"pass", "solo", "cuatrola", "quintola"}, "online: no limit"


def test_dealer_rotates_and_score_accumulates():
    g = Scenario(DEAL_E, dealer=0, muestra="Ab", mode="match", score=[5, 0])
    g.play("pass", "pass", "pass", "cuatrola")
    _play_out_hand(g)
    s = g.state
    assert not g.done and g.rewards[0].tolist() == [0, 0, 0, 0]
    assert s.score[0].tolist() == [9, 0]
    assert s.dealer[0] == 1 and g.to_act == 2, "next dealer is seat 1; its mano (seat 2) bids first"
    assert s.phase[0] == 0 and bin(int(s.hands[0].sum())).count("1") == 20


def test_match_ends_at_target_with_plus_minus_one():
    g = Scenario(DEAL_E, dealer=0, muestra="Ab", mode="match", score=[7, 3])
    g.play("pass", "pass", "pass", "cuatrola")
    _play_out_hand(g)
    assert g.done and g.rewards[0].tolist() == [1, -1, 1, -1]
    assert g.results["match_over"] and g.results["score"].tolist() == [11, 3]
    assert g.state.score[0].tolist() == [0, 0], "a new match starts"


def _play_out_hand(g: Scenario):
    start_dealer = int(g.state.dealer[0])
    while int(g.state.dealer[0]) == start_dealer and not g.done:
        g.play(min(g.legal(), key=cid))
