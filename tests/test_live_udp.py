"""UDP constant-bit-rate flows live (docs/live.md): the simulator's UDP source and sink
(`tcplab-flow udp-send|udp-recv`) between two namespaces, through the emulator. Needs root,
`ip netns`, /dev/net/tun and cargo (to build tcplab-emu and tcplab-flow); skips saying which
is missing. The header, config and jitter are Rust unit tests (crates/tcplab-live/src/cbr_*).

Tolerances, fixed before running: at half the link's rate (no queue builds) the delivered
rate is the source's within +-2 % (the emulator's bound, docs/live.md); conservation is exact
(every datagram the source's socket took arrived or is in the emulator's drop log, and the
numbers lost are the drop log's); the instruments replayed on the live facts count the
summary's losses exactly.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

import tcplab
from tcplab.instruments import replay
from tcplab.live import LiveError, Testbed
from tcplab.live.transport import drop_facts, link_config
from tcplab.live.udp import UdpHandle, start_udp_flow
from tcplab.scenario import Scenario

RATE = 5_000_000  # half the link's 10 Mb/s
SIZE = 1000


def scenario(loss: float) -> dict:
    """Two hosts, one 10 Mb/s link (10 ms each way, 50-packet buffer), Bernoulli loss on
    the forward direction, a 5 Mb/s CBR flow of 1000-byte packets from 0.1 s to 2 s."""
    return {
        "name": "live-udp", "seed": 5, "duration": "2s",
        "nodes": [{"name": "a", "kind": "host"}, {"name": "b", "kind": "host"}],
        "links": [{"from": "a", "to": "b", "rate": "10Mbps", "delay": "10ms", "buffer": 50,
                   "forward": {"loss": loss}}],
        "flows": [],
        "udp": [{"name": "cbr", "src": "a", "dst": "b", "rate": RATE, "packet_size": SIZE,
                 "start": "100ms"}]}


def live(doc: dict, tmp: Path) -> tuple[Testbed, UdpHandle]:
    can = Scenario.from_dict(doc).canonical()
    with Testbed(link_config(can), tmp, realtime=True) as tb:
        origin = time.monotonic_ns() + 300_000_000
        h = start_udp_flow(tb, can, 0, origin, tmp / "udp0")
        h.finish((origin + can["duration"] - time.monotonic_ns()) / 1e9 + 5.0)
    return tb, h


def test_a_cbr_flow_delivers_its_rate_and_every_datagram_is_accounted_for(binaries, tmp_path):
    tb, h = live(scenario(0.0), tmp_path)
    s, r = h.sender, h.receiver
    # The simulator's schedule: packet k at 0.1 s + k * 1.6 ms, before 2 s.
    sim = tcplab.run(scenario(0.0)).udp.row(0, named=True)
    assert s["packets_due"] == sim["packets_sent"] == 1188 and s["send_errors"] == 0
    assert abs(r["throughput_bps"] - RATE) <= 0.02 * RATE, r
    assert abs(r["throughput_bps"] - sim["throughput_bps"]) <= 0.02 * sim["throughput_bps"]
    drops = [d for d in drop_facts(tb, h) if d["packet"] == "udp" and d["flow"] == 0]
    assert r["packets_received"] + len(drops) == s["packets_sent"]
    assert r["duplicates"] == r["undecodable"] == 0
    delivered = [f for f in h.facts("receiver") if f["fact"] == "delivered"]
    assert len(delivered) == r["packets_received"]
    assert all(f["packet"] == "udp" and f["time_ns"] >= f["sent_at_ns"] for f in delivered)
    assert h.summary["jitter_ns"] >= 0


def test_bernoulli_losses_are_the_drop_logs_and_replay_agrees(binaries, tmp_path):
    tb, h = live(scenario(0.05), tmp_path)
    sent = {f["seq"] for f in h.facts("sender") if f["fact"] == "udp_sent"}
    got = {f["seq"] for f in h.facts("receiver") if f["fact"] == "delivered"}
    drops = [d for d in drop_facts(tb, h) if d["packet"] == "udp"]
    assert all(d["cause"] == "link_error" for d in drops), drops[:3]
    assert sent - got == {d["seq"] for d in drops} and len(drops) == len(sent - got)
    assert h.summary["packets_lost"] == len(drops) > 0
    # The instruments on the live facts: drop log, then both ends.
    path = tmp_path / "facts.jsonl"
    lines = [json.dumps(d) for d in drops]
    for p in h.facts_paths:
        lines += p.read_text().splitlines()
    path.write_text("\n".join(lines) + "\n")
    m = replay(path, tcp_flows=0, udp_flows=1)
    row = m.tables["udp"].row(0, named=True)
    assert row["packets_sent"] == h.summary["packets_sent"]
    assert row["packets_received"] == h.summary["packets_received"]
    assert row["packets_dropped"] == h.summary["packets_lost"]
    assert m.conservation["ok"], m.conservation
    # The delay table: loss % and iperf3's jitter as the sink measured them (the same
    # instrument, the same arrivals in the same order).
    d = m.tables["delay"].filter(m.tables["delay"]["flow_kind"] == "udp").row(0, named=True)
    assert d["loss_pct"] == pytest.approx(h.summary["loss_percent"], rel=1e-12)
    assert d["jitter_rfc3550_ns"] == pytest.approx(h.summary["jitter_ns"], rel=1e-9)
    assert d["delay_min_ns"] == h.receiver["delay_ns"]["min"]


def test_a_packet_too_small_for_the_header_is_one_line_and_nothing_runs(binaries, tmp_path):
    doc = scenario(0.0)
    doc["udp"][0]["packet_size"] = 40
    can = Scenario.from_dict(doc).canonical()
    with Testbed(link_config(can), tmp_path) as tb:
        with pytest.raises(LiveError, match=r"^tcplab-flow: config: udp\[0\]\.packet_size = 40: .*at least 52"):
            start_udp_flow(tb, can, 0, time.monotonic_ns(), tmp_path / "udp0")
        assert all(p.poll() is not None for p in tb.procs)
