"""tcplab.instruments.replay on a recorded simulated run: the instruments on the facts the
run recorded (a JSON-lines file) give the run's measurements."""

import json

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from tcplab import _native
from tcplab.instruments import replay
from tcplab.run import table_frame

from conftest import SMALL_TOML, canonical_of

INSTRUMENT_COLUMNS = [
    "data_drops",
    "ack_drops",
    "ecn_marks",
    "loss_events_single",
    "loss_events_multiple",
    "loss_event_drops",
    "loss_event_max",
]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    path = tmp_path_factory.mktemp("facts") / "run.jsonl"
    sim = _native.Simulation(json.dumps(canonical_of(SMALL_TOML)))
    sim.record_facts(str(path))
    sim.run_until(sim.end_ns)
    raw = sim.finish()
    return path, raw


def test_replay_gives_the_measurements_of_the_run(recorded):
    path, raw = recorded
    kinds = {json.loads(line)["fact"] for line in path.read_text().splitlines()}
    assert {"transmit", "drop", "delivered", "ack_sent", "flow_state", "queue_state"} <= kinds
    m = replay(path, tcp_flows=2)
    run = {name: table_frame(name, raw[name]) for name in m.tables}
    assert raw["conservation"]["ok"] and raw["conservation"]["packets_dropped"] > 0
    assert m.conservation == raw["conservation"]
    assert run["series"].height > 100 and run["queues"].height > 100
    for name in ("series", "queues", "verdicts", "delay_histogram"):
        assert_frame_equal(m.tables[name], run[name], check_exact=True)
    # Names are the run's business, not the facts'.
    assert_frame_equal(m.tables["delay"].drop("name"), run["delay"].drop("name"))
    assert m.tables["flows"]["name"].to_list() == ["flow0", "flow1"]
    assert run["flows"]["data_drops"].sum() > 0
    assert_frame_equal(m.tables["flows"].select(INSTRUMENT_COLUMNS), run["flows"].select(INSTRUMENT_COLUMNS))


def test_several_files_are_read_in_order(recorded, tmp_path):
    path, raw = recorded
    lines = path.read_text().splitlines(keepends=True)
    half = len(lines) // 2
    (tmp_path / "a.jsonl").write_text("".join(lines[:half]))
    (tmp_path / "b.jsonl").write_text("".join(lines[half:]))
    m = replay([tmp_path / "a.jsonl", str(tmp_path / "b.jsonl")], tcp_flows=2, udp_flows=0)
    assert m.conservation == raw["conservation"]
    assert_frame_equal(m.tables["series"], table_frame("series", raw["series"]))


def test_a_lost_packet_breaks_conservation(recorded, tmp_path):
    path, _ = recorded
    lines = path.read_text().splitlines(keepends=True)
    first = next(i for i, line in enumerate(lines) if json.loads(line)["fact"] == "delivered")
    (tmp_path / "lost.jsonl").write_text("".join(lines[:first] + lines[first + 1 :]))
    c = replay(tmp_path / "lost.jsonl", tcp_flows=2).conservation
    assert not c["ok"]
    assert any("data segments sent" in v for v in c["violations"]), c["violations"]


def test_data_delivered_counts_stand_for_a_receiver_without_times(recorded, tmp_path):
    """A real TCP receiver (a Linux socket) counts its data segments without times: the
    TCP data ``delivered`` facts replaced by bare ``data_delivered`` counts give the same
    conservation, and one count too few breaks it."""
    path, raw = recorded
    out = []
    for line in path.read_text().splitlines(keepends=True):
        f = json.loads(line)
        if f["fact"] == "delivered" and f["packet"] == "data":
            out.append(json.dumps({"fact": "data_delivered", "flow": f["flow"]}) + "\n")
        else:
            out.append(line)
    assert any('"data_delivered"' in x for x in out)
    (tmp_path / "counts.jsonl").write_text("".join(out))
    assert replay(tmp_path / "counts.jsonl", tcp_flows=2).conservation == raw["conservation"]
    out.remove(next(x for x in out if '"data_delivered"' in x))
    (tmp_path / "short.jsonl").write_text("".join(out))
    c = replay(tmp_path / "short.jsonl", tcp_flows=2).conservation
    assert not c["ok"] and any("data segments sent" in v for v in c["violations"]), c["violations"]


@pytest.mark.parametrize(
    "content, kwargs, fragment",
    [
        ('{"fact":"ack_sent","flow":0}\n', {"tcp_flows": 0}, "fact 1: TCP flow 0, but tcp_flows = 0"),
        ('{"fact":"ack_sent"}\n', {"tcp_flows": 1}, "line 1: missing field `flow`"),
        ("{}\n", {"tcp_flows": -1}, "tcp_flows = -1"),
    ],
)
def test_bad_input_is_one_line(tmp_path, content, kwargs, fragment):
    p = tmp_path / "bad.jsonl"
    p.write_text(content)
    with pytest.raises(ValueError, match=fragment.replace("`", ".")) as e:
        replay(p, **kwargs)
    assert "\n" not in str(e.value)


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(ValueError, match="nope.jsonl"):
        replay(tmp_path / "nope.jsonl", tcp_flows=1)


def test_flows_table_is_polars(recorded):
    path, _ = recorded
    assert isinstance(replay(path, tcp_flows=2).tables["flows"], pl.DataFrame)


def test_replay_with_the_runs_interval_gives_its_delay_over_time(recorded):
    """docs/delay.md, "Over time": the delay_series table from the recorded facts is the
    run's, and it partitions each flow's delivered packets (the delay table's)."""
    path, raw = recorded
    run = table_frame("delay_series", raw["delay_series"])
    assert run.height > 50
    m = replay(path, tcp_flows=2, delay_interval="10ms")
    assert_frame_equal(m.tables["delay_series"], run, check_exact=True)
    assert replay(path, tcp_flows=2).tables["delay_series"].height == 0
    delay = table_frame("delay", raw["delay"])
    per_flow = run.group_by("flow_kind", "flow").agg(
        pl.col("packets").sum(), (pl.col("delay_mean_ns") * pl.col("packets")).sum().alias("weighted")
    )
    joined = delay.join(per_flow, on=["flow_kind", "flow"])
    assert joined.height == 2
    assert joined["packets"].to_list() == joined["packets_delivered"].to_list()
    for row in joined.iter_rows(named=True):
        assert row["weighted"] / row["packets"] == pytest.approx(row["delay_mean_ns"], rel=1e-12)
    with pytest.raises(ValueError, match=r"delay_interval = '0s': must be > 0"):
        replay(path, tcp_flows=2, delay_interval="0s")
