"""Routes pinned per flow, live (docs/live.md): a flow's `route = [...]` is followed by the
emulator as by the simulator. Needs root, `ip netns`, /dev/net/tun and cargo (to build
tcplab-emu and tcplab-flow); skips saying which is missing. The plan's keys and the driver's
hops are Rust unit tests (crates/tcplab-live/src/plan.rs, driver/tests.rs).

Topology: hosts a and b; a -> r1 (100 Mb/s, 1 ms), r1 -> r2 (10 Mb/s, 2 ms) -> b (100 Mb/s,
1 ms), and a detour r1 -> r3 -> r2 (10 Mb/s, 5 ms each) whose first hop loses packets
(Bernoulli 0.05 forward). The routing table takes r1 -> r2 (fewest hops). Two 1 Mb/s CBR
flows of 1000-byte packets a -> b: udp0 pinned through the detour, udp1 not. Tolerances,
fixed before running (as tests/test_live_topology.py's): every drop is udp0's at r1-r3, and
the numbers udp0's sink missed are exactly the drop log's and the simulator's (the same
random stream draws for the same packets offered to that link); one-way delays never below
the sum of the hops' propagation and transmission times of the flow's route, median at most
2 ms above it (nothing queues at 0.1 of the links' rate).
"""

from __future__ import annotations

import time

import pytest

import tcplab
from tcplab.live import Testbed
from tcplab.live.udp import UdpHandle, start_udp_flow, udp_port
from tcplab.scenario import Scenario

SIZE = 1000
HOST_ALLOWANCE_NS = 2_000_000
#: (link, rate b/s, delay ns) of each route's hops.
DETOUR = [("a-r1", 100e6, 1_000_000), ("r1-r3", 10e6, 5_000_000), ("r3-r2", 10e6, 5_000_000),
          ("r2-b", 100e6, 1_000_000)]
DIRECT = [("a-r1", 100e6, 1_000_000), ("r1-r2", 10e6, 2_000_000), ("r2-b", 100e6, 1_000_000)]


def scenario() -> dict:
    def link(a: str, b: str, rate: str, delay: str, **forward: float) -> dict:
        d = {"from": a, "to": b, "rate": rate, "delay": delay, "buffer": 100}
        return {**d, "forward": forward} if forward else d

    return {
        "name": "live-pinned", "seed": 11, "duration": "2s",
        "nodes": [{"name": n, "kind": "host"} for n in ("a", "b")]
        + [{"name": n, "kind": "router"} for n in ("r1", "r2", "r3")],
        "links": [link("a", "r1", "100Mbps", "1ms"), link("r1", "r2", "10Mbps", "2ms"),
                  link("r2", "b", "100Mbps", "1ms"), link("r1", "r3", "10Mbps", "5ms", loss=0.05),
                  link("r3", "r2", "10Mbps", "5ms")],
        "flows": [],
        "udp": [{"name": "udp0", "src": "a", "dst": "b", "rate": "1Mbps", "packet_size": SIZE,
                 "route": ["a", "r1", "r3", "r2", "b"]},
                {"name": "udp1", "src": "a", "dst": "b", "rate": "1Mbps", "packet_size": SIZE}],
    }


def floor_ns(hops: list[tuple[str, float, int]]) -> int:
    """The model's one-way delay of an unqueued packet: per hop, transmission + propagation."""
    return sum(round(SIZE * 8 / rate * 1e9) + delay for _, rate, delay in hops)


@pytest.fixture(scope="module")
def run(binaries: None, tmp_path_factory: pytest.TempPathFactory) -> tuple[Testbed, list[UdpHandle], dict]:
    tmp = tmp_path_factory.mktemp("pinned")
    sc = Scenario.from_dict(scenario())
    can = sc.canonical()
    with Testbed.for_scenario(sc, tmp / "emu", realtime=True) as tb:
        origin = time.monotonic_ns() + 400_000_000
        hs = [start_udp_flow(tb, can, j, origin, tmp / f"udp{j}") for j in range(2)]
        for h in hs:
            h.finish((origin + can["duration"] - time.monotonic_ns()) / 1e9 + 5.0)
    return tb, hs, can


def test_the_plan_lists_each_flows_port_and_pinned_route(run) -> None:
    tb, _, can = run
    flows = tb.plan["flows"]
    assert [(f["kind"], f["index"], f["port"]) for f in flows] == [
        ("udp", 0, udp_port(can, 0)), ("udp", 1, udp_port(can, 1))]
    assert flows[0]["route"] == [f"{link}/forward" for link, _, _ in DETOUR]
    assert flows[1]["route"] is None


def test_drops_happen_at_the_pinned_link_only_and_are_the_simulators(run) -> None:
    tb, hs, _ = run
    assert tb.drops, "the lossy detour dropped nothing"
    assert {(d["link"], d["direction"], d["cause"]) for d in tb.drops} == {("r1-r3", "forward", "link_error")}
    assert {d["packet"]["flow"] for d in tb.drops} == {0}
    sent = {f["seq"] for f in hs[0].facts("sender") if f["fact"] == "udp_sent"}
    got = {f["seq"] for f in hs[0].facts("receiver") if f["fact"] == "delivered"}
    dropped = {d["packet"]["seq"] for d in tb.drops}
    assert sent - got == dropped
    sim = tcplab.run(scenario()).drops
    assert set(sim.filter(sim["flow_kind"] == "udp")["seq"].to_list()) == dropped
    assert hs[1].summary["packets_lost"] == 0
    links = tb.stats["links"]
    assert links["r1-r3"]["forward"]["offered"] == hs[0].sender["packets_sent"]
    assert links["r1-r2"]["forward"]["offered"] == hs[1].sender["packets_sent"]


@pytest.mark.parametrize("flow,hops", [(0, DETOUR), (1, DIRECT)])
def test_one_way_delay_is_the_routes(run, flow: int, hops: list) -> None:
    _, hs, _ = run
    delays = sorted(f["time_ns"] - f["sent_at_ns"] for f in hs[flow].facts("receiver")
                    if f["fact"] == "delivered")
    floor = floor_ns(hops)
    assert delays[0] >= floor, (delays[0], floor)
    assert delays[len(delays) // 2] <= floor + HOST_ALLOWANCE_NS, (delays[len(delays) // 2], floor)
