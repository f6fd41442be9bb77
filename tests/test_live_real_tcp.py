"""tcplab's sender speaking real TCP to an unmodified Linux receiver (docs/real-tcp.md).
Needs root, `ip netns`, /dev/net/tun and cargo (to build tcplab-emu and tcplab-flow); skips
saying which is missing.

A 1-pair dumbbell (access 100 Mb/s 1 ms, bottleneck 20 Mb/s 5 ms, 100 packets): s0 is
attached to the emulator as a user-space endpoint (no kernel on its side), r0 is a namespace
whose kernel runs a plain socket sink (``linux_endpoint.py recv``: it reads until the FIN
and checks every byte against the stream's pattern).

- The handshake negotiates SACK, timestamps and window scale: the sender's summary says so,
  and so does the Linux receiver's own ``TCP_INFO`` (``tcpi_options``, what ``ss -ti``
  prints); the effective MSS is 1448 (1460 less the timestamp option), as Linux's.
- 10 MB cross byte-exact and the connection closes in order (FIN both ways).
- With 1 % Bernoulli loss on the bottleneck's forward direction, the SACK and the RACK
  strategies repair Linux's real SACK feedback: the 10 MB arrive byte-exact, and the
  sender's retransmissions equal the emulator's drops of its data segments plus the
  spurious retransmissions it reports (tolerance: none).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import test_live

from tcplab.live import Testbed
from tcplab.live.linux_tcpinfo import parse
from tcplab.live.real_tcp import start_real_tcp_flow
from tcplab.live.transport import START_MARGIN_NS
from tcplab.scenario import Scenario

emu = test_live.emu  # skips without root, builds tcplab-emu and tcplab-flow

MB10 = 10_000_000
TCPI_OPT_TIMESTAMPS, TCPI_OPT_SACK, TCPI_OPT_WSCALE = 1, 2, 4


def dumbbell(flow: str, loss: float = 0.0, duration: str = "40s", name: str = "real-tcp",
             pairs: int = 1) -> Scenario:
    """The real-TCP tests' dumbbell with the TOML of its `[[flows]]` tables (and whatever
    follows them); `loss`: random loss on the bottleneck's forward direction."""
    fwd = f"forward = {{ loss = {loss} }}" if loss else ""
    return Scenario.from_toml(f"""
name = "{name}"
seed = 4
duration = "{duration}"
[topology]
kind = "dumbbell"
pairs = {pairs}
[topology.bottleneck]
rate = "20Mbps"
delay = "5ms"
buffer = 100
{fwd}
[topology.sender_access]
rate = "100Mbps"
delay = "1ms"
buffer = 1000
[topology.receiver_access]
rate = "100Mbps"
delay = "1ms"
buffer = 1000
[tcp]
mss = 1460
rcv_buf = 4000000
{flow}
""")


def scenario(recovery: str, loss: float) -> Scenario:
    return dumbbell(f"""[[flows]]
src = "s0"
dst = "r0"
controller = {{ name = "reno" }}
recovery = {{ name = "{recovery}" }}
bytes = {MB10}
stack = "tcplab-tcp"
""", loss)


def run(tmp: Path, sc: Scenario) -> tuple:
    canonical = sc.canonical()
    with Testbed.for_scenario(sc, tmp / "emu", attached=("s0",)) as tb:
        origin = time.monotonic_ns() + START_MARGIN_NS
        h = start_real_tcp_flow(tb, canonical, 0, origin, tmp / "flow")
        r = h.finish(60)
    return tb, r


def test_handshake_negotiates_linux_options_and_10_mb_cross_byte_exact(emu: Path, tmp_path: Path) -> None:
    tb, r = run(tmp_path, scenario("sack", 0.0))
    s, rx = r.sender, r.receiver
    assert s["negotiated"] == {"peer_mss": 1460, "sack": True, "timestamps": True,
                               "snd_wscale": s["negotiated"]["snd_wscale"], "rcv_wscale": 7, "ecn": False}
    assert s["negotiated"]["snd_wscale"] > 0  # Linux scales its window
    assert s["mss"] == 1448  # 1460 less the 12-byte timestamp option, as Linux's
    info = parse(bytes.fromhex(rx["tcp_info"]))
    assert info["options"] & (TCPI_OPT_TIMESTAMPS | TCPI_OPT_SACK | TCPI_OPT_WSCALE) == 7, info["options"]
    assert (info["wscale"] & 0x0F) == 7  # the receiver's view: our window shift
    # every byte, in order, intact; both FINs exchanged
    assert rx["bytes"] == MB10 and rx["first_bad_offset"] is None and rx["error"] is None
    assert s["completed"] and s["bytes_acked"] == MB10
    assert s["state"] in ("TimeWait", "Closed") and s["packets_refused"] == 0
    # slow start overflows the 100-packet bottleneck: each drop of a data segment is
    # repaired by exactly one retransmission (or counted spurious)
    assert s["retransmits"] == len(data_drops(tb)) + s.get("spurious_retransmits", 0)


def data_drops(tb: Testbed) -> list[dict]:
    """The emulator's drops of s0's TCP data segments (those with payload)."""
    return [d for d in tb.drops if d["packet"]["proto"] == 6 and d["packet"].get("tcp_payload")
            and d["packet"]["src"] == tb.addr["s0"]]


@pytest.mark.parametrize("recovery", ["sack", "rack"])
def test_one_percent_loss_is_repaired_from_linux_sack_feedback(emu: Path, tmp_path: Path, recovery: str) -> None:
    tb, r = run(tmp_path, scenario(recovery, 0.01))
    s, rx = r.sender, r.receiver
    assert rx["bytes"] == MB10 and rx["first_bad_offset"] is None  # nothing lost or duplicated
    assert s["completed"]
    drops = data_drops(tb)
    assert len([d for d in drops if d["cause"] == "link_error"]) > 0, "1 % of ~7000 segments: some must be lost"
    spurious = s.get("spurious_retransmits", 0)
    assert s["retransmits"] == len(drops) + spurious, (s["retransmits"], len(drops), spurious)
