"""Ctrl-C and SIGTERM as requests: a run stops at its next safe point and writes its checkpoint;
a second Ctrl-C stops it at once, without one."""

from __future__ import annotations

import contextlib
import signal
import sys

from ..parallel import STOP_SIGNALS


@contextlib.contextmanager
def stop_signals():
    """Ctrl-C or SIGTERM set ``stop["now"]``, said at once on standard error; the run checks it and
    stops after its current step (a labelling phase: between tasks). A second one raises
    :class:`KeyboardInterrupt` there and then."""
    stop = {"now": False}

    def ask(signum, frame):
        if stop["now"]:
            raise KeyboardInterrupt("stopped at once, without a checkpoint")
        stop["now"] = True
        print(f"\n{signal.Signals(signum).name}: stopping at the next safe point and writing the checkpoint "
              "(Ctrl-C again to stop at once, without one)", file=sys.stderr, flush=True)

    old = {sig: signal.signal(sig, ask) for sig in STOP_SIGNALS}
    try:
        yield stop
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)


__all__ = ["stop_signals"]
