"""Shared fixtures and the small scenario most tests run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "scenarios"

#: A small dumbbell: two flows over 2 Mb/s for 2 s of simulated time (well under a second of
#: wall time once the simulator runs).
SMALL_TOML = """
name = "small"
description = "two flows, 2 Mb/s, RTT 40 ms, buffer 10, loss 1e-2"
seed = 7
duration = "2s"

[topology]
bottleneck = { rate = "2Mbps", delay = "15ms", buffer = 10, forward = { loss = 1e-2 } }
sender_access = { rate = "20Mbps", delay = "2.5ms", buffer = 100 }
receiver_access = { rate = "20Mbps", delay = "2.5ms", buffer = 100 }

[tcp]
profile = "rfc"
rto_min = "200ms"

[[flows]]
name = "newreno"
controller = "reno"
recovery = "newreno"
tcp = { sack_blocks = 0 }

[[flows]]
name = "sack"
controller = "reno"
recovery = "sack"
start = "50ms"
"""


#: 64 NewReno flows on a shared 10 Mb/s bottleneck (bench scenario B4's network, 3 s, default
#: tracing): what the report must stay readable and bounded for.
MANY_FLOWS_TOML = """
name = "many-flows"
description = "64 NewReno flows, 10 Mb/s, RTT 80 ms, buffer 100 packets, 3 s"
seed = 1
duration = "3s"

[topology]
pairs = 64
bottleneck = { rate = "10Mbps", delay = "38ms", buffer = 100 }
sender_access = { rate = "100Mbps", delay = "1ms", buffer = 100000 }
receiver_access = { rate = "100Mbps", delay = "1ms", buffer = 100000 }

[tcp]
profile = "rfc"

[[flows]]
count = 64
controller = "reno"
recovery = "newreno"
"""


@pytest.fixture(scope="session")
def many_flows_run(tmp_path_factory):
    """(result, results directory) of :data:`MANY_FLOWS_TOML`, run once per session."""
    import tcplab
    from tcplab.results import write_results

    result = tcplab.run(tcplab.Scenario.from_toml(MANY_FLOWS_TOML))
    return result, write_results(result, tmp_path_factory.mktemp("many") / "run")


@pytest.fixture
def small_toml() -> str:
    return SMALL_TOML


@pytest.fixture
def small_file(tmp_path: Path) -> Path:
    p = tmp_path / "small.toml"
    p.write_text(SMALL_TOML)
    return p


def canonical_of(toml_text: str) -> dict:
    from tcplab.scenario import Scenario

    return json.loads(Scenario.from_toml(toml_text).canonical_json())


#: Test modules that judge real-time behaviour: rates, lateness, a live run's agreement with
#: its simulation or with the kernel's TCP. Other cores' work would move what they measure,
#: so .ci/run runs them one at a time, after the rest has run on every core (pytest-xdist).
#: Live tests that check plumbing only (results, files, processes, the campaign's records:
#: test_live_attach, test_live_binaries, test_live_pinned, test_live_real_tcp,
#: test_compare_live, test_campaign_controller, test_campaign_testbed, test_reproduce_live) run
#: with the rest. test_live_run_real_tcp is timing: it asks that every loss response answer a
#: drop, and beside other live tests one answered none once (a late ACK; not reproduced alone,
#: under CPU load or beside them in 7 runs).
TIMING_MODULES = (
    "test_live",
    "test_live_linux",
    "test_live_real_tcp",
    "test_live_real_tcp_fidelity",
    "test_live_real_tcp_receiver",
    "test_live_run",
    "test_live_run_real_tcp",
    "test_live_topology",
    "test_live_transport",
    "test_live_udp",
    "test_live_userns",
    "test_campaign_live",
    "test_fidelity_linux",
    "test_kernel_trace",
)


#: Test modules that must not share the machine with other live tests, run with the timing
#: ones: test_cleanup plants a dead run's namespace, which any live run starting beside it
#: would remove first (cleanup_stale).
ISOLATED_MODULES = ("test_cleanup",)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.stem in TIMING_MODULES + ISOLATED_MODULES:
            item.add_marker(pytest.mark.timing)


#: How the tests build the live binaries: as scripts/setup.sh does, so that nothing is built
#: again after it.
LIVE_BUILD = ["cargo", "build", "-q", "--release", "-p", "tcplab-live", "-p", "tcplab-py", "--bins"]


@pytest.fixture(scope="module")
def binaries() -> None:
    """The live testbed's binaries (tcplab-emu, tcplab-flow) built from this tree; skips
    saying what is missing (root, namespaces, TUN, cargo)."""
    import shutil
    import subprocess

    from tcplab.live import emulator_binary, live_support
    from tcplab.live.endpoints import flow_binary

    if reason := live_support():
        pytest.skip(reason)
    if shutil.which("cargo") is None and not flow_binary().exists():
        pytest.skip("cargo is needed to build tcplab-emu and tcplab-flow")
    if shutil.which("cargo") is not None:
        subprocess.run(LIVE_BUILD, cwd=ROOT, check=True)
    assert emulator_binary().exists() and flow_binary().exists()
