"""Bounded recording and bounded readers (docs/scenario.md, "Bounded recording"): a run
expected to record past the limit is refused with one line naming the setting (rc 2, nothing
written), the limit can be raised, a run that records more anyway stops with one line, and
every text file is read up to a limit."""

import os

import pytest
from typer.testing import CliRunner

import tcplab
from tcplab.cli import app
from tcplab.run import recording_line
from tcplab.scenario import ScenarioError

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
    err = _refused(tmp_path, _file(tmp_path, "1000000000s", ""))
    assert 'trace.series = "change"' in err


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
