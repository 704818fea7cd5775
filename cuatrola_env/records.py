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
from pathlib import Path

from .cli import brief
from .files import atomic_open, loads_bounded
from .game import RECORD_FORMAT, RECORD_VERSION, Game
from .rules import CONTRACT_NAMES, MAX_DECISIONS_PER_HAND, NUM_ACTIONS, NUM_CARDS, SUIT_NAMES, action_name, card_name, get_rules

#: the largest record file read by default (a full match to 21 is far smaller)
MAX_RECORD_BYTES = 4 * 1024 * 1024

TOP_KEYS = {"format", "version", "rules", "mode", "hands", "match"}
HAND_KEYS = {"dealer", "muestra", "hands", "score_before", "actions", "seats", "result"}
MAX_GAME_POINTS = 100  #: bound of a hand's game points in a record (a quintola is worth far fewer)
MAX_HAND_POINTS = 1_000  #: bound of a team's card and cante points in a hand (120 cards and 4 cantes are far fewer)
RESULT_KEYS = {"contract", "declarer", "winner_team", "game_points", "points", "cante_points", "tricks_won",
               "trick_winners", "cantes", "score_after"}


class RecordError(ValueError):
    """A record that is malformed or does not replay to its stored results."""


def save_record(record: dict, path: str | os.PathLike) -> Path:
    """Write a record as JSON, atomically (a temporary file renamed into place)."""
    with atomic_open(path) as f:
        json.dump(record, f, indent=1)
    return Path(path)


def load_record(path: str | os.PathLike, max_bytes: int = MAX_RECORD_BYTES) -> dict:
    """Read a record file of at most ``max_bytes`` and check its shape (not yet its plays: see
    :func:`replay`); :class:`RecordError` says what is wrong, whatever the file holds."""
    path = Path(path)
    if not _is_int(max_bytes) or max_bytes < 1:
        raise RecordError(f"max_bytes must be a positive number of bytes, got {brief(max_bytes, 40)}")
    try:
        with open(path, "rb") as f:
            data = f.read(max_bytes + 1)
    except FileNotFoundError:
        raise RecordError(f"no record file at {path}") from None
    except IsADirectoryError:
        raise RecordError(f"{path} is a directory, not a record file") from None
    except OSError as e:
        raise RecordError(f"{path} cannot be read: {e.strerror or e}") from None
    if len(data) > max_bytes:
        raise RecordError(f"{path} is larger than {max_bytes} bytes (the limit; --max-bytes raises it)")
    try:
        rec = loads_bounded(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise RecordError(f"{path} is not UTF-8 text: byte {e.start} is {data[e.start:e.start + 1]!r}") from None
    except json.JSONDecodeError as e:
        raise RecordError(f"{path} is not JSON: {e}") from None
    except ValueError as e:  # a number out of range (NaN, 1e400, a 5,000-digit integer)
        raise RecordError(f"{path} is not a valid record: {e}") from None
    except RecursionError:
        raise RecordError(f"{path} nests JSON too deeply to be a record") from None
    check_record(rec)
    return rec


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _ints(value, field: str, lo: int, hi: int, length: int | None = None, max_length: int | None = None) -> None:
    """``value`` must be a list of integers in ``lo..hi`` (of ``length``, or at most ``max_length``)."""
    if not isinstance(value, list):
        raise RecordError(f"{field} must be a list, got {type(value).__name__}")
    if length is not None and len(value) != length:
        raise RecordError(f"{field} must have {length} entries, got {len(value)}")
    if max_length is not None and len(value) > max_length:
        raise RecordError(f"{field} has {len(value)} entries, at most {max_length} are possible")
    for j, x in enumerate(value):
        _int_in(x, f"{field}[{j}]", lo, hi)


def _check_hand(h, i: int) -> None:
    f = f"hands[{i}]"
    if not isinstance(h, dict):
        raise RecordError(f"{f} must be an object, got {type(h).__name__}")
    for key in ("dealer", "muestra", "hands", "actions"):
        if key not in h:
            raise RecordError(f"{f} lacks {key!r}")
    unknown = sorted(set(h) - HAND_KEYS)
    if unknown:
        raise RecordError(f"{f} has unknown key(s) {unknown}")
    for key, hi in (("dealer", 3), ("muestra", NUM_CARDS - 1)):
        _int_in(h[key], f"{f}.{key}", 0, hi)
    if not isinstance(h["hands"], list) or len(h["hands"]) != 4:
        raise RecordError(f"{f}.hands must be 4 lists of 5 card ids (seat order)")
    for s, cards in enumerate(h["hands"]):
        _ints(cards, f"{f}.hands[{s}]", 0, NUM_CARDS - 1, length=5)
    if not isinstance(h["actions"], list) or not all(_is_int(a) for a in h["actions"]):
        raise RecordError(f"{f}.actions must be a list of integer action ids")
    _ints(h["actions"], f"{f}.actions", 0, NUM_ACTIONS - 1, max_length=MAX_DECISIONS_PER_HAND)
    if h.get("score_before") is not None:
        _ints(h["score_before"], f"{f}.score_before", 0, 10_000, length=2)
    if h.get("seats") is not None:
        _ints(h["seats"], f"{f}.seats", 0, 3, length=len(h["actions"]))
    result = h.get("result")
    if result is not None:
        if not isinstance(result, dict):
            raise RecordError(f"{f}.result must be an object, got {type(result).__name__}")
        if set(result) != RESULT_KEYS:
            raise RecordError(f"{f}.result must have exactly the keys {sorted(RESULT_KEYS)}: "
                              f"unknown {sorted(set(result) - RESULT_KEYS)}, missing {sorted(RESULT_KEYS - set(result))}")
        _check_result(result, f"{f}.result")


def _int_in(value, field: str, lo: int, hi: int, none: bool = False) -> None:
    """``value`` must be an integer in ``lo..hi`` (a boolean or a float is not one), or None if ``none``."""
    if not (none and value is None) and not (_is_int(value) and lo <= value <= hi):
        raise RecordError(f"{field} must be {'null or ' if none else ''}an integer in {lo}..{hi}, got {brief(value, 40)}")


def _check_result(res: dict, f: str) -> None:
    """Every stored result value of its exact type and in its range, before anything reads or compares it."""
    if res["contract"] not in CONTRACT_NAMES:
        raise RecordError(f"{f}.contract must be one of {', '.join(CONTRACT_NAMES)}, got {brief(res['contract'], 40)}")
    _int_in(res["declarer"], f"{f}.declarer", 0, 3, none=True)
    _int_in(res["winner_team"], f"{f}.winner_team", 0, 1)
    _int_in(res["game_points"], f"{f}.game_points", 0, MAX_GAME_POINTS)
    _ints(res["points"], f"{f}.points", 0, MAX_HAND_POINTS, length=2)
    _ints(res["cante_points"], f"{f}.cante_points", 0, MAX_HAND_POINTS, length=2)
    _ints(res["tricks_won"], f"{f}.tricks_won", 0, 5, length=4)
    _ints(res["trick_winners"], f"{f}.trick_winners", 0, 3, max_length=5)
    _ints(res["score_after"], f"{f}.score_after", 0, 10_000, length=2)
    if not isinstance(res["cantes"], list) or len(res["cantes"]) > 5:
        raise RecordError(f"{f}.cantes must be a list of at most 5 entries (one per trick)")
    for j, c in enumerate(res["cantes"]):
        _int_in(c, f"{f}.cantes[{j}]", 0, 3, none=True)


def check_record(rec: dict) -> None:
    """Raise :class:`RecordError` naming the first malformed field."""
    if not isinstance(rec, dict) or rec.get("format") != RECORD_FORMAT:
        raise RecordError(f"not a Cuatrola record: 'format' must be {RECORD_FORMAT!r}")
    if rec.get("version") != RECORD_VERSION or not _is_int(rec.get("version")):
        raise RecordError(f"unsupported record version {brief(rec.get('version'), 40)} (this code reads {RECORD_VERSION})")
    unknown = sorted(set(rec) - TOP_KEYS)
    if unknown:
        raise RecordError(f"unknown key(s) {unknown} (a record's keys are {', '.join(sorted(TOP_KEYS))})")
    try:
        get_rules(rec.get("rules"))
    except (TypeError, ValueError) as e:
        raise RecordError(f"bad 'rules': {e}") from None
    if rec.get("mode") not in ("hand", "match"):
        raise RecordError(f"'mode' must be 'hand' or 'match', got {brief(rec.get('mode'), 40)}")
    hands = rec.get("hands")
    if not isinstance(hands, list) or not hands:
        raise RecordError("'hands' must be a non-empty list")
    if rec["mode"] == "hand" and len(hands) != 1:
        raise RecordError(f"'hands': a hand record holds one hand, this one {len(hands)}")
    for i, h in enumerate(hands):
        _check_hand(h, i)
    if rec["mode"] == "hand" and "match" in rec:
        raise RecordError("'match': a hand record has no match summary")
    if rec["mode"] == "match":
        summary = rec.get("match")
        if not isinstance(summary, dict) or set(summary) != {"final_score", "winner_team"}:
            raise RecordError("'match' must be an object with exactly 'final_score' and 'winner_team' (a finished match)")
        _ints(summary["final_score"], "match.final_score", 0, 10_000, length=2)
        _int_in(summary["winner_team"], "match.winner_team", 0, 1)


def replay(rec: dict) -> list[dict]:
    """Replay a record through the engine; returns the engine's result of each hand.

    Raises :class:`RecordError` naming the hand and decision where an action is illegal,
    where a hand ends earlier or later than recorded, where a stored result or the match
    summary differs, or where a match record has hands after the match ended or ends before.
    """
    check_record(rec)
    results = []
    for i, h in enumerate(rec["hands"]):
        got, match_over = _replay_hand(rec, i)
        stored = h.get("result")
        for key, value in (stored or {}).items():
            if got[key] != value:
                raise RecordError(f"hands[{i}]: result {key!r} is {brief(value, 60)} in the record, {got[key]!r} on replay")
        if rec["mode"] == "match":
            _check_match_continues(rec, i, got, match_over)
        results.append(got)
    if rec["mode"] == "match":
        want = {"final_score": results[-1]["score_after"], "winner_team": results[-1]["winner_team"]}
        for key, value in want.items():
            if rec["match"][key] != value:
                raise RecordError(f"match: {key!r} is {brief(rec['match'][key], 60)} in the record, {value!r} on replay")
    return results


def _replay_hand(rec: dict, i: int) -> tuple[dict, bool]:
    """The engine's result of ``rec["hands"][i]``, and whether the episode (the match) is then over."""
    h = rec["hands"][i]
    g = Game(rules=rec["rules"], mode=rec["mode"])
    try:
        g.reset(hands=h["hands"], dealer=h["dealer"], muestra=h["muestra"], score=h.get("score_before"))
    except ValueError as e:
        raise RecordError(f"hands[{i}]: bad deal: {e}") from None
    seats = h.get("seats")
    for j, a in enumerate(h["actions"]):
        if g.last_result is not None:
            raise RecordError(f"hands[{i}]: the hand ended before action {j}")
        if seats is not None and seats[j] != g.current_player:
            raise RecordError(f"hands[{i}], decision {j}: recorded seat {seats[j]}, but seat {g.current_player} is to act")
        try:
            g.step(a)
        except ValueError as e:
            raise RecordError(f"hands[{i}], decision {j}: {e}") from None
    if g.last_result is None:
        raise RecordError(f"hands[{i}]: the actions stop before the hand ends")
    return g.last_result, g.over


def _check_match_continues(rec: dict, i: int, got: dict, match_over: bool) -> None:
    """After hand ``i`` of a match: more hands exactly while the match is not over, each dealt on."""
    last = i + 1 == len(rec["hands"])
    if match_over and not last:
        raise RecordError(f"hands[{i + 1}]: the match was over after hands[{i}] (score {got['score_after']})")
    if last and not match_over:
        raise RecordError(f"hands: the record ends after hands[{i}], before the match is over (score {got['score_after']})")
    if last:
        return
    nxt = rec["hands"][i + 1]
    if nxt.get("score_before") != got["score_after"]:
        raise RecordError(f"hands[{i + 1}]: score_before {nxt.get('score_before')} != previous score_after")
    if nxt["dealer"] != (rec["hands"][i]["dealer"] + 1) % 4:
        raise RecordError(f"hands[{i + 1}]: dealer should be {(rec['hands'][i]['dealer'] + 1) % 4} (the deal passes on)")


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
            trick = ", ".join(f"{w} {action_name(c)}" for w, c in zip(who[t : t + size], acts[t : t + size], strict=False))
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
