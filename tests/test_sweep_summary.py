"""A sweep's top level (docs/sweeps.md): flows.parquet (every point's flows, its parameters, each
flow's p95 one-way delay) and report.html with Pantheon's throughput-delay view per scheme."""

from __future__ import annotations

import math
from pathlib import Path

import polars as pl
from typer.testing import CliRunner

from tcplab.cli import app
from tcplab.report.sweep_page import schemes

TOML = """
name = "sw"
seed = 1
duration = "2s"
[topology]
kind = "dumbbell"
pairs = 1
[topology.bottleneck]
rate = "5Mbps"
delay = "10ms"
buffer = 30
forward.loss = 1e-3
[[flows]]
controller = "reno"
recovery = "sack"
[sweep]
grid = { "flows.0.controller" = ["reno", "cubic"] }
seeds = 3
"""


def test_sweep_writes_a_flows_table_and_pantheons_view(tmp_path: Path) -> None:
    (tmp_path / "sw.toml").write_text(TOML)
    r = CliRunner().invoke(app, ["sweep", str(tmp_path / "sw.toml"), "--out", str(tmp_path / "out"), "-q",
                                 "--jobs", "1"])
    assert r.exit_code == 0, r.output
    flows = pl.read_parquet(tmp_path / "out" / "flows.parquet")
    assert flows.height == 6 and {"flows.0.controller", "seed", "throughput_bps", "delay_p95_ns"} <= set(flows.columns)
    assert flows["delay_p95_ns"].min() > 10_000_000, "above the 10 ms propagation delay"
    page = (tmp_path / "out" / "report.html").read_text()
    assert "Throughput against 95th-percentile one-way delay" in page and "<img" in page
    assert "cubic + sack" in page and "reno + sack" in page
    groups = {g["scheme"]: g for g in schemes(flows)}
    assert set(groups) == {"reno + sack", "cubic + sack"}
    for g in groups.values():
        assert g["n"] == 3 and g["ellipse"] is not None
        assert g["throughput_mbps"] == sum(p[1] for p in g["points"]) / 3


def test_the_ellipse_is_the_covariances() -> None:
    """Points on a line y = 2x: the ellipse's long axis follows it (angle atan(2)) and has no
    width across it."""
    flows = pl.DataFrame({"controller": ["x"] * 3, "recovery": ["y"] * 3,
                          "delay_p95_ns": [1e6, 2e6, 3e6], "throughput_bps": [2e6, 4e6, 6e6]})
    (g,) = schemes(flows)
    e = g["ellipse"]
    assert math.isclose(e["angle"], math.degrees(math.atan(2)), abs_tol=1e-6)
    assert e["height"] < 1e-6 and math.isclose(e["width"], 2 * math.sqrt(1 + 4), rel_tol=1e-9)
