"""``tcplab fidelity`` (issue 24 §4): bad input is one line before anything runs; with root,
one short cell of the grid runs both ways and is judged, with the kernel recorded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import test_live
from typer.testing import CliRunner

from tcplab.cli import app
from tcplab.fidelity import Cell, judge

runner = CliRunner()
emu = test_live.emu  # skips without root, builds tcplab-emu and tcplab-flow


@pytest.mark.parametrize("args,expected", [(["--buffers", "huge"], "--buffers 'huge'"),
                                           (["--rates", "fast"], "--rates 'fast'"),
                                           (["--kinds", "medium"], "--kinds 'medium'")])
def test_bad_grid_is_one_line_and_runs_nothing(args: list[str], expected: str, tmp_path: Path) -> None:
    r = runner.invoke(app, ["fidelity", *args, "--out", str(tmp_path / "out")])
    assert r.exit_code == 2, r.output
    assert expected in r.output and len(r.output.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_the_rule_is_the_issues() -> None:
    sim = [{"value": 1.09, "retransmits": 12.0}]
    assert judge(sim, [{"value": 1.0, "retransmits": 10.0}])["pass"], "+9 %, +20 %"
    assert not judge(sim, [{"value": 0.98, "retransmits": 10.0}])["value_ok"], "+11 %"
    assert not judge(sim, [{"value": 1.0, "retransmits": 9.0}])["retransmits_ok"], "+33 %"
    assert judge([{"value": 1.0, "retransmits": 4.0}], [{"value": 1.0, "retransmits": 1.0}])["retransmits_ok"], \
        "both under 5 segments"
    assert Cell("reno", 10e6, 0.0, "shallow", "long").buffer_packets == 8
    assert Cell("reno", 1.6e6, 0.0, "shallow", "long").buffer_packets == 2, "at least 2"


def test_one_short_cell_runs_both_ways(emu: Path, tmp_path: Path) -> None:
    out = tmp_path / "fid"
    r = runner.invoke(app, ["fidelity", "--controllers", "reno", "--rates", "10e6", "--losses", "0",
                            "--buffers", "shallow", "--kinds", "short", "--seeds", "1", "--out", str(out)])
    assert r.exit_code == 0, r.output
    doc = json.loads((out / "fidelity.json").read_text())
    assert doc["machine"]["kernel"] and doc["machine"]["sysctls"]["net.ipv4.tcp_rmem"]
    (cell,) = doc["cells"]
    assert cell["name"] == "reno-10M-loss0-shallow-short"
    for side in ("sim", "linux"):
        run = cell["runs"][side][0]
        assert run["completed"] == 1.0 and 0.1 < run["value"] < 5.0, (side, run)
        assert (out / "cells" / cell["name"] / f"{side}-s1" / "flows.parquet").exists()
    assert cell["pass"] or cell["first_divergence"] is not None
    assert "tcplab fidelity" in (out / "report.html").read_text()
