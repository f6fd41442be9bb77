"""The store of a sweep's points: a point (:class:`Point`) and its cache key, where its
results directory lives (``<out>/points/<key>/``, complete once renamed into place), running
one point into it (:func:`run_point`), the index file, and reading every point's tables back
(:class:`SweepResult`). :mod:`tcplab.sweep` declares and expands sweeps and runs them with
:mod:`tcplab.sweep_backends`; both build on this module."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from tcplab.scenario import Scenario

__all__ = [
    "INDEX_FILE",
    "MAX_RETRIES",
    "Point",
    "PointFn",
    "SweepError",
    "SweepResult",
    "cache_key",
    "clean_temporaries",
    "default_jobs",
    "flows_frame",
    "native_build_id",
    "point_complete",
    "point_dir",
    "run_point",
    "table_frame",
    "write_index",
]


#: Retries of a point whose worker died (or whose pool broke) before it is given up.
MAX_RETRIES = 2


#: Index of a sweep's points, written beside ``points/``.
INDEX_FILE = "sweep.json"


class SweepError(ValueError):
    """A sweep declaration or one of its points is invalid; the message names the field."""


@dataclass(frozen=True)
class Point:
    """One run of a sweep: its parameters (path -> value, and ``seed``), the resolved scenario
    document (TOML-shaped, validated) and the cache key of its canonical form."""

    index: int
    params: dict[str, Any]
    document: dict[str, Any]
    key: str

    @property
    def label(self) -> str:
        return ", ".join(f"{k.rsplit('.', 1)[-1]}={v}" for k, v in self.params.items())



@functools.cache
def native_build_id() -> str:
    """A hash of the native extension's file (the simulator build), or "" if not found."""
    from tcplab import _native

    path = getattr(_native, "__file__", None)
    if not path or not os.path.isfile(path):
        return ""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()[:16]


def cache_key(canonical: dict[str, Any], *, version: str | None = None, build: str | None = None) -> str:
    """The storage key of a run: sha256 of its canonical scenario JSON (keys sorted), the
    tcplab version and the native build id."""
    from tcplab import _native

    doc = {
        "scenario": canonical,
        "tcplab": version if version is not None else _native.version(),
        "build": build if build is not None else native_build_id(),
    }
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def default_jobs() -> int:
    """Worker processes by default: the cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def point_dir(out: str | Path, key: str) -> Path:
    return Path(out) / "points" / key


def point_complete(out: str | Path, key: str) -> bool:
    """A point's directory exists only once complete (it is renamed into place)."""
    return (point_dir(out, key) / "summary.json").is_file()


def run_point(document: dict[str, Any], target: str) -> dict[str, Any]:
    """Runs one point and stores its results directory at ``target`` atomically (built in a
    hidden sibling, renamed when complete). Returns a small summary. The default point
    function of :func:`run_sweep`; it runs in a worker process."""
    from tcplab.results import write_results
    from tcplab.run import run

    t = Path(target)
    result = run(Scenario.from_dict(document))
    if t.exists():  # another worker finished the same point first
        shutil.rmtree(t, ignore_errors=True)
    write_results(result, t, report=False)
    return {"wall_time_s": result.wall_time_s, "sim_time_s": result.summary["sim_time_s"]}


PointFn = Callable[[dict[str, Any], str], Any]


@dataclass
class SweepResult:
    """What :func:`run_sweep` did: every point, which were computed now and which came from
    the store, and where they are."""

    out: Path
    points: list[Point]
    computed: list[str] = field(default_factory=list)
    cached: list[str] = field(default_factory=list)
    #: keys taken over from another store (``adopt_from``), also counted in ``cached``
    adopted: list[str] = field(default_factory=list)
    retried: dict[str, int] = field(default_factory=dict)
    wall_time_s: float = 0.0

    def dir(self, point: Point) -> Path:
        return point_dir(self.out, point.key)

    def flows(self) -> pl.DataFrame:
        """Every point's ``flows`` table with the point's parameters as columns."""
        return flows_frame(self)

    def table(self, name: str) -> pl.DataFrame:
        return table_frame(self, name)


def write_index(out: Path, points: list[Point]) -> None:
    doc = {
        "points": [
            {"index": p.index, "key": p.key, "params": p.params, "name": p.document.get("name")}
            for p in points
        ]
    }
    tmp = out / f".{INDEX_FILE}.tmp-{os.getpid()}"
    tmp.write_text(json.dumps(doc, indent=1, default=str) + "\n", encoding="utf-8")
    os.replace(tmp, out / INDEX_FILE)


def adopt_runs(source: str | Path, keys: Iterable[str], out: str | Path) -> list[str]:
    """Adopts into the store ``out`` the runs of another store ``source`` (e.g. one written by
    an earlier build of the native extension) whose stored canonical scenario gives one of
    ``keys`` under the current version and build. Returns the adopted keys.

    Sound only when the two builds give bit-identical results on those scenarios
    (``bench/compare_builds.sh``): the caller says so. Each run is copied into a hidden
    sibling and renamed into place, so a point is either adopted whole or not at all; the
    source store is only read."""
    wanted = {k for k in keys if not point_complete(out, k)}
    src = Path(source) / "points"
    if not wanted or not src.is_dir():
        return []
    adopted = []
    for d in sorted(src.iterdir()):
        summary = d / "summary.json"
        if d.name.startswith(".") or not summary.is_file():
            continue
        try:
            canonical = json.loads(summary.read_text(encoding="utf-8"))["scenario"]["canonical"]
        except (OSError, ValueError, KeyError, TypeError):
            continue  # not a run of this store's format: never adopted
        key = cache_key(canonical)
        if key not in wanted:
            continue
        target = point_dir(out, key)
        tmp = target.with_name(f".{key}.tmp-{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.copytree(d, tmp)
        os.replace(tmp, target)
        wanted.discard(key)
        adopted.append(key)
    return adopted


def clean_temporaries(out: Path) -> None:
    """Removes what killed points left: hidden temporary directories in ``points/``."""
    d = out / "points"
    if d.is_dir():
        for p in d.iterdir():
            if p.name.startswith(".") and ".tmp-" in p.name:
                shutil.rmtree(p, ignore_errors=True)


def table_frame(res: SweepResult, name: str) -> pl.DataFrame:
    """Table ``name`` of every point, with the point's parameters, ``point`` (its index) and
    ``key`` as leading columns (``point`` = position in ``res.points``) (parameters that are not scalars are shown as JSON text; a
    parameter named like a column of the table replaces it)."""
    frames = []
    for i, p in enumerate(res.points):
        df = pl.read_parquet(point_dir(res.out, p.key) / f"{name}.parquet")
        cols = [pl.lit(i).cast(pl.UInt32).alias("point"), pl.lit(p.key).alias("key")]
        for k, v in p.params.items():
            if not isinstance(v, (bool, int, float, str)):
                v = json.dumps(v, sort_keys=True)
            cols.append(pl.lit(v).alias(k))
        names = [c.meta.output_name() for c in cols]
        rest = [c for c in df.columns if c not in names]  # a parameter named like a column wins
        frames.append(df.with_columns(cols).select(names + rest))
    return pl.concat(frames, how="diagonal_relaxed") if frames else pl.DataFrame()


def flows_frame(res: SweepResult) -> pl.DataFrame:
    """The ``flows`` table of every point, with its parameters (see :func:`table_frame`)."""
    return table_frame(res, "flows")
