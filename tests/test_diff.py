"""``tcplab diff`` on constructed pairs whose first divergence is known: a run against
itself, against a copy with one transmission or one verdict changed, with every time
shifted, with one event late; two settings of one scenario; and bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest
from conftest import SMALL_TOML
from typer.testing import CliRunner

import tcplab
from tcplab import diff
from tcplab.cli import app
from tcplab.results import write_results

runner = CliRunner()
TABLES = ("segments", "drops", "verdicts", "events", "series")


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    result = tcplab.run(tcplab.Scenario.from_toml(SMALL_TOML))
    return write_results(result, tmp_path_factory.mktemp("diff") / "a")


def _copy(base: Path, tmp_path: Path, edit) -> Path:
    """A copy of `base` whose tables `edit(name, frame)` changed."""
    out = tmp_path / "b"
    shutil.copytree(base, out)
    for t in TABLES:
        frame = pl.read_parquet(out / f"{t}.parquet")
        edit(t, frame).write_parquet(out / f"{t}.parquet")
    return out


def test_a_run_against_itself_is_identical(base: Path) -> None:
    d = diff.diff(diff.load(base), diff.load(base))
    assert d["identical"] and d["first_divergence"] is None and d["first_time_divergence"] is None
    assert d["time_tolerance_ms"] == 0, "two simulated runs: exact times"
    assert d["streams"]["transmission"][0] > 100 and d["streams"]["drop"][0] > 0


def test_one_changed_transmission_is_the_first_divergence(base: Path, tmp_path: Path) -> None:
    seg = pl.read_parquet(base / "segments.parquet").filter(pl.col("flow") == 0)
    k = 5  # the flow's 6th transmission becomes a retransmission of what it sent
    row = seg.row(k, named=True)
    assert row["retransmission"] == 0

    def edit(name: str, f: pl.DataFrame) -> pl.DataFrame:
        if name != "segments":
            return f
        idx = f.with_row_index().filter(pl.col("flow") == 0)["index"][k]
        return f.with_row_index().with_columns(
            pl.when(pl.col("index") == idx).then(pl.lit(1, pl.UInt8)).otherwise(pl.col("retransmission"))
            .alias("retransmission")).drop("index")

    d = diff.diff(diff.load(base), diff.load(_copy(base, tmp_path, edit)))
    fd = d["first_divergence"]
    assert not d["identical"]
    # A loss response or drop before the changed transmission would come first.
    earlier = [e for s in ("drop", "loss_response") for e in diff.load(base).streams[s]
               if e.time_ns < row["time_ns"] - diff.load(base).t0]
    assert not earlier, "the scenario's first loss comes after transmission 5"
    assert (fd["stream"], fd["index"]) == ("transmission", k)
    assert fd["a"]["key"] == [row["seq"], 0] and fd["b"]["key"] == [row["seq"], 1]
    assert fd["state"][0]["cwnd"] == fd["state"][1]["cwnd"], "the state before it is the same"


def test_a_changed_verdict_is_found_in_its_stream(base: Path, tmp_path: Path) -> None:
    v = pl.read_parquet(base / "verdicts.parquet").filter(pl.col("flow") == 0)
    assert len(v) >= 2

    def edit(name: str, f: pl.DataFrame) -> pl.DataFrame:
        if name != "verdicts":
            return f
        t1 = v["time_ns"][1]
        return f.with_columns(pl.when((pl.col("flow") == 0) & (pl.col("time_ns") == t1)).then(pl.lit("other"))
                              .otherwise(pl.col("label")).alias("label"))

    d = diff.diff(diff.load(base), diff.load(_copy(base, tmp_path, edit)))
    fd = d["first_divergence"]
    assert (fd["stream"], fd["index"]) == ("loss_response", 1)
    assert fd["a"]["time_ms"] == fd["b"]["time_ms"] == pytest.approx((v["time_ns"][1] - diff.load(base).t0) / 1e6)


def test_times_are_taken_from_the_first_transmission_and_lateness_is_reported_apart(
        base: Path, tmp_path: Path) -> None:
    shift = 3_000_000

    def shifted(name: str, f: pl.DataFrame) -> pl.DataFrame:
        return f.with_columns(pl.col("time_ns") + shift)

    d = diff.diff(diff.load(base), diff.load(_copy(base, tmp_path, shifted)))
    assert d["identical"] and d["first_time_divergence"] is None, "a shifted start is no divergence"

    v = pl.read_parquet(base / "verdicts.parquet").filter(pl.col("flow") == 0)
    t1 = v["time_ns"][1]

    def late(name: str, f: pl.DataFrame) -> pl.DataFrame:
        if name != "verdicts":
            return f
        return f.with_columns(pl.when((pl.col("flow") == 0) & (pl.col("time_ns") == t1))
                              .then(pl.col("time_ns") + 10_000_000).otherwise(pl.col("time_ns")))

    (tmp_path / "late").mkdir()
    d = diff.diff(diff.load(base), diff.load(_copy(base, tmp_path / "late", late)))
    assert d["identical"], "same events in the same order"
    t = d["first_time_divergence"]
    assert t["stream"] == "loss_response" and t["apart_ms"] == pytest.approx(10.0)
    d = diff.diff(diff.load(base), diff.load(tmp_path / "late" / "b"), time_tolerance_ns=20_000_000)
    assert d["first_time_divergence"] is None, "within a stated tolerance of 20 ms"


def test_two_settings_part_at_the_first_loss_response(tmp_path: Path) -> None:
    # Reno and CUBIC grow alike in slow start over the same drops (the loss stream draws per
    # packet, and both send the same packets until a loss is answered); the first
    # difference is the reduction itself.
    runs = []
    for cc in ("reno", "cubic"):
        text = SMALL_TOML.replace('controller = "reno"\nrecovery = "newreno"', f'controller = "{cc}"\nrecovery = "newreno"')
        runs.append(write_results(tcplab.run(tcplab.Scenario.from_toml(text)), tmp_path / cc))
    d = diff.diff(diff.load(runs[0]), diff.load(runs[1]))
    fd = d["first_divergence"]
    first_response = diff.load(runs[0]).streams["loss_response"][0]
    assert fd is not None
    assert fd["stream"] == "loss_response" and fd["index"] == 0, fd
    assert fd["a"]["time_ms"] == pytest.approx(first_response.time_ns / 1e6)
    assert fd["a"]["key"][2] != fd["b"]["key"][2], "the verdicts differ (Reno 1/2, CUBIC beta)"


def test_cli_json_html_and_bad_input(base: Path, tmp_path: Path) -> None:
    r = runner.invoke(app, ["diff", str(base), str(base), "--json", "--flow", "sack", "--html",
                            str(tmp_path / "d.html")])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["identical"] and doc["a"]["flow"] == "sack"
    assert "<img" in (tmp_path / "d.html").read_text()
    r = runner.invoke(app, ["diff", str(base), str(base)])
    assert r.exit_code == 0 and "no divergence" in r.stdout
    for args, expected in (([str(base), str(tmp_path)], "not a results directory"),
                           ([str(base), str(base), "--flow", "nope"], "--flow 'nope'"),
                           ([str(base), str(base), "--time-tolerance", "-1"], "--time-tolerance")):
        r = runner.invoke(app, ["diff", *args])
        assert r.exit_code == 2, r.output
        assert expected in r.output and len(r.output.strip().splitlines()) == 1, r.output


def test_bbr_slow_start_exits_are_shown_not_compared(tmp_path: Path) -> None:
    """BBR leaves STARTUP on its bandwidth estimate: the kernel's first ssthresh and tcplab's
    first non-slow-start window change are different events, so a pair of BBR runs whose
    only difference is that stream is identical to diff (the stream is still shown)."""
    text = SMALL_TOML.replace('controller = "reno"', 'controller = "bbr"', 1)
    assert text != SMALL_TOML
    a = write_results(tcplab.run(tcplab.Scenario.from_toml(text)), tmp_path / "a")

    def edit(name: str, f: pl.DataFrame) -> pl.DataFrame:
        if name != "events":
            return f
        return f.filter(~((pl.col("event") == "window") & (pl.col("reason") != "slow_start") & (pl.col("flow") == 0)))

    b = _copy(a, tmp_path, edit)
    ra, rb = diff.load(a), diff.load(b)
    assert ra.streams["slow_start_exit"] != rb.streams["slow_start_exit"]
    d = diff.diff(ra, rb)
    assert d["first_divergence"] is None or d["first_divergence"]["stream"] != "slow_start_exit"
