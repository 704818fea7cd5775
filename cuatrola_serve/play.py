"""Play Cuatrola in a terminal: you at one seat, three bots at the others.

    python -m cuatrola_serve.play                                  # expert bots, agents/models/cuatrola.onnx
    python -m cuatrola_serve.play --seat 2 --bots strong,medium,easy --target 5
    python -m cuatrola_serve.play --bots heuristic,heuristic,heuristic --model none

At your turn the legal moves are listed with numbers; type the number (or ``q`` to quit).
Bots' levels: ``master`` (search), ``expert``, ``strong``, ``medium``, ``easy`` (the ONNX model) or ``heuristic``,
``random`` (no model needed). Your partner sits opposite you (seat + 2).
"""

from __future__ import annotations

import sys
from pathlib import Path

from agents.models import ONNX_MODEL
from cuatrola_env.cli import SEED, ArgumentParser, int_in, run_main
from cuatrola_env.rules import CONTRACT_NAMES, action_name, card_name, get_rules

from .bot import Bot
from .table import Table


def describe(view: dict) -> str:
    """The human's view as a few lines of text (only what the seat may see)."""
    me = view["seat"]
    name = {me: "you", (me + 2) % 4: "partner"}

    def who(s):
        return f"seat {s} ({name[s]})" if s in name else f"seat {s}"

    lines = [
        f"Score: your team {view['score'][me % 2]} - them {view['score'][1 - me % 2]} (to {view['target']})",
        f"Dealer {who(view['dealer'])}; muestra {view['muestra_name']}"
        + (" (still in the dealer's hand)" if view["muestra_held"] else "") + f"; trump {view['trump']}",
    ]
    bids = [f"{who(s)} {b}" for s, b in enumerate(view["bids"]) if b is not None]
    if bids:
        lines.append("Bids: " + ", ".join(bids))
    if view["contract"] is not None:
        dec = view["declarer"]
        lines.append(f"Contract: {view['contract']}" + ("" if dec is None else f" by {who(dec)}"))
    if view["last_trick"]:
        lines.append("Last trick: " + ", ".join(f"{who(s)} {card_name(c)}" for s, c in view["last_trick"]))
    if view["trick"]:
        lines.append("On the table: " + ", ".join(f"{who(s)} {card_name(c)}" for s, c in view["trick"]))
    lines.append(f"Points this hand: your team {view['points'][me % 2]} - them {view['points'][1 - me % 2]}")
    lines.append("Your hand: " + ", ".join(card_name(c) for c in view["hand"]))
    return "\n".join(lines)


def describe_events(view: dict) -> list[str]:
    me = view["seat"]
    out = []
    for e in view["events"]:
        if "hand_over" in e:
            r = e["hand_over"]
            team = "your team" if r["winner_team"] == me % 2 else "the other team"
            out.append(f"== Hand over: {r['contract']}, {team} wins {r['game_points']} game point(s); "
                       f"card points {r['points'][me % 2]} - {r['points'][1 - me % 2]}; score {r['score_after']}")
        elif e["seat"] != me:
            out.append(f"   seat {e['seat']} plays {e['name']}")
    return out


def main(argv=None, input_fn=input, print_fn=print) -> int:
    p = ArgumentParser(prog="cuatrola-play",
                                description=__doc__.split("\n\n")[0] + " (also python -m cuatrola_serve.play)")
    p.add_argument("--seat", type=int_in(0, 3), default=0, help="your seat 0..3 (default 0)")
    p.add_argument("--bots", default="expert,expert,expert", help="levels of the three other seats, in seat order")
    p.add_argument("--model", default=str(ONNX_MODEL),
                   help="ONNX model of the bots (default: the shipped one; 'none': baselines)")
    p.add_argument("--rules", default="online", help="rules preset: online or traditional")
    p.add_argument("--target", type=int_in(1, 1000), default=None, help="match target (default: the preset's)")
    p.add_argument("--seed", type=SEED, default=None, help="seed of the deals and bots")
    a = p.parse_args(argv)
    levels = [x.strip() for x in a.bots.split(",")]
    if len(levels) != 3:
        p.error(f"--bots needs three levels, got {len(levels)}")
    bot = None
    if a.model != "none" and any(lv not in ("heuristic", "random") for lv in levels):
        if not Path(a.model).is_file():
            p.error(f"no model at {a.model}; pass --model PATH or use --bots heuristic,heuristic,heuristic")
        bot = Bot.load(a.model)
    try:
        rules = get_rules(a.rules, **({} if a.target is None else {"target": a.target}))
    except ValueError as e:
        p.error(f"--rules/--target: {e}")
    others = [s for s in range(4) if s != a.seat]
    try:
        table = Table.with_levels(levels, a.seat, rules, bot, a.seed)
    except ValueError as e:
        p.error(str(e))
    view = table.view()
    print_fn(f"You are seat {a.seat}; your partner is seat {(a.seat + 2) % 4}. Bots: "
             + ", ".join(f"seat {s} {lv}" for s, lv in zip(others, levels, strict=True)))
    while True:
        for line in describe_events(view):
            print_fn(line)
        if view["match_over"]:
            won = view["last_result"]["winner_team"] == a.seat % 2
            mine, theirs = view["score"][a.seat % 2], view["score"][1 - a.seat % 2]
            print_fn(f"Match over: {'you win' if won else 'you lose'} {mine}-{theirs}")
            return 0
        print_fn("")
        print_fn(describe(view))
        legal = view["legal"]
        if len(legal) == 1:  # nothing to choose: the one legal card is played for you
            print_fn(f"Your only legal move: {action_name(legal[0])}")
            view = table.play(legal[0])
            continue
        print_fn("Your move: " + "  ".join(f"[{i}] {action_name(x)}" for i, x in enumerate(legal)))
        while True:
            try:
                answer = input_fn("> ").strip().lower()
            except EOFError:
                return 0
            if answer in ("q", "quit", "exit"):
                return 0
            if answer.isdigit() and int(answer) < len(legal):
                choice = legal[int(answer)]
                break
            names = {action_name(x): x for x in legal} | {CONTRACT_NAMES[x - 20]: x for x in legal if x >= 20}
            if answer in names:
                choice = names[answer]
                break
            print_fn(f"type a number 0..{len(legal) - 1} (or q to quit)")
        view = table.play(choice)


if __name__ == "__main__":
    sys.exit(run_main(main))
