"""tcplab's transport live (docs/live.md): tcplab-core's sender and receiver over UDP between two
namespaces, through the emulator. Needs root, `ip netns`, /dev/net/tun and cargo (to build
tcplab-emu and tcplab-flow); skips saying which is missing. The codec's scripted round trips
are Rust unit tests (crates/tcplab-live/src/wire.rs).

Tolerances, fixed before running: every byte reaches the application once, in order,
intact; conservation is exact for a completed transfer (every data segment sent either
arrived or is in the emulator's drop log, and retransmissions = drops of the flow's data +
segments that arrived when all their bytes were there); live vs simulated throughput on the
same scenario (same link, controller, recovery and seeds) within +-15 % of the simulated
mean over 3 seeds. The emulator and both endpoints run with real-time priority
when granted (docs/live.md: at normal priority on a loaded machine their lateness reaches
milliseconds, which adds to the round-trip time).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

import tcplab
from tcplab.live import LiveError, Testbed
from tcplab.live.endpoints import flow_binary
from tcplab.live.transport import drop_facts, link_config, run_flow
from tcplab.scenario import Scenario

SEEDS = [1, 2, 3]


def scenario(seed: int, loss: float, duration: str = "2s", mss: int = 1448, bytes_: int | None = None,
             controller: str = "reno", recovery: str = "newreno") -> dict:
    """Two hosts, one 10 Mb/s link (10 ms each way, 50-packet buffer), Bernoulli loss on the
    data direction; the RFC profile (these checks predate the linux default) with RTO min
    200 ms so a timeout does not swamp a 2 s run."""
    flow: dict = {"src": "a", "dst": "b", "controller": controller, "recovery": recovery}
    if bytes_ is not None:
        flow["bytes"] = bytes_
    return {"name": "live-transport", "seed": seed, "duration": duration,
            "nodes": [{"name": "a", "kind": "host"}, {"name": "b", "kind": "host"}],
            "links": [{"from": "a", "to": "b", "rate": "10Mbps", "delay": "10ms", "buffer": 50,
                       "forward": {"loss": loss}}],
            "tcp": {"profile": "rfc", "mss": mss, "rto_min": "200ms"},
            "flows": [flow]}


def live(doc: dict, tmp: Path, framing: str = "tcplab"):
    can = Scenario.from_dict(doc).canonical()
    with Testbed(link_config(can), tmp, realtime=True) as tb:
        run = run_flow(tb, can, framing=framing, realtime=True)
    return tb, run


@pytest.mark.parametrize("framing", ["tcplab", "eth"])
def test_lossy_link_every_byte_once_and_retransmissions_match_drops(binaries, tmp_path, framing):
    mss = 1024 if framing == "eth" else 1448
    size = 1024 * mss
    tb, run = live(scenario(7, 0.02, duration="6s", mss=mss, bytes_=size), tmp_path, framing)
    s, r = run.sender, run.receiver
    assert s["completed"], s
    assert r["intact"], r["stream"]
    assert r["bytes_delivered"] == size == s["bytes_acked"]
    assert r["stream"]["missing"] == r["stream"]["corrupt"] == r["stream"]["out_of_order_reads"] == 0
    drops = [d for d in drop_facts(tb, run) if d["packet"] == "data"]
    assert drops, "2 % loss on ~1000 packets dropped nothing"
    assert all(d["flow"] == 0 for d in drops)
    # Conservation: each data segment sent arrived or was dropped by the model.
    assert s["segments_sent"] == r["segments_received"] + len(drops)
    assert s["send_errors"] == r["send_errors"] == 0
    # Retransmissions = the drops they repaired + the spurious ones.
    assert s["retransmits"] >= len(drops)
    assert s["retransmits"] == len(drops) + r["stream"]["duplicate_segments"]
    # Facts in the recorded-fact format: one transmit per segment sent, in sequence.
    tx = [f for f in run.facts("sender") if f["fact"] == "transmit"]
    assert len(tx) == s["segments_sent"]
    assert sum(f["retransmission"] > 0 for f in tx) == s["retransmits"]
    delivered = [f for f in run.facts("receiver") if f["fact"] == "delivered"]
    assert len(delivered) == r["segments_received"]
    assert all(f["time_ns"] >= f["sent_at_ns"] for f in delivered)


def test_live_throughput_matches_the_simulator(binaries, tmp_path):
    """Same scenario, same seeds (the emulator draws the simulator's loss stream for the
    link), 1 % loss, 2 s: the mean over 3 seeds within +-15 %."""
    sim, got = [], []
    for seed in SEEDS:
        doc = scenario(seed, 0.01)
        sim.append(float(tcplab.run(doc).flows["throughput_bps"][0]))
        _, run = live(doc, tmp_path / f"seed{seed}")
        assert run.receiver["intact"]
        got.append(run.throughput_bps)
    ratio = (sum(got) / len(got)) / (sum(sim) / len(sim))
    assert abs(ratio - 1) <= 0.15, f"live {got} vs simulated {sim}: ratio {ratio:.3f}"


def test_bad_flow_config_is_one_line_and_nothing_outlives_the_run(binaries, tmp_path):
    can = Scenario.from_dict(scenario(1, 0.0, duration="1s")).canonical()
    with Testbed(link_config(can), tmp_path) as tb:
        with pytest.raises(LiveError, match=r'^tcplab-flow: config: tcp\.mss = 1448: framing = "eth" sends 1024-byte packets$'):
            run_flow(tb, can, framing="eth")
        mtu = re.escape("tcp.mss = 1460: a 1512-byte IP packet does not fit the path's MTU")
        with pytest.raises(LiveError, match=rf"^tcplab-flow send: {mtu}"):
            run_flow(tb, Scenario.from_dict(scenario(1, 0.0, duration="1s", mss=1460)).canonical())
        procs = list(tb.procs)
    assert procs and all(p.poll() is not None for p in procs)
    ps = subprocess.run(["pgrep", "-f", str(flow_binary())], capture_output=True, text=True)
    assert ps.stdout.strip() == ""
