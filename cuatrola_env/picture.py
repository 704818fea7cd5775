"""A picture of the table as an RGB image array: the environments' ``render_mode="rgb_array"``.

>>> from cuatrola_env.game import Game
>>> from cuatrola_env.picture import render_rgb
>>> g = Game("online", seed=0)
>>> render_rgb(g.state, g.rules, seat=0).shape            # (height, width, RGB), uint8
(480, 720, 3)

The seat at the bottom is ``seat``; the others follow round the table in playing order (to its
right, facing, to its left). With ``seat`` given, only that seat's hand is face up and the others
are card backs, one per card held (the muestra, which every seat sees, face up first in the
dealer's hand): the picture shows what that seat may see, so a video of an agent's games shows
no more than the agent knew. With ``seat=None`` (a spectator) every hand is
face up. Shown besides: the muestra and trump suit, the score and target, every seat's bid and
tricks, the contract and who sits out, the trick in play (each card in front of its player), the
cantes, the card points, and the seat to act, or the result once the hand is over.

Cards are drawn as the Spanish deck names them (as, tres, rey, caballo, sota; oros, copas,
espadas, bastos), each suit in a colour of its own. Needs Pillow (a dependency of the package).
"""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from .bitboards import cards_of
from .engine import BIDDING, DONE, State, trick_in_play
from .rules import CONTRACT_NAMES, RANK_NAMES, SUIT_NAMES, Rules

WIDTH, HEIGHT = 720, 480  #: the picture's size in pixels
CARD_W, CARD_H = 46, 68  #: a card's size in pixels
FELT, INK, PAPER, BACK = (22, 94, 58), (245, 245, 235), (252, 250, 242), (128, 30, 40)
SUIT_COLOURS = ((196, 146, 0), (190, 30, 45), (35, 70, 165), (40, 120, 45))  #: oros, copas, espadas, bastos
RANK_MARKS = ("S", "C", "R", "3", "A")  #: sota, caballo, rey, tres, as: the letter in a card's corner


def _font(size: int) -> ImageFont.ImageFont:
    try:
        return ImageFont.load_default(size=size)
    except (TypeError, OSError):  # a Pillow without FreeType: its one bitmap size
        return ImageFont.load_default()


SMALL, LARGE = _font(12), _font(16)


def _suit_mark(d: ImageDraw.ImageDraw, x: int, y: int, suit: int) -> None:
    """The suit's sign, centred at (x, y): a coin, a cup, a sword, a club."""
    c = SUIT_COLOURS[suit]
    if suit == 0:
        d.ellipse((x - 9, y - 9, x + 9, y + 9), outline=c, width=3)
    elif suit == 1:
        d.pieslice((x - 9, y - 12, x + 9, y + 4), 0, 180, fill=c)
        d.rectangle((x - 2, y - 4, x + 2, y + 8), fill=c)
        d.rectangle((x - 6, y + 7, x + 6, y + 10), fill=c)
    elif suit == 2:
        d.rectangle((x - 1, y - 13, x + 1, y + 7), fill=c)
        d.rectangle((x - 7, y + 4, x + 7, y + 6), fill=c)
        d.rectangle((x - 2, y + 7, x + 2, y + 12), fill=c)
    else:
        d.line((x - 5, y + 12, x + 5, y - 12), fill=c, width=6)


def _card(d: ImageDraw.ImageDraw, x: int, y: int, card: int | None) -> None:
    """A card with its top-left corner at (x, y): its face, or its back when ``card`` is None."""
    box = (x, y, x + CARD_W, y + CARD_H)
    if card is None:
        d.rounded_rectangle(box, 5, fill=BACK, outline=INK, width=2)
        d.rounded_rectangle((x + 6, y + 6, x + CARD_W - 6, y + CARD_H - 6), 3, outline=(220, 170, 80), width=1)
        return
    suit, rank = divmod(card, 5)
    d.rounded_rectangle(box, 5, fill=PAPER, outline=(60, 60, 60), width=1)
    d.text((x + 5, y + 3), RANK_MARKS[rank], fill=SUIT_COLOURS[suit], font=LARGE)
    _suit_mark(d, x + CARD_W // 2, y + CARD_H // 2 + 2, suit)
    d.text((x + CARD_W // 2, y + CARD_H - 4), RANK_NAMES[rank], fill=(40, 40, 40), font=SMALL, anchor="ms")


def _row(d: ImageDraw.ImageDraw, cx: int, y: int, cards: list, step: int = CARD_W + 4) -> None:
    """Cards (ids, or None for backs) in a row centred on ``cx``."""
    x = cx - (step * (len(cards) - 1) + CARD_W) // 2
    for k, c in enumerate(cards):
        _card(d, x + k * step, y, c)


#: where each seat sits, counted from the bottom seat in playing order: (hand centre x, hand top y,
#: label anchor x, label y, trick card x, trick card y)
PLACES = (
    (WIDTH // 2, HEIGHT - CARD_H - 34, WIDTH // 2, HEIGHT - 20, WIDTH // 2 - CARD_W // 2, 252),
    (WIDTH - 130, 190, WIDTH - 130, 170, WIDTH // 2 + 40, 200),
    (WIDTH // 2, 46, WIDTH // 2, 30, WIDTH // 2 - CARD_W // 2, 148),
    (130, 190, 130, 170, WIDTH // 2 - 40 - CARD_W, 200),
)


def render_rgb(s: State, rules: Rules, seat: int | None = None, i: int = 0, result: dict | None = None) -> np.ndarray:
    """(HEIGHT, WIDTH, 3) uint8: game ``i`` of a batched state as ``seat`` sees it (``None``: every
    hand face up). ``result`` (a hand's result in the record format) is written once the hand is over."""
    if seat is not None and seat not in range(4):
        raise ValueError(f"seat must be 0..3 or None, got {seat!r}")
    image = Image.new("RGB", (WIDTH, HEIGHT), FELT)
    d = ImageDraw.Draw(image)
    bottom = 0 if seat is None else seat
    trick = dict(trick_in_play(s, i)) if s.phase[i] != BIDDING else {}  #: seat -> the card it played to the trick
    for k in range(4):
        p = (bottom + k) % 4
        _seat(d, s, i, p, PLACES[k], seat, side=k % 2 == 1, played=trick.get(p))
    _header(d, s, rules, i)
    _footer(d, s, i, result)
    return np.asarray(image, dtype=np.uint8)


def _seat(d: ImageDraw.ImageDraw, s: State, i: int, p: int, place: tuple, viewer: int | None, side: bool,
          played: int | None) -> None:
    """Seat ``p``'s hand, label and card in the trick (``played``) at ``place``; ``side``: to the left
    or right of the bottom seat."""
    hx, hy, lx, ly, tx, ty = place
    held = cards_of(int(s.hands[i, p]))
    muestra = int(s.muestra[i])  # the muestra, face up, is seen in the dealer's hand by every seat
    backs = [None] * (len(held) - (muestra in held))
    shown = held if viewer is None or viewer == p else [muestra] * (muestra in held) + backs
    step = 22 if side else CARD_W + 4  # the side seats' cards overlap, to fit
    _row(d, hx, hy, shown, step)
    bid = int(s.bids[i, p])
    label = f"player_{p} (team {p % 2})  bid: {'-' if bid < 0 else CONTRACT_NAMES[bid]}  tricks: {int(s.tricks_won[i, p])}"
    if int(s.contract[i]) >= 0 and p == int(s.sitter[i]):
        label += "  sits out"
    if p == int(s.current[i]) and s.phase[i] != DONE:
        label = "> " + label
    d.text((lx, ly), label, fill=INK, font=SMALL, anchor="mm")
    if played is not None:
        _card(d, tx, ty, played)


def _header(d: ImageDraw.ImageDraw, s: State, rules: Rules, i: int) -> None:
    muestra = int(s.muestra[i])
    d.text((10, 8), f"Cuatrola ({rules.name})   score {int(s.score[i, 0])} - {int(s.score[i, 1])}, to {rules.target}",
           fill=INK, font=LARGE)
    d.text((WIDTH - 10, 8), f"trumps: {SUIT_NAMES[muestra // 5]}   dealer: player_{int(s.dealer[i])}", fill=INK,
           font=SMALL, anchor="ra")
    d.text((10, HEIGHT - 118), "muestra", fill=INK, font=SMALL)
    played = (int(s.played[i]) >> muestra) & 1
    _card(d, 10, HEIGHT - 102, muestra)
    if played:
        d.text((10 + CARD_W + 6, HEIGHT - 70), "(played)", fill=INK, font=SMALL)


def _footer(d: ImageDraw.ImageDraw, s: State, i: int, result: dict | None) -> None:
    contract = int(s.contract[i])
    if contract >= 0:
        dec = int(s.declarer[i])
        text = f"contract: {CONTRACT_NAMES[contract]}" + ("" if dec < 0 else f" by player_{dec}")
        d.text((WIDTH - 10, HEIGHT - 118), text, fill=INK, font=SMALL, anchor="ra")
    sung = [f"{SUIT_NAMES[k]} (team {int(t)})" for k, t in enumerate(s.sung_by[i]) if t >= 0]
    d.text((WIDTH - 10, HEIGHT - 100), f"card points: {int(s.points[i, 0])} - {int(s.points[i, 1])}", fill=INK,
           font=SMALL, anchor="ra")
    if sung:
        d.text((WIDTH - 10, HEIGHT - 82), "cantes: " + ", ".join(sung), fill=INK, font=SMALL, anchor="ra")
    if s.phase[i] == DONE and result is not None:
        d.text((WIDTH // 2, 330), f"team {result['winner_team']} wins {result['game_points']} game point"
               + ("s" if result["game_points"] != 1 else ""), fill=(255, 230, 120), font=LARGE, anchor="mm")


__all__ = ["render_rgb", "WIDTH", "HEIGHT"]
