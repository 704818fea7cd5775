"""Writing files so that a crash never leaves a broken one: :func:`atomic_open`.

>>> from cuatrola_env.files import atomic_open
>>> with atomic_open("runs/out.json") as f:      # doctest: +SKIP
...     f.write("{}")

The data goes to a temporary file in the same folder, is flushed and synced to disk, and is
renamed over the target only when complete; on any error the temporary file is removed and
the target is left as it was.
"""

from __future__ import annotations

import errno
import glob
import json
import os
import shutil
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
        os.chmod(tmp, 0o666 & ~_umask())  # the permissions open() would give, not mkstemp's private 0600
        with os.fdopen(fd, mode) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as e:
        full = isinstance(e, Exception) and disk_full(e, path.parent)  # judged before the partial file is removed
        Path(tmp).unlink(missing_ok=True)
        if full:
            raise OSError(errno.ENOSPC, f"no space left on device while writing {path} (the file is left as it was; "
                                        "free some space and run again)") from e
        raise


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


#: free bytes below which a failed write is taken to have filled the disk
NEARLY_FULL = 1024 * 1024


def disk_full(e: Exception, folder: Path) -> bool:
    """Whether the failure ``e`` of a write in ``folder`` is a full disk: an ``ENOSPC`` (or ``EDQUOT``)
    error, or any error (a library's own, which hides the cause) while the disk has almost no space left."""
    if isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    try:
        return shutil.disk_usage(folder).free < NEARLY_FULL
    except OSError:
        return False


def check_writable(path: str | os.PathLike, flag: str) -> Path:
    """``path`` as a :class:`~pathlib.Path` once a file can be written there (its folder made if need
    be, a temporary file created and removed), else :class:`ValueError` naming ``flag``: an output a
    command cannot write is refused before its work starts, not after."""
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{flag} {path}: that is a folder; give a file name")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        os.close(fd)
        os.unlink(tmp)
    except OSError as e:
        raise ValueError(f"{flag} {path}: cannot write there ({e.strerror or e})") from None
    return path


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


#: the largest magnitude of an integer in a JSON file this project reads (a 64-bit signed integer)
MAX_JSON_INT = 2**63 - 1


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > 19 or abs(int(text)) > MAX_JSON_INT:
        raise ValueError(f"an integer of {len(text.lstrip('-'))} digits is out of range (at most {MAX_JSON_INT})")
    return int(text)


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"the number {text[:40]} is out of range")
    return value


def _no_constant(text: str):
    raise ValueError(f"{text} is not a JSON number")


def loads_bounded(text: str | bytes):
    """``json.loads`` in which every number is finite and every integer fits 64 bits (NaN, Infinity,
    ``1e400`` and a 5,000-digit integer raise :class:`ValueError`, as a malformed file does)."""
    return json.loads(text, parse_int=_bounded_int, parse_float=_finite_float, parse_constant=_no_constant)


__all__ = ["atomic_open", "check_writable", "disk_full", "loads_bounded", "remove_stale_temporaries"]
