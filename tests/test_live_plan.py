"""What a live run could not carry, refused before anything starts: a segment of tcplab's
transport (MSS + IP + UDP + its header) or a UDP source's packet over the devices' MTU. The
plan (the emulator's own code, through the extension) lists them, so this needs neither root
nor namespaces; the command's exit status needs root and skips without."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tcplab.live.netns import scenario_plan
from tcplab.scenario import Scenario

BASE = """
name = "mtu"
duration = "1s"
[topology]
pairs = 1
[topology.bottleneck]
rate = "10Mbps"
delay = "10ms"
buffer = 50
[[flows]]
src = "s0"
dst = "r0"
controller = "reno"
recovery = "newreno"
"""


def plan(extra: str = "", flow: str = "") -> dict:
    text = BASE.replace('recovery = "newreno"\n', f'recovery = "newreno"\n{flow}') + extra
    return scenario_plan(Scenario.from_toml(text).canonical())


def test_a_segment_over_the_mtu_is_a_problem_in_one_line_naming_the_field() -> None:
    p = plan(flow="tcp = { mss = 1448 }\n")  # 1448 + 24 + 28 = 1500: fits
    assert p["mtu"] == 1500 and p["flow_problems"] == []
    (line,) = plan(flow="tcp = { mss = 1449 }\n")["flow_problems"]
    assert re.fullmatch(r"scenario: flows\[0\]\.tcp\.mss = 1449: a 1501-byte IP packet does not fit the live "
                        r"devices' MTU of 1500 \(.*at most 1448 here; docs/live\.md\)", line), line
    # the kernel's TCP negotiates its own MSS: a linux flow's 1460 is no transport segment
    assert plan(flow='tcp = { mss = 1460 }\nstack = "linux"\n')["flow_problems"] == []


def test_a_udp_packet_over_the_mtu_is_a_problem() -> None:
    udp = '[[udp]]\nsrc = "s0"\ndst = "r0"\nrate = "1Mbps"\npacket_size = {}\n'
    mss = "tcp = { mss = 1448 }\n"
    assert plan(udp.format(1500), mss)["flow_problems"] == []
    (line,) = plan(udp.format(1501), mss)["flow_problems"]
    assert line.startswith("scenario: udp[0].packet_size = 1501: the IP packet does not fit"), line


def test_run_live_refuses_it_with_status_2_before_anything_starts(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("tcplab run --live checks that live runs are possible (root) before the plan")
    f = tmp_path / "s.toml"
    f.write_text(BASE.replace('recovery = "newreno"\n', 'recovery = "newreno"\ntcp = { mss = 1460 }\n'))
    r = subprocess.run([sys.executable, "-m", "tcplab", "run", str(f), "--live", "--out", str(tmp_path / "out")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and "flows[0].tcp.mss = 1460" in r.stderr, r.stderr
    assert not (tmp_path / "out").exists()


def test_run_live_refuses_an_oversized_recording_as_a_simulated_run_does(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("tcplab run --live checks that live runs are possible (root) before the recording")
    f = tmp_path / "s.toml"
    f.write_text(BASE.replace('recovery = "newreno"\n', 'recovery = "newreno"\ntcp = { mss = 1448 }\n')
                 + '[trace]\nseries = "interval"\ninterval = "1ns"\n')
    lines = []
    for live in ([], ["--live"]):
        r = subprocess.run([sys.executable, "-m", "tcplab", "run", str(f), *live, "--out", str(tmp_path / "out")],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
        lines.append(r.stderr)
        assert not (tmp_path / "out").exists()
    assert lines[0] == lines[1]  # the same check, the same line
