"""Writing files so that a crash never leaves a broken one: :func:`atomic_open`.

>>> from cuatrola_env.files import atomic_open
>>> with atomic_open("runs/out.json") as f:      # doctest: +SKIP
...     f.write("{}")

The data goes to a temporary file in the same folder, is flushed and synced to disk, and is
renamed over the target only when complete; on any error the temporary file is removed and
the target is left as it was.
"""

from __future__ import annotations

import glob
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO


@contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "w") -> Iterator[IO]:
    """A file object (``mode`` ``"w"`` or ``"wb"``) whose contents appear at ``path`` only once
    the block ends without an error (the folder is created if needed)."""
    if mode not in ("w", "wb"):
        raise ValueError(f"mode must be 'w' or 'wb', got {mode!r}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, mode) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def remove_stale_temporaries(path: str | os.PathLike) -> list[Path]:
    """Remove the temporary files :func:`atomic_open` left beside ``path`` when a write was killed
    (a process that dies cannot clean up); call it where one writer owns ``path``. The removed paths."""
    path = Path(path)
    if not path.parent.is_dir():
        return []
    stale = [p for p in path.parent.glob(glob.escape(path.name) + "*.tmp") if p.is_file()]
    for p in stale:
        p.unlink(missing_ok=True)
    return stale


__all__ = ["atomic_open", "remove_stale_temporaries"]
