"""Text rendering of a game: a small table with Spanish card names and the trick in play.

The rendering is a spectator's view (all hands shown), for debugging and logs; it is
never an observation.
"""

from __future__ import annotations

from .bitboards import cards_of
from .engine import BIDDING, DONE, State, trick_in_play
from .rules import CONTRACT_NAMES, SUIT_NAMES, Rules, card_name


def render_text(s: State, rules: Rules, i: int = 0) -> str:
    """Render game ``i`` of a batched state as text."""
    dealer, muestra = int(s.dealer[i]), int(s.muestra[i])
    mano = (dealer + 1) % 4
    held = not (int(s.played[i]) >> muestra) & 1
    lines = [
        f"Cuatrola ({rules.name}) | dealer player_{dealer} | la mano player_{mano} | trump {SUIT_NAMES[muestra // 5]} "
        f"| muestra {card_name(muestra)}" + (f" (held by player_{dealer})" if held else " (played)"),
        f"Score: team 0 {int(s.score[i, 0])} - team 1 {int(s.score[i, 1])} (target {rules.target})",
    ]
    bids = [int(b) for b in s.bids[i]]
    lines.append("Bids: " + ", ".join(f"player_{p} {'-' if b < 0 else CONTRACT_NAMES[b]}" for p, b in enumerate(bids)))
    contract = int(s.contract[i])
    if contract >= 0:
        dec, sitter = int(s.declarer[i]), int(s.sitter[i])
        who = "" if dec < 0 else f" by player_{dec}, player_{sitter} sits out"
        lines.append(f"Contract: {CONTRACT_NAMES[contract]}{who}")
    lines.append("")
    hands = [", ".join(card_name(c) for c in cards_of(s.hands[i, p])) for p in range(4)]
    width = max(20, *(len(h) for h in hands)) + 2
    lines.append(f"{'seat':<11}{'hand':<{width}}{'tricks':>6}")
    for p in range(4):
        mark = " *" if p == int(s.current[i]) and s.phase[i] != DONE else ""
        lines.append(f"{'player_' + str(p) + mark:<11}{hands[p]:<{width}}{int(s.tricks_won[i, p]):>6}")
    lines.append("")
    if s.phase[i] != BIDDING and s.trick_len[i] > 0:  # in play order, from the trick's leader
        plays = trick_in_play(s, i)
        lines.append(f"Trick {min(int(s.trick_num[i]), 4) + 1}: " + ", ".join(f"player_{p} {card_name(c)}" for p, c in plays))
    sung = [f"{SUIT_NAMES[k]} (team {int(tm)})" for k, tm in enumerate(s.sung_by[i]) if tm >= 0]
    lines.append(
        f"Points: team 0 {int(s.points[i, 0])}, team 1 {int(s.points[i, 1])}"
        + (f" | cantes: {', '.join(sung)}" if sung else "")
    )
    if s.phase[i] == DONE:
        lines.append("The episode is over.")
    else:
        lines.append(f"To act: player_{int(s.current[i])}")
    return "\n".join(lines)


__all__ = ["render_text"]
