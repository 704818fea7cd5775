"""A plain, slow, one-game-at-a-time implementation of docs/rules.md: the test oracle.

Written separately from the engine and on purpose in the most literal style (lists,
sets, loops, no bit tricks), so that a mistake in the vectorised engine shows up as a
disagreement. It shares nothing with ``cuatrola_env`` but the rule option names.
"""

from __future__ import annotations

POINTS = {0: 2, 1: 3, 2: 4, 3: 10, 4: 11}  # sota, caballo, rey, tres, as
CONTRACT_VALUE = {0: 1, 1: 2, 2: 4, 3: 5}  # pass, solo, cuatrola, quintola
SOTA, CABALLO, REY, TRES, AS = 0, 1, 2, 3, 4


def suit(card: int) -> int:
    return card // 5


def rank(card: int) -> int:
    return card % 5


class RefHand:
    """One hand of Cuatrola.

    ``rules`` is any object with the attributes overtake_when_trumped, must_trump, tie_rule,
    exact_target and target (e.g. ``cuatrola_env.rules.Rules``).
    """

    def __init__(self, rules, hands, dealer, muestra, score=(0, 0)):
        assert sorted(c for h in hands for c in h) == list(range(20))
        assert muestra in hands[dealer]
        self.rules = rules
        self.hands = [set(h) for h in hands]
        self.dealer = dealer
        self.mano = (dealer + 1) % 4
        self.muestra = muestra
        self.trump = suit(muestra)
        self.score = list(score)
        self.bids = [None, None, None, None]
        self.to_act = self.mano
        self.phase = "bidding"
        self.contract = None
        self.declarer = None
        self.sitter = None
        self.trick = []  # (seat, card) in play order
        self.tricks = []  # finished tricks: (list of (seat, card), winner)
        self.tricks_won = [0, 0, 0, 0]
        self.points = [0, 0]
        self.cante_points = [0, 0]
        self.sung = {}  # suit -> team
        self.cantes = []  # suit sung after each trick, or None
        self.over = False
        self.winner_team = None
        self.value = None

    # ------------------------------------------------------------------ legal actions
    def legal_actions(self):
        assert not self.over
        if self.phase == "bidding":
            return self._legal_bids()
        return self._legal_cards()

    def _legal_bids(self):
        highest = max([b for b in self.bids if b is not None], default=0)
        team = self.to_act % 2
        legal = [20]  # pass is always allowed
        for bid in (1, 2, 3):
            if bid <= highest:
                continue
            if self.rules.exact_target and self.score[team] + CONTRACT_VALUE[bid] > self.rules.target:
                continue
            legal.append(20 + bid)
        return legal

    def _legal_cards(self):
        hand = sorted(self.hands[self.to_act])
        if not self.trick:
            return hand
        led = suit(self.trick[0][1])
        trump = self.trump
        in_trick = [c for _, c in self.trick]
        trump_in_trick = any(suit(c) == trump for c in in_trick)
        same = [c for c in hand if suit(c) == led]
        if same:
            best_led = max(rank(c) for c in in_trick if suit(c) == led)
            higher = [c for c in same if rank(c) > best_led]
            if led != trump and trump_in_trick and not self.rules.overtake_when_trumped:
                return same
            return higher if higher else same
        if trump_in_trick:
            best_trump = max(rank(c) for c in in_trick if suit(c) == trump)
            higher_trumps = [c for c in hand if suit(c) == trump and rank(c) > best_trump]
            return higher_trumps if higher_trumps else hand
        if self.rules.must_trump:
            trumps = [c for c in hand if suit(c) == trump]
            return trumps if trumps else hand
        return hand

    # ------------------------------------------------------------------ moves
    def play(self, action):
        assert action in self.legal_actions(), (action, self.legal_actions())
        if self.phase == "bidding":
            self._bid(action - 20)
        else:
            self._card(action)

    def _bid(self, bid):
        seat = self.to_act
        highest = max([b for b in self.bids if b is not None], default=0)
        self.bids[seat] = bid
        if bid > highest:
            self.declarer = seat
        self.to_act = (seat + 1) % 4
        if all(b is not None for b in self.bids):
            self.contract = max(self.bids)
            if self.contract > 0:
                self.sitter = (self.declarer + 2) % 4
            else:
                self.declarer = None
            self.phase = "play"
            self.to_act = self.mano if self.mano != self.sitter else (self.mano + 1) % 4

    def playing_seats(self):
        return [p for p in range(4) if p != self.sitter]

    def _next_seat(self, seat):
        nxt = (seat + 1) % 4
        if nxt == self.sitter:
            nxt = (nxt + 1) % 4
        return nxt

    def _card(self, card):
        seat = self.to_act
        self.hands[seat].remove(card)
        self.trick.append((seat, card))
        if len(self.trick) < len(self.playing_seats()):
            self.to_act = self._next_seat(seat)
            return
        winner = self.trick_winner(self.trick)
        team = winner % 2
        self.tricks_won[winner] += 1
        self.points[team] += sum(POINTS[rank(c)] for _, c in self.trick)
        if len(self.tricks) == 4:
            self.points[team] += 10  # diez de últimas
        self.tricks.append((self.trick, winner))
        self.trick = []
        self.cantes.append(self._cante(team))
        self.to_act = winner
        self._check_end()

    def trick_winner(self, trick):
        trumps = [(rank(c), p) for p, c in trick if suit(c) == self.trump]
        if trumps:
            return max(trumps)[1]
        led = suit(trick[0][1])
        return max((rank(c), p) for p, c in trick if suit(c) == led)[1]

    def _cante(self, team):
        if self.contract not in (0, 1):
            return None
        order = [self.trump] + [s for s in range(4) if s != self.trump]
        for s in order:
            if s in self.sung:
                continue
            for seat in (team, team + 2):
                if seat == self.sitter:
                    continue
                if 5 * s + REY in self.hands[seat] and 5 * s + CABALLO in self.hands[seat]:
                    value = 40 if s == self.trump else 20
                    self.points[team] += value
                    self.cante_points[team] += value
                    self.sung[s] = team
                    return s
        return None

    def _check_end(self):
        n = len(self.tricks)
        if self.contract in (2, 3):
            dec_tricks = self.tricks_won[self.declarer]
            opp_tricks = n - dec_tricks
            need = 4 if self.contract == 2 else 5
            made = dec_tricks >= need
            failed = opp_tricks > 5 - need
            if made or failed:
                self._finish(self.declarer % 2 if made else 1 - self.declarer % 2)
                return
        if n == 5:
            if self.contract in (2, 3):  # pragma: no cover - settled above
                raise AssertionError
            mine = self.points  # team points; under solo the sitter's team holds only the declarer's
            if mine[0] != mine[1]:
                winner = 0 if mine[0] > mine[1] else 1
            elif self.rules.tie_rule == "last_trick":
                winner = self.tricks[-1][1] % 2
            else:
                winner = self.mano % 2
            self._finish(winner)

    def _finish(self, winner_team):
        self.over = True
        self.winner_team = winner_team
        self.value = CONTRACT_VALUE[self.contract]

    def rewards(self):
        """Hand-mode rewards per seat."""
        return [self.value if p % 2 == self.winner_team else -self.value for p in range(4)]
