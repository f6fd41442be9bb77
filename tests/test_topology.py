"""Topologies from the scenario file: presets (parking lot, wired-cum-wireless), routes by
hops or delay, static routing entries and routes pinned per flow; errors name the field."""

from __future__ import annotations

import json

import pytest

import tcplab
from tcplab import _native
from tcplab.scenario import Scenario, ScenarioError
from tcplab.topology import default_pairs, graph, link_names

from conftest import SMALL_TOML

LOT = """
name = "lot"
duration = "2s"
[topology]
kind = "parking_lot"
hops = 3
bottleneck = { rate = "10Mbps", delay = "5ms", buffer = 30 }
long_pairs = 1
cross_pairs = [1, 0, 2]
reverse_pairs = 1
[[flows]]
controller = "reno"
recovery = "sack"
[[flows]]
controller = "areno"
recovery = "sack"
[[flows]]
controller = "reno"
recovery = "sack"
[[flows]]
controller = "reno"
recovery = "sack"
[[flows]]
controller = "reno"
recovery = "sack"
"""

WIRELESS = """
name = "wcw"
duration = "2s"
[topology]
kind = "wired_cum_wireless"
wireless = { forward = { loss = 0.02, report_losses = true }, reverse = { loss = 0.01 } }
[[flows]]
controller = "venoplus"
recovery = "reno"
[[udp]]
rate = "1Mbps"
packet_size = 1000
"""

GRAPH = """
name = "graph"
duration = "2s"
[[nodes]]
name = "s0"
kind = "host"
[[nodes]]
name = "r1"
kind = "router"
[[nodes]]
name = "r2"
kind = "router"
[[nodes]]
name = "r3"
kind = "router"
[[nodes]]
name = "d0"
kind = "host"
[[links]]
from = "s0"
to = "r1"
rate = "10Mbps"
delay = "1ms"
buffer = 100
[[links]]
from = "r1"
to = "d0"
rate = "10Mbps"
delay = "100ms"
buffer = 100
[[links]]
from = "r1"
to = "r2"
rate = "10Mbps"
delay = "5ms"
buffer = 100
[[links]]
from = "r2"
to = "r3"
rate = "10Mbps"
delay = "5ms"
buffer = 100
[[links]]
from = "r3"
to = "d0"
rate = "10Mbps"
delay = "5ms"
buffer = 100
[[flows]]
src = "s0"
dst = "d0"
controller = "reno"
recovery = "newreno"
bytes = "200KB"
"""


def _rust_roundtrip(s: Scenario) -> dict:
    c = s.canonical()
    assert json.loads(_native.scenario_json_roundtrip(json.dumps(c))) == c
    _native.Simulation(json.dumps(c))
    return c


def test_parking_lot_expands_like_the_simulator():
    s = Scenario.from_toml(LOT + '[trace]\npcap = "all"\n')
    c = _rust_roundtrip(s)
    topo = c["topology"]
    assert default_pairs(topo) == [("ls0", "lr0"), ("cs0_0", "cr0_0"), ("cs2_0", "cr2_0"), ("cs2_1", "cr2_1"), ("vs0", "vr0")]
    assert [(f["src"], f["dst"]) for f in c["flows"]] == default_pairs(topo)
    # Default access links: never the bottleneck.
    assert topo["access"]["forward"]["rate"] == 1_000_000_000
    r = tcplab.run(s)
    assert r.links["link"].unique(maintain_order=True).to_list() == link_names(topo)
    nodes, _ = graph(topo)
    assert list(r.pcap_addresses) == list(nodes), "the simulator's node order"
    assert r.pcap_addresses["r0"] == "10.0.0.1" and [f["name"] for f in r.pcap] == link_names(topo)
    assert (r.flows["throughput_bps"] > 0).all()


def test_wired_cum_wireless_defaults_and_losses():
    s = Scenario.from_toml(WIRELESS)
    c = _rust_roundtrip(s)
    topo = c["topology"]
    assert topo["pairs"] == 2
    (wl,) = topo["wireless"]
    assert wl["forward"]["rate"] == 10_000_000 and wl["forward"]["buffer"] == {"packets": 50}
    assert wl["forward"]["report_losses"] is True and wl["reverse"]["loss"] == {"model": "bernoulli", "p": 0.01}
    assert topo["bottleneck"]["forward"]["delay"] == 80_000_000
    r = tcplab.run(s)
    drops = r.links.filter(r.links["link"].str.starts_with("bs-mobile"))
    assert drops["drops_link_error"].sum() > 0
    others = r.links.filter(~r.links["link"].str.starts_with("bs-mobile"))
    assert others["drops_link_error"].sum() == 0


def _sent(r, link, direction="forward"):
    row = r.links.filter((r.links["link"] == link) & (r.links["direction"] == direction))
    return row["packets_sent"][0]


def test_routing_by_delay_static_and_pinned():
    by_hops = tcplab.run(Scenario.from_toml(GRAPH))
    assert _sent(by_hops, "r1-d0") > 0 and _sent(by_hops, "r1-r2") == 0
    by_delay = tcplab.run(Scenario.from_toml(GRAPH.replace('duration = "2s"', 'duration = "2s"\nrouting = "delay"')))
    assert _sent(by_delay, "r1-d0") == 0 and _sent(by_delay, "r3-d0") > 0
    pinned = tcplab.run(Scenario.from_toml(GRAPH + 'route = ["s0", "r1", "r2", "r3", "d0"]\n'))
    assert _sent(pinned, "r1-d0") == 0 and _sent(pinned, "r1-d0", "reverse") == 0
    assert _sent(pinned, "r2-r3", "reverse") == _sent(pinned, "s0-r1", "reverse")
    static = GRAPH + """
[[static_routes]]
at = "r1"
dst = "d0"
next = "r2"
[[static_routes]]
at = "r2"
dst = "d0"
next = "r3"
"""
    r = tcplab.run(Scenario.from_toml(static))
    assert _sent(r, "r1-d0") == 0 and _sent(r, "r1-d0", "reverse") > 0


@pytest.mark.parametrize(
    "text, message",
    [
        (LOT.replace('kind = "parking_lot"', 'kind = "parking"'), "topology.kind: 'parking' is not a known topology kind"),
        (LOT.replace("cross_pairs = [1, 0, 2]", "cross_pairs = [1, 2]"), "topology.cross_pairs: has 2 entries for 3 hops"),
        (LOT.replace("hops = 3", "hops = 0"), "topology.hops: 0 must be within [1, 1000]"),
        (LOT + "[[flows]]\ncontroller = 'reno'\nrecovery = 'sack'\n", "flows[5].src: defaults to"),
        (WIRELESS.replace("loss = 0.02", "loss = 2"), "topology.wireless.forward.loss.p: 2 must be within [0, 1]"),
        (GRAPH + 'route = ["s0", "r2", "d0"]\n', "flows[0].route[1]: 'r2' is not linked to 's0'"),
        (GRAPH + 'route = ["s0", "r9", "d0"]\n', "flows[0].route[1]: 'r9' is not a node"),
        (GRAPH + 'route = ["r1", "d0"]\n', "flows[0].route[0]: 'r1' must be the flow's src 's0'"),
        (GRAPH + 'route = ["s0", "r1", "r2", "r1", "d0"]\n', "flows[0].route[3]: 'r1' is visited twice"),
        (GRAPH.replace('duration = "2s"', 'duration = "2s"\nrouting = "fastest"'), "routing: 'fastest' is not a known routing (known: hops, delay)"),
        (
            GRAPH + '[[static_routes]]\nat = "r1"\ndst = "d0"\nnext = "r3"\n',
            "static_routes[0].next: 'r3' is not a neighbour of 'r1'",
        ),
        (GRAPH + '[[static_routes]]\nat = "r1"\ndst = "r2"\nnext = "r2"\n', "static_routes[0].dst: 'r2' is a router"),
        (LOT.replace('duration = "2s"', 'duration = "2s"\nrouting = "delay"'), "routing: is only for explicit topologies"),
    ],
)
def test_errors_name_the_field(text, message):
    with pytest.raises(ScenarioError) as e:
        Scenario.from_toml(text)
    assert message in str(e.value), str(e.value)


def test_a_static_route_loop_is_reported_by_the_simulator():
    loop = GRAPH + """
[[static_routes]]
at = "r1"
dst = "d0"
next = "r2"
"""
    s = Scenario.from_toml(loop)  # r2 routes d0 back through r1 by hops
    with pytest.raises(ScenarioError, match=r'flows\[0\]: no route from "s0" to "d0"'):
        tcplab.run(s)


@pytest.mark.parametrize(
    "route, message",
    [
        # The simulator's route rules (tcplab_sim::flow_route), worded at the TOML path.
        ('["s0"]', "flows[0].route: needs at least the flow's src and dst"),
        ('["s0", "r1", "r2"]', "flows[0].route[2]: 'r2' must be the flow's dst 'd0'"),
        ('["s0", "r1", "d0", "r3", "d0"]', "flows[0].route[2]: 'd0' is a host in the middle of the route"),
        ('["s0", "r1", "r2", "r3", "d0"]', None),
    ],
)
def test_route_rules_come_from_the_simulator(route, message):
    text = GRAPH + f"route = {route}\n"
    if message is None:
        assert Scenario.from_toml(text).canonical()["flows"][0]["route"] == json.loads(route)
        return
    with pytest.raises(ScenarioError) as info:
        Scenario.from_toml(text)
    assert message in str(info.value)


def test_static_route_rules_come_from_the_simulator():
    def error(route: str) -> str:
        with pytest.raises(ScenarioError) as info:
            Scenario.from_toml(GRAPH + "[[static_routes]]\n" + route)
        return str(info.value)

    assert "static_routes[0].at: 'zz' is not a node (nodes: s0, r1, r2, r3, d0)" in error(
        'at = "zz"\ndst = "d0"\nnext = "r2"\n'
    )
    assert "static_routes[0].next: 'd0' is not a neighbour of 's0' (no link joins them)" in error(
        'at = "s0"\ndst = "d0"\nnext = "d0"\n'
    )
    ok = Scenario.from_toml(GRAPH + '[[static_routes]]\nat = "r1"\ndst = "d0"\nnext = "r2"\n')
    assert ok.canonical()["topology"]["static_routes"] == [{"at": "r1", "dst": "d0", "next": "r2"}]


@pytest.mark.parametrize(
    "old, new, message",
    [
        # The explicit topology's node and link rules are the simulator's (tcplab_sim::topology).
        ('name = "r3"', 'name = "r2"', "nodes[3].name: 'r2' is already the name of nodes[2]"),
        ('from = "r3"\nto = "d0"', 'from = "r3"\nto = "d9"', "links[4].to: 'd9' is not a node (nodes: s0, r1, r2, r3, d0)"),
        ('from = "r3"\nto = "d0"', 'from = "r3"\nto = "r3"', "links[4].to: 'r3' links a node to itself"),
        ('from = "r3"\nto = "d0"', 'from = "d0"\nto = "r1"', "links[4]: duplicates links[1] between the same nodes"),
    ],
)
def test_explicit_graph_rules(old, new, message):
    assert old in GRAPH
    with pytest.raises(ScenarioError) as info:
        Scenario.from_toml(GRAPH.replace(old, new, 1))
    assert message in str(info.value), str(info.value)


def test_a_link_given_once_for_all_pairs_is_named_without_an_index():
    # The simulator checks each pair's copy (sender_access[1]); the message names the table.
    text = SMALL_TOML.replace('sender_access = { rate = "20Mbps", delay = "2.5ms", buffer = 100 }', 'sender_access = { rate = "20Mbps", delay = "2.5ms", buffer = 0 }')
    with pytest.raises(ScenarioError, match=r"^topology\.sender_access\.buffer: 0 must be >= 1 packet$"):
        Scenario.from_toml(text)
