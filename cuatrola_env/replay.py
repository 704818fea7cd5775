"""Print (and check) a Cuatrola game record.

    python -m cuatrola_env.replay FILE            # pretty-print the record
    python -m cuatrola_env.replay FILE --check    # also replay it through the engine

Exit status 0 when the record is well formed (and, with --check, replays to everything it
claims: every hand's result, the hand count, the match summary), 2 otherwise, with the reason
on stderr. Files over ``--max-bytes`` (4 MiB by default) are refused unread.
"""

from __future__ import annotations

import sys

from .cli import ArgumentParser
from .records import MAX_RECORD_BYTES, RecordError, format_record, load_record, replay


def main(argv: list[str] | None = None) -> int:
    p = ArgumentParser(prog="python -m cuatrola_env.replay", description="Print and check a Cuatrola game record.")
    p.add_argument("file", help="a record written by the environments (JSON)")
    p.add_argument("--check", action="store_true", help="replay every hand through the engine and compare the results")
    p.add_argument("--max-bytes", type=int, default=MAX_RECORD_BYTES,
                   help=f"refuse a file larger than this (default {MAX_RECORD_BYTES})")
    a = p.parse_args(argv)
    if a.max_bytes < 1:
        p.error(f"--max-bytes must be a positive number of bytes, got {a.max_bytes}")
    try:
        rec = load_record(a.file, a.max_bytes)
        if a.check:  # before printing: only a record that replays is described
            replay(rec)
        print(format_record(rec))
        if a.check:
            print(f"\nreplay check: {len(rec['hands'])} hand(s) reproduced exactly")
    except RecordError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
