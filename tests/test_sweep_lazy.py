"""Lazy sweeps (docs/sweeps.md): points produced as the sweep reaches them, equal to the eagerly
validated ones; a bounded number in flight on the local pool and on Dask (one loop); the
index written as points are reached; memory that does not grow with the points not yet run;
a sweep of 10^6 seeds killed and resumed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest

from conftest import SMALL_TOML
from tcplab.scenario import Scenario
from tcplab.sweep import SeedRange, SweepError, cache_key, expand, load_sweep, point_complete, point_dir, run_point
from tcplab.sweep import run_sweep, sweep_points
from tcplab.sweep.backends import LocalPool, run_stream
from tcplab.sweep.store import INDEX_FILE, SweepResult
from test_sweep import BASE, LOSS, dask_client  # noqa: F401 (dask_client: a fixture)


def slow_key(document):
    """The key as every point got it before: its own validation and canonical form."""
    return cache_key(Scenario.from_dict(document).canonical())


# ---- the points ---------------------------------------------------------------------------------


def test_lazy_points_equal_points_validated_one_by_one():
    sweep = {
        "grid": {LOSS: [0.0, 1e-2], "flows.0.controller": ["reno", "cubic"]},
        "zip": {"topology.bottleneck.rate": ["1Mbps", "4Mbps"], "topology.bottleneck.buffer": [5, 20]},
        "seeds": 3,
    }
    pts = sweep_points(BASE, sweep, params={"variant": "x"})
    assert len(pts) == 2 * 2 * 2 * 3
    listed = list(pts)
    assert [p.index for p in listed] == list(range(len(pts)))
    for i, p in enumerate(listed):
        assert p.key == slow_key(p.document), p.params
        assert p.document["seed"] == p.params["seed"] and p.params["variant"] == "x"
        q = pts[i]  # random access gives the same point
        assert (q.index, q.key, q.params, q.document) == (p.index, p.key, p.params, p.document)
    assert pts[-1].key == listed[-1].key and [p.key for p in pts[2:5]] == [p.key for p in listed[2:5]]
    # seeds vary fastest, then the zip rows, then the grid axes (last axis fastest)
    assert [p.params["seed"] for p in listed[:4]] == [7, 8, 9, 7]
    assert listed[3].params["topology.bottleneck.rate"] == "4Mbps"
    assert listed[6].params["flows.0.controller"] == "cubic"
    assert [p.key for p in expand(BASE, sweep, params={"variant": "x"})] == [p.key for p in listed]
    with pytest.raises(IndexError):
        pts[len(pts)]


def test_seed_dependent_points_are_validated_one_by_one():
    # a flow group with a start jitter draws its starts from the seed: no shared work
    doc = {**BASE, "flows": [{"count": 3, "controller": "reno", "recovery": "sack", "start_jitter": "10ms"}]}
    pts = list(sweep_points(doc, {"seeds": 3}))
    starts = [[f["start"] for f in Scenario.from_dict(p.document).canonical()["flows"]] for p in pts]
    assert len({tuple(s) for s in starts}) == 3  # the seeds moved the starts
    assert [p.key for p in pts] == [slow_key(p.document) for p in pts]


def test_a_million_seeds_cost_nothing_until_read():
    pts = sweep_points(BASE, {"seeds": 10**6})
    assert len(pts) == 10**6 and pts.spec.seeds == SeedRange(7, 10**6)
    assert SeedRange(7, 3) == [7, 8, 9] and list(SeedRange(7, 3)) == [7, 8, 9]
    last = pts[10**6 - 1]
    assert last.params == {"seed": 7 + 10**6 - 1} and last.key == slow_key(last.document)
    assert pts.validate() == 10**6  # one combination: one validation
    with pytest.raises(SweepError, match=r"sweep\.seeds: .* 2\^64 - 1"):
        sweep_points({**BASE, "seed": 2**64 - 2}, {"seeds": 3})


def test_an_invalid_point_stops_the_sweep_where_it_is_reached(tmp_path):
    pts = sweep_points(BASE, {"grid": {"flows.0.controller": ["reno", "nosuch"]}, "seeds": 2})
    assert len(pts) == 4  # nothing validated yet beyond the first combination
    with pytest.raises(SweepError, match=r"sweep point \(flows\.0\.controller = 'nosuch'\).*nosuch"):
        run_sweep(pts, tmp_path, jobs=1, progress=False)
    assert [point_complete(tmp_path, pts[i].key) for i in (0, 1)] == [True, True]
    index = json.loads((tmp_path / INDEX_FILE).read_text())
    assert [e["key"] for e in index["points"]] == [pts[0].key, pts[1].key]


# ---- the index ----------------------------------------------------------------------------------


def stub_point(document, target):
    """Stores a point without simulating it: the sweep's own cost."""
    t = Path(target)
    tmp = t.with_name(f".{t.name}.tmp-{os.getpid()}")
    tmp.mkdir()
    (tmp / "summary.json").write_text(json.dumps({"seed": document["seed"]}))
    os.replace(tmp, t)


def test_the_index_is_what_the_whole_index_was(tmp_path):
    pts = expand(BASE, {"grid": {LOSS: [1e-3, 1e-2]}, "seeds": 700})  # more than one buffer
    # a table as a value (written by the indenting encoder): the base scenario again, so the
    # point (loss 1e-2, seed 7) under another name; and a repeated point. Both are listed
    # again and run once.
    pts += expand(BASE, {"grid": {"flows.0.controller": [{"name": "reno"}]}})
    assert pts[-1].key == pts[700].key
    pts = [*pts, pts[0]]
    res = run_sweep(pts, tmp_path, jobs=1, progress=False, point_fn=stub_point)
    assert len(res.computed) == 1400
    whole = {"points": [{"index": p.index, "key": p.key, "params": p.params, "name": p.document.get("name")} for p in pts]}
    assert (tmp_path / INDEX_FILE).read_text() == json.dumps(whole, indent=1, default=str) + "\n"
    run_sweep([], tmp_path, jobs=1, progress=False)
    assert (tmp_path / INDEX_FILE).read_text() == json.dumps({"points": []}, indent=1) + "\n"


def test_what_killed_workers_leave_in_the_store_is_cleaned_and_builds_probe_nothing(tmp_path, monkeypatch):
    # a killed worker may leave a point's build (".<key>.tmp-<pid>") and, before this was
    # fixed, a writability probe (".tcplab-probe-<pid>-<hex>"): both go at the next start
    from tcplab import out_dir

    pts = sweep_points(BASE, {"seeds": 2})
    (tmp_path / "points").mkdir()
    for name in (f".{pts[0].key}.tmp-99999", ".tcplab-probe-99999-0badf00d"):
        (tmp_path / "points" / name).mkdir()
    probes = []
    real = out_dir._probe
    monkeypatch.setattr(out_dir, "_probe", lambda anchor, p: probes.append(anchor) or real(anchor, p))
    run_sweep(pts, tmp_path, jobs=1, progress=False)
    assert sorted(d.name for d in (tmp_path / "points").iterdir()) == sorted(p.key for p in pts)
    # a point is built in a hidden sibling whose mkdir is the only test: nothing a kill between
    # a probe's mkdir and rmdir could leave behind
    assert (tmp_path / "points") not in probes


# ---- streaming: bounded in flight, bounded memory -------------------------------------------------


class Counting:
    """An iterator over points that counts how many were taken."""

    def __init__(self, points):
        self.it, self.taken = iter(points), 0

    def __iter__(self):
        return self

    def __next__(self):
        p = next(self.it)
        self.taken += 1
        return p


class Bar:
    def advance(self, label=""):
        pass


def stop_after_six(document, target):
    points = Path(target).parent
    if sum(1 for d in points.iterdir() if not d.name.startswith(".")) >= 6:
        raise RuntimeError("enough")
    stub_point(document, target)


@pytest.mark.parametrize("where", ["local", "dask"])
def test_points_are_taken_only_as_workers_free_up(tmp_path, where, request):
    from tcplab.sweep.backends import DaskCluster

    backend = LocalPool(2) if where == "local" else DaskCluster(request.getfixturevalue("dask_client"))
    window = backend.window()
    stream = Counting(sweep_points(BASE, {"seeds": 10**6}))
    (tmp_path / "points").mkdir()
    res = SweepResult(out=tmp_path, points=[])
    with pytest.raises(RuntimeError, match="enough"):
        run_stream(stream, backend, stop_after_six, tmp_path, res, Bar())
    stored = sum(1 for d in (tmp_path / "points").iterdir() if not d.name.startswith("."))
    assert 6 <= stored <= 6 + window
    assert stream.taken <= stored + window + 1  # +1: the point whose failure stopped it


_PEAKS = """
import json, os, sys, tempfile, tracemalloc
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from test_sweep_lazy import BASE, stub_point
from tcplab.sweep import run_sweep, sweep_points

def interrupted_after_50(document, target):
    if sum(1 for _ in Path(target).parent.iterdir()) >= 50:
        raise KeyboardInterrupt
    stub_point(document, target)

def peak(seeds, out):
    points = sweep_points(BASE, {"seeds": seeds})
    tracemalloc.start()
    try:
        run_sweep(points, out, jobs=1, progress=False, point_fn=interrupted_after_50)
    except KeyboardInterrupt:
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()

with tempfile.TemporaryDirectory() as d:
    for n in (10**6, 1000):
        peak(n, Path(d) / f"warm{n}")  # imports and caches
    print(json.dumps([peak(n, Path(d) / str(n)) for n in (1000, 10**6)]))
"""


def test_memory_does_not_grow_with_the_points_not_yet_run():
    # in a process of its own: tracemalloc counts every thread's allocations
    r = subprocess.run(
        [sys.executable, "-c", _PEAKS, str(Path(__file__).parent)], capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stderr
    small, big = json.loads(r.stdout)
    # 999,000 more points not yet run; a list of them would take hundreds of MB
    assert big <= small + 64 * 1024, (small, big)


# ---- a large lazy sweep killed and resumed ----------------------------------------------------------


SEEDS_TOML = SMALL_TOML.replace('duration = "2s"', 'duration = "1s"') + "\n[sweep]\nseeds = 1000000\n"


def _stored(out: Path) -> dict[str, int]:
    d = out / "points"
    if not d.is_dir():
        return {}
    return {p.name: p.stat().st_ino for p in d.iterdir() if not p.name.startswith(".") and (p / "summary.json").is_file()}


def _run_until(f: Path, out: Path, at_least: int, cwd: Path) -> dict[str, int]:
    """Starts ``tcplab sweep`` on ``f``, SIGKILLs it once ``at_least`` points are stored."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "tcplab", "sweep", str(f), "--out", str(out), "--jobs", "2", "-q"],
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 300
    try:
        while len(_stored(out)) < at_least:
            assert proc.poll() is None, proc.stderr.read()
            assert time.monotonic() < deadline, "the sweep stored too few points"
            time.sleep(0.05)
    finally:
        proc.kill()
        proc.wait(timeout=30)
    time.sleep(1.5)  # the workers die with it (PR_SET_PDEATHSIG, or the watchdog's second)
    return _stored(out)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_killed_sweep_of_a_million_seeds_resumes_identically(tmp_path):
    f = tmp_path / "seeds.toml"
    f.write_text(SEEDS_TOML)
    out = tmp_path / "killed"
    first = _run_until(f, out, 3, tmp_path)
    pts = sweep_points(*load_sweep(f))
    index = json.loads((out / INDEX_FILE).read_text())["points"]  # whole JSON, a prefix of the points
    assert [e["key"] for e in index] == [p.key for p in pts[: len(index)]]
    assert set(first) <= {e["key"] for e in index}

    second = _run_until(f, out, len(first) + 3, tmp_path)
    assert all(second[k] == ino for k, ino in first.items())  # resumed: stored points kept, not rerun
    index = json.loads((out / INDEX_FILE).read_text())["points"]
    assert [e["key"] for e in index] == [p.key for p in pts[: len(index)]]

    # every stored point equals an uninterrupted run of it
    done = [p for p in pts[: len(index)] if p.key in second]
    whole = run_sweep(done, tmp_path / "whole", jobs=1, progress=False)
    assert len(whole.computed) == len(done) == len(second)
    for p in done:
        for table in ("flows", "series", "drops"):
            a = pl.read_parquet(point_dir(out, p.key) / f"{table}.parquet")
            b = pl.read_parquet(point_dir(tmp_path / "whole", p.key) / f"{table}.parquet")
            assert a.equals(b), (p.key, table)
    # a third start cleans what the killed workers left and runs only the missing points
    res = run_sweep(pts[: len(index)], out, jobs=1, progress=False, point_fn=run_point)
    assert not [d for d in (out / "points").iterdir() if d.name.startswith(".")]
    assert sorted(res.cached) == sorted(second) and len(res.computed) == len(index) - len(second)
