"""Profiles: `[tcp] profile = "linux"` (or a flow's `tcp.profile`) picks the base TCP settings
and the controller/recovery of flows that name none; explicit fields override the profile."""

import pytest

import tcplab
from tcplab.scenario import ScenarioError, default_tcp_config, profile_defaults

from conftest import SMALL_TOML, canonical_of

MS = 1_000_000

LINUX_TCP = {
    "mss": 1448,
    "initial_cwnd": 10,
    "initial_ssthresh": None,
    "growth": {"mode": "linux"},
    "rto_min": 200 * MS,
    "rto_initial": 1000 * MS,
    "rto_max": 120_000 * MS,
    "clock_granularity": 1 * MS,
    "timestamps": True,
    "dupthresh": 3,
    "delayed_ack": True,
    "ack_every": 2,
    "delayed_ack_timeout": 200 * MS,
    "sack_blocks": 3,
    "rcv_buf": 16 << 20,
    "rcv_autotune": True,
    "rcv_buf_initial": 128 << 10,
    "rcv_truesize": 2304,
    "ecn": False,
    "dsack": True,
    "rto_mode": "linux",
    "quickack": True,
    "delayed_ack_min": 40 * MS,
    "frto": True,
    "undo": True,
    "repeated_rto": "rfc5681",
    "sack_style": "ranges",
}

LINUX_TOML = """
name = "linux"
duration = "1s"

[topology]
bottleneck = { rate = "10Mbps", delay = "10ms", buffer = 50 }

[tcp]
profile = "linux"
{tcp}

[[flows]]
{flow0}

[[flows]]
{flow1}
"""


def linux(tcp: str = "", flow0: str = "", flow1: str = "") -> str:
    return LINUX_TOML.replace("{tcp}", tcp).replace("{flow0}", flow0).replace("{flow1}", flow1)


def test_linux_profile_gives_linux_defaults_cubic_hystart_and_rack_prr():
    c = canonical_of(linux())
    assert c["tcp"] == LINUX_TCP
    for f in c["flows"]:
        assert f["tcp"] == LINUX_TCP
        assert f["controller"] == {"name": "cubic", "params": {"hystart": True, "flavor": "linux"}}
        assert f["recovery"] == {"name": "rack", "params": {"bound": "safe_ack", "window": "prr"}}


def test_explicit_fields_beat_the_profile_at_both_levels():
    c = canonical_of(
        linux(
            'initial_cwnd = 4\nrto_mode = "rfc6298"',
            'tcp = { quickack = false, delayed_ack_min = "20ms", frto = false }',
        )
    )
    f0, f1 = (f["tcp"] for f in c["flows"])
    assert c["tcp"] == {**LINUX_TCP, "initial_cwnd": 4, "rto_mode": "rfc6298"}
    assert f1 == c["tcp"]
    assert f0 == {**c["tcp"], "quickack": False, "delayed_ack_min": 20 * MS, "frto": False}


def test_a_flow_profile_resets_its_base_and_its_defaults():
    # Under a linux scenario, a flow naming profile "rfc" starts from the RFC defaults (the
    # scenario's explicit fields still apply) and must name its controller and recovery.
    c = canonical_of(linux('initial_cwnd = 4', 'tcp = { profile = "rfc" }\ncontroller = "reno"\nrecovery = "sack"'))
    f0, f1 = c["flows"]
    assert f0["tcp"] == {**default_tcp_config(), "initial_cwnd": 4}
    assert (f0["controller"], f0["recovery"]) == ({"name": "reno", "params": {}}, {"name": "sack", "params": {}})
    assert f1["tcp"] == {**LINUX_TCP, "initial_cwnd": 4}
    with pytest.raises(ScenarioError, match=r"^flows\[0\]\.controller: is required but missing"):
        canonical_of(linux(flow0='tcp = { profile = "rfc" }\nrecovery = "sack"'))
    # And the other way: one linux flow in an RFC scenario.
    text = SMALL_TOML.replace('name = "sack"\ncontroller = "reno"\nrecovery = "sack"', 'name = "sack"\ntcp = { profile = "linux" }')
    c = canonical_of(text)
    assert c["tcp"] == {**default_tcp_config(), "rto_min": 200 * MS}
    assert c["flows"][1]["tcp"] == LINUX_TCP
    assert c["flows"][1]["controller"]["name"] == "cubic"


def test_named_cubic_gets_hystart_under_linux_unless_it_says_otherwise():
    c = canonical_of(linux(flow0='controller = "cubic"', flow1='controller = { name = "cubic", hystart = false, beta = 0.8 }'))
    assert c["flows"][0]["controller"] == {"name": "cubic", "params": {"hystart": True, "flavor": "linux"}}
    # CUBIC's own constants: the RFC 9438 arithmetic they belong to.
    assert c["flows"][1]["controller"] == {"name": "cubic", "params": {"hystart": False, "beta": 0.8}}
    c = canonical_of(linux(flow0='controller = { name = "cubic", flavor = "rfc9438" }'))
    assert c["flows"][0]["controller"] == {"name": "cubic", "params": {"hystart": True, "flavor": "rfc9438"}}
    c = canonical_of(linux(flow0='controller = "reno"\nrecovery = "newreno"'))
    assert c["flows"][0]["controller"] == {"name": "reno", "params": {}}
    assert c["flows"][0]["recovery"] == {"name": "newreno", "params": {}}
    # Under the RFC profile cubic keeps its own default (no HyStart).
    text = SMALL_TOML.replace('controller = "reno"\nrecovery = "sack"', 'controller = "cubic"\nrecovery = "sack"')
    assert canonical_of(text)["flows"][1]["controller"] == {"name": "cubic", "params": {}}


def test_linux_is_the_default_profile_and_rfc_flows_must_name_components():
    unnamed = SMALL_TOML.replace('profile = "rfc"\n', "")
    assert canonical_of(unnamed) == canonical_of(SMALL_TOML.replace('profile = "rfc"', 'profile = "linux"'))
    assert canonical_of(unnamed)["tcp"] == {**LINUX_TCP, "rto_min": 200 * MS}
    # under the default a flow that names nothing gets the profile's controller and recovery
    bare = unnamed.replace('name = "sack"\ncontroller = "reno"\nrecovery = "sack"\n', 'name = "sack"\n')
    flow = canonical_of(bare)["flows"][1]
    assert (flow["controller"]["name"], flow["recovery"]["name"]) == ("cubic", "rack")
    # a profile's DSACK yields to SACK turned off (flows[0] has sack_blocks = 0), as in Linux
    assert canonical_of(unnamed)["flows"][0]["tcp"]["dsack"] is False
    assert canonical_of(unnamed)["flows"][1]["tcp"]["dsack"] is True
    # and its initial receive buffer (128 KiB) to a smaller explicit receive buffer
    small = unnamed.replace('rto_min = "200ms"', 'rto_min = "200ms"\nrcv_buf = "64KiB"')
    assert canonical_of(small)["tcp"]["rcv_buf_initial"] == 64 << 10
    with pytest.raises(ScenarioError, match=r"^tcp\.rcv_buf_initial: "):
        canonical_of(small.replace('rcv_buf = "64KiB"', 'rcv_buf = "64KiB"\nrcv_buf_initial = "128KiB"'))
    # profile = "rfc" is one line away; there flows name their components
    text = SMALL_TOML.replace('name = "sack"\ncontroller = "reno"\n', 'name = "sack"\n')
    with pytest.raises(ScenarioError, match=r"^flows\[1\]\.controller: is required but missing \(profile 'rfc'"):
        canonical_of(text)


@pytest.mark.parametrize(
    "tcp, message",
    [
        ('profile = "bsd"', r"^tcp\.profile: 'bsd' is not a known profile \(known: rfc, linux\)$"),
        ("profile = 1", r"^tcp\.profile: 1 is not a known profile"),
        ('rto_mode = "bsd"', r"^tcp\.rto_mode: 'bsd' is not a known RTO mode \(known: rfc6298, linux\)$"),
        ("quickack = 1", r"^tcp\.quickack: "),
        ('delayed_ack_min = "300ms"', r"^tcp\.delayed_ack_min: 300 ms must be <= delayed_ack_timeout \(200 ms\) with quickack$"),
        ("delayed_ack_min = 0", r"^tcp\.delayed_ack_min: "),
        ('growth = { mode = "linux", limit = 2 }', r"^tcp\.growth\.limit: is not a known field of growth mode 'linux'"),
    ],
)
def test_new_fields_errors_name_field_and_value(tcp, message):
    text = linux(tcp).replace('profile = "linux"\nprofile', "profile")
    with pytest.raises(ScenarioError, match=message):
        canonical_of(text)


def test_new_fields_in_an_rfc_scenario():
    text = SMALL_TOML.replace(
        'rto_min = "200ms"',
        'rto_min = "200ms"\nrto_mode = "linux"\ngrowth = "linux"\nquickack = true\ndelayed_ack_min = "50ms"\nfrto = true\nundo = true',
    )
    t = canonical_of(text)["tcp"]
    assert (t["rto_mode"], t["growth"], t["quickack"], t["delayed_ack_min"]) == ("linux", {"mode": "linux"}, True, 50 * MS)
    assert t["frto"] and t["undo"] and t["mss"] == 1460


def test_a_linux_profile_scenario_runs():
    r = tcplab.run(tcplab.Scenario.from_toml(linux()))
    assert r is not None


def test_profile_defaults_come_from_the_simulator():
    assert profile_defaults("rfc")["tcp"] == default_tcp_config()
    assert profile_defaults("rfc")["controller"] is None
    assert profile_defaults("linux")["tcp"] == LINUX_TCP
    assert tcplab._native.profiles() == ["rfc", "linux"]
