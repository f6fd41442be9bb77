"""Scenario files: units, shorthand, overrides, canonical JSON, and one-line errors."""

import json
import tomllib

import pytest

import tcplab
from tcplab import _native
from tcplab.scenario import Scenario, ScenarioError, default_tcp_config, load_scenario

from conftest import SCENARIOS, SMALL_TOML, canonical_of


def test_small_scenario_canonical_units():
    c = canonical_of(SMALL_TOML)
    assert c["name"] == "small" and c["seed"] == 7
    assert c["duration"] == 2_000_000_000
    b = c["topology"]["bottleneck"]
    assert b["forward"]["rate"] == 2_000_000
    assert b["forward"]["delay"] == 15_000_000
    assert b["forward"]["buffer"] == {"packets": 10}
    assert b["forward"]["loss"] == {"model": "bernoulli", "p": 0.01}
    assert b["forward"]["queue"] == {"discipline": "drop_tail"}


def test_symmetric_shorthand_means_forward_equals_reverse_except_overrides():
    b = canonical_of(SMALL_TOML)["topology"]["bottleneck"]
    fwd, rev = dict(b["forward"]), dict(b["reverse"])
    assert rev["loss"] == {"model": "none"}
    fwd.pop("loss"), rev.pop("loss")
    assert fwd == rev


def test_forward_and_reverse_tables_set_each_direction():
    text = SMALL_TOML.replace(
        'bottleneck = { rate = "2Mbps", delay = "15ms", buffer = 10, forward = { loss = 1e-2 } }',
        'bottleneck = { forward = { rate = "2Mbps", delay = "15ms", buffer = 10 }, '
        'reverse = { rate = "500kbps", delay = "30ms", buffer = "64KB" } }',
    )
    b = canonical_of(text)["topology"]["bottleneck"]
    assert b["forward"]["rate"] == 2_000_000 and b["forward"]["buffer"] == {"packets": 10}
    assert b["reverse"]["rate"] == 500_000 and b["reverse"]["delay"] == 30_000_000
    assert b["reverse"]["buffer"] == {"bytes": 64_000}


def test_flow_tcp_overrides_merge_over_scenario_tcp_over_defaults():
    c = canonical_of(SMALL_TOML)
    defaults = default_tcp_config()
    f0, f1 = c["flows"][0]["tcp"], c["flows"][1]["tcp"]
    # full config for every flow
    assert set(f0) == set(defaults) == set(f1)
    assert f0["rto_min"] == f1["rto_min"] == 200_000_000  # scenario level
    assert f0["sack_blocks"] == 0  # flow override
    assert f1["sack_blocks"] == defaults["sack_blocks"]  # default
    assert c["tcp"]["rto_min"] == 200_000_000 and c["tcp"]["sack_blocks"] == defaults["sack_blocks"]
    assert f1["mss"] == defaults["mss"] == 1460


def test_dumbbell_defaults_endpoints_names_pairs_and_access_links():
    c = canonical_of(SMALL_TOML)
    assert [(f["name"], f["src"], f["dst"]) for f in c["flows"]] == [
        ("newreno", "s0", "r0"),
        ("sack", "s1", "r1"),
    ]
    assert c["topology"]["pairs"] == 2
    assert c["flows"][1]["start"] == 50_000_000
    text = SMALL_TOML.replace(
        'sender_access = { rate = "20Mbps", delay = "2.5ms", buffer = 100 }\n', ""
    ).replace('name = "sack"\n', "")
    c = canonical_of(text)
    assert c["flows"][1]["name"] == "flow1"
    access = c["topology"]["sender_access"]
    assert len(access) == 1 and access[0]["forward"]["rate"] >= 1_000_000_000
    assert access[0]["forward"]["delay"] == 0


def test_controller_and_recovery_as_tables_with_params():
    text = SMALL_TOML.replace(
        'controller = "reno"\nrecovery = "newreno"',
        'controller = { name = "reno", beta = 3 }\nrecovery = { name = "newreno" }',
    )
    f = canonical_of(text)["flows"][0]
    assert f["controller"] == {"name": "reno", "params": {"beta": 3.0}}
    assert f["recovery"] == {"name": "newreno", "params": {}}


def test_growth_ssthresh_and_sizes_in_tcp():
    text = SMALL_TOML.replace(
        'rto_min = "200ms"',
        'rto_min = "200ms"\ngrowth = { mode = "byte_counting", limit = 1 }\ninitial_ssthresh = "64KiB"\nrcv_buf = "1MiB"',
    ).replace(
        "tcp = { sack_blocks = 0 }",
        'tcp = { sack_blocks = 0, growth = "per_ack", initial_ssthresh = "unbounded" }',
    )
    c = canonical_of(text)
    assert c["tcp"]["growth"] == {"mode": "byte_counting", "limit": 1}
    assert c["tcp"]["initial_ssthresh"] == 65536 and c["tcp"]["rcv_buf"] == 2**20
    assert c["flows"][0]["tcp"]["growth"] == {"mode": "per_ack"}
    assert c["flows"][0]["tcp"]["initial_ssthresh"] is None
    assert c["flows"][1]["tcp"]["initial_ssthresh"] == 65536


def test_explicit_topology():
    data = {
        "name": "chain",
        "duration": 1,
        "nodes": [
            {"name": "a", "kind": "host"},
            {"name": "r", "kind": "router"},
            {"name": "b", "kind": "host"},
        ],
        "links": [
            {"from": "a", "to": "r", "rate": "10Mbps", "delay": "1ms", "buffer": 50},
            {
                "from": "r",
                "to": "b",
                "rate": "1Mbps",
                "delay": "10ms",
                "buffer": 10,
                "reverse": {"loss": 0.001},
            },
        ],
        "flows": [{"src": "a", "dst": "b", "controller": "reno", "recovery": "sack", "bytes": "1MB"}],
        "udp": [{"src": "b", "dst": "a", "rate": "100kbps", "packet_size": 200}],
    }
    c = Scenario.from_dict(data).canonical()
    assert c["topology"]["kind"] == "explicit"
    assert (
        c["topology"]["links"][1]["from"] == "r"
        and c["topology"]["links"][1]["reverse"]["loss"]["p"] == 0.001
    )
    assert c["flows"][0]["bytes"] == 1_000_000
    assert c["udp"][0] == {
        "name": "udp0",
        "src": "b",
        "dst": "a",
        "rate": 100_000,
        "packet_size": 200,
        "start": 0,
        "stop": None,
    }
    json.loads(_native.scenario_json_roundtrip(json.dumps(c)))


@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("*.toml")), ids=lambda p: p.name)
def test_shipped_scenarios_validate_and_rust_reads_them_identically(path):
    sc = load_scenario(path)
    c = sc.canonical()
    assert c["name"] == path.stem
    # Rust parses the canonical JSON into its Scenario and serializes it back unchanged:
    # no field Python emits is misread or dropped, and Rust adds no default Python lacks.
    assert json.loads(_native.scenario_json_roundtrip(json.dumps(c))) == c
    # ... and the simulator's own validation accepts it (building the simulation runs it).
    _native.Simulation(json.dumps(c))


def test_every_scenario_file_is_covered():
    # The test above globs scenarios/*.toml: the files added with the loss-classification
    # work are among them.
    names = {p.name for p in SCENARIOS.glob("*.toml")}
    assert {"venoplus.toml", "veno-table1.toml", "veno-flavor-linux.toml"} <= names


def test_venoplus_scenario_reports_losses_on_the_wireless_hops():
    c = load_scenario(SCENARIOS / "venoplus.toml").canonical()
    (access,) = c["topology"]["receiver_access"]
    assert access["forward"]["report_losses"] is True and "report_delay" not in access["forward"]
    assert "report_losses" not in access["reverse"]
    assert "report_losses" not in c["topology"]["bottleneck"]["forward"]


REPORTING = (
    'bottleneck = { rate = "2Mbps", delay = "15ms", buffer = 10, forward = { loss = 1e-2 } }'
)


def test_report_losses_round_trip_and_omitted_at_defaults():
    c = canonical_of(SMALL_TOML)
    for d in ("forward", "reverse"):
        assert "report_losses" not in c["topology"]["bottleneck"][d]
        assert "report_delay" not in c["topology"]["bottleneck"][d]
    text = SMALL_TOML.replace(
        REPORTING,
        'bottleneck = { rate = "2Mbps", delay = "15ms", buffer = 10, report_losses = false, '
        'forward = { loss = 1e-2, report_losses = true, report_delay = "5ms" } }',
    )
    c = canonical_of(text)
    fwd, rev = c["topology"]["bottleneck"]["forward"], c["topology"]["bottleneck"]["reverse"]
    assert fwd["report_losses"] is True and fwd["report_delay"] == 5_000_000
    assert "report_losses" not in rev and "report_delay" not in rev
    assert json.loads(_native.scenario_json_roundtrip(json.dumps(c))) == c
    # the symmetric shorthand sets both directions; a delay of 0 is the default (omitted)
    text = SMALL_TOML.replace(
        REPORTING,
        'bottleneck = { rate = "2Mbps", delay = "15ms", buffer = 10, report_losses = true, '
        "report_delay = 0 }",
    )
    c = canonical_of(text)
    for d in ("forward", "reverse"):
        assert c["topology"]["bottleneck"][d]["report_losses"] is True
        assert "report_delay" not in c["topology"]["bottleneck"][d]
    assert json.loads(_native.scenario_json_roundtrip(json.dumps(c))) == c
    tcplab.run(Scenario.from_toml(text))  # the simulator accepts it


def test_report_delay_without_report_losses_is_an_error():
    text = SMALL_TOML.replace(
        REPORTING,
        'bottleneck = { rate = "2Mbps", delay = "15ms", buffer = 10, forward = { report_delay = "5ms" } }',
    )
    with pytest.raises(
        ScenarioError,
        match=r"^topology\.bottleneck\.forward\.report_delay: 5 ms is only allowed with report_losses = true$",
    ):
        Scenario.from_toml(text)
    # given on the link (both directions), with report_losses off in one direction
    text = SMALL_TOML.replace(
        REPORTING,
        'bottleneck = { rate = "2Mbps", delay = "15ms", buffer = 10, report_delay = "1ms", '
        "forward = { report_losses = true } }",
    )
    with pytest.raises(
        ScenarioError,
        match=r"^topology\.bottleneck\.report_delay: 1 ms is only allowed with report_losses = true$",
    ):
        Scenario.from_toml(text)
    with pytest.raises(ScenarioError, match=r"report_losses: 'yes' is not a boolean"):
        bad = REPORTING.replace("loss = 1e-2", 'report_losses = "yes"')
        Scenario.from_toml(SMALL_TOML.replace(REPORTING, bad))


def test_demo_dumbbell_is_the_main_job():
    c = load_scenario(SCENARIOS / "demo-dumbbell.toml").canonical()
    b = c["topology"]["bottleneck"]["forward"]
    assert b["rate"] == 10_000_000 and b["buffer"] == {"packets": 30} and b["loss"]["p"] == 1e-3
    assert c["duration"] == 60_000_000_000
    assert [(f["recovery"]["name"]) for f in c["flows"]] == ["newreno", "sack"]
    one_way = (
        b["delay"]
        + c["topology"]["sender_access"][0]["forward"]["delay"]
        + c["topology"]["receiver_access"][0]["forward"]["delay"]
    )
    assert 2 * one_way == 60_000_000


def test_seed_override_and_name_from_file(tmp_path):
    p = tmp_path / "my-run.toml"
    p.write_text(SMALL_TOML.replace('name = "small"\n', ""))
    sc = load_scenario(p)
    assert sc.name == "my-run"
    assert sc.with_seed(99).canonical()["seed"] == 99
    with pytest.raises(ScenarioError, match="seed"):
        sc.with_seed(-1)


def test_scenario_source_is_kept(small_file):
    sc = load_scenario(small_file)
    assert sc.source["path"] == str(small_file)
    assert sc.source["toml"] == SMALL_TOML
    assert sc.source["given"] == tomllib.loads(SMALL_TOML)


def test_known_components_come_from_rust():
    assert tcplab.controllers() == list(_native.controllers()) and "reno" in tcplab.controllers()
    assert set(tcplab.recoveries()) >= {"reno", "newreno", "sack"}


# ---- errors: one line naming the field path, the bad value and what is allowed -------------


def _mutate(old: str, new: str) -> str:
    assert old in SMALL_TOML, old
    return SMALL_TOML.replace(old, new, 1)


INVALID = {
    "wrong_type": (_mutate("seed = 7", 'seed = "seven"'), "seed: 'seven' is not a whole number"),
    "negative_rate": (
        _mutate('rate = "2Mbps"', "rate = -5"),
        "topology.bottleneck.rate: -5 must be > 0",
    ),
    "unknown_controller": (
        _mutate('controller = "reno"', 'controller = "renoo"'),
        f"flows[0].controller: 'renoo' is not a known controller (did you mean 'reno'? known: "
        f"{', '.join(_native.controllers())})",
    ),
    "loss_above_one": (
        _mutate("forward = { loss = 1e-2 }", 'forward = { loss = { model = "bernoulli", p = 1.5 } }'),
        "topology.bottleneck.forward.loss.p: 1.5 must be within [0, 1]",
    ),
    "unknown_field": (
        _mutate('rto_min = "200ms"', 'rto_min = "200ms"\nwindow_scale = 7'),
        "tcp.window_scale: is not a known field (allowed: mss, initial_cwnd,",
    ),
    "unknown_recovery": (
        _mutate('recovery = "sack"', 'recovery = "fackk"'),
        f"flows[1].recovery: 'fackk' is not a known recovery (did you mean 'fack'? known: "
        f"{', '.join(_native.recoveries())})",
    ),
    "misspelt_field": (
        _mutate('rto_min = "200ms"', 'rto_mn = "200ms"'),
        "tcp.rto_mn: is not a known field (did you mean 'rto_min'? allowed: mss, initial_cwnd,",
    ),
    "misspelt_host": (
        _mutate('name = "sack"', 'name = "sack"\nsrc = "S1"'),
        "flows[1].src: 'S1' is not a host (did you mean 's1'? hosts: s0, s1, r0, r1;",
    ),
    "bad_unit": (
        _mutate('duration = "2s"', 'duration = "2 fortnights"'),
        "duration: '2 fortnights' has an unknown duration unit 'fortnights'",
    ),
    "missing_field": (
        _mutate('recovery = "sack"\n', ""),
        "flows[1].recovery: is required but missing",
    ),
    "unknown_host": (
        _mutate('name = "sack"', 'name = "sack"\nsrc = "s9"'),
        "flows[1].src: 's9' is not a host (hosts: s0, s1, r0, r1; set topology.pairs for more)",
    ),
    "bad_toml": (_mutate('duration = "2s"', "duration = "), "invalid TOML"),
    "start_after_end": (
        _mutate('start = "50ms"', 'start = "3s"'),
        "flows[1].start: 3 s must be at most the duration (2 s)",
    ),
    "tcp_range": (
        _mutate("tcp = { sack_blocks = 0 }", "tcp = { sack_blocks = 9 }"),
        "flows[0].tcp.sack_blocks: 9 must be within [0, 6]",
    ),
    "missing_direction_field": (
        _mutate(
            'bottleneck = { rate = "2Mbps", delay = "15ms", buffer = 10, forward = { loss = 1e-2 } }',
            'bottleneck = { rate = "2Mbps", buffer = 10 }',
        ),
        "topology.bottleneck.forward.delay: is required but missing",
    ),
}


@pytest.mark.parametrize("case", sorted(INVALID))
def test_invalid_scenarios_give_one_clear_line(case, tmp_path):
    text, expected = INVALID[case]
    p = tmp_path / "bad.toml"
    p.write_text(text)
    with pytest.raises(ScenarioError) as info:
        load_scenario(p)
    msg = str(info.value)
    assert expected in msg, msg
    assert "\n" not in msg


def test_explicit_link_loss_error_path():
    data = {
        "name": "x",
        "duration": 1,
        "nodes": [
            {"name": "a", "kind": "host"},
            {"name": "b", "kind": "host"},
            {"name": "c", "kind": "host"},
        ],
        "links": [
            {"from": "a", "to": "b", "rate": "1Mbps", "delay": "1ms", "buffer": 5},
            {"from": "b", "to": "c", "rate": "1Mbps", "delay": "1ms", "buffer": 5},
            {
                "from": "a",
                "to": "c",
                "rate": "1Mbps",
                "delay": "1ms",
                "buffer": 5,
                "forward": {"loss": {"p": 1.5}},
            },
        ],
        "flows": [{"src": "a", "dst": "c", "controller": "reno", "recovery": "sack"}],
    }
    with pytest.raises(ScenarioError, match=r"^links\[2\]\.forward\.loss\.p: 1\.5 must be within \[0, 1\]$"):
        Scenario.from_dict(data)


def test_tcp_cross_field_error_names_where_the_value_was_set():
    text = _mutate("tcp = { sack_blocks = 0 }", 'tcp = { rto_min = "2min" }')
    with pytest.raises(ScenarioError, match=r"^flows\[0\]\.tcp\.rto_min: 120 s must be <= rto_max \(60 s\)$"):
        Scenario.from_toml(text)



#: One case per rule of ``TcpConfig::validate`` (tcplab_core, the rules' only home): the
#: Python message names the field where it was set and the value, in user units.
TCP_RULES = {
    "mss_range": ('tcp = { mss = "10B" }', r"^flows\[0\]\.tcp\.mss: 10 must be within \[64, 65000\] bytes$"),
    "ssthresh_below_2mss": (
        'tcp = { mss = 1000, initial_ssthresh = "1500B" }',
        r"^flows\[0\]\.tcp\.initial_ssthresh: 1500 must be at least 2 MSS \(2000 bytes\)$",
    ),
    "rto_min_above_max": ('tcp = { rto_min = "2min" }', r"^flows\[0\]\.tcp\.rto_min: 120 s must be <= rto_max \(60 s\)$"),
    "rcv_buf_below_mss": ('tcp = { rcv_buf = "1000B" }', r"^flows\[0\]\.tcp\.rcv_buf: 1000 must be at least one MSS \(1460 bytes\)$"),
    "ato_min_above_timeout": (
        'tcp = { quickack = true, delayed_ack_min = "300ms" }',
        r"^flows\[0\]\.tcp\.delayed_ack_min: 300 ms must be <= delayed_ack_timeout \(200 ms\) with quickack$",
    ),
    "dsack_needs_sack": ('tcp = { sack_blocks = 0, dsack = true }', r"^flows\[0\]\.tcp\.dsack: true needs SACK"),
    "initial_cwnd_range": ("tcp = { initial_cwnd = 0 }", r"^flows\[0\]\.tcp\.initial_cwnd: 0 must be within \[1, 10000\]$"),
    "sack_blocks_range": ("tcp = { sack_blocks = 9 }", r"^flows\[0\]\.tcp\.sack_blocks: 9 must be within \[0, 6\]$"),
    "dupthresh_at_least": ("tcp = { dupthresh = 0 }", r"^flows\[0\]\.tcp\.dupthresh: 0 must be >= 1$"),
    "ack_every_at_least": ("tcp = { ack_every = 0 }", r"^flows\[0\]\.tcp\.ack_every: 0 must be >= 1$"),
    "rto_initial_positive": ("tcp = { rto_initial = 0 }", r"^flows\[0\]\.tcp\.rto_initial: 0 ns must be > 0$"),
    "growth_limit": ('tcp = { growth = { mode = "byte_counting", limit = 0 } }', r"^flows\[0\]\.tcp\.growth\.limit: 0 must be"),
    "mss_beyond_u32": ('tcp = { mss = "5GB" }', r"^flows\[0\]\.tcp\.mss: '5GB' is too large"),
}


@pytest.mark.parametrize("case", sorted(TCP_RULES))
def test_each_tcp_rule_names_field_and_value(case):
    tcp, message = TCP_RULES[case]
    with pytest.raises(ScenarioError, match=message):
        Scenario.from_toml(_mutate("tcp = { sack_blocks = 0 }", tcp))


def test_tcp_relation_blames_the_field_given_at_that_level():
    # Only rto_max is given (the profile's rto_min is 1 s): rto_max is the field named.
    text = _mutate('rto_min = "200ms"', 'rto_max = "100ms"')
    with pytest.raises(ScenarioError, match=r"^tcp\.rto_max: 100 ms must be >= rto_min \(1 s\)$"):
        Scenario.from_toml(text)


def test_trace_loss_model():
    text = SMALL_TOML.replace("forward = { loss = 1e-2 }", 'forward = { loss = { model = "trace", packets = [4, 1] } }')
    b = canonical_of(text)["topology"]["bottleneck"]
    assert b["forward"]["loss"] == {"model": "trace", "packets": [4, 1]}
    assert "forward loss trace of 2 packets" in Scenario.from_toml(text).describe()
    for bad, expected in (
        ('{ model = "trace" }', "packets: is required but missing"),
        ('{ model = "trace", packets = [-1] }', "is not a packet index"),
        ('{ model = "trace", packets = 3 }', "is not a list of packet indices"),
        ('{ model = "trace", packets = [1], p = 0.1 }', "is not a known field of loss model 'trace'"),
    ):
        with pytest.raises(ScenarioError) as info:
            Scenario.from_toml(SMALL_TOML.replace("forward = { loss = 1e-2 }", f"forward = {{ loss = {bad} }}"))
        assert expected in str(info.value), str(info.value)
