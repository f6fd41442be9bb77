"""The scenario format's names and a link direction's defaults come from the simulator
(``tcplab_sim::scenario::vocabulary``): this package parses each name the simulator knows,
keeps no list of its own, and still names the field and the value of an unknown name."""

import json

import pytest

from tcplab import _native

from tcplab.campaign.config import CampaignConfig
from tcplab.scenario import Scenario, ScenarioError
from tcplab.scenario.flows import GROWTH_MODES
from tcplab.scenario.links import PARSED_LOSS_MODELS, PLAIN_QUEUES
from tcplab.scenario.topologies import PRESETS
from tcplab.scenario.vocabulary import DEFAULTS, names

from conftest import SCENARIOS, SMALL_TOML, canonical_of


def test_every_variant_the_simulator_knows_has_a_parser():
    # Fails when the simulator gains a variant this schema cannot parse (or loses one).
    assert sorted(names("queue")) == sorted([*PLAIN_QUEUES, "red"])
    assert sorted(names("loss_model")) == sorted(PARSED_LOSS_MODELS)
    assert sorted(names("topology")) == sorted([*PRESETS, "explicit"])
    assert sorted(names("growth")) == sorted(GROWTH_MODES)


def test_a_link_direction_defaults_to_the_simulators_queue_and_loss():
    assert (DEFAULTS["queue"], DEFAULTS["loss"]) == ({"discipline": "drop_tail"}, {"model": "none"})
    reverse = canonical_of(SMALL_TOML)["topology"]["bottleneck"]["reverse"]
    assert (reverse["queue"], reverse["loss"]) == (DEFAULTS["queue"], DEFAULTS["loss"])


def _error(text: str) -> str:
    with pytest.raises(ScenarioError) as info:
        Scenario.from_toml(text)
    return str(info.value)


@pytest.mark.parametrize(
    "field, toml, expected",
    [
        ("repeated_rto", 'rto_min = "200ms"\nrepeated_rto = "linux"', "tcp.repeated_rto: 'linux' is not a known repeated-RTO style (known: "),
        ("sack_style", 'rto_min = "200ms"\nsack_style = "bytes"', "tcp.sack_style: 'bytes' is not a known SACK style (known: "),
        ("rto_mode", 'rto_min = "200ms"\nrto_mode = "bsd"', "tcp.rto_mode: 'bsd' is not a known RTO mode (known: "),
        ("growth", 'rto_min = "200ms"\ngrowth = "cubic"', "tcp.growth: 'cubic' is not a known growth mode (known: "),
    ],
)
def test_an_unknown_tcp_name_names_field_value_and_the_simulators_names(field, toml, expected):
    msg = _error(SMALL_TOML.replace('rto_min = "200ms"', toml))
    assert msg.startswith(expected), msg
    assert msg.endswith(", ".join(names(field)) + ")"), msg


def test_unknown_series_queue_loss_and_kind_name_field_and_value():
    msg = _error(SMALL_TOML + '\n[trace]\nseries = "sometimes"\n')
    assert msg == f"trace.series: 'sometimes' is not a known series mode (known: {', '.join(names('series'))})", msg
    msg = _error(SMALL_TOML.replace("forward = { loss = 1e-2 }", 'forward = { queue = "codel" }'))
    assert "forward.queue: 'codel' is not a known queue discipline (known: drop_tail, red)" in msg, msg
    msg = _error(SMALL_TOML.replace("forward = { loss = 1e-2 }", 'forward = { loss = { model = "pareto" } }'))
    assert f"forward.loss.model: 'pareto' is not a known loss model (known: {', '.join(names('loss_model'))})" in msg
    msg = _error(SMALL_TOML.replace("[topology]", '[topology]\nkind = "ring"'))
    assert msg.startswith("topology.kind: 'ring' is not a known topology kind (known: dumbbell, parking_lot"), msg


def test_unknown_routing_names_field_and_value():
    text = """
name = "x"
duration = "1s"
routing = "widest"
[[nodes]]
name = "a"
kind = "host"
[[nodes]]
name = "b"
kind = "host"
[[links]]
from = "a"
to = "b"
rate = "1Mbps"
delay = "1ms"
buffer = 10
"""
    assert _error(text) == "routing: 'widest' is not a known routing (known: hops, delay)"


def test_campaign_sack_style_is_the_simulators():
    with pytest.raises(ValueError, match=r"transfer\.sack_style: 'sack' is not a known SACK style \(known: ranges, eth_packets\)"):
        CampaignConfig.from_dict({"transfer": {"sack_style": "sack"}})
    assert CampaignConfig.from_dict({}).transfer.sack_style in names("sack_style")


def test_wlan_access_default_access_link_is_the_simulators():
    from tcplab.scenario import load_scenario

    access = json.loads(_native.wlan_vocabulary_json())["access"]
    assert access["forward"] == access["reverse"]
    assert (access["forward"]["rate"], access["forward"]["delay"], access["forward"]["buffer"]) == (
        100_000_000,
        100_000,
        {"packets": 1000},
    )
    c = load_scenario(SCENARIOS / "wlan-exp3-red-veno.toml").canonical()
    assert c["topology"]["access"] == access


def test_a_flows_live_stack_and_framing_are_the_simulators_names():
    # Declared once, in tcplab_sim::scenario (Stack, Framing); the schema parses what it lists.
    assert names("stack") == ("tcplab", "linux", "tcplab-tcp")
    assert names("framing") == ("tcplab", "eth")
    assert names("receiver") == ("stack", "tcplab")
    sack = 'name = "sack"\ncontroller = "reno"'
    msg = _error(SMALL_TOML.replace(sack, sack + '\nstack = "bsd"'))
    assert msg == "flows[1].stack: 'bsd' is not a known stack (known: tcplab, linux, tcplab-tcp)", msg
    msg = _error(SMALL_TOML.replace(sack, sack + '\nframing = "quic"'))
    assert msg == "flows[1].framing: 'quic' is not a known framing (known: tcplab, eth)", msg
    can = canonical_of(SMALL_TOML.replace(sack, sack + '\nstack = "linux"'))
    assert can["flows"][1]["stack"] == "linux" and "stack" not in can["flows"][0]


def test_the_simulator_refuses_an_eth_framing_on_a_linux_flow():
    sack = 'name = "sack"\ncontroller = "reno"'
    with pytest.raises(ValueError) as info:
        _native.Simulation(json.dumps(canonical_of(SMALL_TOML.replace(sack, sack + '\nstack = "linux"\nframing = "eth"'))))
    assert 'flows[1].framing = "eth": a framing is for stack = "tcplab" flows' in str(info.value)


def test_real_tcp_stacks_are_named_once_and_a_tcplab_receiver_needs_a_linux_sender():
    # docs/real-tcp.md: stack = "tcplab-tcp" (tcplab's sender speaking TCP to a kernel), receiver =
    # "tcplab" (a Linux sender to tcplab's receiver); a simulated run simulates tcplab's
    # sender whatever the stack
    sack = 'name = "sack"\ncontroller = "reno"'
    for extra, field in (('stack = "tcplab-tcp"', "stack"), ('stack = "linux"\nreceiver = "tcplab"', "receiver")):
        can = canonical_of(SMALL_TOML.replace(sack, sack + "\n" + extra))
        assert field in can["flows"][1] and field not in can["flows"][0]
        _native.Simulation(json.dumps(can))
    with pytest.raises(ValueError) as info:
        _native.Simulation(json.dumps(canonical_of(SMALL_TOML.replace(sack, sack + '\nreceiver = "tcplab"'))))
    assert 'flows[1].receiver = "tcplab": for stack = "linux" flows' in str(info.value)
    with pytest.raises(ValueError) as info:
        _native.Simulation(json.dumps(canonical_of(SMALL_TOML.replace(sack, sack + '\nstack = "tcplab-tcp"\nframing = "eth"'))))
    assert 'flows[1].framing = "eth": a framing is for stack = "tcplab" flows' in str(info.value)


@pytest.mark.parametrize(
    "flow, expected",
    [
        ('framing = "eth"', 'flows[0].tcp.mss = 1460: framing = "eth" sends 1024-byte packets'),
        ('framing = "eth"\ntcp = { mss = 1024 }\nbytes = "1000B"',
         'flows[0].bytes = 1000: framing = "eth" needs whole 1024-byte packets'),
    ],
)
def test_validate_refuses_what_the_eth_framing_cannot_carry(tmp_path, flow, expected):
    # The rule lives in tcplab_sim::framing_rules; `tcplab validate` reports it before any
    # live run starts, one line naming the field and the value.
    from typer.testing import CliRunner

    from tcplab.cli import app

    text = SMALL_TOML.replace('tcp = { sack_blocks = 0 }\n', "").replace(
        'name = "newreno"', f'name = "newreno"\n{flow}')
    path = tmp_path / "eth.toml"
    path.write_text(text)
    r = CliRunner().invoke(app, ["validate", str(path)])
    assert r.exit_code == 2, r.output
    lines = [line for line in r.output.splitlines() if line.strip()]
    assert len(lines) == 1 and expected in lines[0], r.output
    ok = text.replace(flow, 'framing = "eth"\ntcp = { mss = 1024 }\nbytes = "2048B"')
    path.write_text(ok)
    assert CliRunner().invoke(app, ["validate", str(path)]).exit_code == 0


def test_a_simulated_run_ignores_the_framing_and_the_stack_but_for_the_handshake():
    # docs/live.md: a simulated run simulates tcplab's sender for every flow, whatever `stack`;
    # a real-TCP stack's flow starts from its handshake's RTT sample (docs/tcp.md).
    import polars as pl

    from tcplab.run import run

    # The ETH framing sends 1024-byte packets: both runs use that mss.
    small = SMALL_TOML.replace('rto_min = "200ms"', 'rto_min = "200ms"\nmss = 1024')
    plain = run(Scenario.from_toml(small))
    eth = run(Scenario.from_toml(small.replace(
        'name = "newreno"', 'name = "newreno"\nstack = "tcplab"\nframing = "eth"')))
    for t in ("flows", "series", "drops", "links"):
        assert plain.tables[t].equals(eth.tables[t]), t
    sack = 'name = "sack"\ncontroller = "reno"'
    linux = run(Scenario.from_toml(small.replace(sack, sack + '\nstack = "linux"')))
    for t in ("flows", "drops", "links"):
        assert plain.tables[t].equals(linux.tables[t]), t
    # Only the sack flow's RTT estimate moves: it starts from the idle round trip of a 60-byte
    # SYN and SYN-ACK (2.5 + 15 + 2.5 ms each way, serialized at 20, 2 and 20 Mb/s).
    def rtt_free(res):
        return res.tables["series"].drop("srtt_ns", "rto_ns")

    assert rtt_free(plain).equals(rtt_free(linux))
    one_way = 20_000_000 + 2 * 60 * 8 * 1000 // 20 + 60 * 8 * 1000 // 2
    first = linux.tables["series"].filter(pl.col("flow") == 1).row(0, named=True)
    assert first["srtt_ns"] == 2 * one_way, first
    before = plain.tables["series"].filter(pl.col("flow") == 1).row(0, named=True)
    assert before["srtt_ns"] in (None, 0), before


# ---- defaults the schema fills in come from the simulator -------------------------------------

_SCENARIO_HEAD = """
name = "d"
duration = "1s"
[topology]
bottleneck = { rate = "%s", delay = "10ms", buffer = 10 }
[[flows]]
controller = "reno"
recovery = "newreno"
"""


@pytest.mark.parametrize("rate, access_rate", [("2Mbps", 1_000_000_000), ("1Gbps", 10_000_000_000)])
def test_the_dumbbells_default_access_links_are_the_simulators(rate, access_rate):
    c = canonical_of(_SCENARIO_HEAD % rate)["topology"]
    expected = json.loads(_native.default_access_json(c["bottleneck"]["forward"]["rate"]))
    assert c["sender_access"] == [expected] and c["receiver_access"] == [expected]
    assert expected["forward"]["rate"] == access_rate
    assert expected["forward"]["buffer"] == {"packets": DEFAULTS["access"]["buffer_packets"]}


def test_trace_red_and_gilbert_elliott_defaults_are_the_simulators():
    from tcplab.scenario import Trace

    c = canonical_of(_SCENARIO_HEAD % "2Mbps")
    assert c["trace"] == DEFAULTS["trace"]
    assert Trace().model_dump(exclude_none=True) == DEFAULTS["trace"]
    red = canonical_of(
        (_SCENARIO_HEAD % "2Mbps").replace("buffer = 10 }", 'buffer = 10, queue = { discipline = "red", min_th = 2, max_th = 6 } }')
    )["topology"]["bottleneck"]["forward"]["queue"]
    assert red == {"discipline": "red", "min_th": 2.0, "max_th": 6.0, **DEFAULTS["red"]}
    assert (red["max_p"], red["w_q"]) == (0.1, 0.002)
    ge = canonical_of(
        (_SCENARIO_HEAD % "2Mbps").replace("buffer = 10 }", 'buffer = 10, loss = { model = "gilbert_elliott", p_gb = 0.1, p_bg = 0.5 } }')
    )["topology"]["bottleneck"]["forward"]["loss"]
    assert ge == {"model": "gilbert_elliott", "p_gb": 0.1, "p_bg": 0.5, **DEFAULTS["gilbert_elliott"]}


@pytest.mark.parametrize(
    "change, expected",
    [
        ('[[flows]]\ncontroller = "reno"\nrecovery = "newreno"\nbytes = "0B"', "flows[1].bytes: 0 must be >= 1 byte"),
        ('[[udp]]\nrate = "1Mbps"\npacket_size = "0KB"', "udp[0].packet_size: 0 must be >= 1 byte"),
        ("[trace]\npcap_snaplen = 70000", "trace.pcap_snaplen: 70000 must be within [1, 65535]"),
        ("[trace]\npcap_snaplen = 0", "trace.pcap_snaplen: 0 must be within [1, 65535]"),
    ],
)
def test_a_zero_size_is_the_simulators_rule_naming_field_and_value(change, expected):
    assert _error((_SCENARIO_HEAD % "2Mbps") + change) == expected


def test_a_zero_byte_buffer_and_red_mean_size_are_the_simulators_rules():
    msg = _error((_SCENARIO_HEAD % "2Mbps").replace("buffer = 10 }", 'buffer = "0B" }'))
    assert msg == "topology.bottleneck.buffer: 0 must be >= 1 byte", msg
    red = 'queue = { discipline = "red", min_th = "0B", max_th = "6KB", mode = "bytes", mean_packet_size = "0B" }'
    msg = _error((_SCENARIO_HEAD % "2Mbps").replace("buffer = 10 }", f"buffer = 10, {red} }}"))
    assert msg == "topology.bottleneck.queue.mean_packet_size: 0 must be >= 1 byte", msg


def test_a_parking_lots_packet_size_of_zero_names_field_and_value():
    text = """
name = "p"
duration = "1s"
[topology]
kind = "parking_lot"
bottleneck = { rate = "10Mbps", delay = "10ms", buffer = 50 }
packet_size = "0B"
[[flows]]
controller = "reno"
recovery = "newreno"
"""
    assert _error(text) == "topology.packet_size: 0 must be >= 1 byte"


@pytest.mark.parametrize(
    "trace, expected",
    [
        ('series = "interval"\ninterval = "0s"', 'trace.interval: 0 ns must be > 0 when series are recorded (trace.series = "change" or "interval")'),
        ('series = "change"\ninterval = 0', 'trace.interval: 0 ns must be > 0 when series are recorded (trace.series = "change" or "interval")'),
    ],
)
def test_a_zero_trace_interval_with_series_is_the_simulators_rule(trace, expected):
    assert _error((_SCENARIO_HEAD % "2Mbps") + f"[trace]\n{trace}\n") == expected


def test_a_zero_trace_interval_without_series_is_accepted():
    c = canonical_of((_SCENARIO_HEAD % "2Mbps") + '[trace]\nseries = "off"\ninterval = 0\n')
    assert c["trace"]["interval"] == 0


def test_byte_countings_default_limit_and_its_rule_are_the_simulators():
    growth = canonical_of(SMALL_TOML.replace('rto_min = "200ms"', 'rto_min = "200ms"\ngrowth = "byte_counting"'))["tcp"]["growth"]
    assert growth == {"mode": "byte_counting", "limit": DEFAULTS["byte_counting_limit"]} == {"mode": "byte_counting", "limit": 2}
    msg = _error(SMALL_TOML.replace('rto_min = "200ms"', 'rto_min = "200ms"\ngrowth = { mode = "byte_counting", limit = 0 }'))
    assert msg == "tcp.growth.limit: 0 must be >= 1", msg
