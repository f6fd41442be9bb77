"""Experiments marked live (``Experiment.live``) and the Veno Fig. 5 live experiment
(``veno-fig5-live``, docs/real-tcp.md).

Fast, everywhere: ``all`` never selects a live experiment (only naming it does), ``--list``
marks it, and where live runs cannot be made it is reported as not run with the one-line
reason (no crash, nothing pending).

Live (root, ``ip netns``, /dev/net/tun; skips saying which is missing; a refusal by ``run_live`` fails):
the experiment's machinery on a tiny configuration, one loss point (1e-2), 600 kB,
Veno and Reno, one live seed and three simulated ones: both transfers complete byte-exact
(tcplab's sender over real TCP to a Linux sink), a second ``run_suite`` computes nothing
(live and simulated runs reused from the store), the frame has live and simulated rows of
both controllers, and the report renders with the live rows.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import polars as pl
import pytest
import test_live
from typer.testing import CliRunner

from tcplab import reproduce
from tcplab.cli import app
from tcplab.reproduce import veno_live
from tcplab.reproduce.experiment import LIVE_STORE, live_refusal, run_suite
from tcplab.reproduce.docs import render_docs
from tcplab.report.reproduce import render_report
from tcplab.sweep import point_dir

TINY = {"quick": veno_live.Size(losses=(1e-2,), live_seeds=1, sim_seeds=3, bytes="600kB", duration="90s")}


def test_all_never_selects_a_live_experiment_naming_it_does():
    live = [e.id for e in reproduce.ALL if e.live is not None]
    assert "veno-fig5-live" in live
    every = [e.id for e in reproduce.select(["all"])]
    assert not set(live) & set(every)
    assert [e.id for e in reproduce.select([])] == every
    assert [e.id for e in reproduce.select(["veno-fig5-live"])] == ["veno-fig5-live"]
    both = [e.id for e in reproduce.select(["all", "veno-fig5-live"])]
    assert both == [*every, "veno-fig5-live"]
    assert [e.id for e in reproduce.select(["veno-fig5-live", "veno-fig5-live"])] == ["veno-fig5-live"]


def test_list_marks_the_live_experiment():
    r = CliRunner().invoke(app, ["reproduce", "--list"])
    assert r.exit_code == 0, r.output
    line = next(x for x in r.output.splitlines() if "veno-fig5-live" in x)
    assert "LIVE" in line


def test_live_points_and_simulated_points_are_the_same_scenarios():
    e = reproduce.get("veno-fig5-live")
    assert e.live is not None
    live, sim = e.live.points("quick"), e.points("quick")
    assert len(live) == 2 * len(veno_live.SIZES["quick"].losses) * veno_live.SIZES["quick"].live_seeds
    assert all(p.document["flows"][0]["stack"] == "tcplab-tcp" for p in live)
    plain = {p.key for p in sim if p.params["run"] == veno_live.RUN_SIM}
    assert {p.key for p in live} <= plain  # the live runs' scenarios are simulated as they are
    linux = [p for p in sim if p.params["run"] == veno_live.RUN_SIM_LINUX]
    assert linux and all(p.document["tcp"]["quickack"] for p in linux)
    assert len({p.key for p in e.points("full")}) == len(e.points("full"))


def test_a_live_experiment_that_cannot_run_is_reported_not_run(tmp_path, monkeypatch):
    import tcplab.live.run as live_run

    monkeypatch.setattr(live_run, "live_support", lambda: "live runs need root (test)")
    e = veno_live.make("veno-fig5-live-tiny", TINY)
    suite = run_suite([e], mode="quick", out=tmp_path, progress=False)
    (o,) = suite.outcomes
    assert o.error == "not run: live runs need root (test)" and o.runs == 0 and o.claims == []
    assert suite.computed == suite.live_computed == 0
    assert "not run: live runs need root (test)" in render_report(suite)
    assert "**not run: live runs need root (test)**" in render_docs(suite)


def test_the_cli_says_why_a_live_experiment_did_not_run(tmp_path, monkeypatch):
    import tcplab.live.run as live_run

    monkeypatch.setattr(live_run, "live_support", lambda: "live runs need root (test)")
    r = CliRunner().invoke(app, ["reproduce", "veno-fig5-live", "--out", str(tmp_path / "o"), "-q"])
    assert r.exit_code == 0, r.output
    assert "veno-fig5-live: not run: live runs need root (test)" in r.output
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    (exp,) = summary["experiments"]
    assert exp["live"] and exp["error"] == "not run: live runs need root (test)"


def test_docs_of_all_list_the_live_experiment_without_running_it():
    from tcplab.reproduce.experiment import Suite

    text = render_docs(Suite([], "quick", __import__("datetime").datetime.now(), 0.0, Path("x")))
    assert "## Live experiments" in text and "`veno-fig5-live`" in text
    assert "sudo tcplab reproduce veno-fig5-live --quick" in text


# ---- live -------------------------------------------------------------------------------------


emu = test_live.emu  # skips without root, builds tcplab-emu and tcplab-flow


@pytest.fixture(scope="module")
def tiny_live(emu):
    e = veno_live.make("veno-fig5-live-tiny", TINY)
    assert e.live is not None
    # Live runs are supported here (the emu fixture did not skip): tcplab-tcp flows must run.
    assert live_refusal(e.live.points("quick")) is None
    return e


def test_tiny_live_experiment_end_to_end(tiny_live, tmp_path):
    t0 = time.monotonic()
    suite = run_suite([tiny_live], mode="quick", out=tmp_path, progress=False)
    (o,) = suite.outcomes
    assert o.error is None
    assert suite.live_computed == 2 and suite.live_cached == 0 and suite.computed == 3 * 2 * 3
    f = o.frame
    assert set(f["run"].unique()) == set(veno_live.RUNS)
    live = f.filter(pl.col("run") == veno_live.RUN_LIVE)
    assert sorted(live["variant"].to_list()) == ["reno", "veno"]
    # both transfers complete, byte-exact by the Linux sink's check
    assert live["completed"].all() and (live["bytes_delivered"] == 600_000).all(), live
    for key in live["key"]:
        summary = json.loads((point_dir(tmp_path / LIVE_STORE, key) / "summary.json").read_text())
        flows = summary["live"]["flows"]
        assert all(v.get("intact") for v in flows.values()), flows
    assert (live["kBps"] > 20).all() and (live["kBps"] < 200).all(), live  # the pipe carries at most 193 kB/s
    assert (live["acks_per_segment"] > 0).all()
    # rows: live, simulated and the live / simulated ratio per controller
    q = [r.quantity for r in o.rows]
    assert "Veno at 1e-2, live" in q and "Reno at 1e-2: live / simulated" in q and "Veno/Reno at 1e-2, live" in q
    assert next(r for r in o.rows if r.quantity == "Veno at 1e-2, live").mean > 0
    # the paper's claims on the live data: one seed decides nothing
    assert o.claims[0].text.startswith("Live: ") and o.claims[0].verdict == "inconclusive"
    html = render_report(suite)
    assert "data:image/png;base64," in html and "Veno at 1e-2, live" in html
    first = time.monotonic() - t0
    # resumable: nothing is computed again, live or simulated
    again = run_suite([tiny_live], mode="quick", out=tmp_path, progress=False)
    assert again.computed == 0 and again.live_computed == 0 and again.live_cached == 2
    assert again.outcomes[0].frame.drop("key").equals(f.drop("key"))
    assert first < 90, first


def test_live_points_already_stored_are_reused_and_leftovers_removed(tmp_path, monkeypatch):
    import tcplab.live.run as live_run
    from tcplab.reproduce.experiment import run_live_points

    e = veno_live.make("veno-fig5-live-tiny", TINY)
    assert e.live is not None
    pts = e.live.points("quick")
    done, todo = pts
    point_dir(tmp_path, done.key).mkdir(parents=True)
    (point_dir(tmp_path, done.key) / "summary.json").write_text("{}")
    leftover = tmp_path / "points" / f".{todo.key}.tmp-1"
    leftover.mkdir()
    ran = []

    def fake_run_live(doc, out, **kw):  # writes a results directory whole, as run_live does
        ran.append((doc["flows"][0]["controller"], kw["realtime"]))
        Path(out).mkdir()
        (Path(out) / "summary.json").write_text("{}")

    monkeypatch.setattr(live_run, "run_live", fake_run_live)
    res = run_live_points(pts, tmp_path, progress=False, realtime=True)
    assert res.cached == [done.key] and res.computed == [todo.key]
    assert ran == [(todo.document["flows"][0]["controller"], True)] and not leftover.exists()
    assert (point_dir(tmp_path, todo.key) / "summary.json").exists()
    again = run_live_points(pts, tmp_path, progress=False)
    assert again.computed == [] and sorted(again.cached) == sorted([done.key, todo.key])
