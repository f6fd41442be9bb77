"""Sweeps: declaration, expansion, cache keys, resume, atomic storage, Dask, aggregation."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import tomllib
from pathlib import Path

import polars as pl
import pytest

from conftest import SMALL_TOML
from tcplab.aggregate import jain, jain_index, mean_ci, normalized, per_variant, t_quantile
from tcplab.sweep import (
    SweepError,
    SweepSpec,
    cache_key,
    expand,
    load_sweep,
    point_complete,
    point_dir,
    run_point,
    run_sweep,
    set_path,
)

LOSS = "topology.bottleneck.forward.loss.p"
#: The small scenario, shortened: a point runs in a few milliseconds.
BASE = {**tomllib.loads(SMALL_TOML), "duration": "1s"}


def small_points(**sweep):
    return expand(BASE, sweep or {"grid": {LOSS: [1e-3, 1e-2]}, "seeds": 2})


# ---- declaration and expansion ----------------------------------------------------------------


def test_grid_zip_and_seeds_expand_to_the_product():
    pts = expand(
        BASE,
        {
            "grid": {LOSS: [0.0, 1e-2], "flows.0.controller": ["reno", "veno", "cubic"]},
            "zip": {"topology.bottleneck.rate": ["1Mbps", "4Mbps"], "topology.bottleneck.buffer": [5, 20]},
            "seeds": 2,
        },
    )
    assert len(pts) == 2 * 3 * 2 * 2
    combos = {(p.params[LOSS], p.params["flows.0.controller"], p.params["topology.bottleneck.rate"], p.params["seed"]) for p in pts}
    assert len(combos) == len(pts)
    # zipped values go together: rate 1 Mb/s always with buffer 5
    assert all((p.params["topology.bottleneck.rate"] == "1Mbps") == (p.params["topology.bottleneck.buffer"] == 5) for p in pts)
    p = pts[-1]
    assert p.document["topology"]["bottleneck"]["forward"]["loss"] == {"p": 1e-2}
    assert p.document["flows"][0]["controller"] == "cubic"
    assert p.document["seed"] == 8  # base seed 7, seeds = 2 -> 7, 8
    assert len({p.key for p in pts}) == len(pts)


def test_seed_list_and_default_seed():
    assert [p.params["seed"] for p in expand(BASE, {"seeds": [3, 11]})] == [3, 11]
    only = expand(BASE, {})
    assert len(only) == 1 and only[0].params == {"seed": 7}


@pytest.mark.parametrize(
    "sweep, message",
    [
        ({"grid": {"topology.bottleneck.colour": [1]}}, "colour"),
        ({"grid": {"flows.5.controller": ["reno"]}}, "flows.5"),
        ({"grid": {"topology.bottleneck.rate.x": [1]}}, "topology.bottleneck.rate"),
        ({"grid": {LOSS: [2.0]}}, "2.0"),
        ({"grid": {"flows.0.controller": ["nosuch"]}}, "nosuch"),
        ({"zip": {LOSS: [1e-3, 1e-2], "topology.bottleneck.buffer": [5]}}, "equal lengths"),
        ({"grid": {LOSS: []}}, "empty"),
        ({"grid": {LOSS: 0.1}}, "list"),
        ({"seeds": 0}, "seeds"),
        ({"seeds": [1, 1]}, "repeats"),
        ({"grid": {"seed": [1, 2]}}, "seeds"),
        ({"grids": {}}, "grids"),
        ({"grid": {"a..b": [1]}}, "dotted path"),
    ],
)
def test_bad_sweeps_are_errors_naming_the_field(sweep, message):
    with pytest.raises(SweepError, match=message.replace(".", r"\.")):
        expand(BASE, sweep)


def test_points_failing_only_the_simulator_checks_are_rejected_before_running():
    # Valid for the schema; the simulator's routing finds that b is unreachable from a.
    doc = {
        "name": "islands",
        "duration": 1,
        "nodes": [{"name": n, "kind": "host"} for n in ("a", "b", "c", "d")],
        "links": [
            {"from": "a", "to": "b", "rate": "1Mbps", "delay": "1ms", "buffer": 5},
            {"from": "c", "to": "d", "rate": "1Mbps", "delay": "1ms", "buffer": 5},
        ],
        "flows": [{"src": "a", "dst": "b", "controller": "reno", "recovery": "sack"}],
    }
    assert len(expand(doc, {"grid": {"flows.0.dst": ["b"]}})) == 1
    with pytest.raises(SweepError, match=r"flows\.0\.dst = 'd'.*no route"):
        expand(doc, {"grid": {"flows.0.dst": ["b", "d"]}})


def test_set_path_goes_through_shorthands_and_copies():
    doc = {"a": {"loss": 0.01, "buffer": 12}, "flows": [{"controller": "reno"}]}
    out = set_path(doc, "a.loss.p", 0.5)
    assert out["a"]["loss"] == {"p": 0.5} and doc["a"]["loss"] == 0.01
    assert set_path(doc, "a.buffer.packets", 3)["a"]["buffer"] == {"packets": 3}
    assert set_path(doc, "flows.0.controller.flavor", "linux")["flows"][0]["controller"] == {"name": "reno", "flavor": "linux"}


def test_load_sweep_reads_the_table_and_rejects_a_bad_one(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text(SMALL_TOML + f'\n[sweep]\ngrid = {{ "{LOSS}" = [1e-3, 1e-2] }}\nseeds = 3\n')
    doc, spec = load_sweep(f)
    assert "sweep" not in doc and spec.seeds == [7, 8, 9] and spec.grid == {LOSS: [1e-3, 1e-2]}
    f.write_text(SMALL_TOML + '\n[sweep]\ngrid = { "topology.nope" = [1] }\n')
    doc, spec = load_sweep(f)
    with pytest.raises(SweepError, match="nope"):
        expand(doc, spec)
    f.write_text(SMALL_TOML + "\n[sweep]\nseeds = -1\n")
    with pytest.raises(SweepError, match="sweep.seeds"):
        load_sweep(f)


@pytest.mark.parametrize("name, n", [("veno-fig5.toml", 30), ("areno-fig6.toml", 24)])
def test_shipped_sweep_files_expand(name, n):
    doc, spec = load_sweep(Path(__file__).parents[1] / "scenarios" / "sweeps" / name)
    pts = expand(doc, spec)
    assert len(pts) == n and len({p.key for p in pts}) == n


def test_shipped_scenario_with_sweep_table_is_valid():
    # docs/sweeps.md's example: the Fig. 5 sweep over veno-fig5.toml
    pts = expand(
        tomllib.loads((Path(__file__).parents[1] / "scenarios/veno-fig5.toml").read_text()),
        SweepSpec.parse({"grid": {LOSS: [1e-5, 1e-4, 1e-3, 1e-2, 1e-1], "flows.0.controller": ["reno", "veno"]}, "seeds": 3}),
    )
    assert len(pts) == 30


# ---- cache keys ---------------------------------------------------------------------------------


def test_cache_key_is_stable_and_sensitive_to_every_parameter():
    (p,) = expand(BASE, {})
    canonical = json.loads(json.dumps(p.document))  # a copy
    from tcplab.scenario import Scenario

    c = Scenario.from_dict(canonical).canonical()
    assert cache_key(c) == p.key == cache_key(json.loads(json.dumps(c)))
    assert cache_key(c, version="0.0.0") != p.key
    assert cache_key(c, build="other") != p.key

    # Every leaf of the canonical scenario changes the key.
    def leaves(node, path=()):
        if isinstance(node, dict):
            for k, v in node.items():
                yield from leaves(v, (*path, k))
        elif isinstance(node, list) and node and not all(isinstance(x, (int, float)) for x in node):
            for i, v in enumerate(node):
                yield from leaves(v, (*path, i))
        else:
            yield path, node

    def changed(v):
        if isinstance(v, bool):
            return not v
        if isinstance(v, (int, float)):
            return v + 1
        if isinstance(v, str):
            return v + "x"
        if isinstance(v, list):
            return [*v, 1]
        return "x"

    n = 0
    for path, v in leaves(c):
        d = json.loads(json.dumps(c))
        node = d
        for k in path[:-1]:
            node = node[k]
        node[path[-1]] = changed(v)
        assert cache_key(d) != p.key, path
        n += 1
    assert n > 50


def test_equal_points_share_a_key():
    a = expand(BASE, {"grid": {"topology.bottleneck.buffer": [10]}})
    b = expand(BASE, {"grid": {"topology.bottleneck.buffer.packets": [10]}})
    assert a[0].key == b[0].key


# ---- running, resume, atomic storage ----------------------------------------------------------------

CALLS: list[str] = []


def counting_point(document, target):
    CALLS.append(target)
    return run_point(document, target)


def test_resume_skips_finished_points(tmp_path):
    pts = small_points()
    CALLS.clear()
    r = run_sweep(pts, tmp_path, jobs=1, progress=False, point_fn=counting_point)
    assert len(CALLS) == 4 and len(r.computed) == 4 and not r.cached
    assert all(point_complete(tmp_path, p.key) for p in pts)
    # an unchanged sweep computes nothing
    CALLS.clear()
    r = run_sweep(pts, tmp_path, jobs=1, progress=False, point_fn=counting_point)
    assert CALLS == [] and len(r.cached) == 4
    # a lost point (an interrupted sweep) is the only one computed again
    import shutil

    shutil.rmtree(point_dir(tmp_path, pts[2].key))
    r = run_sweep(pts, tmp_path, jobs=1, progress=False, point_fn=counting_point)
    assert len(CALLS) == 1 and r.computed == [pts[2].key]
    # a new grid value adds only its points
    more = small_points(grid={LOSS: [1e-3, 1e-2, 5e-2]}, seeds=2)
    CALLS.clear()
    run_sweep(more, tmp_path, jobs=1, progress=False, point_fn=counting_point)
    assert len(CALLS) == 2
    flows = r.flows()
    assert flows.height == 4 * 2 and {LOSS, "seed", "point", "key", "throughput_bps"} <= set(flows.columns)
    index = json.loads((tmp_path / "sweep.json").read_text())
    assert len(index["points"]) == 6


def test_runs_of_another_build_are_adopted_by_canonical_scenario(tmp_path):
    old, new = tmp_path / "old", tmp_path / "new"
    pts = small_points()
    run_sweep(pts, old, jobs=1, progress=False)
    # what an earlier build left: the same runs under the keys of another build id
    for p in pts:
        summary = json.loads((point_dir(old, p.key) / "summary.json").read_text())
        os.rename(point_dir(old, p.key), point_dir(old, cache_key(summary["scenario"]["canonical"], build="earlier")))
    more = small_points(grid={LOSS: [1e-3, 1e-2, 5e-2]}, seeds=2)
    CALLS.clear()
    r = run_sweep(more, new, jobs=1, progress=False, point_fn=counting_point, adopt_from=old)
    assert sorted(r.adopted) == sorted(p.key for p in pts)  # found by scenario, not by key
    # the new loss value's two runs, and one adopted run recomputed as the builds' check
    assert len(CALLS) == 3 and len(r.computed) == 2 and len(r.cached) == 4
    assert sum(".tmp-check-" in c for c in CALLS) == 1
    for p in pts:
        a = pl.read_parquet(point_dir(new, p.key) / "flows.parquet")
        summary = json.loads((point_dir(new, p.key) / "summary.json").read_text())
        b = pl.read_parquet(point_dir(old, cache_key(summary["scenario"]["canonical"], build="earlier")) / "flows.parquet")
        assert a.equals(b)
    assert not [d for d in (new / "points").iterdir() if d.name.startswith(".")]  # no temporaries left


def test_adopted_runs_that_this_build_computes_differently_are_refused(tmp_path):
    old, new = tmp_path / "old", tmp_path / "new"
    pts = small_points()
    run_sweep(pts, old, jobs=1, progress=False)
    # an "earlier build" whose flows table differs in one value, in the run the check recomputes
    victim = point_dir(old, min(p.key for p in pts)) / "flows.parquet"
    df = pl.read_parquet(victim)
    df.with_columns(pl.col("throughput_bps") + 1).write_parquet(victim)
    with pytest.raises(SweepError, match="differs from the adopted run in flows.parquet"):
        run_sweep(pts, new, jobs=1, progress=False, adopt_from=old)
    assert not any(point_complete(new, p.key) for p in pts)  # nothing adopted
    assert not [d for d in (new / "points").iterdir() if d.name.startswith(".")]


def failing_after_two(document, target):
    CALLS.append(target)
    if len(CALLS) > 2:
        raise KeyboardInterrupt  # the user stops the sweep
    return run_point(document, target)


def test_interrupted_sweep_resumes_where_it_stopped(tmp_path):
    pts = small_points()
    CALLS.clear()
    with pytest.raises(KeyboardInterrupt):
        run_sweep(pts, tmp_path, jobs=1, progress=False, point_fn=failing_after_two)
    assert sum(point_complete(tmp_path, p.key) for p in pts) == 2
    CALLS.clear()
    r = run_sweep(pts, tmp_path, jobs=1, progress=False, point_fn=counting_point)
    assert len(CALLS) == 2 and len(r.cached) == 2


_KILL_MIDWAY = """
import os, signal, sys, json
import polars as pl
from tcplab.sweep import run_point
orig = pl.DataFrame.write_parquet
def write(self, path, *a, **k):
    orig(self, path, *a, **k)
    os.kill(os.getpid(), signal.SIGKILL)   # killed after the first table is written
pl.DataFrame.write_parquet = write
run_point(json.loads(sys.argv[1]), sys.argv[2])
"""


def test_a_killed_point_leaves_no_complete_looking_result(tmp_path):
    (p,) = small_points(seeds=1)
    target = point_dir(tmp_path, p.key)
    target.parent.mkdir(parents=True)
    r = subprocess.run([sys.executable, "-c", _KILL_MIDWAY, json.dumps(p.document), str(target)])
    assert r.returncode == -signal.SIGKILL
    assert not target.exists() and not point_complete(tmp_path, p.key)
    leftovers = list(target.parent.iterdir())
    assert leftovers and all(x.name.startswith(".") for x in leftovers)  # only a hidden temporary
    CALLS.clear()
    run_sweep([p], tmp_path, jobs=1, progress=False, point_fn=counting_point)
    assert len(CALLS) == 1 and point_complete(tmp_path, p.key)
    assert [x.name for x in target.parent.iterdir()] == [p.key]  # the temporary was cleaned


def test_local_pool_retries_the_points_of_a_dead_worker(tmp_path):
    pts = small_points(grid={LOSS: [1e-3, 1e-2]}, seeds=1)
    (tmp_path / "points").mkdir(parents=True)
    (tmp_path / "points" / f"attempted-{pts[1].key}").write_text("1")  # only pts[0] kills
    r = run_sweep(pts, tmp_path, jobs=2, progress=False, point_fn=dying_once)
    assert sorted(r.computed) == sorted(p.key for p in pts)
    assert all(point_complete(tmp_path, p.key) for p in pts)
    assert r.retried.get(pts[0].key) == 1


# ---- Dask -----------------------------------------------------------------------------------------


def dying_once(document, target):
    """Kills its worker process on the first attempt at a point (a marker file remembers)."""
    marker = Path(target).parent / f"attempted-{Path(target).name}"
    if not marker.exists():
        marker.write_text("1")
        os.kill(os.getpid(), signal.SIGKILL)
    return run_point(document, target)


@pytest.fixture(scope="module")
def dask_client():
    distributed = pytest.importorskip("distributed")
    import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=50,
        scheduler_kwargs={"dashboard_address": ":0"},  # its HTTP server on a free port, not 8787
    )
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


def test_dask_run_equals_local_pool_and_in_process_runs(tmp_path, dask_client):
    pts = small_points()
    here = run_sweep(pts, tmp_path / "here", jobs=1, progress=False).flows()
    local = run_sweep(pts, tmp_path / "local", jobs=2, progress=False)
    remote = run_sweep(pts, tmp_path / "dask", scheduler=dask_client, progress=False)
    assert len(local.computed) == len(remote.computed) == 4
    cols = ["point", "name", LOSS, "seed", "throughput_bps", "segments_sent", "retransmits", "timeouts"]
    assert here.select(cols).equals(local.flows().select(cols))
    assert local.flows().select(cols).equals(remote.flows().select(cols))


def test_dask_worker_death_loses_only_its_point(tmp_path, dask_client):
    pts = small_points(grid={LOSS: [1e-3, 1e-2]}, seeds=1)
    victim = pts[0]
    # the other point is marked as attempted: only the victim's worker dies
    (tmp_path / "points").mkdir(parents=True)
    (tmp_path / "points" / f"attempted-{pts[1].key}").write_text("1")
    # by address, as `tcplab sweep --scheduler tcp://HOST:PORT` does
    address = dask_client.scheduler.address
    assert address.startswith("tcp://")
    r = run_sweep(pts, tmp_path, scheduler=address, progress=False, point_fn=dying_once)
    assert sorted(r.computed) == sorted(p.key for p in pts)
    assert (tmp_path / "points" / f"attempted-{victim.key}").exists()
    assert all(point_complete(tmp_path, p.key) for p in pts)


# ---- aggregation -------------------------------------------------------------------------------------


def test_t_quantiles_match_tables():
    for df, t in [(1, 12.706), (2, 4.303), (4, 2.776), (9, 2.262), (30, 2.042)]:
        assert t_quantile(0.95, df) == pytest.approx(t, abs=1e-3)
    assert t_quantile(0.99, 5) == pytest.approx(4.032, abs=1e-3)
    with pytest.raises(ValueError, match="confidence"):
        t_quantile(1.5, 3)


def test_mean_ci_on_known_data():
    df = pl.DataFrame({"g": ["a"] * 4 + ["b"], "x": [1.0, 2.0, 3.0, 4.0, 5.0]})
    out = mean_ci(df, "x", ["g"])
    a = out.filter(pl.col("g") == "a").row(0, named=True)
    sd = math.sqrt(5 / 3)
    assert a["n"] == 4 and a["mean"] == 2.5 and a["std"] == pytest.approx(sd)
    assert a["ci"] == pytest.approx(3.182446 * sd / 2, rel=1e-5)
    assert a["ci_low"] == pytest.approx(2.5 - a["ci"])
    b = out.filter(pl.col("g") == "b").row(0, named=True)
    assert b["n"] == 1 and b["ci"] is None


def test_jain_index_on_known_data():
    assert jain([1, 1, 1, 1]) == pytest.approx(1.0)
    assert jain([1, 0, 0, 0]) == pytest.approx(0.25)
    assert jain([1, 2]) == pytest.approx(9 / 10)
    df = pl.DataFrame({"run": [0, 0, 1, 1], "x": [1.0, 1.0, 1.0, 3.0]})
    out = jain_index(df, "x", ["run"])
    assert out["jain"].to_list() == pytest.approx([1.0, 16 / 20])


def test_per_variant_and_normalized():
    df = pl.DataFrame(
        {
            "cc": ["veno", "veno", "plus", "plus"] * 2,
            "seed": [1, 1, 1, 1, 2, 2, 2, 2],
            "x": [1.0, 3.0, 4.0, 4.0, 2.0, 2.0, 5.0, 3.0],
        }
    )
    v = per_variant(df, "x", "cc")
    assert v.filter(pl.col("cc") == "veno")["mean"][0] == 2.0
    assert v.filter(pl.col("cc") == "plus")["mean"][0] == 4.0
    n = normalized(v, "mean", "cc", "veno")
    assert n.filter(pl.col("cc") == "plus")["normalized"][0] == 2.0


# ---- command line ------------------------------------------------------------------------------------


def test_sweep_command_runs_then_reuses_and_rejects_bad_paths(tmp_path):
    from typer.testing import CliRunner

    from tcplab.cli import app

    f = tmp_path / "s.toml"
    f.write_text(SMALL_TOML.replace('duration = "2s"', 'duration = "1s"') + f'\n[sweep]\ngrid = {{ "{LOSS}" = [1e-3, 1e-2] }}\n')
    r = CliRunner().invoke(app, ["sweep", str(f), "--out", str(tmp_path / "out"), "--jobs", "1", "-q"])
    assert r.exit_code == 0, r.output
    assert "2 points: 2 run, 0 reused" in r.output
    r = CliRunner().invoke(app, ["sweep", str(f), "--out", str(tmp_path / "out"), "--jobs", "1", "-q"])
    assert "2 points: 0 run, 2 reused" in r.output
    f.write_text(SMALL_TOML + '\n[sweep]\ngrid = { "topology.bottleneck.colour" = [1] }\n')
    r = CliRunner().invoke(app, ["sweep", str(f), "--out", str(tmp_path / "bad")])
    assert r.exit_code == 2 and "topology.bottleneck.colour" in r.output
