"""Ctrl-C and SIGTERM as requests: a run stops at its next safe point and writes its checkpoint."""

from __future__ import annotations

import contextlib
import signal


@contextlib.contextmanager
def stop_signals():
    """Ctrl-C or SIGTERM set ``stop["now"]``; the run checks it and stops after its current step."""
    stop = {"now": False}

    def ask(signum, frame):
        stop["now"] = True

    old = {sig: signal.signal(sig, ask) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stop
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)


__all__ = ["stop_signals"]
