"""Where the points of a sweep run: a local process pool or a Dask cluster (progress on a
:class:`tcplab.progress.CountProgress`). Used by :func:`tcplab.sweep.run_sweep`; docs/sweeps.md says what each does
when a worker dies."""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

from tcplab.progress import CountProgress
from tcplab.sweep_store import MAX_RETRIES, Point, PointFn, SweepError, SweepResult, point_complete, point_dir

__all__ = ["run_dask", "run_pool", "die_with_parent"]

#: prctl(2) option: the signal this process gets when its parent dies (Linux).
_PR_SET_PDEATHSIG = 1
#: How often a worker's watchdog checks that the process that started it is alive.
WATCHDOG_INTERVAL_S = 1.0


def die_with_parent(parent: int) -> None:
    """Worker initializer: the worker dies with ``parent`` (the sweep's main process), even
    when that is killed with SIGKILL, instead of computing on as an orphan. On Linux the
    kernel sends SIGKILL at the parent's death (``prctl(PR_SET_PDEATHSIG)``); everywhere a
    daemon thread exits the worker once its parent process id changes (the fallback, and
    the check for a parent that died before the prctl). A point a worker leaves half
    written is a hidden temporary that the next run removes (resume stays bit-identical)."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):  # pragma: no cover - no libc prctl
            pass
    if os.getppid() != parent:
        os._exit(1)
    threading.Thread(target=_watch_parent, args=(parent,), name="tcplab-parent-watchdog", daemon=True).start()


def _watch_parent(parent: int) -> None:
    while True:
        time.sleep(WATCHDOG_INTERVAL_S)
        if os.getppid() != parent:
            os._exit(1)


def run_pool(todo: dict[str, Point], out: Path, fn: PointFn, jobs: int, res: SweepResult, bar: CountProgress) -> None:
    # spawn: no fork of a process holding polars/rayon threads.
    ctx = multiprocessing.get_context("spawn")
    pending = dict(todo)
    while pending:
        with ProcessPoolExecutor(
            max_workers=min(jobs, len(pending)),
            mp_context=ctx,
            initializer=die_with_parent,
            initargs=(os.getpid(),),
        ) as pool:
            futures = {pool.submit(fn, p.document, str(point_dir(out, k))): k for k, p in pending.items()}
            broken = False
            while futures:
                done, _ = wait(futures, return_when=FIRST_COMPLETED)
                for f in done:
                    key = futures.pop(f)
                    try:
                        f.result()
                    except BrokenProcessPool:
                        broken = True
                        continue
                    res.computed.append(key)
                    bar.advance(pending.pop(key).label)
            if not broken:
                return
        # A worker died: the pool is gone with every point it held. Those are retried in a
        # new pool (each at most MAX_RETRIES times).
        for key in list(pending):
            if point_complete(out, key):
                res.computed.append(key)
                bar.advance(pending.pop(key).label)
                continue
            res.retried[key] = res.retried.get(key, 0) + 1
            if res.retried[key] > MAX_RETRIES:
                raise RuntimeError(f"sweep point {pending[key].label}: its worker died {MAX_RETRIES + 1} times")


def run_dask(
    todo: dict[str, Point], out: Path, fn: PointFn, scheduler: Any, res: SweepResult, bar: CountProgress
) -> None:
    try:
        from distributed import Client, as_completed
        from distributed.scheduler import KilledWorker
    except ImportError:  # pragma: no cover (the test extra has it)
        raise SweepError(
            "--scheduler needs dask.distributed: pip install 'tcplab[dask]'"
        ) from None
    own = not hasattr(scheduler, "submit")
    client = Client(scheduler) if own else scheduler
    try:
        # A worker that dies while running a point: the scheduler reschedules the point on
        # another worker (up to its allowed-failures); if it still gives up (KilledWorker),
        # the point is resubmitted here, at most MAX_RETRIES times.
        futures = {}
        for key, p in todo.items():
            f = client.submit(fn, p.document, str(point_dir(out, key)), key=f"tcplab-point-{key}", pure=False)
            futures[f] = key
        ac = as_completed(list(futures))
        for f in ac:
            key = futures[f]
            try:
                f.result()
            except KilledWorker:
                res.retried[key] = res.retried.get(key, 0) + 1
                if res.retried[key] > MAX_RETRIES:
                    raise RuntimeError(
                        f"sweep point {todo[key].label}: its worker died {MAX_RETRIES + 1} times"
                    ) from None
                g = client.submit(
                    fn,
                    todo[key].document,
                    str(point_dir(out, key)),
                    key=f"tcplab-point-{key}-retry{res.retried[key]}",
                    pure=False,
                )
                futures[g] = key
                ac.add(g)
                continue
            res.computed.append(key)
            bar.advance(todo[key].label)
    finally:
        if own:
            client.close()

