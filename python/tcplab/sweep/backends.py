"""Where the points of a sweep run: in this process, a local process pool or a Dask cluster,
fed from a stream of points by one loop (:func:`run_stream`) that keeps a bounded number of
points in flight, so the points not yet reached cost no memory and the first ones start at
once (progress on a :class:`tcplab.progress.CountProgress`). Used by
:func:`tcplab.sweep.run_sweep`; docs/sweeps.md says what each does when a worker dies."""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Collection, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any, Protocol

from tcplab.progress import CountProgress
from tcplab.sweep.store import MAX_RETRIES, Point, PointFn, SweepError, SweepResult, point_complete, point_dir

__all__ = ["Backend", "DaskCluster", "InProcess", "LocalPool", "backend_for", "die_with_parent", "kill_at_parent_death",
           "run_stream"]

#: prctl(2) option: the signal this process gets when its parent dies (Linux).
_PR_SET_PDEATHSIG = 1
#: How often a worker's watchdog checks that the process that started it is alive.
WATCHDOG_INTERVAL_S = 1.0


def kill_at_parent_death() -> None:
    """Asks the kernel for SIGKILL when this process's parent dies (``prctl(PR_SET_PDEATHSIG)``,
    Linux; elsewhere nothing); also a ``preexec_fn``."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):  # pragma: no cover - no libc prctl
            pass


def die_with_parent(parent: int) -> None:
    """Worker initializer: the worker dies with ``parent`` (the sweep's main process), even
    when that is killed with SIGKILL, instead of computing on as an orphan. On Linux the
    kernel sends SIGKILL at the parent's death (``prctl(PR_SET_PDEATHSIG)``); everywhere a
    daemon thread exits the worker once its parent process id changes (the fallback, and
    the check for a parent that died before the prctl). A point a worker leaves half
    written is a hidden temporary that the next run removes (resume stays bit-identical)."""
    kill_at_parent_death()
    if os.getppid() != parent:
        os._exit(1)
    threading.Thread(target=_watch_parent, args=(parent,), name="tcplab-parent-watchdog", daemon=True).start()


def start_worker(parent: int, plugins: list[tuple[str, str]]) -> None:
    """A local pool worker's initializer: it dies with ``parent`` (:func:`die_with_parent`) and
    runs the plugin files the sweep's process loaded (:mod:`tcplab.plugins`), so that their
    controllers are known here too."""
    die_with_parent(parent)
    if plugins:
        from tcplab.plugins import load_sources

        load_sources(plugins)


def _watch_parent(parent: int) -> None:
    while True:
        time.sleep(WATCHDOG_INTERVAL_S)
        if os.getppid() != parent:
            os._exit(1)


class Backend(Protocol):
    """Where points run: ``submit`` one (a future), ``wait`` for some of the futures in flight,
    ``window()`` how many to keep in flight, ``lost`` the exceptions that mean the point's
    worker died (the point is retried), ``close`` at the end (``failed``: the sweep stops on
    an error: drop what is queued)."""

    lost: tuple[type[BaseException], ...]

    def window(self) -> int: ...

    def submit(self, fn: PointFn, p: Point, target: str, attempt: int) -> Any: ...

    def wait(self, futures: Collection[Any]) -> Iterable[Any]: ...

    def close(self, failed: bool) -> None: ...


class InProcess:
    """Runs each point in this process when it is submitted (``--jobs 1``); an exception of
    the point function stops the sweep at once."""

    lost: tuple[type[BaseException], ...] = ()

    def window(self) -> int:
        return 1

    def submit(self, fn: PointFn, p: Point, target: str, attempt: int) -> Future[Any]:
        f: Future[Any] = Future()
        f.set_result(fn(p.document, target))
        return f

    def wait(self, futures: Collection[Any]) -> Iterable[Any]:
        return list(futures)  # all done at submission

    def close(self, failed: bool) -> None:
        pass


class LocalPool:
    """A pool of ``jobs`` worker processes (spawned, dying with this process), started at the
    first point. A worker that dies breaks the pool with every point it held: the next
    submission starts a new pool, and those points are retried in it."""

    lost: tuple[type[BaseException], ...] = (BrokenProcessPool,)

    def __init__(self, jobs: int):
        self.jobs = jobs
        self.pool: ProcessPoolExecutor | None = None

    def window(self) -> int:
        return 2 * self.jobs  # a queued point for each worker: none waits for the main loop

    def submit(self, fn: PointFn, p: Point, target: str, attempt: int) -> Any:
        if self.pool is not None and getattr(self.pool, "_broken", False):
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = None
        if self.pool is None:
            # spawn: no fork of a process holding polars/rayon threads.
            from tcplab.plugins import plugin_sources

            self.pool = ProcessPoolExecutor(
                max_workers=self.jobs,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=start_worker,
                initargs=(os.getpid(), plugin_sources()),
            )
        return self.pool.submit(fn, p.document, target)

    def wait(self, futures: Collection[Any]) -> Iterable[Any]:
        return wait(futures, return_when=FIRST_COMPLETED).done

    def close(self, failed: bool) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=failed)
            self.pool = None


class DaskCluster:
    """A Dask distributed cluster (a scheduler address or a ``distributed.Client``). A worker
    that dies loses the point it ran: the scheduler reschedules it on another worker; if it
    gives up on it (``KilledWorker``), the point is resubmitted here. In flight: twice the
    cluster's worker threads (asked again every :data:`DASK_WINDOW_REFRESH_S`), at least
    :data:`DASK_MIN_IN_FLIGHT`, so a cluster that grows gets more."""

    def __init__(self, scheduler: Any):
        try:
            import distributed
            from distributed.scheduler import KilledWorker
        except ImportError:  # pragma: no cover (the test extra has it)
            raise SweepError("--scheduler needs dask.distributed: pip install 'tcplab[dask]'") from None
        self.lost: tuple[type[BaseException], ...] = (KilledWorker,)
        self.own = not hasattr(scheduler, "submit")
        self.client = distributed.Client(scheduler) if self.own else scheduler
        from tcplab.plugins import plugin_sources

        if sources := plugin_sources():
            # every worker, present and future, runs the plugin files before any point
            self.client.register_plugin(_plugin_files(sources), name="tcplab-plugin-files")
        self._window, self._asked = DASK_MIN_IN_FLIGHT, -float("inf")
        # one iterator over every point in flight: a wait costs what finished, not the window
        self.finished = distributed.as_completed()

    def window(self) -> int:
        now = time.monotonic()
        if now - self._asked >= DASK_WINDOW_REFRESH_S:
            self._asked = now
            threads = sum(self.client.nthreads().values())
            self._window = max(DASK_MIN_IN_FLIGHT, 2 * threads)
        return self._window

    def submit(self, fn: PointFn, p: Point, target: str, attempt: int) -> Any:
        key = f"tcplab-point-{p.key}" + (f"-retry{attempt}" if attempt else "")
        f = self.client.submit(fn, p.document, target, key=key, pure=False)
        self.finished.add(f)
        return f

    def wait(self, futures: Collection[Any]) -> Iterable[Any]:
        return self.finished.next_batch(block=True)

    def close(self, failed: bool) -> None:
        if self.own:
            self.client.close()


def _plugin_files(sources: list[tuple[str, str]]) -> Any:
    """A Dask worker plugin that runs the sweep's plugin files on each worker (their source
    travels with it: a worker needs only tcplab)."""
    from distributed import WorkerPlugin

    class PluginFiles(WorkerPlugin):
        def setup(self, worker: Any) -> None:
            from tcplab.plugins import load_sources

            load_sources(sources)

    return PluginFiles()


#: Points a Dask cluster gets in flight at least (one with no workers yet included).
DASK_MIN_IN_FLIGHT = 8
#: How often the number of a Dask cluster's worker threads is asked again.
DASK_WINDOW_REFRESH_S = 1.0


def run_stream(
    points: Iterator[Point], backend: Backend, fn: PointFn, out: Path, res: SweepResult, bar: CountProgress
) -> None:
    """Runs every point of ``points`` on ``backend``, taking the next one only when fewer than
    ``backend.window()`` are in flight. A point whose worker died is retried (at most
    :data:`MAX_RETRIES` times, unless it was stored before its worker died). Each computed
    key goes to ``res.computed``. An exception (of a point, or of the stream: an invalid
    point) stops the sweep: nothing more is submitted, what runs is finished, and it is
    raised."""
    inflight: dict[Any, Point] = {}
    retry: deque[Point] = deque()
    more = True
    failed = True
    try:
        while True:
            while len(inflight) < backend.window():
                nxt: Point | None
                if retry:
                    nxt = retry.popleft()
                elif more:
                    nxt = next(points, None)
                    if nxt is None:
                        more = False
                        continue
                else:
                    break
                f = backend.submit(fn, nxt, str(point_dir(out, nxt.key)), res.retried.get(nxt.key, 0))
                inflight[f] = nxt
            if not inflight:
                break
            for f in backend.wait(inflight.keys()):
                p = inflight.pop(f)
                try:
                    f.result()
                except backend.lost:
                    if not point_complete(out, p.key):
                        res.retried[p.key] = res.retried.get(p.key, 0) + 1
                        if res.retried[p.key] > MAX_RETRIES:
                            raise RuntimeError(
                                f"sweep point {p.label}: its worker died {MAX_RETRIES + 1} times"
                            ) from None
                        retry.append(p)
                        continue
                res.computed.append(p.key)
                bar.advance(p.label)
        failed = False
    finally:
        backend.close(failed)


def backend_for(jobs: int, scheduler: Any, points: int) -> Backend:
    """Where a sweep of ``points`` points runs: a Dask cluster when ``scheduler`` is given,
    else a pool of ``jobs`` local workers (at most one per point), or this process for one
    job or one point."""
    if scheduler is not None:
        return DaskCluster(scheduler)
    if jobs <= 1 or points <= 1:
        return InProcess()
    return LocalPool(min(jobs, points))
