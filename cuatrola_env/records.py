"""Game records: a plain JSON format for one hand or one match, its loader, replayer and printer.

A record (``docs/records.md`` has the full description)::

    {"format": "cuatrola-record", "version": 1,
     "rules": {"name": "online", "overtake_when_trumped": true, ...},
     "mode": "hand",                                  # or "match"
     "hands": [{"dealer": 3, "muestra": 19,
                "hands": [[5 card ids], [..], [..], [..]],   # seat order, as dealt
                "score_before": [0, 0],
                "actions": [20, 20, 21, 20, 4, ...],          # every decision, in order
                "seats": [0, 1, 2, 3, 0, ...],                # the seat that took each one
                "result": {"contract": "solo", "declarer": 2, "winner_team": 0,
                           "game_points": 2, "points": [71, 59], "cante_points": [0, 0],
                           "tricks_won": [..4..], "trick_winners": [..], "cantes": [..],
                           "score_after": [0, 0]}}],
     "match": {"final_score": [11, 7], "winner_team": 0}}      # match records only

:func:`replay` plays a record through the engine and checks every action was legal and
every stored result is what the engine computes.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from .game import RECORD_FORMAT, RECORD_VERSION, Game
from .rules import CONTRACT_NAMES, SUIT_NAMES, action_name, card_name, get_rules


class RecordError(ValueError):
    """A record that is malformed or does not replay to its stored results."""


def save_record(record: dict, path: str | os.PathLike) -> Path:
    """Write a record as JSON, atomically (a temporary file renamed into place)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(record, f, indent=1)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def load_record(path: str | os.PathLike) -> dict:
    """Read a record file and check its shape (not yet its plays: see :func:`replay`)."""
    try:
        rec = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise RecordError(f"no record file at {path}") from None
    except json.JSONDecodeError as e:
        raise RecordError(f"{path} is not JSON: {e}") from None
    check_record(rec)
    return rec


def check_record(rec: dict) -> None:
    """Raise :class:`RecordError` naming the first malformed field."""
    if not isinstance(rec, dict) or rec.get("format") != RECORD_FORMAT:
        raise RecordError(f"not a Cuatrola record: 'format' must be {RECORD_FORMAT!r}")
    if rec.get("version") != RECORD_VERSION:
        raise RecordError(f"unsupported record version {rec.get('version')!r} (this code reads {RECORD_VERSION})")
    try:
        get_rules(rec.get("rules"))
    except (TypeError, ValueError) as e:
        raise RecordError(f"bad 'rules': {e}") from None
    if rec.get("mode") not in ("hand", "match"):
        raise RecordError(f"'mode' must be 'hand' or 'match', got {rec.get('mode')!r}")
    hands = rec.get("hands")
    if not isinstance(hands, list) or not hands:
        raise RecordError("'hands' must be a non-empty list")
    for i, h in enumerate(hands):
        for key in ("dealer", "muestra", "hands", "actions"):
            if key not in h:
                raise RecordError(f"hands[{i}] lacks {key!r}")
        if not isinstance(h["actions"], list) or not all(isinstance(a, int) for a in h["actions"]):
            raise RecordError(f"hands[{i}].actions must be a list of integer action ids")


def replay(rec: dict) -> list[dict]:
    """Replay a record through the engine; returns the engine's result of each hand.

    Raises :class:`RecordError` naming the hand and decision where an action is illegal,
    where a hand ends earlier or later than recorded, or where a stored result differs.
    """
    check_record(rec)
    results = []
    for i, h in enumerate(rec["hands"]):
        g = Game(rules=rec["rules"], mode=rec["mode"])
        try:
            g.reset(hands=h["hands"], dealer=h["dealer"], muestra=h["muestra"], score=h.get("score_before"))
        except ValueError as e:
            raise RecordError(f"hands[{i}]: bad deal: {e}") from None
        seats = h.get("seats")
        for j, a in enumerate(h["actions"]):
            if g._hands[-1]["result"] is not None:
                raise RecordError(f"hands[{i}]: the hand ended before action {j}")
            if seats is not None and seats[j] != g.current_player:
                raise RecordError(f"hands[{i}], decision {j}: recorded seat {seats[j]}, but seat {g.current_player} is to act")
            try:
                g.step(a)
            except ValueError as e:
                raise RecordError(f"hands[{i}], decision {j}: {e}") from None
        got = g._hands[0]["result"]
        if got is None:
            raise RecordError(f"hands[{i}]: the actions stop before the hand ends")
        stored = h.get("result")
        if stored is not None:
            for key, value in stored.items():
                if got.get(key) != value:
                    raise RecordError(f"hands[{i}]: result {key!r} is {value!r} in the record, {got.get(key)!r} on replay")
        if i + 1 < len(rec["hands"]) and rec["mode"] == "match":
            nxt = rec["hands"][i + 1]
            if nxt.get("score_before") != got["score_after"]:
                raise RecordError(f"hands[{i + 1}]: score_before {nxt.get('score_before')} != previous score_after")
            if nxt["dealer"] != (h["dealer"] + 1) % 4:
                raise RecordError(f"hands[{i + 1}]: dealer should be {(h['dealer'] + 1) % 4} (the deal passes on)")
        results.append(got)
    return results


def format_record(rec: dict) -> str:
    """A readable, trick-by-trick account of a record, with Spanish card names."""
    rules = get_rules(rec["rules"])
    out = [f"Cuatrola record: rules {rules.name!r}, {rec['mode']} mode, {len(rec['hands'])} hand(s)"]
    for i, h in enumerate(rec["hands"]):
        trump = SUIT_NAMES[h["muestra"] // 5]
        out.append("")
        out.append(
            f"Hand {i + 1}: dealer player_{h['dealer']}, la mano player_{(h['dealer'] + 1) % 4}, "
            f"muestra {card_name(h['muestra'])} (trump {trump}), score {h.get('score_before', [0, 0])}"
        )
        for p, cards in enumerate(h["hands"]):
            out.append(f"  player_{p}: " + ", ".join(card_name(c) for c in sorted(cards)))
        acts, seats = h["actions"], h.get("seats") or [None] * len(h["actions"])
        who = [f"player_{p}" if p is not None else "?" for p in seats]
        out.append("  bids: " + ", ".join(f"{w} {action_name(a)}" for w, a in zip(who[:4], acts[:4], strict=False)))
        res = h.get("result") or {}
        winners = res.get("trick_winners", [])
        cantes = res.get("cantes", [])
        size = 4 if res.get("declarer") is None else 3  # display only: a declarer's partner sits out
        for k, t in enumerate(range(4, len(acts), size)):
            trick = ", ".join(f"{w} {card_name(c)}" for w, c in zip(who[t : t + size], acts[t : t + size], strict=False))
            line = f"  trick {k + 1}: {trick}"
            if k < len(winners):
                line += f"  -> player_{winners[k]}"
            if k < len(cantes) and cantes[k] is not None:
                line += f"  (cante: {SUIT_NAMES[cantes[k]]})"
            out.append(line)
        if res:
            dec = "" if res["declarer"] is None else f" by player_{res['declarer']}"
            out.append(
                f"  result: {res['contract']}{dec}; team {res['winner_team']} wins {res['game_points']} "
                f"game point(s); points {res['points']}, tricks {res['tricks_won']}"
            )
    if "match" in rec:
        out.append("")
        out.append(f"Match: team {rec['match']['winner_team']} wins, final score {rec['match']['final_score']}")
    return "\n".join(out)


__all__ = ["RecordError", "save_record", "load_record", "check_record", "replay", "format_record", "CONTRACT_NAMES"]
