"""Results and scenarios in Jupyter: ``_repr_html_`` shows a run's flows table
with its throughput in Mb/s and a cwnd plot of every flow, and a scenario's description."""

from __future__ import annotations

import tcplab
from tcplab.scenario import Scenario

TOML = """
name = "nb"
seed = 3
duration = "2s"
[topology]
kind = "dumbbell"
pairs = 2
[topology.bottleneck]
rate = "5Mbps"
delay = "10ms"
buffer = 20
[[flows]]
name = "a<b"
controller = "reno"
recovery = "sack"
[[flows]]
controller = "cubic"
recovery = "sack"
"""


def test_a_run_shows_its_flows_and_their_cwnd() -> None:
    r = tcplab.run(Scenario.from_toml(TOML))
    page = r._repr_html_()
    assert "<b>nb</b> seed 3" in page
    assert "throughput Mb/s" in page and "a&lt;b" in page, "names escaped"
    thr = round(r.flows["throughput_bps"][0] / 1e6, 3)
    assert str(thr) in page
    assert page.count("<svg") == 1 and "cwnd (kB)" in page
    assert len(page) < 400_000


def test_a_run_without_series_has_no_plot() -> None:
    r = tcplab.run(Scenario.from_toml(TOML + '[trace]\nseries = "off"\n'))
    assert "<svg" not in r._repr_html_()


def test_a_scenario_shows_its_description() -> None:
    s = Scenario.from_toml(TOML)
    page = s._repr_html_()
    assert page.startswith("<pre>") and "reno" in page and "a&lt;b" in page
