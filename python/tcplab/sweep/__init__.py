"""Parameter sweeps: a scenario plus grids, zipped lists and seeds, one run per point.

A scenario file may declare a ``[sweep]`` table (docs/sweeps.md)::

    [sweep]
    grid = { "topology.bottleneck.forward.loss.p" = [1e-4, 1e-3, 1e-2], "flows.0.controller" = ["reno", "veno"] }
    zip = { "topology.bottleneck.rate" = ["10Mbps", "100Mbps"], "topology.bottleneck.buffer" = [83, 833] }
    seeds = 3            # or a list: [1, 7, 42]

Keys are dotted paths into the scenario document (list items by index). The points are
the cartesian product of the grid axes, times the zipped lists taken together (equal
lengths), times the seeds. The points are produced lazily (:mod:`tcplab.sweep.points`):
each is resolved and validated (the scenario schema, then the simulator's own checks) when
the sweep reaches it, and points that differ only in their seed share that work.

Each finished point is stored under ``<out>/points/<key>/`` (the Parquet tables and
summary.json of :func:`tcplab.results.write_results`, written atomically), where ``key`` is
a hash of the point's canonical scenario JSON, the tcplab version and the native
extension's build: a sweep that is interrupted resumes where it stopped and a point that did
not change is never recomputed. Points run on local cores (a process pool) or on a Dask
cluster (``scheduler="tcp://host:port"``), a bounded number in flight
(:mod:`tcplab.sweep.backends`); the index ``sweep.json`` grows as points are reached.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from tcplab.progress import CountProgress
from tcplab.scenario import Scenario, ScenarioError
from tcplab.scenario.model import resolve_files
from tcplab.sweep.backends import backend_for, run_stream
from tcplab.sweep.points import SweepPoints, expand, sweep_points
from tcplab.sweep.spec import SeedRange, SweepSpec, base_seed, set_path
from tcplab.sweep.store import (  # noqa: F401 (re-exported: the sweep API)
    INDEX_FILE,
    MAX_RETRIES,
    IndexWriter,
    Point,
    PointFn,
    SweepError,
    SweepResult,
    adopt_runs,
    cache_key,
    clean_temporaries,
    default_jobs,
    flows_frame,
    native_build_id,
    point_complete,
    point_dir,
    run_point,
    table_frame,
    write_index,
)
from tcplab.toml_file import TomlError, read_toml

__all__ = [
    "Point",
    "SeedRange",
    "SweepError",
    "SweepPoints",
    "SweepResult",
    "SweepSpec",
    "cache_key",
    "expand",
    "flows_frame",
    "load_sweep",
    "native_build_id",
    "point_complete",
    "run_point",
    "run_sweep",
    "set_path",
    "sweep_points",
]


# --------------------------------------------------------------------------------------------
# Reading


def load_sweep(path: str | Path) -> tuple[dict[str, Any], SweepSpec]:
    """Reads a scenario file with an optional ``[sweep]`` table: (document without it, spec).
    The document is validated as a scenario; its relative time-trace files are resolved
    against the file's directory (:func:`tcplab.scenario.model.resolve_files`)."""
    p = Path(path)
    try:
        data, _ = read_toml(p)
    except TomlError as e:
        raise SweepError(str(e)) from None
    table = data.pop("sweep", None)
    data.setdefault("name", p.stem)
    data = resolve_files(data, p.parent)  # time-trace files are relative to the file
    try:
        Scenario.from_dict(data)
    except ScenarioError as e:
        raise SweepError(f"{p}: {e}") from None
    try:
        spec = SweepSpec.parse(table, base_seed=base_seed(data))
    except SweepError as e:
        raise SweepError(f"{p}: {e}") from None
    return data, spec


# --------------------------------------------------------------------------------------------
# Running


#: share of adopted runs recomputed to check that the builds agree (at least one)
ADOPT_CHECK_SHARE = 0.02


def check_adopted(adopted: dict[str, Point], out: Path, fn: PointFn) -> None:
    """Recomputes every 1/:data:`ADOPT_CHECK_SHARE`-th adopted run (in key order, at least
    one) with this build and compares every table with the adopted one. A difference removes
    all adopted runs and raises :class:`SweepError` naming the point: the builds do not agree,
    so nothing of the other store may be reused."""
    if not adopted:
        return
    keys = sorted(adopted)
    step = max(1, round(1 / ADOPT_CHECK_SHARE))
    for key in keys[::step]:
        check = out / "points" / f".{key}.tmp-check-{os.getpid()}"
        try:
            fn(adopted[key].document, str(check))
            differs = [
                t.name
                for t in sorted(point_dir(out, key).glob("*.parquet"))
                if not pl.read_parquet(t).equals(pl.read_parquet(check / t.name))
            ]
        finally:
            shutil.rmtree(check, ignore_errors=True)
        if differs:
            for k in keys:
                shutil.rmtree(point_dir(out, k), ignore_errors=True)
            raise SweepError(
                f"--adopt-runs: point {adopted[key].label or key} computed by this build differs from the "
                f"adopted run in {', '.join(differs)}: the builds do not give identical results; nothing adopted"
            )


def run_sweep(
    points: Iterable[Point],
    out: str | Path,
    *,
    jobs: int | None = None,
    scheduler: str | Any | None = None,
    progress: bool | Any = True,
    point_fn: PointFn | None = None,
    label: str = "sweep",
    unit: str = "points",
    adopt_from: str | Path | None = None,
) -> SweepResult:
    """Runs every point not yet stored under ``out``.

    ``points``: a sequence (a list, or the lazy :class:`~tcplab.sweep.points.SweepPoints` of
    :func:`sweep_points`, read in order as the sweep goes: its points cost memory only while
    in flight) or any iterable (made a list). ``jobs``: worker processes on this machine
    (default: the number of cores; 1 runs the points in this process). ``scheduler``: a Dask
    scheduler address (``tcp://host:port``) or a ``distributed.Client``; then the points run
    on that cluster. Either way a bounded number of points is in flight
    (:mod:`tcplab.sweep.backends`). ``progress``: a rich progress bar with ETA on stderr (or a
    rich Console to draw it on), counting ``unit``. ``point_fn(document, target)`` runs one
    point and stores it at ``target`` (default :func:`run_point`). ``adopt_from``: another
    store whose runs of the same canonical scenarios are taken over instead of computed
    (:func:`~tcplab.sweep.store.adopt_runs`; only for builds shown bit-identical by
    ``bench/compare_builds.sh``).
    """
    seq: Sequence[Point] = points if isinstance(points, Sequence) else list(points)
    out = Path(out)
    (out / "points").mkdir(parents=True, exist_ok=True)
    clean_temporaries(out)
    fn = point_fn or run_point
    res = SweepResult(out=out, points=seq)
    t0 = time.perf_counter()
    if adopt_from is not None:
        adopted = adopt_runs(adopt_from, seq, out)
        res.adopted += list(adopted)
        check_adopted(adopted, out, fn)

    with CountProgress(label, len(seq), 0, progress, unit=unit) as bar, IndexWriter(out) as index:
        backend = backend_for(jobs or default_jobs(), scheduler, len(seq))
        run_stream(_to_run(seq, out, res, index, bar), backend, fn, out, res, bar)
    res.wall_time_s = time.perf_counter() - t0
    return res


def _to_run(points: Iterable[Point], out: Path, res: SweepResult, index: IndexWriter, bar: CountProgress) -> Iterator[Point]:
    """The points not yet stored, each once, as they are reached; every point goes to the
    index, the stored ones to ``res.cached`` (one entry per point). The index is flushed
    before a point runs, so it lists every point that ran."""
    taken: set[str] = set()  # keys of this sweep that run (or ran): equal points run once
    for p in points:
        index.add(p)
        if p.key in taken:
            continue
        if point_complete(out, p.key):
            res.cached.append(p.key)
            bar.stored(p.label)
            continue
        taken.add(p.key)
        index.flush()
        yield p

