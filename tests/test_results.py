"""Results directory and report, from synthetic frames (no simulator needed)."""

import json
import os

import polars as pl
import pytest

from tcplab.results import OutDirError, write_results
from tcplab.run import TABLES, RunResult
from tcplab.scenario import Scenario

from conftest import SMALL_TOML
from synthetic import fake_finish


@pytest.fixture
def result(small_file):
    from tcplab.scenario import load_scenario

    sc = load_scenario(small_file)
    return RunResult.from_native(sc, fake_finish(sc.canonical()), wall_time_s=0.25)


def test_tables_are_polars_frames_with_ids_and_nullable_rtts(result):
    for t in TABLES:
        assert isinstance(result.tables[t], pl.DataFrame)
    assert result.flows["id"].to_list() == [0, 1]
    assert result.flows["min_rtt_ns"].dtype == pl.UInt64
    assert result.flows["min_rtt_ns"].to_list() == [60_000_000, None]
    assert result.udp.height == 0 and result.udp["name"].dtype == pl.String
    assert result.series["time_ns"].dtype == pl.UInt64
    assert result.events["event"].dtype == pl.String


def test_summary(result):
    s = result.summary
    assert s["seed"] == 7 and s["scenario"] == "small"
    assert [f["name"] for f in s["flows"]] == ["newreno", "sack"]
    assert s["flows"][1]["min_rtt_ns"] is None
    assert s["conservation"]["ok"] is True


def test_results_directory(result, tmp_path):
    base = tmp_path / "res"
    base.mkdir()
    out = write_results(result, base / "run")
    names = sorted(os.listdir(out))
    assert names == sorted(
        [f"{t}.parquet" for t in TABLES] + ["summary.json", "report.html", "scenario.toml"]
    )
    for t in TABLES:
        assert pl.read_parquet(out / f"{t}.parquet").equals(result.tables[t])
    doc = json.loads((out / "summary.json").read_text())
    for key in (
        "tcplab_version",
        "git_revision",
        "scenario",
        "seed",
        "started_at",
        "finished_at",
        "wall_time_s",
        "stats",
        "conservation",
        "flows",
        "tables",
    ):
        assert key in doc, key
    assert doc["seed"] == 7
    assert doc["tcplab_version"] == result.version
    assert doc["scenario"]["canonical"] == result.canonical
    assert doc["scenario"]["given"]["topology"]["bottleneck"]["rate"] == "2Mbps"
    assert doc["git_revision"] is None or len(doc["git_revision"]) == 40
    assert (out / "scenario.toml").read_text() == SMALL_TOML
    html = (out / "report.html").read_text()
    assert html.count("<img") >= 4
    assert html.count('src="data:image/png;base64,') == html.count("<img")
    assert "newreno" in html and "throughput (Mb/s)" in html
    # The one-way delay over time, one line per flow (2 flows), in the interactive plot.
    assert "One-way delay per flow (mean of the packets arriving in each 100 ms)" in html
    assert "TCP smoothed RTT over flows" in html
    # nothing else left beside it
    assert os.listdir(base) == ["run"]


def test_summary_json_rows_are_the_summarys_one_per_line(result, tmp_path):
    """summary.json writes the per-row entries from polars frames (not Python objects):
    what it holds must equal ``result.summary``, nulls for the non-finite floats included,
    and keep one flow or link per line."""
    out = write_results(result, tmp_path / "run", report=False)
    text = (out / "summary.json").read_text()
    doc = json.loads(text)
    s = result.summary
    for key in ("flows", "udp", "links", "delay"):
        assert doc[key] == s[key], key
    assert doc["flows"][1]["min_rtt_ns"] is None and doc["flows"][1]["eth"]["dupacks_per_recovery"] is None
    assert doc["udp"] == []
    lines = text.splitlines()
    start = lines.index('  "links": [')
    rows = lines[start + 1 : start + 1 + len(s["links"])]
    assert [json.loads(r.rstrip(",")) for r in rows] == s["links"]
    assert lines[start + 1 + len(s["links"])] == "  ],"
    # Non-finite floats (NaN, inf) in the tables are nulls: JSON has neither.
    assert "NaN" not in text and "Infinity" not in text


def test_summary_json_is_the_same_text_whatever_the_rows_per_part(result, tmp_path, monkeypatch):
    """summary.json is written ROWS_PER_PART rows of a frame at a time: parts of one row each
    give the same file as one part for everything."""
    import tcplab.results as results

    texts = []
    for rows in (10**9, 1):
        monkeypatch.setattr(results, "ROWS_PER_PART", rows)
        out = write_results(result, tmp_path / f"run-{rows}", report=False)
        texts.append((out / "summary.json").read_text())
    assert texts[0] == texts[1]
    assert texts[0].count('"flow":') >= 2  # frames of several rows were written in parts


def test_no_report(result, tmp_path):
    out = write_results(result, tmp_path / "run", report=False)
    assert not (out / "report.html").exists()
    assert json.loads((out / "summary.json").read_text())["report"] is None


def test_failure_while_writing_leaves_nothing(result, tmp_path, monkeypatch):
    import tcplab.report

    def boom(*a, **k):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(tcplab.report, "write_report", boom)
    base = tmp_path / "res"
    base.mkdir()
    with pytest.raises(RuntimeError, match="disk on fire"):
        write_results(result, base / "run")
    assert os.listdir(base) == []


def test_existing_non_empty_out_dir_is_refused(result, tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "x").write_text("keep me")
    with pytest.raises(OutDirError, match="not empty"):
        write_results(result, tmp_path / "run")
    assert os.listdir(tmp_path / "run") == ["x"]
    (tmp_path / "empty").mkdir()
    write_results(result, tmp_path / "empty", report=False)
    assert (tmp_path / "empty" / "summary.json").exists()


def test_report_without_traces(tmp_path):
    sc = Scenario.from_toml(SMALL_TOML)
    raw = fake_finish(sc.canonical())
    for t in ("series", "queues", "segments", "events", "drops"):
        raw[t] = {k: v[:0] for k, v in raw[t].items()}
    r = RunResult.from_native(sc, raw)
    from tcplab.report import render_report

    html = render_report(r)
    # The only images are those drawn from the flows and delay tables.
    import re

    alts = re.findall(r'<img alt="([^"]*)"', html)
    assert sorted(alts) == sorted(
        [
            "timeouts by cause",
            "per-flow throughput and its CDF",
            "throughput vs 95th-percentile delay",
            "one-way delay CDF",
        ]
    )
    assert "No window plot" in html and "No plot over time" in html


def test_loss_classification_columns_summary_and_report(result):
    f = result.flows
    assert f["congestion_misdiagnosis"].dtype == pl.Float64
    assert f["congestion_misdiagnosis"].to_list()[1] is None  # NaN in the native dict -> null
    assert result.verdicts.height == result.events.filter(
        pl.col("event").is_in(["recovery_enter", "timeout"])
    ).height
    t = result.summary["flows"][0]["table_one"]
    assert t["ff45"] == {"congestion": 1, "random": 3, "none": 0}
    assert t["timeouts"] == {"congestion": 1, "random": 0, "none": 0}
    assert t["ff45_accuracy"] == 0.75
    assert result.summary["flows"][1]["table_one"]["congestion_misdiagnosis"] is None
    from tcplab.report import render_report

    html = render_report(result)
    assert "Loss classification (Veno Table I form)" in html
    assert html.count("#FF1/2") == 2  # one table per flow


def test_eth_metrics_summary_and_report(result):
    f = result.flows
    assert f["dupacks_per_recovery"].dtype == pl.Float64
    assert f["dupacks_per_recovery"].to_list()[1] is None  # NaN in the native dict -> null
    assert result.verdicts["lost_segments"].dtype == pl.UInt32
    eth = result.summary["flows"][0]["eth"]
    assert eth["timeouts_by_class"]["mpl_missing_acks"] == 1
    assert sum(eth["timeouts_by_class"].values()) == result.summary["flows"][0]["timeouts"]
    assert eth["loss_events"] == {"single": 7, "multiple": 1, "drops": 12, "max": 5}
    assert eth["recoveries_by_dupacks"] == {"0": 0, "1": 0, "2": 2, "3": 6, "4plus": 0}
    assert eth["dupacks_per_recovery"] == 2.75
    assert result.summary["flows"][1]["eth"]["dupacks_per_recovery"] is None
    assert [b["n"] for b in eth["sack_blocks"]] == [1, 2, 3, 4, 5, 6]
    assert eth["sack_blocks"][1] == {"n": 2, "carried": 50, "used": 6}
    from tcplab.report import render_report

    html = render_report(result)
    assert "<h2>ETH metrics</h2>" in html
    assert 'alt="timeouts by cause"' in html
    assert "90/100 (90.0%)" in html  # block 1: used/carried (share of used blocks)


def test_eth_timeout_bars_per_flow_or_per_protocol():
    from tcplab.report.eth import MAX_FLOW_BARS, timeout_bars
    from tcplab.run import TIMEOUT_CLASSES

    def flow(i, recovery, cls):
        by = {c: 0 for c in TIMEOUT_CLASSES}
        by[cls] = 1
        return {"name": f"f{i}", "controller": "reno", "recovery": recovery, "eth": {"timeouts_by_class": by}}

    few = [flow(0, "reno", "non_trigger"), flow(1, "sack", "other")]
    labels, counts = timeout_bars(few)
    assert labels == ["f0 (reno)", "f1 (sack)"]
    assert counts["non_trigger"] == [1, 0] and counts["other"] == [0, 1]
    many = [flow(i, "rh" if i % 2 else "fack", "non_trigger") for i in range(MAX_FLOW_BARS + 2)]
    labels, counts = timeout_bars(many)
    assert labels == ["reno/fack", "reno/rh"]
    assert counts["non_trigger"] == [9, 9]
