"""A Linux sender into tcplab's receiver speaking real TCP (docs/real-tcp.md, the other
direction). Needs root, `ip netns`, /dev/net/tun and cargo (to build tcplab-emu and
tcplab-flow); skips saying which is missing.

The dumbbell of tests/test_live_real_tcp.py (access 100 Mb/s 1 ms, bottleneck 20 Mb/s 5 ms,
100 packets, no random loss): r0 is attached to the emulator as a user-space endpoint (no
kernel on its side) and runs ``tcplab-flow tcp-recv`` (tcplab-core's receiver in the
connection layer); s0 is a namespace whose kernel sends with the flow's congestion control
(``linux_endpoint.py send``, the sender of ``stack = "linux"`` flows).

- Reno and CUBIC: the handshake negotiates SACK, timestamps and window scale, as tcplab's
  summary says and as the Linux sender's own ``TCP_INFO`` says (``tcpi_options``, what
  ``ss -ti`` prints; the receiver's window shift 7); 10 MB arrive byte-exact (every range
  the core hands to the application checked against the stream's pattern) and the
  connection closes in order (the sender's FIN, then ours, both acknowledged).
- Throughput: the Linux sender into tcplab's receiver is within ±10 % of Linux to Linux on
  the same path (the same scenario on a testbed without attachment), both measured the same
  way (bytes received over the sender's connect to the acknowledgment of its FIN): Reno and
  CUBIC, 10 MB, no random loss (the bottleneck's rate bounds both); and CUBIC, 5 MB, 1 %
  Bernoulli loss on the bottleneck's forward direction (recovery driven by the receiver's
  SACK feedback and ACK policy; the emulator draws the same losses from the seed).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import test_live
from test_live_real_tcp import dumbbell

from tcplab.live import LiveError, Testbed
from tcplab.live.linux import start_linux_flow
from tcplab.live.linux_tcpinfo import parse
from tcplab.live.netns import TUN, emulator_binary
from tcplab.live.real_tcp import RealTcpReceiverRun, start_real_tcp_receiver_flow
from tcplab.live.transport import START_MARGIN_NS
from tcplab.scenario import Scenario

emu = test_live.emu  # skips without root, builds tcplab-emu and tcplab-flow

MB10, MB5 = 10_000_000, 5_000_000
TCPI_OPT_TIMESTAMPS, TCPI_OPT_SACK, TCPI_OPT_WSCALE = 1, 2, 4
#: The issue's tolerance on throughput against Linux to Linux, stated before measuring.
TOLERANCE = 0.10


def scenario(cc: str, receiver: str, loss: float = 0.0, size: int = MB10, seed: int = 1) -> Scenario:
    recv = f'receiver = "{receiver}"' if receiver != "stack" else ""
    return dumbbell(f"""[[flows]]
src = "s0"
dst = "r0"
controller = {{ name = "{cc}" }}
recovery = {{ name = "sack" }}
bytes = {size}
stack = "linux"
{recv}
""", loss, duration="30s", name="real-tcp-receiver").with_seed(seed)


def run_into_tcplab(tmp: Path, cc: str, loss: float = 0.0, size: int = MB10,
                    seed: int = 1) -> tuple[Testbed, RealTcpReceiverRun]:
    sc = scenario(cc, "tcplab", loss, size, seed)
    with Testbed.for_scenario(sc, tmp / "emu", attached=("r0",)) as tb:
        origin = time.monotonic_ns() + START_MARGIN_NS
        h = start_real_tcp_receiver_flow(tb, sc.canonical(), 0, origin, tmp / "flow")
        r = h.finish(40)
    return tb, r


def run_linux_to_linux(tmp: Path, cc: str, loss: float = 0.0, size: int = MB10, seed: int = 1) -> float:
    sc = scenario(cc, "stack", loss, size, seed)
    with Testbed.for_scenario(sc, tmp / "emu-linux") as tb:
        origin = time.monotonic_ns() + START_MARGIN_NS
        h = start_linux_flow(tb, sc.canonical(), 0, origin, tmp / "linux")
        h.finish(40)
    res = h.result(tb)
    assert res.flow["completed"] and res.linux["intact"], res.linux
    return float(res.flow["throughput_bps"])


@pytest.mark.parametrize("cc", ["reno", "cubic"])
def test_linux_sender_into_tcplab_receiver_negotiates_options_and_10_mb_arrive_byte_exact(
        emu: Path, tmp_path: Path, cc: str) -> None:
    tb, r = run_into_tcplab(tmp_path, cc)
    s, rx = r.sender, r.receiver
    assert s["cc"] == cc
    # the Linux sender's packets to the attached host go through the emulator
    assert f"dev {TUN}" in r.route, r.route
    n = rx["negotiated"]
    assert (n["sack"], n["timestamps"], n["window_scaling"], n["rcv_wscale"], n["ecn"]) == (True, True, True, 7, False)
    assert n["peer_mss"] == 1460 and n["snd_wscale"] > 0  # Linux scales its window too
    assert rx["mss"] == 1448  # 1460 less the 12-byte timestamp option, as Linux's
    info = parse(bytes.fromhex(s["tcp_info"][-1]))
    assert info["options"] & (TCPI_OPT_TIMESTAMPS | TCPI_OPT_SACK | TCPI_OPT_WSCALE) == 7, info["options"]
    assert (info["wscale"] & 0x0F) == 7  # the sender's view of our window shift
    assert info["snd_mss"] == 1448
    # every byte once, in order, intact; both FINs exchanged and acknowledged
    assert s["bytes_written"] == MB10 and s["t_end_ns"] is not None
    assert rx["bytes_delivered"] == MB10 and rx["intact"] and rx["first_bad_offset"] is None, rx["stream"]
    assert (rx["state"], rx["outcome"], rx["peer_fin"]) == ("Closed", "Orderly", True)
    assert rx["packets_refused"] == 0 and rx["write_errors"] == 0
    assert rx["held_at_end"] == 0


@pytest.mark.parametrize(("cc", "loss", "size"), [("reno", 0.0, MB10), ("cubic", 0.0, MB10), ("cubic", 0.01, MB5)])
def test_linux_sender_into_tcplab_receiver_matches_linux_to_linux_throughput(
        emu: Path, tmp_path: Path, cc: str, loss: float, size: int) -> None:
    """Mean over seeds 1-3 with loss, one run without. A lossy transfer is a chaotic
    system: the Linux sender's timing decides which packet each loss draw hits, so one run
    of each receiver compared two realizations (it missed once in CI: 8.57 against 7.59 Mb/s,
    +13 %)."""
    seeds = (1, 2, 3) if loss else (1,)
    linux = ours = 0.0
    for seed in seeds:
        (tmp_path / f"s{seed}").mkdir()
        linux += run_linux_to_linux(tmp_path / f"s{seed}", cc, loss, size, seed) / len(seeds)
        _, r = run_into_tcplab(tmp_path / f"s{seed}", cc, loss, size, seed)
        assert r.receiver["intact"] and r.receiver["bytes_delivered"] == size, r.receiver["stream"]
        ours += r.throughput_bps / len(seeds)
    assert abs(ours - linux) <= TOLERANCE * linux, (
        f"{cc}, loss {loss}: Linux -> tcplab {ours / 1e6:.2f} Mb/s, Linux -> Linux {linux / 1e6:.2f} Mb/s")


def test_a_receiver_host_not_attached_or_a_sender_host_attached_is_refused_in_one_line(tmp_path: Path) -> None:
    if not emulator_binary().exists():
        pytest.skip("tcplab-emu is not built (it plans the testbed)")
    sc = scenario("reno", "tcplab")
    for attached, msg in ((("s0",), "flows[0].dst = 'r0': a tcplab receiver's host must be attached"),
                          (("s0", "r0"), "flows[0].src = 's0': not a namespace of the testbed")):
        tb = Testbed.for_scenario(sc, tmp_path / "emu", attached=attached)  # not entered: nothing runs
        with pytest.raises(LiveError) as e:
            start_real_tcp_receiver_flow(tb, sc.canonical(), 0, time.monotonic_ns(), tmp_path / "flow")
        assert str(e.value).startswith(msg) and "\n" not in str(e.value)
