"""Parameter sweeps: a scenario plus grids, zipped lists and seeds, one run per point.

A scenario file may declare a ``[sweep]`` table (docs/sweeps.md)::

    [sweep]
    grid = { "topology.bottleneck.forward.loss.p" = [1e-4, 1e-3, 1e-2], "flows.0.controller" = ["reno", "veno"] }
    zip = { "topology.bottleneck.rate" = ["10Mbps", "100Mbps"], "topology.bottleneck.buffer" = [83, 833] }
    seeds = 3            # or a list: [1, 7, 42]

Keys are dotted paths into the scenario document (list items by index). The points are
the cartesian product of the grid axes, times the zipped lists taken together (equal
lengths), times the seeds. Every point is resolved and validated (the scenario schema,
then the simulator's own checks) before anything runs.

Each finished point is stored under ``<out>/points/<key>/`` (the Parquet tables and
summary.json of :func:`tcplab.results.write_results`, written atomically), where ``key`` is
a hash of the point's canonical scenario JSON, the tcplab version and the native
extension's build: a sweep that is interrupted resumes where it stopped and a point that did
not change is never recomputed. Points run on local cores (a process pool) or on a Dask
cluster (``scheduler="tcp://host:port"``).
"""

from __future__ import annotations

import copy
import itertools
import json
import os
import shutil
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from tcplab.progress import CountProgress
from tcplab.scenario import Scenario, ScenarioError
from tcplab.scenario.model import resolve_files
from tcplab.toml_file import TomlError, read_toml
from tcplab.sweep_backends import run_dask, run_pool
from tcplab.sweep_store import (  # noqa: F401 (re-exported: the sweep API)
    INDEX_FILE,
    MAX_RETRIES,
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

__all__ = [
    "Point",
    "SweepError",
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
]


# --------------------------------------------------------------------------------------------
# Declaration


@dataclass(frozen=True)
class SweepSpec:
    """What a ``[sweep]`` table declares: grid axes, zipped lists, seeds (None: the
    scenario's own seed only)."""

    grid: dict[str, list[Any]] = field(default_factory=dict)
    zip: dict[str, list[Any]] = field(default_factory=dict)
    seeds: list[int] | None = None

    @classmethod
    def parse(cls, table: Any, *, base_seed: int = 1) -> SweepSpec:
        """Validates a ``[sweep]`` table (or a dict of the same shape)."""
        if table is None:
            return cls()
        if isinstance(table, SweepSpec):
            return table
        if not isinstance(table, dict):
            raise SweepError(f"sweep: must be a table (grid, zip, seeds), not {type(table).__name__}")
        extra = sorted(set(table) - {"grid", "zip", "seeds"})
        if extra:
            raise SweepError(f"sweep.{extra[0]}: is not a known field (allowed: grid, zip, seeds)")
        grid = _axes(table.get("grid", {}), "grid")
        zipped = _axes(table.get("zip", {}), "zip")
        lengths = {k: len(v) for k, v in zipped.items()}
        if len(set(lengths.values())) > 1:
            shown = ", ".join(f"{k!r} has {n}" for k, n in lengths.items())
            raise SweepError(f"sweep.zip: the lists must have equal lengths ({shown})")
        both = sorted(set(grid) & set(zipped))
        if both:
            raise SweepError(f"sweep: {both[0]!r} is in both grid and zip")
        for k in [*grid, *zipped]:
            if k == "seed" or k.startswith("sweep"):
                raise SweepError(f"sweep: {k!r} cannot be swept (use sweep.seeds for seeds)")
        return cls(grid=grid, zip=zipped, seeds=_seeds(table.get("seeds"), base_seed))


def _axes(table: Any, where: str) -> dict[str, list[Any]]:
    if not isinstance(table, dict):
        raise SweepError(f"sweep.{where}: must be a table of dotted path = [values]")
    out = {}
    for path, values in table.items():
        if not isinstance(values, list):
            raise SweepError(f"sweep.{where}.{path!r}: must be a list of values, not {values!r}")
        if not values:
            raise SweepError(f"sweep.{where}.{path!r}: is empty")
        _split(path, f"sweep.{where}")
        out[path] = list(values)
    return out


def _seeds(value: Any, base_seed: int) -> list[int] | None:
    if value is None:
        return None
    if isinstance(value, bool):
        raise SweepError(f"sweep.seeds: {value!r} is not a number of seeds or a list of seeds")
    if isinstance(value, int):
        if value < 1:
            raise SweepError(f"sweep.seeds: {value} must be >= 1")
        return [base_seed + i for i in range(value)]
    if isinstance(value, list) and value:
        for s in value:
            if isinstance(s, bool) or not isinstance(s, int) or not 0 <= s < 2**64:
                raise SweepError(f"sweep.seeds: {s!r} is not a seed (a whole number >= 0)")
        if len(set(value)) != len(value):
            raise SweepError(f"sweep.seeds: {value!r} repeats a seed")
        return list(value)
    raise SweepError(f"sweep.seeds: {value!r} is not a number of seeds or a list of seeds")


def _split(path: str, where: str) -> list[str | int]:
    if not isinstance(path, str) or not path or any(not p for p in path.split(".")):
        raise SweepError(f"{where}: {path!r} is not a dotted path (e.g. 'topology.bottleneck.rate')")
    return [int(p) if p.isdigit() else p for p in path.split(".")]


#: Shorthand scalars of the scenario format and the table each stands for, so that a path can
#: go through them: ``forward.loss = 0.01`` is ``forward.loss = {p = 0.01}``, so the path
#: ``...forward.loss.p`` reaches its probability.
def _expand_shorthand(key: str | int, value: Any) -> dict[str, Any] | None:
    if isinstance(value, dict):
        return value
    if key == "loss" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return {"p": value}
    if key == "buffer" and isinstance(value, int) and not isinstance(value, bool):
        return {"packets": value}
    if key == "buffer" and isinstance(value, str):
        return {"bytes": value}
    if key in ("controller", "recovery") and isinstance(value, str):
        return {"name": value}
    if key == "growth" and isinstance(value, str):
        return {"mode": value}
    if key == "queue" and isinstance(value, str):
        return {"discipline": value}
    return None


def set_path(doc: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A deep copy of ``doc`` with ``value`` at the dotted ``path``. Missing tables on the
    way are created (the schema then says whether the field exists); list items are
    addressed by index and must exist. Raises :class:`SweepError` naming the path."""
    parts = _split(path, "sweep")
    out = copy.deepcopy(doc)
    node: Any = out
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        here = ".".join(str(p) for p in parts[: i + 1])
        if isinstance(node, list):
            if not isinstance(part, int) or not 0 <= part < len(node):
                raise SweepError(f"sweep: {path!r}: {here!r} is not an item of a list of {len(node)}")
            if last:
                node[part] = copy.deepcopy(value)
                return out
            child = node[part]
            expanded = _expand_shorthand(parts[i - 1] if i else part, child)
        elif isinstance(node, dict):
            if isinstance(part, int):
                raise SweepError(f"sweep: {path!r}: {here!r} indexes a table, not a list")
            if last:
                node[part] = copy.deepcopy(value)
                return out
            if part not in node:
                node[part] = {}
            child = node[part]
            expanded = child if isinstance(child, list) else _expand_shorthand(part, child)
        else:
            raise SweepError(f"sweep: {path!r}: {here!r} does not exist")
        if expanded is None:
            shown = ".".join(str(p) for p in parts[: i + 1])
            raise SweepError(f"sweep: {path!r}: {shown!r} is a value ({child!r}), not a table")
        if expanded is not child:
            node[part] = expanded
        node = node[part]
    return out  # pragma: no cover (the loop returns)


# --------------------------------------------------------------------------------------------
# Points







def expand(
    base: dict[str, Any] | Scenario,
    sweep: SweepSpec | dict[str, Any] | None = None,
    *,
    params: dict[str, Any] | None = None,
) -> list[Point]:
    """The points of ``sweep`` over the scenario document ``base`` (a TOML-shaped dict without
    ``[sweep]``, or a Scenario), each resolved and validated. ``params`` are extra columns
    every point carries (e.g. an experiment's variant label). Raises :class:`SweepError`
    naming the point and the field when a point is invalid (schema or simulator checks)."""
    doc = dict(base.source.get("given") or {}) if isinstance(base, Scenario) else dict(base)
    if isinstance(base, Scenario):
        doc.setdefault("name", base.name)
        doc["seed"] = base.seed
        doc = resolve_files(doc, base.source.get("base_dir"))  # its time-trace files
    doc.pop("sweep", None)
    base_seed = doc.get("seed", 1) if isinstance(doc.get("seed", 1), int) else 1
    spec = SweepSpec.parse(sweep, base_seed=base_seed)

    grid_axes = [[(k, v) for v in vs] for k, vs in spec.grid.items()]
    zip_rows = [list(zip(spec.zip, vals, strict=True)) for vals in zip(*spec.zip.values(), strict=True)]
    seeds = spec.seeds if spec.seeds is not None else [base_seed]
    points = []
    for combo in itertools.product(*grid_axes, zip_rows or [[]], seeds):
        *assignments, seed = combo
        flat: list[tuple[str, Any]] = []
        for a in assignments:
            flat.extend(a if isinstance(a, list) else [a])
        d = doc
        for path, value in flat:
            d = set_path(d, path, value)
        d = {**d, "seed": seed}
        where = ", ".join(f"{k} = {v!r}" for k, v in flat) or "the base scenario"
        try:
            sc = Scenario.from_dict(d)
            canonical = sc.canonical()
            _simulator_check(canonical)
        except ScenarioError as e:
            raise SweepError(f"sweep point ({where}): {e}") from None
        p = {**(params or {}), **dict(flat), "seed": seed}
        points.append(Point(len(points), p, d, cache_key(canonical)))
    return points


def _simulator_check(canonical: dict[str, Any]) -> None:
    """What only the simulator checks (Scenario::validate: routes, node names...), by building
    the simulation without running it (a few milliseconds)."""
    from tcplab import _native
    from tcplab.run import max_record_mb

    try:
        _native.Simulation(json.dumps(canonical), max_record_mb())
    except ValueError as e:
        raise ScenarioError(str(e)) from None


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
    base_seed = data.get("seed", 1) if isinstance(data.get("seed", 1), int) else 1
    try:
        spec = SweepSpec.parse(table, base_seed=base_seed)
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

    ``jobs``: worker processes on this machine (default: the number of cores; 1 runs the
    points in this process). ``scheduler``: a Dask scheduler address (``tcp://host:port``)
    or a ``distributed.Client``; then the points run on that cluster. ``progress``: a rich
    progress bar with ETA on stderr (or a rich Console to draw it on), counting ``unit``. ``point_fn(document,
    target)`` runs one point and stores it at ``target`` (default :func:`run_point`).
    ``adopt_from``: another store whose runs of the same canonical scenarios are taken over
    instead of computed (:func:`~tcplab.sweep_store.adopt_runs`; only for builds shown
    bit-identical by ``bench/compare_builds.sh``).
    """
    points = list(points)
    out = Path(out)
    (out / "points").mkdir(parents=True, exist_ok=True)
    clean_temporaries(out)
    write_index(out, points)
    fn = point_fn or run_point
    res = SweepResult(out=out, points=points)
    t0 = time.perf_counter()
    todo: dict[str, Point] = {}
    for p in points:
        if point_complete(out, p.key):
            res.cached.append(p.key)
        else:
            todo.setdefault(p.key, p)  # equal points (same canonical scenario) run once
    if adopt_from is not None and todo:
        adopted = {key: todo.pop(key) for key in adopt_runs(adopt_from, todo, out)}
        res.adopted += list(adopted)
        check_adopted(adopted, out, fn)
        taken = set(res.adopted)
        res.cached += [p.key for p in points if p.key in taken]

    with CountProgress(label, len(points), len(res.cached), progress, unit=unit) as bar:
        if todo:
            if scheduler is not None:
                run_dask(todo, out, fn, scheduler, res, bar)
            elif (jobs or default_jobs()) <= 1 or len(todo) == 1:
                for key, p in todo.items():
                    fn(p.document, str(point_dir(out, key)))
                    res.computed.append(key)
                    bar.advance(p.label)
            else:
                run_pool(todo, out, fn, jobs or default_jobs(), res, bar)
    res.wall_time_s = time.perf_counter() - t0
    return res

