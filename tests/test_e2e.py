"""End-to-end: scenario -> simulator -> frames -> results directory and report."""

import json
import os
from concurrent.futures import ThreadPoolExecutor

import polars as pl
import pytest

import tcplab
from tcplab.results import write_results
from tcplab.run import TABLES

from conftest import SMALL_TOML


def test_small_run_produces_everything(small_file, tmp_path):
    calls = []
    r = tcplab.run(small_file, progress=lambda now, end: calls.append((now, end)))
    out = write_results(r, tmp_path / "res" / "run")

    # progress: from 0 to the end, never backwards, in ~100 steps
    assert calls[0][0] == 0 and calls[-1][0] == calls[-1][1] == 2_000_000_000
    assert all(a[0] <= b[0] for a, b in zip(calls, calls[1:]))
    assert len(calls) >= 10

    assert r.flows.height == 2 and r.flows["name"].to_list() == ["newreno", "sack"]
    assert (r.flows["bytes_delivered"] > 0).all()
    assert r.series.height > 0 and r.segments.height > 0 and r.events.height > 0
    assert r.links.height > 0
    assert r.conservation["ok"], r.conservation["violations"]

    for t in TABLES:
        assert (out / f"{t}.parquet").exists()
        assert pl.read_parquet(out / f"{t}.parquet").equals(r.tables[t])
    doc = json.loads((out / "summary.json").read_text())
    assert doc["seed"] == 7 and doc["tcplab_version"] == tcplab.__version__
    assert doc["scenario"]["canonical"]["name"] == "small"
    assert [f["name"] for f in doc["flows"]] == ["newreno", "sack"]
    html = (out / "report.html").read_text()
    assert html.count("<img alt=") >= 3 and "data:image/png;base64," in html
    assert not any(n.startswith(".") for n in os.listdir(tmp_path / "res"))


def test_same_seed_identical_frames_other_seed_differs(small_toml):
    sc = tcplab.Scenario.from_toml(small_toml)
    a, b = tcplab.run(sc), tcplab.run(sc)
    for t in TABLES:
        assert a.tables[t].equals(b.tables[t]), t
    c = tcplab.run(sc, seed=8)
    assert not c.segments.equals(a.segments) or not c.drops.equals(a.drops)


def test_runs_in_threads_match_sequential(small_toml):
    sc = tcplab.Scenario.from_toml(small_toml)
    seq = tcplab.run(sc)
    with ThreadPoolExecutor(max_workers=2) as pool:
        par = list(pool.map(lambda _: tcplab.run(sc), range(2)))
    for r in par:
        assert r.series.equals(seq.series)


def test_run_accepts_dict_and_reports_rust_errors_as_scenario_error():
    import tomllib

    data = tomllib.loads(SMALL_TOML)
    assert tcplab.run(data).flows.height == 2
    data["flows"][0]["controller"] = {"name": "reno", "no_such_parameter": 1}
    with pytest.raises(tcplab.ScenarioError, match="no_such_parameter"):
        tcplab.run(data)


def test_stats_and_summary(small_toml):
    r = tcplab.run(tcplab.Scenario.from_toml(small_toml))
    assert r.stats["sim_time_ns"] <= 2_000_000_000 and r.stats["events"] > 0
    s = r.summary
    assert s["seed"] == 7 and len(s["flows"]) == 2
    assert all(f["throughput_mbps"] > 0 for f in s["flows"])


def test_disconnected_explicit_network_is_rejected_by_the_simulator():
    # Valid for the schema; only the simulator's routing finds that b is unreachable.
    data = {
        "name": "islands",
        "duration": 1,
        "nodes": [{"name": n, "kind": "host"} for n in ("a", "b", "c", "d")],
        "links": [
            {"from": "a", "to": "c", "rate": "1Mbps", "delay": "1ms", "buffer": 5},
            {"from": "b", "to": "d", "rate": "1Mbps", "delay": "1ms", "buffer": 5},
        ],
        "flows": [{"src": "a", "dst": "b", "controller": "reno", "recovery": "sack"}],
    }
    sc = tcplab.Scenario.from_dict(data)
    with pytest.raises(tcplab.ScenarioError, match=r"flows\[0\]: no route"):
        tcplab.run(sc)


#: One Veno flow over a dumbbell whose wireless hop (receiver access, forward) loses 2% of
#: packets at random and reports each loss to the sender; the 10-packet bottleneck buffer
#: adds congestion losses.
VENO_LOSSY = """
name = "veno-lossy"
seed = 3
duration = "5s"

[topology]
bottleneck = { rate = "2Mbps", delay = "15ms", buffer = 10 }
sender_access = { rate = "20Mbps", delay = "2.5ms", buffer = 100 }
receiver_access = { rate = "20Mbps", delay = "2.5ms", buffer = 100, forward = { loss = 2e-2, report_losses = true } }

[tcp]
profile = "rfc"

[[flows]]
controller = "veno"
recovery = "reno"
tcp = { sack_blocks = 0 }
"""

CAUSES = ("congestion", "random", "none")


def test_loss_classification_columns_and_verdicts(tmp_path):
    r = tcplab.run(tcplab.Scenario.from_toml(VENO_LOSSY))
    f = r.flows.row(0, named=True)
    for col in ("retransmits_probe", "recovery_restarts", "probes", "cross_layer_reports"):
        assert r.flows[col].dtype == pl.UInt64, col
    for field in ("ff45", "ff12", "ff_other", "timeouts_by_cause"):
        for c in CAUSES:
            assert r.flows[f"{field}_{c}"].dtype == pl.UInt64
    ratios = ("ff45_accuracy", "congestion_misdiagnosis", "ff_value_mean_congestion", "ff_value_mean_random")
    for col in ratios:
        assert r.flows[col].dtype == pl.Float64, col

    ff = {field: {c: f[f"{field}_{c}"] for c in CAUSES} for field in ("ff45", "ff12", "ff_other")}
    assert f["fast_retransmits"] > 0 and f["timeouts"] > 0
    assert sum(sum(v.values()) for v in ff.values()) == f["fast_retransmits"]
    assert sum(f[f"timeouts_by_cause_{c}"] for c in CAUSES) == f["timeouts"]
    assert f["loss_events"] == f["fast_retransmits"] + f["recovery_restarts"] + f["timeouts"]
    assert f["cross_layer_reports"] > 0  # the lossy hop reports its random drops
    assert ff["ff45"]["random"] > 0  # Veno answered some random losses with 4/5
    n45 = sum(ff["ff45"].values())
    assert f["ff45_accuracy"] == pytest.approx(ff["ff45"]["random"] / n45)
    cong = ff["ff45"]["congestion"] + ff["ff12"]["congestion"]
    if cong:
        assert f["congestion_misdiagnosis"] == pytest.approx(ff["ff45"]["congestion"] / cong)
    else:
        assert f["congestion_misdiagnosis"] is None

    v = r.verdicts
    assert v.columns == [
        "time_ns",
        "flow",
        "trigger",
        "label",
        "value",
        "seq",
        "cwnd",
        "ssthresh",
        "cause",
        "timeout_class",
        "dupacks",
        "lost_segments",
    ]
    assert v.height == f["fast_retransmits"] + f["recovery_restarts"] + f["timeouts"]
    assert v.filter(pl.col("trigger") == "timeout").height == f["timeouts"]
    assert v["time_ns"].is_sorted()
    # the verdicts table and the flow's Table I counts agree
    fr = v.filter(pl.col("trigger") == "fast_retransmit")
    random = fr.filter(pl.col("cause").is_in(["link_error", "mac"]))
    assert random.filter(pl.col("label") == "4/5").height == ff["ff45"]["random"]
    assert fr.filter(pl.col("cause") == "none").height == sum(
        ff[k]["none"] for k in ("ff45", "ff12", "ff_other")
    )

    out = write_results(r, tmp_path / "run")
    assert pl.read_parquet(out / "verdicts.parquet").equals(v)
    doc = json.loads((out / "summary.json").read_text())
    assert doc["tables"]["verdicts"]["rows"] == v.height
    (flow,) = doc["flows"]
    assert flow["table_one"]["ff45"] == ff["ff45"] and flow["table_one"]["ff12"] == ff["ff12"]
    assert flow["ff45_accuracy"] == pytest.approx(f["ff45_accuracy"])
    html = (out / "report.html").read_text()
    assert "Loss classification (Veno Table I form)" in html and "#FF4/5" in html
    assert "reports random drops to the sender" in html


def test_no_loss_no_classification_table(tmp_path):
    text = VENO_LOSSY.replace(", forward = { loss = 2e-2, report_losses = true }", "").replace(
        'buffer = 10 }', "buffer = 1000 }"
    ).replace('duration = "5s"', 'duration = "1s"')
    r = tcplab.run(tcplab.Scenario.from_toml(text))
    f = r.flows.row(0, named=True)
    assert f["fast_retransmits"] == f["timeouts"] == 0 and r.verdicts.height == 0
    assert f["ff45_accuracy"] is None and f["ff_value_mean_random"] is None
    out = write_results(r, tmp_path / "run")
    assert "Loss classification" not in (out / "report.html").read_text()


TAXONOMY = """
name = "taxonomy"
seed = 1
duration = "30s"

[topology]
bottleneck = { rate = "10Mbps", delay = "10ms", buffer = 100, forward = { loss = { model = "trace", packets = [0] } } }
sender_access = { rate = "100Mbps", delay = "1ms", buffer = 100 }
receiver_access = { rate = "100Mbps", delay = "1ms", buffer = 100 }

[tcp]
initial_cwnd = 3
delayed_ack = false

[[flows]]
controller = "reno"
recovery = "reno"
bytes = 4380
"""

TIMEOUT_CLASSES = ("lost_timeout_rtx", "lost_fast_rtx", "mpl_lost_rtx", "mpl_missing_acks", "non_trigger", "other")


def test_timeout_taxonomy_columns():
    # One loss in a window of three segments: two duplicate ACKs, a non-trigger timeout.
    r = tcplab.run(tcplab.Scenario.from_toml(TAXONOMY))
    f = r.flows.row(0, named=True)
    assert f["completed"] and f["timeouts"] == 1 and f["fast_retransmits"] == 0
    for c in TIMEOUT_CLASSES:
        assert r.flows[f"timeouts_{c}"].dtype == pl.UInt64
    assert f["timeouts_non_trigger"] == 1
    assert sum(f[f"timeouts_{c}"] for c in TIMEOUT_CLASSES) == f["timeouts"]
    assert f["loss_indication_p"] == pytest.approx(1 / f["segments_sent"])
    v = r.verdicts
    assert v["timeout_class"].to_list() == ["non_trigger"]


ETH = """
name = "eth"
seed = 1
duration = "30s"

[topology]
bottleneck = { rate = "10Mbps", delay = "10ms", buffer = 100, forward = { loss = { model = "trace", packets = [3, 5, 7] } } }
sender_access = { rate = "100Mbps", delay = "1ms", buffer = 100 }
receiver_access = { rate = "100Mbps", delay = "1ms", buffer = 100 }

[tcp]
initial_cwnd = 10
delayed_ack = false
dsack = true

[[flows]]
controller = "reno"
recovery = "sack"
bytes = 43800
"""


def test_eth_metrics_columns(tmp_path):
    # Three drops in one window: one multiple loss event, one recovery after three dup ACKs.
    r = tcplab.run(tcplab.Scenario.from_toml(ETH))
    f = r.flows.row(0, named=True)
    assert f["completed"] and f["timeouts"] == 0 and f["fast_retransmits"] == 1
    assert (f["loss_events_single"], f["loss_events_multiple"], f["loss_event_max"]) == (0, 1, 3)
    assert f["recoveries_dupacks_3"] == 1 and f["dupacks_per_recovery"] == 3.0
    assert f["sack_block_1_used"] > 0 and f["sack_block_1_carried"] >= f["sack_block_1_used"]
    assert r.verdicts["lost_segments"].to_list() == [3]
    assert r.verdicts["dupacks"].to_list() == [3]
    assert r.scenario.canonical()["flows"][0]["tcp"]["dsack"] is True
    out = write_results(r, tmp_path / "run")
    doc = json.loads((out / "summary.json").read_text())
    assert doc["flows"][0]["eth"]["loss_events"]["multiple"] == 1
    assert "<h2>ETH metrics</h2>" in (out / "report.html").read_text()


def test_no_loss_classification_without_a_classifying_controller(tmp_path):
    """The Table I section only where it applies: with Reno alone (every response
    1/2) the report has none; with Veno beside it, both flows get their table."""
    text = VENO_LOSSY.replace('"veno"', '"reno"')
    r = tcplab.run(tcplab.Scenario.from_toml(text))
    assert r.flows["fast_retransmits"][0] > 0
    out = write_results(r, tmp_path / "run")
    assert "Loss classification" not in (out / "report.html").read_text()
