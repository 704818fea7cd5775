"""Print (and check) a Cuatrola game record.

    python -m cuatrola_env.replay FILE            # print the record, once it replays as it claims
    python -m cuatrola_env.replay FILE --check    # the same, and say how much was checked

Every record is replayed through the engine before anything of it is printed: exit status 0 when
it is well formed and replays to everything it claims (every hand's deal, plays and result, the
hand count, the match summary), 2 otherwise, with the reason on stderr and nothing printed (a
record with a card in two hands is refused, never described). Files over ``--max-bytes``
(4 MiB by default) are refused unread.
"""

from __future__ import annotations

import sys

from .cli import ArgumentParser, int_in
from .records import MAX_RECORD_BYTES, RecordError, format_record, load_record, replay


def main(argv: list[str] | None = None) -> int:
    p = ArgumentParser(prog="python -m cuatrola_env.replay", description="Print and check a Cuatrola game record.")
    p.add_argument("file", help="a record written by the environments (JSON)")
    p.add_argument("--check", action="store_true", help="also say how many hands the replay reproduced (every record "
                                                        "is replayed before it is printed)")
    p.add_argument("--max-bytes", type=int_in(1), default=MAX_RECORD_BYTES,
                   help=f"refuse a file larger than this (default {MAX_RECORD_BYTES})")
    a = p.parse_args(argv)
    try:
        rec = load_record(a.file, a.max_bytes)
        replay(rec)  # before printing: only a record that replays is described
        print(format_record(rec))
        if a.check:
            print(f"\nreplay check: {len(rec['hands'])} hand(s) reproduced exactly")
    except RecordError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
