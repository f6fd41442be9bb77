"""Bounded recording and bounded readers (docs/scenario.md, "Bounded recording"): a run
expected to record past the limit is refused with one line naming the setting (rc 2, nothing
written), the limit can be raised, a run that records more anyway stops with one line, and
every text file is read up to a limit."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import tcplab
from tcplab.cli import app
from tcplab.run import recording_line
from tcplab.scenario import ScenarioError
from tcplab.scenario.model import load_scenario

runner = CliRunner()

BASE = """
name = "bounds"
duration = "{duration}"
[topology]
pairs = 1
bottleneck = {{ rate = "10Mbps", delay = "10ms", buffer = 50 }}
[[flows]]
controller = "reno"
recovery = "sack"
"""


def _file(tmp_path, duration, trace):
    p = tmp_path / "s.toml"
    p.write_text(BASE.format(duration=duration) + "[trace]\n" + trace)
    return p


def _refused(tmp_path, path, *args):
    r = runner.invoke(app, ["run", str(path), "--out", str(tmp_path / "out"), *args])
    assert r.exit_code == 2, r.output
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("error: "), r.stderr
    assert "Traceback" not in r.output
    assert not (tmp_path / "out").exists()
    return r.stderr


def test_a_one_ns_interval_is_refused(tmp_path):
    err = _refused(tmp_path, _file(tmp_path, "1s", 'series = "interval"\ninterval = "1ns"\n'))
    assert "trace.interval = 1ns" in err and "--max-record-mb" in err


def test_a_1e9_s_traced_run_is_refused(tmp_path):
    # Every row: the series on change are the biggest table.
    err = _refused(tmp_path, _file(tmp_path, "1000000000s", 'max_rows_per_flow = "all"\n'))
    assert 'trace.series = "change"' in err
    # By default the series and queues stay within their bound: a log is the biggest.
    err = _refused(tmp_path, _file(tmp_path, "1000000000s", ""))
    assert "trace.events = true" in err


def test_max_rows_per_flow_takes_a_number_or_all(tmp_path):
    for bad, says in (('"some"', 'is not a number of rows or "all"'), ("1.5", "is not a whole number"), ("-3", "must be within")):
        r = runner.invoke(app, ["validate", str(_file(tmp_path, "1s", f"max_rows_per_flow = {bad}\n"))])
        assert r.exit_code == 2 and r.stderr.count("\n") == 1, r.output
        assert "trace.max_rows_per_flow" in r.stderr and says in r.stderr, r.stderr
    sc = load_scenario(_file(tmp_path, "1s", 'max_rows_per_flow = "all"\n'))
    assert sc.canonical()["trace"]["max_rows_per_flow"] == "all"
    assert "max_rows_per_flow" not in load_scenario(_file(tmp_path, "1s", "")).canonical()["trace"]


def test_by_default_a_long_run_keeps_its_series_and_queues_within_the_bound(tmp_path):
    """A 600 s run with the default trace settings: the series and queues tables are decimated
    to their default bound (docs/scenario.md), the logs kept whole, and the recording line says
    which bound did it; "all" keeps every row."""
    base = _file(tmp_path, "600s", "")
    r = tcplab.run(base)
    rec = {t["table"]: t for t in r.recording["tables"]}
    bound = r.recording["default_table_bytes"]
    assert bound == 16 << 20
    for t in ("series", "queues"):
        assert rec[t]["bucket_ns"] > 0 and rec[t]["bytes"] <= bound, rec[t]
    assert rec["segments"]["truncated_at_ns"] is None and rec["events"]["truncated_at_ns"] is None
    line = recording_line(r.recording)
    assert "queues decimated to one row per link per" in line and "the default bound of 16 MB per table" in line
    every = tcplab.run(_file(tmp_path, "600s", 'max_rows_per_flow = "all"\n'))
    assert every.recording["default_table_bytes"] is None
    assert every.queues.height > r.queues.height and every.series.height > r.series.height
    assert every.segments.equals(r.segments) and every.flows.equals(r.flows)
    # The kept rows are rows of the whole table.
    assert r.queues.join(every.queues, on=["link", "time_ns", "packets", "bytes"], how="anti").height == 0


def test_the_limit_can_be_raised(tmp_path):
    # 100 us at 1 ns: 100,001 ticks of 1 flow (68 B) and 6 link directions (24 B): ~20 MB.
    path = _file(tmp_path, "100us", 'series = "interval"\ninterval = "1ns"\nevents = false\nsegments = false\n')
    assert "max_record_mb = 10" in _refused(tmp_path, path, "--max-record-mb", "10")
    r = runner.invoke(app, ["run", str(path), "--out", str(tmp_path / "ok"), "--max-record-mb", "64", "--no-report"])
    assert r.exit_code == 0, r.output
    assert "recorded: series 100,001, queues 600,006" in r.stdout
    # The environment variable sets the default (what sweeps' workers inherit).
    os.environ["TCPLAB_MAX_RECORD_MB"] = "10"
    try:
        with pytest.raises(ScenarioError, match="max_record_mb = 10"):
            tcplab.run(path)
    finally:
        del os.environ["TCPLAB_MAX_RECORD_MB"]
    with pytest.raises(ScenarioError, match="max_record_mb = -1"):
        tcplab.run(path, max_record_mb=-1)


def test_recording_past_the_limit_stops_with_one_line(tmp_path):
    # UDP through a link that drops 90 % at random: the estimate foresees no drops.
    p = tmp_path / "u.toml"
    p.write_text(
        """
name = "lossy"
duration = "10s"
[topology]
pairs = 1
bottleneck = { rate = "10Mbps", delay = "10ms", buffer = 50, loss = 0.9 }
[[udp]]
rate = "1Mbps"
packet_size = 1000
[trace]
series = "off"
events = false
segments = false
"""
    )
    err = _refused(tmp_path, p, "--max-record-mb", "0.05", "--quiet")
    assert "recording passed max_record_mb = 0.05" in err and "drops" in err


def test_max_rows_per_flow_is_reported(tmp_path):
    path = _file(tmp_path, "20s", "max_rows_per_flow = 100\n")
    r = tcplab.run(path)
    assert r.series.height <= 100 and r.segments.height <= 100
    line = recording_line(r.recording)
    assert "series decimated to one row per flow per" in line and "segments cut at" in line
    assert tcplab.run(path).tables["series"].equals(r.series)
    # delay_series is counted too: its intervals widen to duration / 100 (0.2 s), so each
    # flow has at most about 100 rows, and the recording names it.
    delay = next(t for t in r.recording["tables"] if t["table"] == "delay_series")
    height = r.tables["delay_series"].height
    assert 0 < delay["rows"] <= height <= 101 * r.flows.height
    assert delay["bucket_ns"] == 200_000_000
    assert "delay_series intervals widened to 200 ms" in line


@pytest.mark.parametrize("source", ["dev_zero", "sparse", "binary"])
def test_time_trace_files_are_read_up_to_a_limit(tmp_path, source):
    if source == "dev_zero":
        name = "/dev/zero"
    else:
        f = tmp_path / "trace.txt"
        if source == "sparse":
            with open(f, "wb") as fh:
                fh.truncate(65 << 20)  # sparse: no disk used
        else:
            f.write_bytes(b"\xff\xfe 1s\n")
        name = str(f)
    p = tmp_path / "t.toml"
    p.write_text(BASE.format(duration="1s").replace("buffer = 50", f'buffer = 50, loss = {{ model = "time_trace", file = "{name}" }}'))
    r = runner.invoke(app, ["validate", str(p)])
    assert r.exit_code == 2 and r.stderr.count("\n") == 1, r.output
    assert name in r.stderr
    assert ("larger than 64 MB" if source != "binary" else "not a UTF-8 text file") in r.stderr


def test_scenario_files_are_read_up_to_a_limit(tmp_path):
    p = tmp_path / "big.toml"
    with open(p, "wb") as fh:
        fh.truncate(65 << 20)
    r = runner.invoke(app, ["validate", str(p)])
    assert r.exit_code == 2 and r.stderr.strip() == f"error: {p}: larger than 64 MB, the most tcplab reads from a text file"


_PEAK = r"""
import json, sys
import tcplab

def kb(field):
    for line in open("/proc/self/status"):
        if line.startswith(field):
            return int(line.split()[1]) * 1024

before = kb("VmRSS")
r = tcplab.run(sys.argv[1])
estimate = sum(t["bytes"] for t in r.recording["estimate"])
print(json.dumps({"before": before, "estimate": estimate, "peak": kb("VmHWM")}))
"""


#: The issue's case (issue 27 §6): the demo's flows and a third (CUBIC) over 600 s, default tracing.
_THIRD = """
[[flows]]
name = "cubic-sack"
src = "s2"
dst = "r2"
controller = "cubic"
recovery = "sack"
start = "200ms"
"""


@pytest.mark.parametrize("flows", [2, 3])
def test_the_estimate_plus_the_process_before_the_run_is_its_peak_within_25_percent(tmp_path, flows):
    """docs/scenario.md, "Bounded recording": the process's peak while a run records (its
    tables, then the frames) is its memory before the run plus the estimate, within ±25 %
    (issue 27 §6), for a 600 s run of the demo's flows (and a third) with the default trace
    settings."""
    text = (Path(__file__).resolve().parent.parent / "scenarios" / "demo-dumbbell.toml").read_text()
    text = text[: text.index("[trace]")].replace('duration = "60s"', 'duration = "600s"')
    if flows == 3:
        text = text.replace("pairs = 2", "pairs = 3") + _THIRD
    path = tmp_path / "long.toml"
    path.write_text(text)
    out = subprocess.run([sys.executable, "-c", _PEAK, str(path)], capture_output=True, text=True, check=True)
    m = json.loads(out.stdout)
    predicted = m["before"] + m["estimate"]
    assert abs(predicted - m["peak"]) <= 0.25 * m["peak"], m
