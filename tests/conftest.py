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
