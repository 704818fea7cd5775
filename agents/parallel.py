"""Parallel work behind one interface: the same tasks inline, on Ray, or on a local process pool.

>>> from agents.parallel import Runner
>>> with Runner(workers=2) as run:                       # a local Ray with 2 CPUs    # doctest: +SKIP
...     squares = run.map(pow, [(x, 2) for x in range(10)])

``Runner(workers=1)`` runs every task in this process, in order, and needs nothing installed;
``workers=N`` starts a local Ray with N CPUs (the ``scale`` extra) and ``address="auto"`` joins
a running Ray cluster (``ray start --head`` on the nodes); ``backend="processes"`` uses the
standard library's process pool on this one machine instead (where Ray cannot be installed).
Results always come back in task order, whatever order the workers finish in. A task that
raises is reported with its traceback (:class:`WorkerError`); a worker process that dies has its
task run again (Ray retries it, up to ``retries`` times), and if it cannot be done the run
fails with :class:`WorkerError`: no result is ever silently missing, and nothing hangs.
"""

from __future__ import annotations

import importlib.util
import multiprocessing
import os
import secrets
import signal
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool

BACKENDS = ("auto", "inline", "ray", "processes")
POLL_SECONDS = 0.5  #: how often a map looks at its stop request while workers run


class Stopped(Exception):
    """A map stopped on request (Ctrl-C, SIGTERM) before its tasks were all done: none of them count."""


class WorkerError(RuntimeError):
    """A task failed in a worker (its traceback is in the message), or a worker could not finish it."""


class ClusterError(RuntimeError):
    """The Ray cluster at an address could not be joined; the message (one line) says why and the fix."""


#: the signals whose handlers a run sets (a stop request, :mod:`agents.training.stopping`) and Ray must not replace
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
#: how a process gets the token a cluster requires
TOKEN_FIX = "To present the cluster's token: RAY_AUTH_TOKEN=$(ray get-auth-token) (run on the head) and RAY_AUTH_MODE=token"
#: where Ray looks for a cluster's token when no RAY_AUTH_TOKEN is set
DEFAULT_TOKEN_PATH = os.path.join("~", ".ray", "auth_token")


def start_ray(workers: int, address: str | None = None) -> bool:
    """Ray for this process: a local one of ``workers`` CPUs, or the cluster at ``address``, whose
    workers import what this process can (its ``sys.path`` goes with them). False if one was running."""
    if address:
        present_token()  # before Ray is imported: it reads the mode once
    import ray  # the scale extra: only parallel work needs it

    if ray.is_initialized():
        return False
    env = {"env_vars": {"PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}}
    handlers = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    if address:
        join_cluster(ray, address, env)
    else:
        require_local_token()
        ray.init(address="local", num_cpus=workers, include_dashboard=False, runtime_env=env, log_to_driver=False)
    for sig, handler in handlers.items():  # Ray's core takes SIGTERM over (it ends the process at once): give it back
        if handler is not None:
            signal.signal(sig, handler)
    return True


def present_token() -> None:
    """Token authentication for joining a cluster when this process has a token: a ``ray start
    --head`` started where a token exists (``RAY_AUTH_TOKEN``, ``RAY_AUTH_TOKEN_PATH`` or
    ``~/.ray/auth_token``) turns token authentication on, but a client whose ``RAY_AUTH_MODE`` is
    unset sends none, and Ray retries for 20 s and fails. So with a token at hand and no mode set,
    the mode is ``token`` (a cluster without authentication ignores the token)."""
    if "RAY_AUTH_MODE" not in os.environ and token_available():
        os.environ["RAY_AUTH_MODE"] = "token"


def join_cluster(ray, address: str, runtime_env: dict) -> None:
    """``ray.init(address=...)``; a refused token or no cluster at the address is :class:`ClusterError`."""
    try:
        ray.init(address=address, runtime_env=runtime_env, log_to_driver=False)
    except ray.exceptions.AuthenticationError:
        raise ClusterError(f"the Ray cluster at {address} refused this process: it requires a token and this process "
                           f"has {'another' if token_available() else 'none'}. {TOKEN_FIX}") from None
    except ConnectionError as e:  # Ray says the same when its token is refused (InvalidAuthToken, logged above)
        raise ClusterError(f"could not join a Ray cluster at {address} ({str(e).splitlines()[0]}): either none runs "
                           f"there (start one with ray start --head, or leave out --ray-address to run here) or it "
                           f"refused this process's token (InvalidAuthToken above). {TOKEN_FIX}") from None


def token_available() -> bool:
    """Whether this process has a Ray token to present (in its environment or in Ray's token file)."""
    path = os.environ.get("RAY_AUTH_TOKEN_PATH") or os.path.expanduser(DEFAULT_TOKEN_PATH)
    return bool(os.environ.get("RAY_AUTH_TOKEN")) or os.path.isfile(path)


def require_local_token() -> None:
    """Token authentication for a Ray this process starts (Ray's default for a new local cluster,
    unless ``RAY_AUTH_MODE=disabled`` says otherwise): its processes listen on every interface (Ray
    has no option to bind them to loopback), so every connection must present the token. The token
    is drawn fresh for the run and reaches its workers through the environment alone: Ray would
    otherwise write a lasting one to ``~/.ray/auth_token``, readable by other users."""
    os.environ.setdefault("RAY_AUTH_TOKEN", secrets.token_hex(32))


class Runner:
    """Runs ``fn(*args)`` for each task; see the module docstring."""

    def __init__(self, workers: int = 1, address: str | None = None, backend: str = "auto", retries: int = 3):
        if backend not in BACKENDS:
            raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
        if not isinstance(workers, int) or workers < 1:
            raise ValueError(f"workers must be a positive integer, got {workers!r}")
        if backend == "auto":
            backend = "inline" if workers == 1 and address is None else "ray"
        if backend == "ray" and importlib.util.find_spec("ray") is None:
            raise ValueError("--workers > 1 runs on Ray: pip install 'cuatrola-rl[scale]' (or use the process backend)")
        self.workers, self.address, self.backend, self.retries = workers, address, backend, retries
        self._pool: ProcessPoolExecutor | None = None
        self._started_ray = False

    @property
    def parallel(self) -> bool:
        return self.backend != "inline"

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def map(self, fn: Callable, tasks: Sequence[tuple], progress=None, weights: Sequence[int] | None = None,
            stop: Callable[[], bool] = lambda: False) -> list:
        """``[fn(*task) for task in tasks]``, in parallel; ``progress.update(weights[i])`` as task i ends.
        Once ``stop()`` is true (looked at between tasks, and every half second while workers run) the
        tasks not finished are cancelled and :class:`Stopped` is raised."""
        weights = [1] * len(tasks) if weights is None else list(weights)
        if self.backend == "inline":
            out = []
            for task, w in zip(tasks, weights, strict=True):
                if stop():
                    raise Stopped(f"stopped after {len(out)} of {len(tasks)} tasks")
                out.append(fn(*task))
                if progress is not None:
                    progress.update(w)
            return out
        return (self._map_ray if self.backend == "ray" else self._map_processes)(fn, tasks, progress, weights, stop)

    # ------------------------------------------------------------------ ray
    def _ray(self):
        self._started_ray = start_ray(self.workers, self.address) or self._started_ray  # imports Ray itself
        import ray

        return ray

    def _map_ray(self, fn, tasks, progress, weights, stop) -> list:
        ray = self._ray()
        remote = ray.remote(max_retries=self.retries, retry_exceptions=False)(fn)
        refs = [remote.remote(*task) for task in tasks]
        index = {ref: i for i, ref in enumerate(refs)}
        out: list = [None] * len(refs)
        pending = list(refs)
        while pending:
            done, pending = ray.wait(pending, num_returns=1, timeout=POLL_SECONDS)
            if stop():
                self._cancel(ray, pending + done)
                raise Stopped(f"stopped with {len(pending) + len(done)} of {len(refs)} tasks unfinished")
            if not done:
                continue
            i = index[done[0]]
            try:
                out[i] = ray.get(done[0])
            except ray.exceptions.RayTaskError as e:
                self._cancel(ray, pending)
                raise WorkerError(f"task {i} failed in a worker:\n{e}") from None
            except ray.exceptions.RayError as e:  # a worker that died more often than the retries allow
                self._cancel(ray, pending)
                raise WorkerError(f"task {i} could not be finished: {type(e).__name__}: {e}") from None
            if progress is not None:
                progress.update(weights[i])
        return out

    @staticmethod
    def _cancel(ray, refs) -> None:
        for ref in refs:
            ray.cancel(ref, force=True)

    # ------------------------------------------------------------------ processes
    def _map_processes(self, fn, tasks, progress, weights, stop) -> list:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"))
        futures = {self._pool.submit(fn, *task): i for i, task in enumerate(tasks)}
        out: list = [None] * len(tasks)
        pending = set(futures)
        try:
            while pending:
                done, pending = wait(pending, timeout=POLL_SECONDS, return_when=FIRST_COMPLETED)
                if stop():
                    self.close()
                    raise Stopped(f"stopped with {len(pending) + len(done)} of {len(tasks)} tasks unfinished")
                for future in done:
                    i = futures[future]
                    out[i] = future.result()
                    if progress is not None:
                        progress.update(weights[i])
        except Stopped:
            raise
        except BrokenProcessPool:
            self.close()
            raise WorkerError("a worker process died; the process backend does not retry (Ray does)") from None
        except Exception as e:  # noqa: BLE001 - the task's own error, with its traceback
            self.close()
            raise WorkerError(f"a task failed in a worker: {type(e).__name__}: {e}") from e
        return out

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None
        if self._started_ray:
            import ray

            ray.shutdown()
            self._started_ray = False


__all__ = ["ClusterError", "BACKENDS", "Runner", "Stopped", "WorkerError", "start_ray"]
