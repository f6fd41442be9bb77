"""iperf3 -J's per-interval array: ``tcplab run --json`` gives ``intervals``, one
per second, a stream per flow and their sum, adding up to the flows table."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from tcplab.cli import app
from tcplab.intervals import intervals
from tcplab.results import read_table

TOML = """
name = "iv"
seed = 2
duration = "3500ms"
[topology]
kind = "dumbbell"
pairs = 2
[topology.bottleneck]
rate = "4Mbps"
delay = "10ms"
buffer = 10
forward.loss = 1e-2
[[flows]]
controller = "reno"
recovery = "sack"
[[flows]]
controller = "cubic"
recovery = "sack"
start = "500ms"
"""


def test_run_json_has_iperf3_intervals_that_add_up_to_the_flows_table(tmp_path: Path) -> None:
    (tmp_path / "iv.toml").write_text(TOML)
    r = CliRunner().invoke(app, ["run", str(tmp_path / "iv.toml"), "--out", str(tmp_path / "out"), "--no-report",
                                 "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    iv = doc["intervals"]
    assert [(i["sum"]["start"], i["sum"]["end"]) for i in iv] == [(0.0, 1.0), (1.0, 2.0), (2.0, 3.0), (3.0, 3.5)]
    flows = read_table(tmp_path / "out", "flows")
    for k, row in enumerate(flows.iter_rows(named=True)):
        assert [i["streams"][k]["flow"] for i in iv] == [row["name"]] * 4
        assert sum(i["streams"][k]["bytes"] for i in iv) == row["bytes_delivered"]
        assert sum(i["streams"][k]["retransmits"] for i in iv) == row["retransmits"]
        last = iv[-1]["streams"][k]
        assert last["snd_cwnd"] > 0 and last["rtt"] > 20_000, "µs, above the 20 ms propagation RTT"
    assert iv[0]["streams"][1]["bytes"] < iv[1]["streams"][1]["bytes"], "the second flow starts at 0.5 s"
    for i in iv:
        assert i["sum"]["bytes"] == sum(s["bytes"] for s in i["streams"])
        assert abs(i["sum"]["bits_per_second"] - 8 * i["sum"]["bytes"] / i["sum"]["seconds"]) < 1e-6


def test_no_series_no_intervals(tmp_path: Path) -> None:
    (tmp_path / "iv.toml").write_text(TOML + '[trace]\nseries = "off"\n')
    r = CliRunner().invoke(app, ["run", str(tmp_path / "iv.toml"), "--out", str(tmp_path / "out"), "--no-report"])
    assert r.exit_code == 0, r.output
    assert intervals(tmp_path / "out") == []
