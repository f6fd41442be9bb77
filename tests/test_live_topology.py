"""A scenario's whole topology emulated live (docs/live.md): one namespace per host, every link
of tcplab-sim's expansion emulated, packets routed hop by hop. Needs root, `ip netns`,
/dev/net/tun and cargo (to build tcplab-emu); skips saying which is missing.

A 2-pair dumbbell: access links 100 Mb/s (s0: 1 ms, s1: 3 ms, receivers 1 ms, 1000-packet
buffers), bottleneck 10 Mb/s, 5 ms, 50 packets; 1000-byte UDP probes s0 -> r0 and s1 -> r1.
Tolerances, fixed before running (as tests/test_live.py): the bottleneck's delivered rate
within +-2 % of its rate while both probes overload it; one-way delays never below the sum
of the hops' propagation and transmission times (store and forward at every router) and
their median at most 2 ms above it when nothing queues (the end hosts are Python processes).
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import test_live

from tcplab.live import LiveError, Testbed
from tcplab.live.netns import _namespaces
from tcplab.live.udp_probe import ProbeResult, start_probes
from tcplab.scenario import Scenario

emu = test_live.emu  # the module's fixture: skips without root, builds tcplab-emu

SIZE = 1000
RATE = 10_000_000
ACCESS = 100_000_000
PROP = {"s0": 1_000_000, "s1": 3_000_000}
BOTTLENECK_PROP = 5_000_000
RECEIVER_PROP = 1_000_000
HOST_ALLOWANCE_NS = 2_000_000
ROOT = Path(__file__).resolve().parents[1]
PAIRS = [("s0", "r0"), ("s1", "r1")]


def dumbbell(queue: str = "") -> Scenario:
    access = "\n".join(f'[[topology.sender_access]]\nrate = "100Mbps"\ndelay = "{PROP[s] // 1_000_000}ms"\n'
                       "buffer = 1000" for s, _ in PAIRS)
    udp = "\n".join(f'[[udp]]\nsrc = "{s}"\ndst = "{r}"\nrate = "5Mbps"\npacket_size = {SIZE}' for s, r in PAIRS)
    return Scenario.from_toml(f"""
name = "live-dumbbell"
seed = 3
duration = "10s"
[topology]
kind = "dumbbell"
pairs = 2
[topology.bottleneck]
rate = "10Mbps"
delay = "5ms"
buffer = 50
{queue}
{access}
[topology.receiver_access]
rate = "100Mbps"
delay = "1ms"
buffer = 1000
{udp}
""")


def probes(tb: Testbed, pairs: list[tuple[str, str]], load: float, count: int,
           tos: int = 0) -> dict[str, ProbeResult]:
    """Every pair's probe, starting together, each at `load` times the bottleneck rate."""
    running = start_probes(tb, pairs, load * RATE, SIZE, count, idle=0.5, tos=tos)
    return {p.src: p.result() for p in running}


def drops_of(tb: Testbed, src: str) -> dict[int, tuple[str, str, str]]:
    """probe sequence number -> (link, direction, cause) of `src`'s dropped probe packets."""
    return {d["packet"]["probe_seq"]: (d["link"], d["direction"], d["cause"]) for d in tb.drops
            if d["packet"]["src"] == tb.addr[src]}


def floor_ns(src: str) -> int:
    """The model's least one-way delay: each hop's propagation and transmission."""
    tx = SIZE * 8 * 1_000_000_000
    return PROP[src] + BOTTLENECK_PROP + RECEIVER_PROP + tx // ACCESS + tx // RATE + tx // ACCESS


def test_two_pairs_share_the_bottleneck_and_drop_there(emu: Path, tmp_path: Path) -> None:
    links_before = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    with Testbed.for_scenario(dumbbell(), tmp_path, emu) as tb:
        ours = set(tb.ns.values())
        assert len(ours) == 4 and ours <= set(_namespaces())
        r = probes(tb, PAIRS, 0.6, 1500)
    # Everything is gone: namespaces, the emulator (and its devices with it), root untouched.
    assert not ours & set(_namespaces())
    assert tb.emu is not None and tb.emu.returncode == 0  # stopped cleanly, reaped
    assert subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout == links_before
    assert tb.stats is not None
    # The bottleneck is saturated while both probes send (its queue is full within 0.5 s:
    # 2 Mb/s in excess fills 50 packets in 0.2 s): packets arrive at both receivers
    # together at the bottleneck's rate.
    start = max(int(x.sent_ns[0]) for x in r.values()) + 500_000_000
    end = min(int(x.sent_ns[-1]) for x in r.values())
    arrivals = np.concatenate([x.recv_ns for x in r.values()])
    n = int(((arrivals >= start) & (arrivals < end)).sum())
    rate = n * SIZE * 8 / ((end - start) * 1e-9)
    assert abs(rate / RATE - 1) <= 0.02, f"{rate:.0f} bit/s through a {RATE} bit/s bottleneck"
    # Drops happen at the bottleneck's forward direction only, by drop-tail, and the drop log
    # names exactly the packets each receiver missed. (Which pair loses more depends on the
    # phase of the two periodic probes, so only the total must be positive.)
    assert tb.drops
    for s, _ in PAIRS:
        drops = drops_of(tb, s)
        assert set(drops.values()) <= {("left-right", "forward", "buffer_overflow")}
        assert set(drops) == set(r[s].lost().tolist()) and r[s].rcvbuf_errors == 0
    links = tb.stats["links"]
    for name, dirs in links.items():
        if name != "left-right":
            assert sum(dirs["forward"]["drops"].values()) == 0, name
    fwd = links["left-right"]["forward"]
    assert fwd["drops"]["buffer_overflow"] == sum(len(drops_of(tb, s)) for s, _ in PAIRS)
    assert fwd["offered"] == sum(links[f"{s}-left"]["forward"]["delivered"] for s, _ in PAIRS)
    # Per egress host: what it received and how late the emulator wrote it.
    for s, d in PAIRS:
        host = tb.stats["hosts"][d]
        assert host["delivered"] == len(r[s].seq) == host["lateness_ns"]["count"]
        assert sum(host["outside_model"].values()) == 0


def fifo(arrive: np.ndarray, rate: int, prop: int) -> np.ndarray:
    """When packets of SIZE bytes arriving at `arrive` (sorted) reach the far end of a FIFO
    link of `rate` and propagation `prop` with room for all of them."""
    tx = SIZE * 8 * 1_000_000_000 // rate
    done = np.empty_like(arrive)
    free = 0
    for k, t in enumerate(arrive):
        free = max(int(t), free) + tx
        done[k] = free
    return done + prop


def model_delays(r: dict[str, ProbeResult]) -> dict[str, np.ndarray]:
    """Each packet's one-way delay in the model were it offered at its send stamp: access
    link, the shared bottleneck (both pairs merged in time order), receiver access link."""
    at_left = {s: fifo(r[s].sent_ns, ACCESS, PROP[s]) for s, _ in PAIRS}
    merged = np.concatenate([at_left[s] for s, _ in PAIRS])
    order = np.argsort(merged, kind="stable")
    at_right = np.empty_like(merged)
    at_right[order] = fifo(merged[order], RATE, BOTTLENECK_PROP)
    out, i = {}, 0
    for s, _ in PAIRS:
        n = len(r[s].sent_ns)
        out[s] = fifo(at_right[i:i + n], ACCESS, RECEIVER_PROP) - r[s].sent_ns
        i += n
    return out


def own_delays(sent_ns: np.ndarray, prop: int) -> np.ndarray:
    """Each packet's one-way delay in the model with only its own pair's packets on the path."""
    at_left = fifo(sent_ns, ACCESS, prop)
    return fifo(fifo(at_left, RATE, BOTTLENECK_PROP), ACCESS, RECEIVER_PROP) - sent_ns


def test_added_delay_is_the_sum_of_the_hops(emu: Path, tmp_path: Path) -> None:
    # Real-time priority for the emulator (when granted): on a loaded machine its wake-ups
    # would otherwise take most of the hosts' allowance.
    with Testbed.for_scenario(dumbbell(), tmp_path, emu, realtime=True) as tb:
        r = probes(tb, PAIRS, 0.2, 300)
    assert not tb.drops and tb.stats is not None
    model = model_delays(r)
    for s, d in PAIRS:
        assert len(r[s].seq) == 300
        # Unqueued, a packet takes each hop's propagation and transmission; a sender late on
        # its schedule bursts and queues, which the model of its actual send times includes.
        assert model[s].min() == floor_ns(s)
        # The emulator never delivers early. A bound that holds whatever the other pair's
        # timing: this pair's packets alone on every hop (the other pair's packets can only
        # add queueing). Against the merged model a packet may come up to one bottleneck
        # transmission early when the other sender's packet reached the shared queue later
        # than its send stamp (scheduling between the stamp and the send), and the order at
        # the bottleneck changed.
        alone = own_delays(r[s].sent_ns, PROP[s])
        assert (r[s].delay_ns - alone[r[s].seq]).min() >= 0, s
        late = r[s].delay_ns - model[s][r[s].seq]
        assert np.median(late) <= HOST_ALLOWANCE_NS, s
        lat = tb.stats["hosts"][d]["lateness_ns"]
        assert lat["count"] == 300 and lat["p50"] <= lat["p99"] <= lat["max"]


def test_a_red_ecn_bottleneck_marks_ce(emu: Path, tmp_path: Path) -> None:
    red = ('queue = { discipline = "red", min_th = 5, max_th = 15, max_p = 0.1, w_q = 0.02, '
           'ecn = true }')
    with Testbed.for_scenario(dumbbell(red), tmp_path, emu) as tb:
        r = probes(tb, PAIRS, 0.55, 1000, tos=2)  # ECT(0)
    assert tb.stats is not None
    marks = tb.stats["links"]["left-right"]["forward"]["ecn_marks"]
    causes = {c for s, _ in PAIRS for (_, _, c) in drops_of(tb, s).values()}
    assert marks > 0 and "aqm_early" not in causes
    ce = sum(int(((x.tos & 3) == 3).sum()) for x in r.values())
    ect = sum(int(((x.tos & 3) == 2).sum()) for x in r.values())
    assert ce == marks and ce + ect == sum(len(x.seq) for x in r.values())


PARKING_LOT = """
name = "live-parking-lot"
seed = 5
duration = "10s"
[topology]
kind = "parking_lot"
hops = 2
long_pairs = 1
cross_pairs = 1
reverse_pairs = 0
queue = { discipline = "drop_tail" }
[[topology.bottleneck]]
rate = "10Mbps"
delay = "2ms"
buffer = 50
[[topology.bottleneck]]
rate = "10Mbps"
delay = "4ms"
buffer = 50
[topology.access]
rate = "100Mbps"
delay = "1ms"
buffer = 1000
[[udp]]
src = "ls0"
dst = "lr0"
rate = "5Mbps"
packet_size = 1000
"""


def test_a_parking_lot_routes_long_and_cross_traffic_over_their_hops(emu: Path, tmp_path: Path) -> None:
    # The long pair crosses both hops, hop 1's cross pair only hop 1: together they overload
    # hop 1 (1.2x) and load hop 0 at 0.6x, so drop-tail drops happen at r1-r2 only.
    pairs = {"ls0": "lr0", "cs1_0": "cr1_0"}
    with Testbed.for_scenario(Scenario.from_toml(PARKING_LOT), tmp_path, emu) as tb:
        assert set(tb.ns) >= {"ls0", "lr0", "cs0_0", "cr0_0", "cs1_0", "cr1_0"}
        r = probes(tb, list(pairs.items()), 0.6, 1200)
    assert tb.stats is not None
    tx = SIZE * 8 * 1_000_000_000
    floor = {"ls0": 1_000_000 + 2_000_000 + 4_000_000 + 1_000_000 + 2 * tx // ACCESS + 2 * tx // RATE,
             "cs1_0": 1_000_000 + 4_000_000 + 1_000_000 + 2 * tx // ACCESS + tx // RATE}
    assert tb.drops
    for s in pairs:
        assert r[s].delay_ns.min() >= floor[s], s
        drops = drops_of(tb, s)
        assert set(drops.values()) <= {("r1-r2", "forward", "buffer_overflow")}
        assert set(drops) == set(r[s].lost().tolist())
    links = tb.stats["links"]
    assert links["r0-r1"]["forward"]["offered"] == links["r0-r1"]["forward"]["delivered"] == 1200
    assert sum(links["r0-r1"]["forward"]["drops"].values()) == 0


HOLDER = """
import sys, time
from pathlib import Path
from tcplab.live import LiveError, Testbed
from tcplab.scenario import Scenario
with Testbed.for_scenario(Scenario.from_toml(sys.stdin.read()), Path(sys.argv[1]), Path(sys.argv[2])) as tb:
    print(" ".join(tb.ns.values()), tb.emu.pid, flush=True)
    time.sleep(60)
"""


def test_nothing_of_a_killed_scenario_run_outlives_the_next(emu: Path, tmp_path: Path) -> None:
    p = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path / "killed"), str(emu)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert p.stdin is not None and p.stdout is not None
    p.stdin.write(PARKING_LOT)
    p.stdin.close()
    *killed, emu_pid = p.stdout.readline().split()
    assert len(killed) == 6 and set(killed) <= set(_namespaces())
    p.send_signal(signal.SIGKILL)
    p.wait()
    assert test_live._pid_gone(int(emu_pid), within=5.0)
    with Testbed.for_scenario(dumbbell(), tmp_path / "next", emu) as tb:
        assert not set(killed) & set(_namespaces())
        ours = set(tb.ns.values())
    assert not ours & set(_namespaces())


def test_what_is_not_emulated_is_refused_in_one_line(emu: Path, tmp_path: Path) -> None:
    # 802.11b segments are emulated; their cross-layer loss reports are not.
    text = (ROOT / "scenarios" / "wlan-exp2-case1.toml").read_text()
    wlan = Scenario.from_toml(text.replace('pipe = "fat"', 'pipe = "fat"\nreport_losses = true'))
    with pytest.raises(LiveError) as e:
        Testbed.for_scenario(wlan, tmp_path, emu)
    assert str(e.value).endswith("report_losses = true: cross-layer reports are not emulated")
    assert "\n" not in str(e.value)
