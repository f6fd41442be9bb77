"""802.11b WLAN segments in the scenario format: canonical form, defaults, errors, and an
end-to-end run (docs/wlan.md)."""

import json
from pathlib import Path

import pytest

import tcplab
from tcplab import _native
from tcplab.results import write_results
from tcplab.scenario import Scenario, ScenarioError

ROOT = Path(__file__).resolve().parents[1]

EXPLICIT = """
name = "w"
duration = "2s"

[[nodes]]
name = "server"
kind = "host"
[[nodes]]
name = "ap"
kind = "router"
[[nodes]]
name = "sta0"
kind = "host"
[[nodes]]
name = "sta1"
kind = "host"

[[links]]
from = "server"
to = "ap"
rate = "100Mbps"
delay = "0.1ms"
buffer = 1000

[[wlan]]
ap = "ap"
rate = "5.5Mbps"
stations = [{node = "sta0", distance = "20m"}, {node = "sta1", preset = "HL"}]

[[udp]]
src = "sta0"
dst = "server"
rate = "1Mbps"
packet_size = 1000
"""

ACCESS = """
name = "a"
duration = "2s"

[topology]
kind = "wlan_access"
pipe = "fat"
preset = "LL"
stations = [{}, {preset = "HL"}]

[[flows]]
controller = "veno"
recovery = "reno"

[[flows]]
controller = "reno"
recovery = "reno"
"""


def _roundtrip(sc: Scenario) -> dict:
    c = sc.canonical()
    assert json.loads(_native.scenario_json_roundtrip(json.dumps(c))) == c
    _native.Simulation(json.dumps(c))
    return c


def test_explicit_wlan_canonical_form():
    c = _roundtrip(Scenario.from_toml(EXPLICIT))
    (w,) = c["topology"]["wlan"]
    assert w["name"] == "wlan0" and w["ap"] == "ap"
    assert w["mac"]["rate"] == 5_500_000 and w["mac"]["retry_limit"] == 7 and w["mac"]["slot"] == 20_000
    assert w["stations"] == [
        {"node": "sta0", "distance": 20.0, "preset": None},
        {"node": "sta1", "distance": None, "preset": "HL"},
    ]
    assert w["channel"]["rx_threshold_dbm"] is None and w["channel"]["shadowing_db"] == 4.0


def test_wlan_access_defaults_nodes_and_flow_endpoints():
    sc = Scenario.from_toml(ACCESS)
    c = _roundtrip(sc)
    t = c["topology"]
    assert t["kind"] == "wlan_access"
    assert t["pipe"]["forward"]["rate"] == 16_000_000 and t["pipe"]["reverse"]["delay"] == 30_000_000
    assert t["pipe"]["forward"]["buffer"] == {"packets": 60}
    assert [s["node"] for s in t["wlan"]["stations"]] == ["sta0", "sta1"]
    assert t["wlan"]["preset"] == "LL"
    assert [(f["src"], f["dst"]) for f in c["flows"]] == [("server", "sta0"), ("server", "sta1")]
    assert "fat pipe 16 Mb/s" in sc.describe()


BAD = {
    "ap_is_host": ('ap = "ap"', 'ap = "server"', "wlan[0].ap: 'server' is a host; the access point must be a router"),
    "unknown_station": ('node = "sta0", distance', 'node = "nobody", distance', "wlan[0].stations[0].node: 'nobody' is not a host"),
    "bad_rate": ('rate = "5.5Mbps"', 'rate = "54Mbps"', "wlan[0].rate: '54Mbps' is not an 802.11b rate"),
    "bad_distance": ('distance = "20m"', 'distance = "-2m"', "wlan[0].stations[0].distance: -2 must be > 0 metres"),
    "not_a_distance": ('distance = "20m"', 'distance = "far"', "wlan[0].stations[0].distance: 'far' is not a distance"),
    "both": ('distance = "20m"', 'distance = "20m", preset = "LL"', "wlan[0].stations[0].preset: 'LL' give distance or preset, not both"),
    "unplaced": ('{node = "sta0", distance = "20m"}', '{node = "sta0"}', "wlan[0].stations[0]: has no distance and no preset"),
    "bad_preset": ('preset = "HL"', 'preset = "XL"', "wlan[0].stations[1].preset: 'XL' is not allowed"),
    "cw": ('rate = "5.5Mbps"', 'rate = "5.5Mbps"\nmac = {cw_min = 63, cw_max = 31}', "wlan[0].mac.cw_max: 31 must be >= cw_min (63)"),
    "shadowing": ('rate = "5.5Mbps"', 'rate = "5.5Mbps"\nchannel = {shadowing_db = -1}', "wlan[0].channel.shadowing_db: -1 must be >= 0 dB"),
    "report_delay": ('rate = "5.5Mbps"', 'rate = "5.5Mbps"\nreport_delay = "1ms"', "wlan[0].report_delay: 1 ms is only allowed with report_losses = true"),
    # Rules of tcplab_sim::topology::wlan (their only home), one case each.
    "no_stations": ('stations = [{node = "sta0", distance = "20m"}, {node = "sta1", preset = "HL"}]', "stations = []", "wlan[0].stations: [] must list at least one station"),
    "station_is_router": ('node = "sta0", distance', 'node = "ap", distance', "wlan[0].stations[0].node: 'ap' is not a host (hosts: server, sta0, sta1)"),
    "station_twice": ('node = "sta1", preset', 'node = "sta0", preset', "wlan[0].stations[1].node: 'sta0' is already stations[0]"),
    "station_without_node": ('node = "sta1", preset', "preset", "wlan[0].stations[1].node: is required but missing"),
    "preset_without_shadowing": ('rate = "5.5Mbps"', 'rate = "5.5Mbps"\nchannel = {shadowing_db = 0}', "wlan[0].stations[1].preset: 'HL' presets need shadowing"),
    "duplicate_name": (
        'rate = "5.5Mbps"\nstations = [{node = "sta0", distance = "20m"}, {node = "sta1", preset = "HL"}]',
        'name = "x"\nrate = "5.5Mbps"\nstations = [{node = "sta0", distance = "20m"}]\n'
        '[[wlan]]\nname = "x"\nap = "ap"\nstations = [{node = "sta1", distance = "20m"}]',
        "wlan[1].name: 'x' is already the name of wlan[0]",
    ),
    "station_of_other_segment": (
        'rate = "5.5Mbps"\nstations = [{node = "sta0", distance = "20m"}, {node = "sta1", preset = "HL"}]',
        'name = "x"\nrate = "5.5Mbps"\nstations = [{node = "sta0", distance = "20m"}]\n'
        '[[wlan]]\nname = "y"\nap = "ap"\nstations = [{node = "sta0", distance = "20m"}]',
        "wlan[1].stations[0].node: 'sta0' is already a station of segment 'x'",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_wlan_fields_give_one_clear_line(case):
    old, new, expected = BAD[case]
    assert old in EXPLICIT
    with pytest.raises(ScenarioError) as info:
        Scenario.from_toml(EXPLICIT.replace(old, new, 1))
    msg = str(info.value)
    assert expected in msg, msg
    assert "\n" not in msg


def test_wlan_access_errors():
    with pytest.raises(ScenarioError, match=r"topology.pipe: 'medium' is not allowed"):
        Scenario.from_toml(ACCESS.replace('pipe = "fat"', 'pipe = "medium"'))
    with pytest.raises(ScenarioError, match=r"topology.stations: \[\] must list at least one station"):
        Scenario.from_toml(ACCESS.replace('stations = [{}, {preset = "HL"}]', "stations = []"))
    for name in ("server", "router", "ap"):
        with pytest.raises(ScenarioError, match=rf"^topology.stations\[0\].node: '{name}' is a name the wlan_access"):
            Scenario.from_toml(ACCESS.replace("stations = [{}, ", f'stations = [{{node = "{name}"}}, '))
    with pytest.raises(ScenarioError, match=r"^topology.stations\[1\].node: 'sta0' is already stations\[0\]$"):
        Scenario.from_toml(ACCESS.replace('{preset = "HL"}', '{node = "sta0", preset = "HL"}'))
    with pytest.raises(ScenarioError, match=r"flows\[1\].dst: defaults to 'sta1', which does not exist"):
        Scenario.from_toml(ACCESS.replace('stations = [{}, {preset = "HL"}]', "stations = [{}]"))


def test_saturated_station_end_to_end(tmp_path):
    r = tcplab.run(ROOT / "scenarios" / "wlan-udp-saturation.toml")
    assert r.summary["conservation"]["ok"]
    bps = r.udp["throughput_bps"][0]
    assert abs(bps / 6.051e6 - 1) < 0.05, bps  # docs/wlan.md reference
    links = r.links
    hop = links.filter(links["link"] == "wlan0:ap-sta0")
    assert sorted(hop["direction"].to_list()) == ["forward", "reverse"]
    # Overflow at the saturated station; drops carry an rssi_dbm column (NaN: not MAC drops).
    assert r.drops.height > 0 and "rssi_dbm" in r.drops.columns
    assert r.drops["rssi_dbm"].is_nan().all()
    out = write_results(r, tmp_path / "run")
    assert (out / "report.html").exists()


def test_unknown_access_point_names_the_nodes():
    """The access point's rules are the simulator's (tcplab_sim::topology), worded at the TOML path."""
    with pytest.raises(ScenarioError) as info:
        Scenario.from_toml(EXPLICIT.replace('ap = "ap"', 'ap = "nowhere"', 1))
    msg = str(info.value)
    assert "wlan[0].ap: 'nowhere' is not a node (nodes: " in msg, msg
    assert "ap" in msg.split("nodes: ")[1]


@pytest.mark.parametrize(
    "field, value, expected",
    [
        ("mac.retry_limit", "0", "mac.retry_limit: 0 must be within [1, 255]"),
        ("mac.cw_min", "70000", "mac.cw_min: 70000 must be within [1, 65535]"),
        ("mac.buffer", "0", "mac.buffer: 0 must be within [1, 1000000]"),
        ("buffer", "2000000", "topology.buffer: 2000000 must be within [1, 1000000]"),
        ("mac.mac_overhead", "10001", "mac.mac_overhead: 10001 must be within [0, 10000]"),
        ("mac.ack_bytes", "0", "mac.ack_bytes: 0 must be within [1, 10000]"),
        ("channel.exponent", "0", "channel.exponent: 0 must be > 0"),
        ("channel.shadowing_db", "-1", "channel.shadowing_db: -1 must be >= 0 dB"),
    ],
)
def test_mac_and_channel_bounds_are_the_simulators_and_name_field_and_value(field, value, expected):
    """The MAC's count ranges and the channel's lower bounds live in tcplab_sim::topology::wlan
    only; the message still names the field (at the TOML path) and the value."""
    with pytest.raises(ScenarioError) as info:
        Scenario.from_toml(ACCESS.replace("[topology]", f"[topology]\n{field} = {value}", 1))
    msg = str(info.value)
    assert msg.startswith("topology.") and expected in msg, msg


def test_a_station_distance_must_be_positive():
    with pytest.raises(ScenarioError, match=r"stations\[0\]\.distance: -3 must be > 0 metres"):
        Scenario.from_toml(ACCESS.replace("stations = [{}", "stations = [{distance = -3}", 1))
