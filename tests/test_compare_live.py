"""``tcplab compare`` with its live modes (docs/compare.md): a small dumbbell simulated, live
(tcplab's transport) and with Linux flows, 2 seeds each (about 1.5 s of real time per live
run). Needs root, `ip netns`, /dev/net/tun, cargo (to build tcplab-emu and tcplab-flow) and
``tcplab.live.run`` (``tcplab run --live``); skips saying which is missing. What is checked
is the plumbing (every mode ran every seed into its directory, the verdict table covers
every pair, nothing is left running), not the agreement of the modes: with 2 seeds the
t-interval is wide (t = 12.7 at 1 degree of freedom), and the live-against-simulated
tolerances are tests/test_live_transport.py's.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from tcplab.compare import LIVE_MODULE, live_unavailable, plan_compare, run_compare
from tcplab.report.compare_stats import METRICS
from tcplab.scenario import Scenario
from test_live import emu  # noqa: F401  (the fixture: skips without root, builds the binaries)

SCENARIO = """
name = "compare-live"
duration = "1500ms"
[topology]
pairs = 1
bottleneck = { rate = "10Mbps", delay = "10ms", buffer = 50, forward = { loss = 1e-2 } }
sender_access = { rate = "100Mbps", delay = "1ms", buffer = 1000 }
receiver_access = { rate = "100Mbps", delay = "1ms", buffer = 1000 }
[tcp]
mss = 1448
rto_min = "200ms"
[[flows]]
name = "reno"
controller = "reno"
recovery = "sack"
[trace]
series = "change"
"""


@pytest.fixture(scope="module")
def live_ready(request) -> None:
    if why := live_unavailable():
        pytest.skip(why if LIVE_MODULE in why else f"{why} (needed by tcplab compare's live modes)")
    request.getfixturevalue("emu")  # builds tcplab-emu and tcplab-flow (tests/test_live.py)


def _our_namespaces() -> list[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.startswith(f"tcplab-{os.getpid()}-")]


def test_compare_simulated_live_linux(live_ready, tmp_path):
    plan = plan_compare(Scenario.from_toml(SCENARIO), [1, 2])
    assert plan.skipped == {} and plan.modes == ["simulated", "live", "linux"], plan.skipped
    o = run_compare(plan, tmp_path / "c", realtime=True, run_reports=False)
    doc = json.loads(o.document.read_text())
    assert doc["skipped"] == {}, doc["skipped"]
    for mode in ("simulated", "live", "linux"):
        assert doc["modes"][mode]["seeds"] == [1, 2]
        assert doc["modes"][mode]["runs"] == [f"{mode}/seed-1", f"{mode}/seed-2"]
        for seed in (1, 2):
            summary = json.loads((o.out / mode / f"seed-{seed}" / "summary.json").read_text())
            assert ("live" in summary) == (mode != "simulated")
    assert len(doc["verdicts"]) == 3 * len(METRICS)  # simulated-live, simulated-linux, live-linux
    tput = doc["flows"][0]["metrics"]["throughput_mbps"]
    assert all(tput[m]["n"] == 2 and tput[m]["mean"] > 0 for m in ("simulated", "live", "linux"))
    assert _our_namespaces() == []
