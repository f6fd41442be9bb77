"""Trace-driven links in Mahimahi's format (``trace = "file"`` on a link direction,
docs/scenario.md): the file is read relative to the scenario, goes into the canonical JSON
with the trace's mean rate, and bad files are refused with one line naming the field, the
file, the line and the value."""

import json

import pytest

from tcplab import _native, run
from tcplab.scenario import ScenarioError, load_scenario

from conftest import SCENARIOS, SMALL_TOML


def _with_bottleneck(tmp_path, bottleneck: str, trace_text: str | None = "1\n2\n3\n4\n"):
    if trace_text is not None:
        (tmp_path / "link.up").write_text(trace_text)
    text = SMALL_TOML.replace(
        'bottleneck = { rate = "2Mbps", delay = "15ms", buffer = 10, forward = { loss = 1e-2 } }',
        f"bottleneck = {bottleneck}",
    )
    path = tmp_path / "s.toml"
    path.write_text(text)
    return path


def test_trace_is_read_relative_to_the_scenario_with_its_mean_rate(tmp_path):
    path = _with_bottleneck(tmp_path, '{ delay = "15ms", buffer = 10, forward = { trace = "link.up" }, reverse = { rate = "2Mbps" } }')
    c = load_scenario(path).canonical()
    fwd, rev = c["topology"]["bottleneck"]["forward"], c["topology"]["bottleneck"]["reverse"]
    assert fwd["trace"] == {"file": "link.up", "ms": [1, 2, 3, 4]}
    assert fwd["rate"] == 12_000_000  # 4 opportunities of 1500 B in 4 ms
    assert "trace" not in rev and rev["rate"] == 2_000_000
    assert json.loads(_native.scenario_json_roundtrip(json.dumps(c))) == c


def test_a_direction_trace_replaces_the_link_rate(tmp_path):
    path = _with_bottleneck(tmp_path, '{ rate = "2Mbps", delay = "15ms", buffer = 10, forward = { trace = "link.up" } }')
    c = load_scenario(path).canonical()["topology"]["bottleneck"]
    assert c["forward"]["rate"] == 12_000_000 and "trace" in c["forward"]
    assert c["reverse"]["rate"] == 2_000_000 and "trace" not in c["reverse"]


@pytest.mark.parametrize(
    ("bottleneck", "trace_text", "expected"),
    [
        (
            '{ delay = "15ms", buffer = 10, trace = "link.up" }',
            "1\n2\nx\n",
            "topology.bottleneck.trace: 'link.up' line 3: \"x\" is not a whole number of milliseconds",
        ),
        (
            '{ delay = "15ms", buffer = 10, trace = "link.up" }',
            "5\n3\n",
            "topology.bottleneck.trace: 'link.up' line 2: 3 ms is earlier than the line before (5 ms); timestamps must be nondecreasing",
        ),
        (
            '{ delay = "15ms", buffer = 10, trace = "link.up" }',
            "",
            "topology.bottleneck.trace: 'link.up' has no delivery opportunities (an empty trace)",
        ),
        (
            '{ delay = "15ms", buffer = 10, trace = "link.up" }',
            "0\n",
            "topology.bottleneck.trace: 'link.up' lasts 0 ms",
        ),
        (
            '{ delay = "15ms", buffer = 10, trace = "missing.up" }',
            None,
            "topology.bottleneck.trace: 'missing.up' cannot be read (",
        ),
        (
            '{ rate = "2Mbps", delay = "15ms", buffer = 10, trace = "link.up" }',
            "1\n",
            "topology.bottleneck.trace: cannot be combined with rate",
        ),
        (
            '{ delay = "15ms", buffer = 10, trace = "link.up", schedule = [{ at = "1s", rate = "1Mbps" }] }',
            "1\n",
            "cannot change the rate of a trace-driven direction",
        ),
        (
            '{ delay = "15ms", buffer = 10, forward = { trace = "link.up" } }',
            "1\n",
            "topology.bottleneck.reverse.rate: is required but missing (give rate, or a trace",
        ),
    ],
)
def test_bad_traces_are_refused_with_one_line(tmp_path, bottleneck, trace_text, expected):
    path = _with_bottleneck(tmp_path, bottleneck, trace_text)
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    msg = str(info.value)
    assert expected in msg, msg
    assert "\n" not in msg


def test_the_shipped_trace_scenario_runs():
    sc = load_scenario(SCENARIOS / "trace-steps.toml")
    c = sc.canonical()["topology"]["bottleneck"]
    assert c["forward"]["rate"] == c["reverse"]["rate"] == 12_000_000
    assert len(c["forward"]["trace"]["ms"]) == 2000 and c["forward"]["trace"]["ms"][-1] == 2000
    r = run(sc)
    assert r.conservation["ok"], r.conservation["violations"]
    fwd = r.links.filter((r.links["link"] == "left-right") & (r.links["direction"] == "forward"))
    # 30 s = 15 periods of 2000 opportunities of 1500 bytes: the most the link can carry.
    assert 0 < fwd["bytes_sent"][0] <= 15 * 2000 * 1500
