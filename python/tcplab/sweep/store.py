"""The store of a sweep's points: a point (:class:`Point`) and its cache key, where its
results directory lives (``<out>/points/<key>/``, complete once renamed into place), running
one point into it (:func:`run_point`), the index file, and reading every point's tables back
(:class:`SweepResult`). :mod:`tcplab.sweep` declares and expands sweeps and runs them with
:mod:`tcplab.sweep.backends`; both build on this module."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from tcplab.scenario import Scenario

__all__ = [
    "INDEX_FILE",
    "IndexWriter",
    "MAX_RETRIES",
    "Point",
    "PointFn",
    "SweepError",
    "SweepResult",
    "adopt_run",
    "adopt_runs",
    "cache_key",
    "key_text",
    "clean_temporaries",
    "default_jobs",
    "flows_frame",
    "native_build_id",
    "point_complete",
    "point_dir",
    "run_point",
    "stored_runs",
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


def key_text(canonical: dict[str, Any], *, version: str | None = None, build: str | None = None) -> str:
    """What :func:`cache_key` hashes: the JSON (keys sorted, no spaces) of the canonical
    scenario, the tcplab version and the native build id."""
    from tcplab import _native

    doc = {
        "scenario": canonical,
        "tcplab": version if version is not None else _native.version(),
        "build": build if build is not None else native_build_id(),
    }
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), allow_nan=False)


def cache_key(canonical: dict[str, Any], *, version: str | None = None, build: str | None = None) -> str:
    """The storage key of a run: sha256 of its canonical scenario JSON (keys sorted), the
    tcplab version and the native build id (:func:`key_text`)."""
    return hashlib.sha256(key_text(canonical, version=version, build=build).encode()).hexdigest()[:24]


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
    return os.path.isfile(os.path.join(out, "points", key, "summary.json"))


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
    #: every point of the sweep, in order (a list, or the lazy :class:`~tcplab.sweep.points.SweepPoints`)
    points: Sequence[Point]
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


_SCALARS = (str, int, float, bool, type(None))


def _index_entry(p: Point) -> str:
    """A point's entry in the index as ``json.dumps(..., indent=1)`` writes it at depth 2;
    scalar parameters through the C encoder (the pure-Python indenting one costs tens of
    microseconds a point)."""
    name = p.document.get("name")
    params = p.params
    if not (
        isinstance(name, _SCALARS)
        and all(isinstance(k, str) and isinstance(v, _SCALARS) for k, v in params.items())
    ):
        entry = {"index": p.index, "key": p.key, "params": params, "name": name}
        return json.dumps(entry, indent=1, default=str).replace("\n", "\n  ")
    dumps = json.dumps
    shown = ",\n".join(f"    {dumps(k)}: {dumps(v)}" for k, v in params.items())
    params_text = f"{{\n{shown}\n   }}" if params else "{}"
    return (
        f'{{\n   "index": {dumps(p.index)},\n   "key": {dumps(p.key)},\n'
        f'   "params": {params_text},\n   "name": {dumps(name)}\n  }}'
    )


class IndexWriter:
    """The index ``<out>/sweep.json`` of a sweep's points (index, key, parameters, name),
    written as the points are reached: :meth:`add` takes a point, :meth:`flush` appends what
    was added in one write over the closing brackets, so the file is whole JSON after every
    flush and is never rewritten. Once every point was added it is byte for byte what
    ``json.dumps({"points": [...]}, indent=1)`` gives. Use it as a context manager (flushes
    at the end, also when the sweep stops early)."""

    #: added points kept before a flush
    BUFFER = 512

    _HEAD = b'{\n "points": ['
    _TAIL = b"\n ]\n}\n"
    _EMPTY = b"]\n}\n"

    def __init__(self, out: Path):
        self.path = Path(out) / INDEX_FILE
        tmp = self.path.with_name(f".{INDEX_FILE}.tmp-{os.getpid()}")
        tmp.write_bytes(self._HEAD + self._EMPTY)
        os.replace(tmp, self.path)
        self.fd = os.open(self.path, os.O_WRONLY)
        self.end = len(self._HEAD)  # where the next entry is written
        self.count = 0
        self.pending: list[str] = []

    def add(self, p: Point) -> None:
        self.pending.append(_index_entry(p))
        if len(self.pending) >= self.BUFFER:
            self.flush()

    def flush(self) -> None:
        if not self.pending:
            return
        text = ("\n  " if self.count == 0 else ",\n  ") + ",\n  ".join(self.pending)
        data = text.encode()
        os.pwrite(self.fd, data + self._TAIL, self.end)
        self.end += len(data)
        self.count += len(self.pending)
        self.pending.clear()

    def close(self) -> None:
        if self.fd >= 0:
            try:
                self.flush()
            finally:
                os.close(self.fd)
                self.fd = -1

    def __enter__(self) -> IndexWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def write_index(out: Path, points: Iterable[Point]) -> None:
    """Writes the index of ``points`` (:class:`IndexWriter`)."""
    with IndexWriter(out) as index:
        for p in points:
            index.add(p)


def stored_runs(source: str | Path) -> dict[str, Path]:
    """The runs of another store ``source`` (e.g. one written by an earlier build of the
    native extension) by the key their stored canonical scenario gives under the current
    version and build; the source store is only read."""
    src = Path(source) / "points"
    runs: dict[str, Path] = {}
    if not src.is_dir():
        return runs
    for d in sorted(src.iterdir()):
        summary = d / "summary.json"
        if d.name.startswith(".") or not summary.is_file():
            continue
        try:
            canonical = json.loads(summary.read_text(encoding="utf-8"))["scenario"]["canonical"]
        except (OSError, ValueError, KeyError, TypeError):
            continue  # not a run of this store's format: never adopted
        runs.setdefault(cache_key(canonical), d)
    return runs


def adopt_run(run: Path, out: str | Path, key: str) -> None:
    """Copies the run directory ``run`` into the store ``out`` as point ``key``: into a hidden
    sibling first, renamed into place, so a point is either adopted whole or not at all."""
    target = point_dir(out, key)
    tmp = target.with_name(f".{key}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(run, tmp)
    os.replace(tmp, target)


def adopt_runs(source: str | Path, points: Iterable[Point], out: str | Path) -> dict[str, Point]:
    """Adopts into the store ``out`` the runs of another store ``source`` that give one of
    ``points`` not yet stored (:func:`stored_runs`, :func:`adopt_run`). Returns the adopted
    points by key (memory: the source store's runs, not the points).

    Sound only when the two builds give bit-identical results on those scenarios
    (``bench/compare_builds.sh``): the caller says so."""
    runs = stored_runs(source)
    adopted: dict[str, Point] = {}
    if runs:
        for p in points:
            if p.key in runs and p.key not in adopted and not point_complete(out, p.key):
                adopt_run(runs[p.key], out, p.key)
                adopted[p.key] = p
    return adopted


def clean_temporaries(out: Path) -> None:
    """Removes what killed points and indexes left: hidden temporary directories in
    ``points/`` (a point's build, or a writability probe) and the index's temporary file."""
    d = out / "points"
    if d.is_dir():
        for p in d.iterdir():
            if p.name.startswith(".") and (".tmp-" in p.name or p.name.startswith(".tcplab-probe-")):
                shutil.rmtree(p, ignore_errors=True)
    for p in out.glob(f".{INDEX_FILE}.tmp-*"):
        p.unlink(missing_ok=True)


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
