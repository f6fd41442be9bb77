"""``tcplab compare`` on simulated runs only: the spread and the rule
(docs/compare.md), the verdicts on runs, the report's figures, compare.json's layout, the
driver's skips and the CLI. The live comparison is tests/test_compare_live.py.

Expectations fixed before running:
- the rule at 95 % flags about 5 % of comparisons of samples from one distribution; Welch's
  degrees of freedom rounded down only make it stricter, so the share flagged out of 4000
  null comparisons (n = 3 vs 3, normal) is at most 5 % plus 3 binomial standard deviations;
- the same scenario under seeds 1-4 and seeds 5-8: 2 flows x 5 quantities = 10 comparisons,
  each flagged with probability ~5 % when nothing differs: at most 2 flagged (3 or more has
  probability ~1 % if they were independent);
- Reno against Vegas on one flow over a deep drop-tail buffer without random loss: Reno fills
  the buffer (losses, RTT up to propagation + buffer / rate), Vegas keeps a few packets
  queued (no loss): retransmissions and mean RTT beyond the spread, Vegas's RTT lower.
"""

from __future__ import annotations

import json
import math
import os
import re

import numpy as np
import pytest
from typer.testing import CliRunner

from conftest import SMALL_TOML
from tcplab.cli import app
from tcplab.compare import linux_variant, parse_modes, parse_seeds, plan_compare, run_compare
from tcplab.report.compare_stats import BEYOND, METRICS, UNDECIDED, WITHIN, beyond_spread, compare_runs, spread
from tcplab.report.compare_page import write_compare
from tcplab.results import write_results
from tcplab.run import run
from tcplab.scenario import Scenario

runner = CliRunner()

DEEP_BUFFER = """
name = "deep"
duration = "3s"
[topology]
bottleneck = { rate = "5Mbps", delay = "10ms", buffer = 100 }
sender_access = { rate = "100Mbps", delay = "1ms", buffer = 1000 }
receiver_access = { rate = "100Mbps", delay = "1ms", buffer = 1000 }
[tcp]
rto_min = "200ms"
[[flows]]
name = "f"
controller = "{controller}"
recovery = "sack"
[trace]
series = "change"
"""


def _runs(text: str, seeds: list[int], base) -> list:
    sc = Scenario.from_toml(text)
    return [write_results(run(sc.with_seed(s)), base / f"seed-{s}", report=False) for s in seeds]


# ---- the spread and the rule -------------------------------------------------------------------


def test_spread_is_the_mean_with_its_t_interval_and_min_max():
    s = spread([11.0, 12.0, 13.0, None, math.nan])
    assert s.n == 3 and s.mean == 12.0 and s.sd == 1.0 and (s.min, s.max) == (11.0, 13.0)
    half = 4.302652729911275 / math.sqrt(3)  # t(0.975, 2)
    assert s.ci_low == pytest.approx(12 - half) and s.ci_high == pytest.approx(12 + half)
    one = spread([5.0])
    assert one.n == 1 and one.mean == 5.0 and one.sd is None and one.ci_low is None
    assert spread([]).n == 0 and spread([None]).mean is None


def test_a_non_negative_quantity_gets_a_non_negative_interval():
    """Two seeds of a throughput, 1.0 and 6.1 Mb/s, once gave [-5.01, 12.1]; the mean of
    values that are all >= 0 cannot be below 0, so the interval stops there. A quantity that
    can be negative keeps its whole t interval."""
    s = spread([1.0e6, 6.1e6])
    half = 12.706204736174707 * s.sd / math.sqrt(2)  # t(0.975, 1)
    assert s.ci_low == 0.0 and s.ci_high == pytest.approx(s.mean + half)
    d = spread([-1.0, 4.0])
    assert d.ci_low == pytest.approx(d.mean - 12.706204736174707 * d.sd / math.sqrt(2))


def test_rule_welch_t():
    a, b = spread([1.0, 2.0, 3.0]), spread([2.0, 3.0, 4.0])
    verdict, half, df = beyond_spread(a, b)
    # equal variances and sizes: Welch's nu = 4; half = t(0.975, 4) * sqrt(1/3 + 1/3)
    assert df == 4 and half == pytest.approx(2.7764451051977987 * math.sqrt(2 / 3))
    assert verdict == WITHIN  # diff 1 < 2.27
    assert beyond_spread(spread([10.0, 11.0, 12.0]), spread([20.0, 21.0, 22.0]))[0] == BEYOND
    # a point (sd 0) against a spread: nu = n_b - 1
    assert beyond_spread(spread([5.0, 5.0, 5.0]), spread([1.0, 2.0, 3.0, 4.0]))[2] == 3
    # both points: any difference is beyond, none is within
    assert beyond_spread(spread([0.0, 0.0]), spread([1.0, 1.0]))[0] == BEYOND
    assert beyond_spread(spread([7.0, 7.0]), spread([7.0, 7.0]))[0] == WITHIN
    # fewer than 2 seeds in a mode: undecided
    assert beyond_spread(spread([1.0]), spread([5.0, 6.0]))[0] == UNDECIDED
    assert beyond_spread(spread([]), spread([5.0, 6.0]))[0] == UNDECIDED


def test_rule_flags_about_five_percent_of_null_comparisons():
    rng = np.random.default_rng(13)
    trials = 4000
    flagged = sum(
        beyond_spread(spread(rng.normal(10, 2, 3)), spread(rng.normal(10, 2, 3)))[0] == BEYOND for _ in range(trials)
    )
    bound = 0.05 + 3 * math.sqrt(0.05 * 0.95 / trials)
    assert flagged / trials <= bound
    assert flagged > 0  # the rule can flag at all
    # and it finds a real difference of 3 standard deviations most of the time (n = 5 vs 5)
    power = sum(
        beyond_spread(spread(rng.normal(10, 1, 5)), spread(rng.normal(13, 1, 5)))[0] == BEYOND for _ in range(500)
    )
    assert power / 500 > 0.8


# ---- verdicts on simulated runs ----------------------------------------------------------------


def test_same_scenario_other_seeds_is_within_spread(tmp_path):
    a = _runs(SMALL_TOML, [1, 2, 3, 4], tmp_path / "a")
    b = _runs(SMALL_TOML, [5, 6, 7, 8], tmp_path / "b")
    c = compare_runs("small", {"first": a, "second": b})
    assert len(c.verdicts) == 2 * len(METRICS)
    flagged = [v for v in c.verdicts if v.verdict == BEYOND]
    assert len(flagged) <= 2, flagged
    assert all(v.verdict != UNDECIDED for v in c.verdicts if v.metric != "delay_mean_ms")
    # the same runs in both modes: every difference is 0, nothing flagged
    same = compare_runs("small", {"first": a, "again": a})
    assert all(v.diff == 0 and v.verdict == WITHIN for v in same.verdicts)


@pytest.fixture(scope="module")
def reno_vegas(tmp_path_factory):
    base = tmp_path_factory.mktemp("rv")
    reno = _runs(DEEP_BUFFER.replace("{controller}", "reno"), [1, 2, 3], base / "reno")
    vegas = _runs(DEEP_BUFFER.replace("{controller}", "vegas"), [1, 2, 3], base / "vegas")
    return compare_runs("deep", {"reno": reno, "vegas": vegas}, root=base), base


def test_a_different_controller_is_flagged(reno_vegas):
    c, _ = reno_vegas
    by = {v.metric: v for v in c.verdicts}
    assert by["retransmits"].verdict == BEYOND and by["retransmits"].diff < 0
    assert by["mean_rtt_ms"].verdict == BEYOND and by["mean_rtt_ms"].diff < 0


def test_compare_json_and_report(reno_vegas, tmp_path):
    c, base = reno_vegas
    report, doc_path = write_compare(c, tmp_path)
    doc = json.loads(doc_path.read_text())
    assert doc["schema"] == 1 and doc["scenario"] == "deep" and doc["confidence"] == 0.95
    assert [m["key"] for m in doc["metrics"]] == [m.key for m in METRICS]
    assert doc["modes"]["reno"]["seeds"] == [1, 2, 3]
    assert doc["modes"]["vegas"]["runs"] == ["vegas/seed-1", "vegas/seed-2", "vegas/seed-3"]  # relative to root
    (flow,) = doc["flows"]
    assert flow["name"] == "f" and flow["controller"] == "reno"
    s = flow["metrics"]["throughput_mbps"]["vegas"]
    assert set(s) == {"n", "mean", "sd", "ci_low", "ci_high", "min", "max", "values"} and s["n"] == 3
    assert len(doc["verdicts"]) == len(METRICS)
    v = doc["verdicts"][0]
    assert set(v) == {"flow", "name", "metric", "a", "b", "diff", "rel_diff", "half_width", "df", "verdict"}
    assert (v["a"], v["b"]) == ("reno", "vegas")
    assert sum(doc["counts"].values()) == len(doc["verdicts"])
    html = report.read_text()
    # the overlay figure of the flow and the delay CDFs, as embedded PNGs
    assert len(re.findall(r"<img alt=\"[^\"]*\" src=\"data:image/png;base64,", html)) == 2
    assert "cwnd, RTT and throughput over time" in html and "one-way delay CDF" in html
    assert "<span class='bad'>beyond spread</span>" in html


# ---- the driver --------------------------------------------------------------------------------


def test_parse_seeds_and_modes():
    assert parse_seeds("1-3") == [1, 2, 3] and parse_seeds("1,4,7") == [1, 4, 7] and parse_seeds("1-3,2,8") == [1, 2, 3, 8]
    for bad in ("", "x", "3-1", "-1", "1-"):
        with pytest.raises(ValueError, match="--seeds"):
            parse_seeds(bad)
    assert parse_modes("linux,simulated") == ["simulated", "linux"]
    for bad in ("", "sim", "simulated,foo"):
        with pytest.raises(ValueError, match="--modes"):
            parse_modes(bad)


GROUPS = """
name = "groups"
duration = "1s"
[topology]
pairs = 3
bottleneck = { rate = "2Mbps", delay = "10ms", buffer = 20 }
[[flows]]
name = "reno"
controller = "reno"
recovery = "newreno"
[[flows]]
name = "veg"
count = 2
controller = "vegas"
recovery = "newreno"
"""


def test_linux_variant_sets_the_stack_where_the_kernel_has_the_controller():
    sc = Scenario.from_toml(GROUPS)
    linux, excluded, why = linux_variant(sc, ["reno", "cubic"])
    assert set(excluded) == {"veg0", "veg1"}
    assert "no congestion control 'vegas'" in excluded["veg0"] and "reno, cubic" in excluded["veg0"]
    if linux is None:  # the schema has no `stack` field yet (tcplab run --live adds it)
        assert why is not None and "stack" in why
    else:
        given = linux.source["given"]["flows"]
        assert given[0]["stack"] == "linux" and "stack" not in given[1]
    assert "stack" not in sc.source["given"]["flows"][0]  # the original is untouched
    none, excluded, why = linux_variant(sc, ["bbr"])
    assert none is None and len(excluded) == 3 and "no flow's controller" in why


def test_plan_skips_what_cannot_run_and_says_why():
    plan = plan_compare(Scenario.from_toml(GROUPS), [1, 2], kernel_controls=lambda: ["cubic"])
    assert plan.modes[0] == "simulated"
    for mode in ("live", "linux"):
        assert (mode in plan.modes) != (mode in plan.skipped)
        if mode in plan.skipped:
            assert plan.skipped[mode] and "\n" not in plan.skipped[mode]
    if "linux" not in plan.skipped or "kernel" in plan.skipped["linux"]:
        assert "no flow's controller" in plan.skipped["linux"]


def test_run_compare_simulated_only(tmp_path):
    plan = plan_compare(Scenario.from_toml(SMALL_TOML), [1, 2], ["simulated"])
    seen = []
    o = run_compare(plan, tmp_path / "c", run_reports=False, progress=lambda *a: seen.append(a))
    assert seen == [("simulated", 1, "start"), ("simulated", 1, "done"), ("simulated", 2, "start"), ("simulated", 2, "done")]
    assert sorted(os.listdir(o.out)) == ["compare.json", "report.html", "simulated"]
    assert sorted(os.listdir(o.out / "simulated")) == ["seed-1", "seed-2"]
    assert all(r.path.exists() for r in o.comparison.runs["simulated"])  # moved with the directory
    doc = json.loads(o.document.read_text())
    assert doc["modes"]["simulated"]["runs"] == ["simulated/seed-1", "simulated/seed-2"]
    assert doc["verdicts"] == []  # one mode: nothing to compare it with
    assert [p.name for p in tmp_path.iterdir()] == ["c"]  # no hidden build directory left


def test_cli_compare(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "small.toml").write_text(SMALL_TOML)
    r = runner.invoke(app, ["compare", "small.toml", "--seeds", "1-2", "--modes", "simulated", "--out", "c", "-q"])
    assert r.exit_code == 0, r.output
    assert r.stdout.strip() == "c" and (tmp_path / "c" / "compare.json").exists()
    assert (tmp_path / "c" / "simulated" / "seed-1" / "report.html").exists()
    for args, expected in (
        (["--seeds", "x"], "--seeds 'x'"),
        (["--modes", "sim"], "--modes 'sim'"),
        (["--out", "c"], "--out"),  # not empty
    ):
        r = runner.invoke(app, ["compare", "small.toml", *args])
        assert r.exit_code == 2, r.output
        assert r.stderr.count("\n") == 1 and r.stderr.startswith("error: ") and expected in r.stderr
    assert sorted(os.listdir(tmp_path)) == ["c", "small.toml"]


def test_cli_compare_notes_skipped_modes(tmp_path, monkeypatch):
    """Without a way to run live (this build or this machine), the live modes are skipped
    with one note each and the simulated runs are still compared."""
    from tcplab.compare import live_unavailable

    why = live_unavailable()
    if why is None:
        pytest.skip("live runs are possible here: tests/test_compare_live.py compares them")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "small.toml").write_text(SMALL_TOML)
    r = runner.invoke(app, ["compare", "small.toml", "--seeds", "1-2", "--out", "c", "--no-run-reports"])
    assert r.exit_code == 0, r.output
    assert f"note: live skipped: {why}" in r.stderr and f"note: linux skipped: {why}" in r.stderr
    doc = json.loads((tmp_path / "c" / "compare.json").read_text())
    assert doc["skipped"] == {"live": why, "linux": why} and list(doc["modes"]) == ["simulated"]
    r = runner.invoke(app, ["compare", "small.toml", "--modes", "live", "--out", "d"])
    assert r.exit_code == 2 and r.stderr == f"error: --modes live: cannot run: {why}\n"
    assert not (tmp_path / "d").exists()


def test_a_mode_asked_for_by_name_that_cannot_run_is_an_error(tmp_path, monkeypatch):
    """``--modes simulated,live`` where live cannot run is exit 2 in one line
    before anything runs (the default modes skip it with a note instead)."""
    import tcplab.compare

    monkeypatch.setattr(tcplab.compare, "live_unavailable", lambda: "no namespaces here (test)")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "small.toml").write_text(SMALL_TOML)
    r = runner.invoke(app, ["compare", "small.toml", "--seeds", "1", "--modes", "simulated,live", "--out", "d"])
    assert r.exit_code == 2, r.output
    assert r.stderr == "error: --modes live: cannot run: no namespaces here (test)\n"
    assert not (tmp_path / "d").exists()
    r = runner.invoke(app, ["compare", "small.toml", "--seeds", "1", "--out", "e", "--no-run-reports", "-q"])
    assert r.exit_code == 0 and "note: live skipped: no namespaces here (test)" in r.stderr


def test_live_modes_through_a_stand_in_run_live(tmp_path, monkeypatch):
    """The driver's live path with ``tcplab.live.run`` replaced by a stand-in that writes a
    simulated run and fails where told: a mode whose first seed fails is skipped with the
    error; one that fails later is compared over the seeds before, with a note."""
    import importlib.machinery
    import sys
    import types

    import tcplab.live
    from tcplab.live import LiveError

    fails = {}

    def run_live(scenario, out_dir, *, realtime=False):
        if scenario.seed in fails.get("seeds", ()):
            raise LiveError(f"seed {scenario.seed} refused")
        return write_results(run(scenario), out_dir, report=False)

    fake = types.ModuleType("tcplab.live.run")
    fake.__spec__ = importlib.machinery.ModuleSpec("tcplab.live.run", None)
    fake.run_live = run_live
    monkeypatch.setitem(sys.modules, "tcplab.live.run", fake)
    monkeypatch.setattr(tcplab.live, "live_support", lambda: None)
    sc = Scenario.from_toml(SMALL_TOML)

    plan = plan_compare(sc, [1, 2, 3], ["simulated", "live"])
    assert plan.modes == ["simulated", "live"] and plan.skipped == {}
    o = run_compare(plan, tmp_path / "ok", run_reports=False)
    assert len(o.comparison.verdicts) == 2 * len(METRICS)
    assert all(v.diff == 0 for v in o.comparison.verdicts)  # the stand-in is the simulator

    fails["seeds"] = {2}
    o = run_compare(plan, tmp_path / "late", run_reports=False)
    doc = json.loads(o.document.read_text())
    assert doc["modes"]["live"]["seeds"] == [1] and "live: seed 2 failed (seed 2 refused)" in doc["notes"][1]
    assert {v.verdict for v in o.comparison.verdicts} == {UNDECIDED}  # one live seed: no spread
    assert sorted(os.listdir(o.out / "live")) == ["seed-1"]

    fails["seeds"] = {1}
    o = run_compare(plan, tmp_path / "first", run_reports=False)
    doc = json.loads(o.document.read_text())
    assert doc["skipped"] == {"live": "seed 1 refused"} and list(doc["modes"]) == ["simulated"]
